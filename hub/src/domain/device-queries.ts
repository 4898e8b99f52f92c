/** Device rows as the domain reads them: the device with its retainer's login and name. */
import { sql, type RawBuilder, type SqlBool } from 'kysely';
import { ApiFailure, parseGuid } from '@devicelab/shared';
import type { Db, Tx } from '../store/database';
import type { Database, DeviceRow } from '../store/schema';

export interface DeviceWithRetainer extends Omit<DeviceRow, 'list_change'> {
  retainer_login: string | null;
  retainer_first_name: string | null;
  retainer_middle_name: string | null;
  retainer_last_name: string | null;
  /** The device's current or next booking (the earliest not yet ended), or nulls. */
  booking_user_id: string | null;
  booking_starts_at: Date | null;
  booking_ends_at: Date | null;
  booker_login: string | null;
  booker_first_name: string | null;
  booker_middle_name: string | null;
  booker_last_name: string | null;
  /** The device's open automation session (migration 033), or nulls. */
  automation_session_id: string | null;
  automation_session_started_at: Date | null;
  /** The current retain's lease (migration 035): its end, when it goes idle, its name; nulls when none. */
  lease_ends_at: Date | null;
  idle_release_at: Date | null;
  lease_name: string | null;
}

/** Every device column but the two large JSON lists, which a listing reads only when it shows them. */
const DEVICE_SUMMARY_COLUMNS = [
  'id', 'vendor_unique_identifier', 'gateway_id', 'name', 'operating_system', 'serial_number', 'model', 'manufacturer',
  'friendly_model', 'operating_system_version', 'operating_system_build', 'product_type', 'hardware_model',
  'device_class', 'form_factor', 'vendor_device_name', 'mac_address', 'bluetooth_address', 'usb_location',
  'usb_hub_serial_number', 'usb_hub_port_number', 'battery_status', 'battery_percent', 'disk_space', 'disk_space_used',
  'availability', 'readiness', 'readiness_detail', 'enabled', 'deleted', 'slot_number', 'notes', 'retained_by',
  'retained_at', 'retain_id', 'last_inuse_at', 'last_connected_at', 'last_disconnected_at', 'created_at',
  'metrics_enabled',
] as const;
// A column added to the schema but not listed above fails to compile here.
type UnlistedDeviceColumn = Exclude<keyof DeviceRow, (typeof DEVICE_SUMMARY_COLUMNS)[number] | 'properties' | 'installed_packages' | 'list_change'>;
const everyColumnListed: [UnlistedDeviceColumn] extends [never] ? true : UnlistedDeviceColumn = true;
void everyColumnListed;

/** Which of the large JSON lists to read; the others come back empty. Default: both. */
interface DeviceDetailColumns {
  properties?: boolean;
  installedPackages?: boolean;
}

export function selectDevices(db: Db | Tx, detail: DeviceDetailColumns = { properties: true, installedPackages: true }) {
  const emptyList = sql<never[]>`'[]'::jsonb`;
  return db
    .selectFrom('devices')
    .leftJoin('users', 'users.id', 'devices.retained_by')
    .leftJoinLateral((eb) => eb.selectFrom('reservations')
      .innerJoin('users as booker', 'booker.id', 'reservations.user_id')
      .select(['reservations.user_id', 'reservations.starts_at', 'reservations.ends_at', 'booker.login',
        'booker.first_name', 'booker.middle_name', 'booker.last_name'])
      .whereRef('reservations.device_id', '=', 'devices.id').where('reservations.ends_at', '>', sql<Date>`now()`)
      .orderBy('reservations.starts_at').limit(1).as('booking'), (join) => join.onTrue())
    .leftJoin('automation_sessions as automation', (join) => join.onRef('automation.device_id', '=', 'devices.id')
      .on('automation.state', '<>', 'closed'))
    .leftJoin('device_leases as lease', (join) => join.onRef('lease.device_id', '=', 'devices.id')
      .onRef('lease.retain_id', '=', 'devices.retain_id'))
    .select(DEVICE_SUMMARY_COLUMNS.map((column) => `devices.${column}` as const))
    .select([
      detail.properties ? 'devices.properties' : emptyList.as('properties'),
      detail.installedPackages ? 'devices.installed_packages' : emptyList.as('installed_packages'),
      'users.login as retainer_login',
      'users.first_name as retainer_first_name',
      'users.middle_name as retainer_middle_name',
      'users.last_name as retainer_last_name',
      'booking.user_id as booking_user_id',
      'booking.starts_at as booking_starts_at',
      'booking.ends_at as booking_ends_at',
      'booking.login as booker_login',
      'booking.first_name as booker_first_name',
      'booking.middle_name as booker_middle_name',
      'booking.last_name as booker_last_name',
      'automation.session_id as automation_session_id',
      'automation.created_at as automation_session_started_at',
      'lease.ends_at as lease_ends_at',
      'lease.lease_name as lease_name',
      // The lab's idle time where the retain asked for none (lease-settings.ts); 0: never idle.
      sql<Date | null>`CASE WHEN coalesce(lease.idle_minutes, lease_setting('lease.idleMinutes', 30)) > 0
        THEN lease.last_used_at + make_interval(mins => coalesce(lease.idle_minutes, lease_setting('lease.idleMinutes', 30))) END`
        .as('idle_release_at'),
    ]);
}

export const deviceNotFound = (identifier: string): string => `Device '${identifier}' not found.`;

/**
 * Resolves a device identifier (spec 2.1): the service's Guid, the serial number or the vendor unique identifier.
 * Unknown → ApiFailure `Device '<id>' not found.`.
 */
export async function resolveDevice(db: Db | Tx, identifier: string): Promise<DeviceWithRetainer> {
  const match = identifierMatch(identifier);
  const row = await selectDevices(db).where(match.where).orderBy(match.preference).executeTakeFirst();
  if (!row) throw new ApiFailure(deviceNotFound(match.text), 'DEVICE_NOT_FOUND');
  return row;
}

export interface DeviceIdentity {
  id: string;
  name: string;
}

/**
 * The device an identifier names, as only its id and name: the same rules as resolveDevice, for paths that need
 * no more (its `properties`/`packages` JSON is large). A query to embed (one row at most), or run it with
 * resolveDeviceIdentity.
 */
export function selectDeviceIdentity(db: Db | Tx, identifier: string) {
  const match = identifierMatch(identifier);
  return db.selectFrom('devices').select(['devices.id', 'devices.name']).where(match.where).orderBy(match.preference).limit(1);
}

export async function resolveDeviceIdentity(db: Db | Tx, identifier: string): Promise<DeviceIdentity> {
  const row = await selectDeviceIdentity(db, identifier).executeTakeFirst();
  if (!row) throw new ApiFailure(deviceNotFound(identifier.trim()), 'DEVICE_NOT_FOUND');
  return row;
}

/**
 * How request text enters a statement: bound parameters (the default), or rendered into the statement's text for
 * a one-message batch (metrics/sql-literals.ts: hex digits only).
 */
export interface TextRendering {
  text(value: string): RawBuilder<string>;
  uuid(value: string): RawBuilder<string>;
}

const BOUND: TextRendering = { text: (value) => sql<string>`${value}`, uuid: (value) => sql<string>`${value}::uuid` };

/** Spec 2.1's identifier rules as a filter and a preference, for any query over `devices`. */
export function identifierMatch(identifier: string, render: TextRendering = BOUND) {
  const text = identifier.trim();
  const guid = parseGuid(text);
  const value = render.text(text);
  const byGuid = guid ? render.uuid(guid) : undefined;
  return {
    text,
    where: sql<SqlBool>`(${byGuid ? sql`devices.id = ${byGuid} OR ` : sql``}devices.vendor_unique_identifier = ${value}
      OR devices.serial_number = ${value})`,
    // A Guid match beats a serial-number match; a vendor id beats a serial number.
    preference: sql`CASE ${byGuid ? sql`WHEN devices.id = ${byGuid} THEN 0 ` : sql``}WHEN devices.vendor_unique_identifier = ${value} THEN 1 ELSE 2 END`,
  };
}

/** Locks the device row for the rest of the transaction (SELECT … FOR UPDATE) and returns it fresh. */
export async function lockDevice(trx: Tx, deviceId: string): Promise<DeviceWithRetainer> {
  await trx.selectFrom('devices').select('id').where('id', '=', deviceId).forUpdate().executeTakeFirstOrThrow();
  return selectDevices(trx).where('devices.id', '=', deviceId).executeTakeFirstOrThrow();
}

export function retainerDisplayName(row: DeviceWithRetainer): string | undefined {
  return displayNameOf(row.retainer_login, row.retainer_first_name, row.retainer_middle_name, row.retainer_last_name);
}

export function bookerDisplayName(row: DeviceWithRetainer): string | undefined {
  return displayNameOf(row.booker_login, row.booker_first_name, row.booker_middle_name, row.booker_last_name);
}

/** The non-blank name parts joined by a space, or the login when there are none. */
function displayNameOf(login: string | null, ...names: (string | null)[]): string | undefined {
  if (!login) return undefined;
  return names.filter((p) => p && p.trim()).join(' ') || login;
}

/** Who has booked the device at `at` (its shown booking, when that has begun), or null. */
export function bookerAt(row: Pick<DeviceWithRetainer, 'booking_user_id' | 'booking_starts_at'>, at: Date): string | null {
  return row.booking_starts_at && row.booking_starts_at <= at ? row.booking_user_id : null;
}

export const inUseBy = (row: Pick<DeviceWithRetainer, 'name' | 'retainer_login' | 'retained_by'>): string =>
  `Device '${row.name}' is in use by '${row.retainer_login ?? row.retained_by}'.`;
