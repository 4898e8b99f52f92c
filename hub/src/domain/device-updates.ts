/**
 * Changes an administrator makes to a device record (spec 3, 4.2): update (per-property entitlements, wire rule 21 of
 * docs/wire-rules.md), delete / undelete, enable / disable and the licensed device limit. Every change is
 * all-or-nothing: the whole body is checked before anything is written, and each change and its event share one
 * transaction.
 */
import { ApiFailure, type Entitlement } from '@devicelab/shared';
import type { AuthenticatedUser } from '../auth/authenticated-user';
import { requireEntitlement } from '../auth/entitlements';
import { withTx, type Db, type Tx } from '../store/database';
import type { DeviceUpdate } from '../store/schema';
import type { ChangeRequest } from './deferred-input';
import type { GatewayDirectory } from '../gateways/gateway-directory';
import { announceDeviceAccess } from './device-access';
import { lockDevice, resolveDevice, type DeviceWithRetainer } from './device-queries';
import { recordEvent } from './events';
import { assertLicenseAllows } from './hub-settings';

type AccessNotifier = Pick<GatewayDirectory, 'notifyRetention'>;

/** Updatable properties (spec 2.4); null clears. */
export interface DeviceChanges {
  name?: string;
  slotNumber?: number | null;
  notes?: string | null;
  enabled?: boolean;
  deleted?: boolean;
}

/** The entitlement each property needs besides DeviceList (wire rule 21, docs/wire-rules.md). */
const PROPERTY_ENTITLEMENT: Record<keyof DeviceChanges, Entitlement> = {
  name: 'DeviceModify', slotNumber: 'DeviceModify', notes: 'DeviceModify', enabled: 'DeviceEnablement', deleted: 'DeviceDelete',
};

const onlineDeviceNotDeletable = (device: { name: string }): string =>
  `Device '${device.name}' is online; only an offline device can be deleted.`;

/**
 * POST /Device?update&id=. Entitlements first (DeviceList, then one per property present, even when its value is
 * invalid), then the values, then the device.
 */
export async function updateDevice(
  db: Db, user: AuthenticatedUser, identifier: string, request: ChangeRequest<DeviceChanges>,
  /** Told once committed: enabling, disabling, deleting open or close the device's access (device-access.ts). */
  gateways?: AccessNotifier,
): Promise<void> {
  requireEntitlement(user, 'DeviceList');
  for (const property of request.properties()) requireEntitlement(user, PROPERTY_ENTITLEMENT[property]);
  const changes = request.read();
  const { id } = await resolveDevice(db, identifier);
  await withTx(db, async (trx) => {
    const device = await lockDevice(trx, id);
    await applyDeviceChanges(trx, user, device, changes);
  });
  if (changes.enabled !== undefined || changes.deleted !== undefined) await announceDeviceAccess(db, gateways, [id]);
}

/**
 * Writes `changes` to a locked device after checking the state rules: deleting needs an Offline device, and a
 * device that becomes licensed (enabled and not deleted) must fit the licensed device limit.
 */
async function applyDeviceChanges(
  trx: Tx, user: AuthenticatedUser, device: DeviceWithRetainer, changes: DeviceChanges,
): Promise<void> {
  const deleting = changes.deleted === true && !device.deleted;
  const undeleting = changes.deleted === false && device.deleted;
  if (deleting && device.availability !== 'Offline') throw new ApiFailure(onlineDeviceNotDeletable(device));
  const enabledAfter = changes.enabled ?? device.enabled;
  const deletedAfter = changes.deleted ?? device.deleted;
  const licensedBefore = device.enabled && !device.deleted;
  if (enabledAfter && !deletedAfter && !licensedBefore) await assertLicenseAllows(trx, device.id);

  const set: DeviceUpdate = {};
  if (changes.name !== undefined) set.name = changes.name;
  if (changes.slotNumber !== undefined) set.slot_number = changes.slotNumber;
  if (changes.notes !== undefined) set.notes = changes.notes;
  if (changes.enabled !== undefined) set.enabled = changes.enabled;
  if (changes.deleted !== undefined) set.deleted = changes.deleted;
  if (Object.keys(set).length > 0) await trx.updateTable('devices').set(set).where('id', '=', device.id).execute();

  const name = changes.name ?? device.name;
  const by = { deviceId: device.id, deviceName: name, performedById: user.id, performedByName: user.displayName };
  if (changes.enabled !== undefined && changes.enabled !== device.enabled) {
    await recordEvent(trx, {
      ...by, eventType: 'DeviceEnablement', message: changes.enabled ? 'Device Enabled' : 'Device Disabled',
      boolValue: changes.enabled,
    });
  }
  if (deleting || undeleting) {
    await recordEvent(trx, {
      ...by, eventType: 'DeviceDeletion', message: deleting ? 'Device Deleted' : 'Device Undeleted', boolValue: deleting,
    });
  }
}

/** POST /Device?delete&id= (DeviceList + DeviceDelete): only an Offline device; repeating succeeds. */
export async function deleteDevice(db: Db, user: AuthenticatedUser, identifier: string, gateways?: AccessNotifier): Promise<void> {
  requireEntitlement(user, 'DeviceList');
  requireEntitlement(user, 'DeviceDelete');
  const { id } = await resolveDevice(db, identifier);
  await withTx(db, async (trx) => applyDeviceChanges(trx, user, await lockDevice(trx, id), { deleted: true }));
  await announceDeviceAccess(db, gateways, [id]);
}

/**
 * POST /Device?action=enable|disable (DeviceEnablement); repeating succeeds. Disabling works on retained and
 * offline devices: the retain stays (its owner can still release it), but nothing can be done with the device.
 */
export async function setDeviceEnabled(
  db: Db, user: AuthenticatedUser, identifier: string, enabled: boolean, gateways?: AccessNotifier,
): Promise<void> {
  requireEntitlement(user, 'DeviceEnablement');
  const { id } = await resolveDevice(db, identifier);
  await withTx(db, async (trx) => applyDeviceChanges(trx, user, await lockDevice(trx, id), { enabled }));
  await announceDeviceAccess(db, gateways, [id]);
}
