/**
 * What a replica vouches for when it forwards a browser's cookie-authenticated WebSocket to the replica that owns
 * the device's gateway. The owner authenticates the browser's session itself (the cookie, against PostgreSQL), but
 * it cannot check the browser's Origin against its own Host: the browser reached the forwarding replica (or the
 * load balancer) under another name than the one replicas use between themselves. So the forwarding replica, which
 * did check Origin against the Host the browser sent, passes both on, signed:
 *
 *   DeviceLab-Forwarded-Host: <the Host the browser sent>
 *   DeviceLab-Forwarded-At: <milliseconds since the epoch>
 *   DeviceLab-Forwarded-Signature: base64url HMAC-SHA256 over (replica id, host, origin, request path and query,
 *     time, SHA-256 of the session cookie), keyed by a 32-byte key that every replica reads from `hub_settings`
 *     (created once by the first replica that needs it; only what can read the database can sign).
 *
 * The owner accepts the forwarded Host instead of its own only with a valid signature made in the last
 * FORWARDED_MAX_AGE_MS; a request that carries any of these headers without one is refused outright. A signature
 * names the cookie and the path it was made for, so it cannot lend its Origin to another session or device. (A
 * browser cannot set these headers on a WebSocket at all; the signature is what keeps any other client from using
 * them to pass another origin off as checked.)
 */
import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type http from 'node:http';
import type { Db } from '../store/database';
import { settingOrCreate } from '../store/settings';

export const FORWARDED_HOST_HEADER = 'DeviceLab-Forwarded-Host';
export const FORWARDED_AT_HEADER = 'DeviceLab-Forwarded-At';
export const FORWARDED_SIGNATURE_HEADER = 'DeviceLab-Forwarded-Signature';
/** How old a signature may be when it arrives (the forwarding replica opens the WebSocket at once). */
export const FORWARDED_MAX_AGE_MS = 30_000;
const KEY_SETTING = 'replica_forwarding_key';

const keys = new WeakMap<Db, Promise<Buffer>>();
function forwardingKey(db: Db): Promise<Buffer> {
  let key = keys.get(db);
  if (!key) {
    key = settingOrCreate(db, KEY_SETTING, () => randomBytes(32).toString('base64')).then((value) => Buffer.from(value, 'base64'));
    key.catch(() => keys.delete(db)); // a database outage is not remembered
    keys.set(db, key);
  }
  return key;
}

interface ForwardedFacts {
  by: string;
  host: string;
  origin: string;
  /** The forwarded request's path and query, as sent. */
  path: string;
  at: number;
  cookie: string;
}

function signature(key: Buffer, facts: ForwardedFacts): Buffer {
  const cookieHash = createHash('sha256').update(facts.cookie).digest('base64url');
  return createHmac('sha256', key)
    .update(['devicelab-forwarded-v1', facts.by, facts.host, facts.origin, facts.path, String(facts.at), cookieHash].join('\n'))
    .digest();
}

/** The headers the forwarding replica adds to vouch for the browser's Host and Origin. */
export async function vouchForOrigin(db: Db, facts: Omit<ForwardedFacts, 'at'>, now = Date.now()): Promise<Record<string, string>> {
  const sig = signature(await forwardingKey(db), { ...facts, at: now });
  return {
    [FORWARDED_HOST_HEADER]: facts.host, [FORWARDED_AT_HEADER]: String(now), [FORWARDED_SIGNATURE_HEADER]: sig.toString('base64url'),
  };
}

/**
 * On the owner: undefined when the request carries none of the vouching headers; the replica and the Host it
 * vouches for when they are signed and fresh; 'forged' otherwise.
 */
export async function vouchedOrigin(
  db: Db, req: http.IncomingMessage, by: string | undefined, cookie: string, now = Date.now(),
): Promise<{ by: string; host: string } | 'forged' | undefined> {
  const header = (name: string) => {
    const value = req.headers[name.toLowerCase()];
    return typeof value === 'string' ? value : undefined;
  };
  const host = header(FORWARDED_HOST_HEADER);
  const at = header(FORWARDED_AT_HEADER);
  const sent = header(FORWARDED_SIGNATURE_HEADER);
  if (host === undefined && at === undefined && sent === undefined) return undefined;
  const origin = req.headers.origin;
  if (!host || !at || !sent || !by || !origin || !/^\d{1,15}$/.test(at) || Math.abs(now - Number(at)) > FORWARDED_MAX_AGE_MS) return 'forged';
  const expected = signature(await forwardingKey(db), { by, host, origin, path: req.url ?? '', at: Number(at), cookie });
  const given = Buffer.from(sent, 'base64url');
  return given.length === expected.length && timingSafeEqual(given, expected) ? { by, host } : 'forged';
}
