/**
 * User text quoted back in a failure message (an unknown key, a name that was not found): a short prefix of it, so
 * that a client cannot make the hub repeat an arbitrarily large string, and a reader still recognises what was sent.
 */
export const ECHO_MAX_CHARS = 100;

export function echo(text: string): string {
  // By code points, so a cut never splits a surrogate pair.
  const points = [...text.slice(0, ECHO_MAX_CHARS * 2)];
  return points.length > ECHO_MAX_CHARS ? `${points.slice(0, ECHO_MAX_CHARS).join('')}…` : points.join('');
}
