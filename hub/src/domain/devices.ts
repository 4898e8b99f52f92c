/** Device listing (spec 4.2): filters, the Available view, detail options. */
import type { Device, DeviceAvailabilityStatus, DeviceOperatingSystem } from '@devicelab/shared';
import type { AuthenticatedUser } from '../auth/authenticated-user';
import { hasEntitlement } from '../auth/entitlements';
import type { Db } from '../store/database';
import type { ApplicationRow } from '../store/schema';
import { readDeferred, type Deferred } from './deferred-input';
import { toDeviceModel, type DeviceDetailOptions } from './device-mapping';
import { selectDevices, type DeviceWithRetainer } from './device-queries';

export interface DeviceFilters {
  id?: string;
  name?: string;
  operatingSystem?: DeviceOperatingSystem;
  availability?: DeviceAvailabilityStatus;
  enabled?: boolean;
  deleted?: boolean;
  slotNumber?: number;
  notes?: string;
}

/** GET /Device. Without DeviceList the answer is `[]` (wire-decisions rule 20). */
export async function listDevices(
  db: Db, user: AuthenticatedUser, filters: Deferred<DeviceFilters>, options: Deferred<DeviceDetailOptions> = {},
): Promise<Device[]> {
  if (!hasEntitlement(user, 'DeviceList')) return [];
  const detail = readDeferred(options);
  const rows = await queryDevices(db, readDeferred(filters), detail, false);
  return mapDevices(db, rows, detail);
}

/**
 * GET /Device/Available: devices the caller could retain now. Leaves out devices retained by anyone (in use),
 * disabled, deleted or offline.
 */
export async function listAvailableDevices(
  db: Db, user: AuthenticatedUser, filters: Deferred<DeviceFilters> = {}, options: Deferred<DeviceDetailOptions> = {},
): Promise<Device[]> {
  if (!hasEntitlement(user, 'DeviceList')) return [];
  const detail = readDeferred(options);
  const rows = await queryDevices(db, readDeferred(filters), detail, true);
  return mapDevices(db, rows, detail);
}

async function queryDevices(
  db: Db, f: DeviceFilters, options: DeviceDetailOptions, availableOnly: boolean,
): Promise<DeviceWithRetainer[]> {
  let q = selectDevices(db, {
    properties: options.properties, installedPackages: options.applications || options.allApplications,
  });
  if (f.id !== undefined) q = q.where('devices.id', '=', f.id);
  if (f.name !== undefined) q = q.where((eb) => eb(eb.fn('lower', ['devices.name']), '=', f.name!.toLowerCase()));
  if (f.operatingSystem !== undefined) q = q.where('devices.operating_system', '=', f.operatingSystem);
  if (f.availability !== undefined) q = q.where('devices.availability', '=', f.availability);
  if (f.enabled !== undefined) q = q.where('devices.enabled', '=', f.enabled);
  if (f.deleted !== undefined) q = q.where('devices.deleted', '=', f.deleted);
  if (f.slotNumber !== undefined) q = q.where('devices.slot_number', '=', f.slotNumber);
  if (f.notes !== undefined) q = q.where('devices.notes', '=', f.notes);
  if (availableOnly) {
    q = q.where('devices.retained_by', 'is', null)
      .where('devices.enabled', '=', true)
      .where('devices.deleted', '=', false)
      .where('devices.availability', '=', 'Online');
  }
  return q.orderBy('devices.slot_number', 'asc').orderBy('devices.name', 'asc').orderBy('devices.id', 'asc').execute();
}

async function mapDevices(db: Db, rows: DeviceWithRetainer[], options: DeviceDetailOptions): Promise<Device[]> {
  let managed: ApplicationRow[] = [];
  if ((options.applications || options.allApplications) && rows.length > 0) {
    const identifiers = [...new Set(rows.flatMap((r) => r.installed_packages.map((p) => p.identifier)))];
    if (identifiers.length > 0) {
      managed = await db.selectFrom('applications').selectAll()
        .where('application_identifier', 'in', identifiers).execute();
    }
  }
  return rows.map((row) => toDeviceModel(row, options, managed));
}
