/**
 * Who may open a relayed connection into a device: the user who retains it right now (with
 * DeviceConnect), or the holder of the current retain's DeviceAccessTicket authenticator (checked as the
 * gateway's TicketVerifier checks it: the hub's Ed25519 signature, the device, the current retain id). The
 * device must be enabled and not deleted. The adb key AUTH at the device's endpoint comes on top of this.
 * A refusal of a device that exists is a Note event on it (who, from where, why), like the gateway's endpoint
 * refusals; at most one a minute per device and caller (all ticket holders count as one), so
 * a client that retries, or anyone sending tickets, cannot flood the history.
 */
import { createPublicKey, verify } from 'node:crypto';
import { decodeDeviceTicket } from '@devicelab/proto';
import { ApiFailure, OncePerInterval } from '@devicelab/shared';
import type { AuthenticatedUser } from '../auth/authenticated-user';
import { requireEntitlement } from '../auth/entitlements';
import { withTx, type Db } from '../store/database';
import { resolveDevice } from './device-queries';
import { recordEvent } from './events';
import type { TicketKeys } from './device-ticket';

export interface DeviceConnectionGrant {
  vendorUniqueIdentifier: string;
  /** The retainer's login, for the access events. */
  userLogin: string;
  /** What the tunnel carries: the device's adb endpoint, or (iOS) a usbmux endpoint listing only the device. */
  endpoint: 'adb' | 'usbmux';
}

type Caller = { user: AuthenticatedUser } | { authenticator: string };

/** Refusal events recorded, by device and caller: one a minute each. */
const refusalEvents = new OncePerInterval(60_000);

export const NOT_YOUR_RETAIN = (name: string): string =>
  `Device '${name}' is not retained by you; retain it first (POST /Device?action=retain).`;

export async function authorizeDeviceConnection(
  db: Db, ticketKeys: TicketKeys, caller: Caller, identifier: string, remoteAddress: string,
): Promise<DeviceConnectionGrant> {
  const device = await resolveDevice(db, identifier);
  try {
    return grantFor(device, ticketKeys, caller);
  } catch (err) {
    if (err instanceof ApiFailure) await recordRefusal(db, device, caller, remoteAddress, err.message);
    throw err;
  }
}

type ResolvedDevice = Awaited<ReturnType<typeof resolveDevice>>;

function grantFor(device: ResolvedDevice, ticketKeys: TicketKeys, caller: Caller): DeviceConnectionGrant {
  if ('user' in caller) requireEntitlement(caller.user, 'DeviceConnect');
  if (device.deleted) throw new ApiFailure('Device is deleted.', 'DEVICE_UNAVAILABLE');
  if (!device.enabled) throw new ApiFailure('Device is disabled.', 'DEVICE_UNAVAILABLE');
  if (!device.retained_by || !device.retain_id) throw new ApiFailure(NOT_YOUR_RETAIN(device.name), 'DEVICE_NOT_RETAINED');
  if ('user' in caller) {
    if (device.retained_by !== caller.user.id) throw new ApiFailure(NOT_YOUR_RETAIN(device.name), 'DEVICE_NOT_RETAINED');
    return { vendorUniqueIdentifier: device.vendor_unique_identifier, userLogin: caller.user.login, endpoint: endpointOf(device) };
  }
  const ticket = decodeDeviceTicket(caller.authenticator);
  const publicKey = createPublicKey({ key: ticketKeys.publicKeyDer, format: 'der', type: 'spki' });
  const signed = ticket !== undefined && safeVerify(ticket.signed, publicKey, ticket.signature);
  if (!ticket || !signed || ticket.claims.device !== device.id || ticket.claims.retain !== device.retain_id) {
    throw new ApiFailure(`The ticket does not open device '${device.name}' (not its current retain).`);
  }
  return {
    vendorUniqueIdentifier: device.vendor_unique_identifier, userLogin: device.retainer_login ?? device.retained_by, endpoint: endpointOf(device),
  };
}

async function recordRefusal(db: Db, device: ResolvedDevice, caller: Caller, remoteAddress: string, reason: string): Promise<void> {
  const key = `${device.id} ${'user' in caller ? caller.user.id : 'ticket'}`;
  if (!refusalEvents.first(key)) return;
  const who = 'user' in caller ? caller.user.login : 'a ticket holder';
  await withTx(db, (trx) => recordEvent(trx, {
    eventType: 'Note', deviceId: device.id, deviceName: device.name, isSuccess: false,
    message: `Device connection through the hub refused for ${who} from ${remoteAddress}: ${reason}`.slice(0, 1000),
    ...('user' in caller ? { performedById: caller.user.id, performedByName: caller.user.displayName } : {}),
  }));
}

function endpointOf(device: { operating_system: string | null }): DeviceConnectionGrant['endpoint'] {
  return device.operating_system === 'iOS' ? 'usbmux' : 'adb';
}

function safeVerify(data: Buffer, key: ReturnType<typeof createPublicKey>, signature: Buffer): boolean {
  try {
    return verify(null, data, key, signature);
  } catch {
    return false;
  }
}
