/**
 * Strict reading of an `Authorization: Basic` header (RFC 7617): the scheme, one token68 of canonical base64 and
 * nothing after it; UTF-8 `login:token` with exactly one colon (API tokens never hold one) and no control
 * characters. Anything else is malformed and refused whole, never read in part (`admin:<token>:anything` and
 * `Basic <base64> extra` used to pass with the extra ignored).
 */
type BasicCredentials =
  | { kind: 'credentials'; login: string; token: string }
  /** `login` when the malformed credentials still name one, so the failure counts against it too. */
  | { kind: 'malformed'; reason: string; login?: string };

const BASIC = /^basic +([A-Za-z0-9+/]+={0,2})$/i;
const CONTROL = /[\u0000-\u001f\u007f]/;
const utf8 = new TextDecoder('utf-8', { fatal: true });

export function parseBasicCredentials(header: string): BasicCredentials {
  const match = BASIC.exec(header.trim());
  if (!match) return { kind: 'malformed', reason: 'not Basic credentials' };
  const encoded = match[1];
  const bytes = Buffer.from(encoded, 'base64');
  // Node's decoder skips what it cannot read; only text that encodes back to itself was canonical base64.
  if (bytes.toString('base64') !== encoded) return { kind: 'malformed', reason: 'invalid base64' };
  let text: string;
  try {
    text = utf8.decode(bytes);
  } catch {
    return { kind: 'malformed', reason: 'credentials are not UTF-8' };
  }
  const parts = text.split(':');
  const login = parts[0] || undefined;
  if (parts.length !== 2) return { kind: 'malformed', reason: parts.length < 2 ? 'no colon' : 'more than one colon', login };
  if (!parts[0] || !parts[1]) return { kind: 'malformed', reason: 'empty login or token', login };
  if (CONTROL.test(text)) return { kind: 'malformed', reason: 'control characters', login };
  return { kind: 'credentials', login: parts[0], token: parts[1] };
}
