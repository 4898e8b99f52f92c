/**
 * The wire form of a DeviceAccessTicket authenticator, shared by the hub (signs) and the gateway (verifies):
 * `<base64url(JSON claims)>.<base64url(Ed25519 signature over the first part's ASCII)>`.
 * Ed25519 signatures are deterministic, so the same claims always give the same authenticator (re-retaining a
 * device one already holds returns the same ticket).
 */

export interface DeviceTicketClaims {
  /** Format version; verifiers reject others. */
  v: 1;
  /** adb serial / iOS UDID: the device the ticket opens, as the gateway names it. */
  vuid: string;
  /** The hub's device Guid. */
  device: string;
  /** The retaining user's Guid. */
  user: string;
  /** The retain this ticket belongs to; invalid once the device's current retain id differs. */
  retain: string;
  /** Issue time (the retain time), epoch milliseconds. */
  iat: number;
}

interface DecodedDeviceTicket {
  claims: DeviceTicketClaims;
  /** The bytes the signature covers. */
  signed: Buffer;
  signature: Buffer;
}

export function encodeDeviceTicket(claims: DeviceTicketClaims, sign: (data: Buffer) => Buffer): string {
  const payload = Buffer.from(JSON.stringify(claims)).toString('base64url');
  return `${payload}.${sign(Buffer.from(payload, 'ascii')).toString('base64url')}`;
}

/** Splits and parses an authenticator; undefined when it is not one (the signature is not checked here). */
export function decodeDeviceTicket(token: string): DecodedDeviceTicket | undefined {
  const parts = token.split('.');
  if (parts.length !== 2 || !/^[A-Za-z0-9_-]+$/.test(parts[0]) || !/^[A-Za-z0-9_-]+$/.test(parts[1])) return undefined;
  let claims: unknown;
  try {
    claims = JSON.parse(Buffer.from(parts[0], 'base64url').toString('utf8'));
  } catch {
    return undefined;
  }
  if (!isClaims(claims)) return undefined;
  return { claims, signed: Buffer.from(parts[0], 'ascii'), signature: Buffer.from(parts[1], 'base64url') };
}

function isClaims(value: unknown): value is DeviceTicketClaims {
  const c = value as Partial<DeviceTicketClaims> | null;
  return typeof c === 'object' && c !== null && c.v === 1 && typeof c.vuid === 'string' && typeof c.device === 'string'
    && typeof c.user === 'string' && typeof c.retain === 'string' && c.retain !== '' && typeof c.iat === 'number';
}
