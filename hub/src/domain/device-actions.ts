/** Retain, release, reboot and log of one device (spec 3, 4.2); every change and its event in one transaction. */
import { ApiFailure, type DeviceAccessTicket } from '@devicelab/shared';
import type { AuthenticatedUser } from '../auth/authenticated-user';
import type { GatewayDirectory } from '../gateways/gateway-directory';
import { hasEntitlement, requireEntitlement } from '../auth/entitlements';
import { closeSessionMarker, openSessionMarker } from '../metrics/markers';
import { withTx, type Db, type Tx } from '../store/database';
import { signDeviceTicket, type TicketKeys } from './device-ticket';
import { inUseBy, lockDevice, resolveDevice, type DeviceWithRetainer } from './device-queries';
import { announceDeviceAccess } from './device-access';
import { recordEvent } from './events';
import { runDeviceCommand } from './gateway-commands';

interface RetainOptions {
  ticketKeys: TicketKeys;
  now?: () => Date;
  /**
   * Told about the retain once it is committed, so the device's gateway accepts the new ticket and opens the
   * device's access endpoint; the ticket names that endpoint's port once the gateway says where it listens.
   */
  gateways?: Pick<GatewayDirectory, 'notifyRetention' | 'accessPort'>;
}

/** How long a retain waits for the gateway to open the device's adb endpoint before answering without it. */
const ACCESS_ENDPOINT_WAIT_MS = 3_000;

/** Fails unless the device can be used right now by `user` (not deleted, enabled, not someone else's, Online). */
export function assertUsableBy(device: DeviceWithRetainer, user: AuthenticatedUser): void {
  if (device.deleted) throw new ApiFailure('Device is deleted.');
  if (!device.enabled) throw new ApiFailure('Device is disabled.');
  if (device.retained_by && device.retained_by !== user.id) throw new ApiFailure(inUseBy(device));
  if (device.availability !== 'Online') throw new ApiFailure('Device is offline.');
}

export async function retainDevice(
  db: Db, user: AuthenticatedUser, identifier: string, options: RetainOptions,
): Promise<DeviceAccessTicket> {
  requireEntitlement(user, 'DeviceConnect');
  const { id } = await resolveDevice(db, identifier);
  const ticket = await withTx(db, async (trx) => {
    const device = await lockDevice(trx, id);
    assertUsableBy(device, user);
    let retainedAt = device.retained_at;
    let retainId = device.retain_id;
    if (device.retained_by !== user.id || !retainedAt || !retainId) {
      retainedAt = options.now?.() ?? new Date();
      // retain_id is set by the database (migration 007): a new one for every new retain.
      ({ retain_id: retainId } = await trx.updateTable('devices')
        .set({ retained_by: user.id, retained_at: retainedAt, last_inuse_at: retainedAt })
        .where('id', '=', id).returning('retain_id').executeTakeFirstOrThrow());
      await openSessionMarker(trx, id, user.id, retainedAt); // spec 3: `session` covers the retained period
      await recordEvent(trx, {
        eventType: 'DeviceRetained', message: 'Device Retained', boolValue: true,
        deviceId: id, deviceName: device.name, performedById: user.id, performedByName: user.displayName,
        userId: user.id,
      });
    }
    const gateway = device.gateway_id
      ? await trx.selectFrom('gateways').select(['public_address', 'public_port'])
        .where('id', '=', device.gateway_id).executeTakeFirst()
      : undefined;
    return {
      authenticator: signDeviceTicket(options.ticketKeys, {
        vendorUniqueIdentifier: device.vendor_unique_identifier, deviceId: id, userId: user.id,
        retainId: retainId ?? '', issuedAt: retainedAt,
      }),
      retainId: retainId ?? '',
      gatewayAddress: gateway?.public_address ?? '',
      gatewayPort: gateway?.public_port ?? 0,
      deviceVendorUniqueIdentifier: device.vendor_unique_identifier,
      serialNumber: device.serial_number ?? device.vendor_unique_identifier,
    };
  });
  const { retainId, ...accessTicket } = ticket;
  await announceDeviceAccess(db, options.gateways, [id]);
  const port = await options.gateways?.accessPort(accessTicket.deviceVendorUniqueIdentifier, retainId, ACCESS_ENDPOINT_WAIT_MS);
  return port ? { ...accessTicket, gatewayPort: port } : accessTicket;
}

/** Owner, a device nobody retains, or DeviceReleaseAny; otherwise the in-use text. */
export async function releaseDevice(
  db: Db, user: AuthenticatedUser, identifier: string,
  /** Told once the release is committed, so the device's gateway stops accepting the old ticket and access ends. */
  gateways?: Pick<GatewayDirectory, 'notifyRetention'>,
): Promise<void> {
  const { id } = await resolveDevice(db, identifier);
  const released = await withTx(db, async (trx) => {
    const device = await lockDevice(trx, id);
    if (!device.retained_by) return undefined;
    if (device.retained_by !== user.id && !hasEntitlement(user, 'DeviceReleaseAny')) {
      throw new ApiFailure(inUseBy(device));
    }
    await dropRetain(trx, device, user);
    return device;
  });
  if (released) await announceDeviceAccess(db, gateways, [released.id]);
}

async function dropRetain(trx: Tx, device: DeviceWithRetainer, by: AuthenticatedUser): Promise<void> {
  const now = new Date();
  await trx.updateTable('devices')
    .set({ retained_by: null, retained_at: null, last_inuse_at: now })
    .where('id', '=', device.id).execute();
  await closeSessionMarker(trx, device.id, now);
  await recordEvent(trx, {
    eventType: 'DeviceRetained', message: 'Device Released', boolValue: false,
    deviceId: device.id, deviceName: device.name, performedById: by.id, performedByName: by.displayName,
    userId: device.retained_by,
  });
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
    return device;
  });
  try {
    await runDeviceCommand(gateways, before, { action: 'reboot', reboot: {} });
  } catch (err) {
    await withTx(db, async (trx) => {
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
