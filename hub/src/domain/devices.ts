/** Device listing (spec 4.2): filters, the Available view, detail options. */
import { sql } from 'kysely';
import { matchesDeviceFilter, parseGuid, type Device, type DeviceFilter, type DeviceAvailabilityStatus, type DeviceOperatingSystem } from '@devicelab/shared';
import type { AuthenticatedUser } from '../auth/authenticated-user';
import { hasEntitlement } from '../auth/entitlements';
import type { Db } from '../store/database';
import type { ApplicationRow } from '../store/schema';
import { readDeferred, type Deferred } from './deferred-input';
import { keptDeviceList, type ListStamps } from './device-list-cache';
import { toDeviceModel, type DeviceDetailOptions } from './device-mapping';
import { identifierMatch, selectDevices, type DeviceWithRetainer } from './device-queries';

export interface DeviceFilters {
  id?: string;
  name?: string;
  operatingSystem?: DeviceOperatingSystem;
  availability?: DeviceAvailabilityStatus;
  enabled?: boolean;
  deleted?: boolean;
  slotNumber?: number;
  notes?: string;
  /** The vendor client's filters (wire rule 24, docs/wire-rules.md). Guid, serial number or vendor unique identifier. */
  anyId?: string;
  vendorUniqueIdentifier?: string;
  operatingSystemVersion?: string;
  /** Retained by anyone (true) or by no one (false). */
  retained?: boolean;
  /** The retaining user's Guid or login. */
  retainedBy?: string;
  retainedByDisplayName?: string;
  /** A package name / bundle id installed on the device. */
  bundleInstalled?: string;
  /** Passive metrics logging off (true) or on (false). */
  disableMetrics?: boolean;
  /** Extension: the filter people type (`os=android,minOs=13,free`; shared/src/device-filter.ts). */
  filter?: DeviceFilter;
}

/**
 * The display name of the joined `users` row (the retainer in a device list) as `retainerDisplayName` builds it:
 * the non-blank name parts joined by a space, or the login when there are none (`~ '\S'`: has a non-space character).
 */
export const USER_DISPLAY_NAME = sql<string>`coalesce(nullif(concat_ws(' ',
  case when users.first_name ~ '\\S' then users.first_name end,
  case when users.middle_name ~ '\\S' then users.middle_name end,
  case when users.last_name ~ '\\S' then users.last_name end), ''), users.login)`;

/** GET /Device. Without DeviceList the answer is `[]` (wire rule 20, docs/wire-rules.md). */
export async function listDevices(
  db: Db, user: AuthenticatedUser, filters: Deferred<DeviceFilters>, options: Deferred<DeviceDetailOptions> = {},
  /** The lists' change stamps, read after the request began (with its credentials); read anew when absent. */
  stamps?: ListStamps,
): Promise<Device[]> {
  if (!hasEntitlement(user, 'DeviceList')) return [];
  return listView(db, readDeferred(filters), readDeferred(options), false, stamps);
}

/**
 * GET /Device/Available: devices the caller could retain now. Leaves out devices retained by anyone (in use),
 * disabled, deleted or offline, and those booked by another user now. The list is the same for every caller (and
 * kept as such); who booked what is applied to it here, per caller and at the current time, so no caller sees
 * another's view and a booking takes effect the moment it starts.
 */
export async function listAvailableDevices(
  db: Db, user: AuthenticatedUser, filters: Deferred<DeviceFilters> = {}, options: Deferred<DeviceDetailOptions> = {},
  stamps?: ListStamps,
): Promise<Device[]> {
  if (!hasEntitlement(user, 'DeviceList')) return [];
  const devices = await listView(db, readDeferred(filters), readDeferred(options), true, stamps);
  const now = Date.now();
  const bookedByOther = (d: Device) => d.reservedById !== undefined && d.reservedById !== user.id
    && Date.parse(d.nextReservationStartTime ?? '') <= now;
  // The kept array itself when nothing is left out, so its serialised bytes are kept too.
  return devices.some(bookedByOther) ? devices.filter((d) => !bookedByOther(d)) : devices;
}

/** A filtered list is read from the records; the unfiltered ones, which pollers ask for, are kept between changes. */
async function listView(
  db: Db, filters: DeviceFilters, detail: DeviceDetailOptions, availableOnly: boolean, stamps: ListStamps | undefined,
): Promise<Device[]> {
  const load = async () => {
    const rows = await queryDevices(db, filters, detail, availableOnly);
    const bookingEnds = rows.flatMap((row) => (row.booking_ends_at ? [row.booking_ends_at.getTime()] : []));
    return {
      devices: await mapDevices(db, rows, detail), showsRetained: rows.some((row) => row.retained_by !== null),
      firstBookingEnd: bookingEnds.length > 0 ? Math.min(...bookingEnds) : undefined,
    };
  };
  if (filters.filter) {
    // Its `app` is matched by the query (installed packages are not mapped unless asked for).
    const typed = { ...filters.filter, app: undefined };
    return (await load()).devices.filter((device) => matchesDeviceFilter(typed, device));
  }
  if (Object.values(filters).some((value) => value !== undefined)) return (await load()).devices;
  return keptDeviceList(db, { detail, availableOnly }, load, stamps);
}

/**
 * One device as GET /Device shows it, with no entitlement check: for the event stream, which loads a changed
 * device once and filters per subscriber. Undefined when there is no such record.
 */
export async function readDeviceModel(db: Db, id: string): Promise<Device | undefined> {
  const guid = parseGuid(id);
  if (!guid) return undefined;
  const rows = await queryDevices(db, { id: guid }, {}, false);
  return (await mapDevices(db, rows, {}))[0];
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
  if (f.anyId !== undefined) q = q.where(identifierMatch(f.anyId).where);
  if (f.vendorUniqueIdentifier !== undefined) q = q.where('devices.vendor_unique_identifier', '=', f.vendorUniqueIdentifier);
  if (f.operatingSystemVersion !== undefined) q = q.where('devices.operating_system_version', '=', f.operatingSystemVersion);
  if (f.retained !== undefined) q = q.where('devices.retained_by', f.retained ? 'is not' : 'is', null);
  if (f.retainedBy !== undefined) {
    const userId = parseGuid(f.retainedBy);
    q = userId ? q.where('devices.retained_by', '=', userId)
      : q.where((eb) => eb(eb.fn('lower', ['users.login']), '=', f.retainedBy!.toLowerCase()));
  }
  if (f.retainedByDisplayName !== undefined) {
    q = q.where(sql<boolean>`lower(${USER_DISPLAY_NAME}) = ${f.retainedByDisplayName.toLowerCase()}`);
  }
  if (f.bundleInstalled !== undefined) {
    q = q.where(sql<boolean>`devices.installed_packages @> ${JSON.stringify([{ identifier: f.bundleInstalled }])}::jsonb`);
  }
  if (f.disableMetrics !== undefined) q = q.where('devices.metrics_enabled', '=', !f.disableMetrics);
  if (f.filter?.app !== undefined) {
    q = q.where(sql<boolean>`devices.installed_packages @> ${JSON.stringify([{ identifier: f.filter.app }])}::jsonb`);
  }
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
  const pins = new Map<string, Map<string, string>>();
  if ((options.applications || options.allApplications) && rows.length > 0) {
    const identifiers = [...new Set(rows.flatMap((r) => r.installed_packages.map((p) => p.identifier)))];
    if (identifiers.length > 0) {
      managed = await db.selectFrom('applications').selectAll()
        .where('application_identifier', 'in', identifiers).execute();
      const installed = await db.selectFrom('installed_records').select(['device_id', 'application_identifier', 'application_id'])
        .where('device_id', 'in', rows.map((r) => r.id)).execute();
      for (const pin of installed) {
        let device = pins.get(pin.device_id);
        if (!device) pins.set(pin.device_id, device = new Map());
        device.set(pin.application_identifier, pin.application_id);
      }
    }
  }
  return rows.map((row) => toDeviceModel(row, options, managed, pins.get(row.id)));
}
