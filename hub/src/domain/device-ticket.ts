/**
 * The authenticator of a DeviceAccessTicket: an HMAC-SHA256 (hub secret) over device id, user id and retain time,
 * so a gateway or the hub can check a ticket without a lookup: `<base64url payload>.<base64url signature>`.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';

export interface TicketClaims { deviceId: string; userId: string; retainedAt: Date }

export function signDeviceTicket(secret: string | Buffer, claims: TicketClaims): string {
  const payload = Buffer.from(`${claims.deviceId}.${claims.userId}.${claims.retainedAt.getTime()}`).toString('base64url');
  return `${payload}.${sign(secret, payload)}`;
}

/** The claims of a valid authenticator, or undefined when it is malformed or not signed with `secret`. */
export function verifyDeviceTicket(secret: string | Buffer, token: string): TicketClaims | undefined {
  const [payload, signature, extra] = token.split('.');
  if (!payload || !signature || extra !== undefined) return undefined;
  const expected = Buffer.from(sign(secret, payload));
  const actual = Buffer.from(signature);
  if (expected.length !== actual.length || !timingSafeEqual(expected, actual)) return undefined;
  const [deviceId, userId, time] = Buffer.from(payload, 'base64url').toString().split('.');
  const ms = Number(time);
  if (!deviceId || !userId || !Number.isFinite(ms)) return undefined;
  return { deviceId, userId, retainedAt: new Date(ms) };
}

function sign(secret: string | Buffer, payload: string): string {
  return createHmac('sha256', secret).update(payload).digest('base64url');
}
