/** Retain, release, reboot and log of one device (spec 3, 4.2); every change and its event in one transaction. */
import { sql, type RawBuilder } from 'kysely';
import { ApiFailure, parseGuid, type DeviceAccessTicket, type FailureCode } from '@devicelab/shared';
import type { AuthenticatedUser } from '../auth/authenticated-user';
import type { GatewayDirectory } from '../gateways/gateway-directory';
import { hasEntitlement, requireEntitlement } from '../auth/entitlements';
import { withTx, type Db } from '../store/database';
import { signDeviceTicket, type TicketKeys } from './device-ticket';
import { bookerAt, deviceNotFound, inUseBy, lockDevice, resolveDevice, type DeviceWithRetainer } from './device-queries';
import { reservedBy } from './reservations';
import { retentionOf } from './device-access';
import { expectAvailability, rebootCause, withdrawCauses } from './availability-causes';
import { recordEvent } from './events';
import { assertIdleMinutesAllowed } from './lease-settings';
import { runDeviceCommand } from './gateway-commands';

export interface RetainOptions {
  ticketKeys: TicketKeys;
  /** The job's own lease: a retain of a device the caller holds under another lease name is refused. */
  lease?: string;
  /** This retain's idle time in minutes (within the lab's maximum; domain/lease-settings.ts checks it). */
  idleMinutes?: number;
  now?: () => Date;
  /**
   * Told about the retain once it is committed, so the device's gateway accepts the new ticket and opens the
   * device's access endpoint; the ticket names that endpoint's port once the gateway says where it listens.
   */
  gateways?: Pick<GatewayDirectory, 'notifyRetention' | 'accessPort' | 'replicaId'>;
}

/** How long a retain waits for the gateway to open the device's adb endpoint before answering without it. */
const ACCESS_ENDPOINT_WAIT_MS = 3_000;

const REFUSALS = ['deleted', 'disabled', 'in_use', 'reserved', 'offline'] as const;
/** Why a device may not be used by someone now; the outcomes `retain_refusal` returns in the database. */
export type RetainRefusal = (typeof REFUSALS)[number];
const isRefusal = (outcome: string): outcome is RetainRefusal => (REFUSALS as readonly string[]).includes(outcome);

/**
 * Why `userId` may not use the device now, or undefined; `bookerId`: who has booked it now, or null. The rule of
 * the database's `retain_refusal` (store/routines/device-retain.ts) for a row already read;
 * hub/test/domain/retain-rules.test.ts checks that the two agree on every case.
 */
export function retainRefusal(
  device: Pick<DeviceWithRetainer, 'deleted' | 'enabled' | 'retained_by' | 'availability'>, userId: string,
  bookerId: string | null,
): RetainRefusal | undefined {
  if (device.deleted) return 'deleted';
  if (!device.enabled) return 'disabled';
  if (device.retained_by && device.retained_by !== userId) return 'in_use';
  if (bookerId && bookerId !== userId) return 'reserved';
  if (device.availability !== 'Online') return 'offline';
  return undefined;
}

/**
 * Fails unless the device can be used right now by `user` (not deleted, enabled, not someone else's, not booked
 * by someone else, Online).
 */
export function assertUsableBy(device: DeviceWithRetainer, user: AuthenticatedUser, now = new Date()): void {
  const refusal = retainRefusal(device, user.id, bookerAt(device, now));
  if (refusal) throw new ApiFailure(refusalText(refusal, device), refusalCode(refusal));
}

export async function retainDevice(
  db: Db, user: AuthenticatedUser, identifier: string, options: RetainOptions,
): Promise<DeviceAccessTicket> {
  requireEntitlement(user, 'DeviceConnect');
  await assertIdleMinutesAllowed(db, options.idleMinutes);
  // One statement (`retain_device`, store/routines/device-retain.ts): losers are refused from the committed row
  // without waiting on its lock; the winner's lock, update, session marker and event are one short transaction.
  const at = options.now?.() ?? new Date();
  const device = await callRetainFunction(db, sql`retain_lease(${identifier.trim()}, ${parseGuid(identifier.trim()) ?? null}::uuid,
    ${user.id}::uuid, ${user.displayName}, ${at.toISOString()}::timestamptz, ${options.gateways?.replicaId ?? null}::text,
    ${options.lease ?? null}::text, ${options.idleMinutes ?? null}::int)`, identifier);
  if (device.outcome === 'other_lease') {
    throw new ApiFailure(`You hold device '${device.name}' under another lease name; a retain under lease `
      + `'${options.lease ?? ''}' is refused so that two jobs never share it. Release it first, or retain another device.`, 'LEASE_CONFLICT');
  }
  if (device.outcome === 'reserved') throw new ApiFailure(await bookingRefusal(db, device, at), refusalCode(device.outcome));
  if (isRefusal(device.outcome)) throw new ApiFailure(refusalText(device.outcome, device), refusalCode(device.outcome));
  // Also for a repeated retain, as a gateway that missed it would need; the other replicas heard of a new one at commit.
  announceRetention(options.gateways, device, device.outcome === 'retained');
  return accessTicketFor(device, user, at, options);
}

/**
 * The ticket of a retain the waiting line made for `user` (line-server.ts), read without writing: the device as it is
 * now, which must still be theirs. Its gateway heard of the retain at commit.
 */
export async function retainedTicket(
  db: Db, user: AuthenticatedUser, deviceId: string, options: RetainOptions,
): Promise<DeviceAccessTicket> {
  const { rows: [device] } = await sql<RetainOutcome>`SELECT * FROM retain_outcome('unchanged',
    (SELECT d FROM devices d WHERE d.id = ${deviceId}::uuid))`.execute(db);
  if (!device?.id || device.retained_by !== user.id) {
    throw new ApiFailure(`Device '${device?.name ?? deviceId}' was released before it could be handed over.`, 'DEVICE_NOT_RETAINED');
  }
  return accessTicketFor(device, user, options.now?.() ?? new Date(), options);
}

/**
 * The ticket of a retain the waiting line made for `user`, from the retain's outcome its notice carried (no read).
 * Its gateway heard of the retain at commit.
 */
export function retainTicket(device: RetainOutcome, user: AuthenticatedUser, options: RetainOptions): Promise<DeviceAccessTicket> {
  return accessTicketFor(device, user, options.now?.() ?? new Date(), options);
}

async function accessTicketFor(
  device: RetainOutcome, user: AuthenticatedUser, at: Date, options: RetainOptions,
): Promise<DeviceAccessTicket> {
  const retainId = device.retain_id ?? '';
  const accessTicket: DeviceAccessTicket = {
    authenticator: signDeviceTicket(options.ticketKeys, {
      vendorUniqueIdentifier: device.vendor_unique_identifier, deviceId: device.id, userId: user.id,
      retainId, issuedAt: device.retained_at ?? at,
    }),
    gatewayAddress: device.gateway_public_address ?? '',
    gatewayPort: device.gateway_public_port ?? 0,
    deviceVendorUniqueIdentifier: device.vendor_unique_identifier,
    serialNumber: device.serial_number ?? device.vendor_unique_identifier,
  };
  const port = await options.gateways?.accessPort(accessTicket.deviceVendorUniqueIdentifier, retainId, ACCESS_ENDPOINT_WAIT_MS);
  return port ? { ...accessTicket, gatewayPort: port } : accessTicket;
}

export interface ReleaseOptions {
  now?: () => Date;
  /** Told once the release is committed, so the device's gateway stops accepting the old ticket and access ends. */
  gateways?: Pick<GatewayDirectory, 'notifyRetention' | 'replicaId'>;
}

/** Owner, a device nobody retains, or DeviceReleaseAny; otherwise the in-use text. */
export async function releaseDevice(
  db: Db, user: AuthenticatedUser, identifier: string, options: ReleaseOptions = {},
): Promise<void> {
  const { gateways } = options;
  const at = options.now?.() ?? new Date();
  const device = await callRetainFunction(db, sql`release_device(${identifier.trim()}, ${parseGuid(identifier.trim()) ?? null}::uuid,
    ${user.id}::uuid, ${user.displayName}, ${hasEntitlement(user, 'DeviceReleaseAny')}, ${at.toISOString()}::timestamptz,
    ${gateways?.replicaId ?? null}::text, NULL::text)`, identifier);
  if (isRefusal(device.outcome)) throw new ApiFailure(refusalText(device.outcome, device), refusalCode(device.outcome));
  if (device.outcome === 'released') announceRetention(gateways, device, true);
}

/**
 * A release nobody asked for (an idle or expired lease, a waiter whose request ended): released only if `holder`
 * still holds it, recorded with `reason` as the history's text. True when it was released.
 */
export async function releaseForLease(
  db: Db, deviceId: string, holder: string, reason: string, options: ReleaseOptions = {},
): Promise<boolean> {
  const at = options.now?.() ?? new Date();
  const { rows: [device] } = await sql<RetainOutcome>`SELECT * FROM release_device(${deviceId}, ${deviceId}::uuid,
    ${holder}::uuid, 'DeviceLab', false, ${at.toISOString()}::timestamptz, ${options.gateways?.replicaId ?? null}::text,
    ${reason}::text)`.execute(db);
  if (device?.outcome !== 'released') return false;
  announceRetention(options.gateways, device, true);
  return true;
}

/** What retain_device and release_device return (store/routines/device-retain.ts). */
export interface RetainOutcome {
  outcome: 'retained' | 'unchanged' | 'released' | 'not_found' | 'other_lease' | RetainRefusal;
  id: string;
  name: string;
  vendor_unique_identifier: string;
  serial_number: string | null;
  retained_by: string | null;
  retainer_login: string | null;
  retain_id: string | null;
  retained_at: Date | null;
  enabled: boolean;
  deleted: boolean;
  gateway_public_address: string | null;
  gateway_public_port: number | null;
  retainer_adb_keys: { key: string; fingerprint: string; comment: string }[] | null;
}

async function callRetainFunction(db: Db, call: RawBuilder<unknown>, identifier: string): Promise<RetainOutcome> {
  const { rows } = await sql<RetainOutcome>`SELECT * FROM ${call}`.execute(db);
  const device = rows[0];
  if (device.outcome === 'not_found') throw new ApiFailure(deviceNotFound(identifier.trim()), 'DEVICE_NOT_FOUND');
  return device;
}

const REFUSAL_CODES: Record<RetainRefusal, FailureCode> = {
  deleted: 'DEVICE_UNAVAILABLE', disabled: 'DEVICE_UNAVAILABLE', offline: 'DEVICE_UNAVAILABLE', in_use: 'DEVICE_IN_USE',
  reserved: 'DEVICE_RESERVED',
};
const refusalCode = (refusal: RetainRefusal): FailureCode => REFUSAL_CODES[refusal];

/** The refusal's text; a booking is named when the row read carries it (the retain function's outcome does not). */
function refusalText(
  refusal: RetainRefusal,
  device: Parameters<typeof inUseBy>[0] & Partial<Pick<DeviceWithRetainer, 'booker_login' | 'booking_ends_at'>>,
): string {
  switch (refusal) {
    case 'reserved':
      return reservedBy(device.name, { booker_login: device.booker_login ?? null, booking_ends_at: device.booking_ends_at ?? null });
    case 'deleted': return 'Device is deleted.';
    case 'disabled': return 'Device is disabled.';
    case 'offline': return 'Device is offline.';
    case 'in_use': return inUseBy(device);
  }
}

/** The refusal of a retain during someone else's booking, naming the booking the function found at `at`. */
async function bookingRefusal(db: Db, device: RetainOutcome, at: Date): Promise<string> {
  const booking = await db.selectFrom('reservations').innerJoin('users', 'users.id', 'reservations.user_id')
    .select(['users.login as booker_login', 'reservations.ends_at as booking_ends_at'])
    .where('reservations.device_id', '=', device.id).where('reservations.starts_at', '<=', at)
    .where('reservations.ends_at', '>', at).executeTakeFirst();
  // The booking may have been cancelled since the function read it; the refusal stands as the function decided.
  return reservedBy(device.name, booking ?? { booker_login: null, booking_ends_at: null });
}

/**
 * Tells the device's gateway who may open it now (the retainer with their adb keys, or nobody); `othersTold`: the
 * function's transaction told the other hub replicas already (`relay_retention`).
 */
function announceRetention(
  gateways: Pick<GatewayDirectory, 'notifyRetention'> | undefined, device: RetainOutcome, othersTold: boolean,
): void {
  const keys = (device.retainer_adb_keys ?? []).map((k) => ({ ...k, key: Buffer.from(k.key, 'base64') }));
  gateways?.notifyRetention(retentionOf({ ...device, login: device.retainer_login }, keys), othersTold);
}

/**
 * Reboot: the device reads Offline (readiness `Rebooting`) until its gateway reports it Ready again. When the
 * gateway cannot run the command the previous state is restored.
 */
export async function rebootDevice(
  db: Db, gateways: GatewayDirectory, user: AuthenticatedUser, identifier: string,
): Promise<void> {
  requireEntitlement(user, 'DeviceReboot');
  const { id } = await resolveDevice(db, identifier);
  const cause = rebootCause(user);
  const before = await withTx(db, async (trx) => {
    const device = await lockDevice(trx, id);
    assertUsableBy(device, user);
    await trx.updateTable('devices')
      .set({ readiness: 'Rebooting', availability: 'Offline', last_disconnected_at: new Date() })
      .where('id', '=', id).execute();
    await recordEvent(trx, {
      eventType: 'DeviceAvailability', message: 'Device Offline', boolValue: false, stringValue: 'Rebooting',
      deviceId: id, deviceName: device.name, performedById: user.id, performedByName: user.displayName,
    });
    // The Online that ends the reboot is recorded from the gateway's report: it names the reboot and its user.
    await expectAvailability(trx, [id], cause);
    return device;
  });
  try {
    await runDeviceCommand(gateways, before, { action: 'reboot', reboot: {} });
  } catch (err) {
    await withTx(db, async (trx) => {
      await withdrawCauses(trx, [id], cause);
      const device = await lockDevice(trx, id);
      if (device.readiness !== 'Rebooting') return;
      await trx.updateTable('devices')
        .set({ readiness: before.readiness, availability: before.availability })
        .where('id', '=', id).execute();
      if (before.availability === 'Online') {
        await recordEvent(trx, {
          eventType: 'DeviceAvailability', message: 'Device Online', boolValue: true,
          deviceId: id, deviceName: device.name, performedById: user.id, performedByName: user.displayName,
        });
      }
    });
    throw err;
  }
}

export async function readDeviceLog(
  db: Db, gateways: GatewayDirectory, user: AuthenticatedUser, identifier: string, maxLines = 1000,
): Promise<string> {
  requireEntitlement(user, 'DeviceList');
  if (maxLines < 1) throw new ApiFailure(`Parameter 'lines' must be at least 1.`);
  const device = await resolveDevice(db, identifier);
  const result = await runDeviceCommand(gateways, device, { action: 'readLog', readLog: { maxLines } });
  return result.text;
}
