/**
 * User text quoted back in a failure (an unknown key, an identifier nobody has): a short prefix of it, so that a
 * client cannot make the hub repeat an arbitrarily large string, and a reader still recognises what was sent.
 * `echo` cuts the quoted text where the HTTP layer builds the message; every failure message is cut again where it
 * is written (`boundedFailureMessage`), for the domain's messages that quote an identifier as given.
 */
export const ECHO_MAX_CHARS = 100;
/** Far above any message of ours with its quotes cut to ECHO_MAX_CHARS. */
export const FAILURE_MESSAGE_MAX_CHARS = 1_000;

export function echo(text: string): string {
  return prefix(text, ECHO_MAX_CHARS);
}

export function boundedFailureMessage(message: string): string {
  return prefix(message, FAILURE_MESSAGE_MAX_CHARS);
}

/** The first `max` code points of `text` (a cut never splits a surrogate pair), marked with … when cut. */
function prefix(text: string, max: number): string {
  const points = [...text.slice(0, max * 2)];
  return points.length > max ? `${points.slice(0, max).join('')}…` : points.join('');
}
