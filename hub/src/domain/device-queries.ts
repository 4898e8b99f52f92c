/** Device rows as the domain reads them: the device with its retainer's login and name. */
import type { ExpressionBuilder } from 'kysely';
import { ApiFailure, parseGuid } from '@devicelab/shared';
import type { Db, Tx } from '../store/database';
import type { Database, DeviceRow } from '../store/schema';

export interface DeviceWithRetainer extends DeviceRow {
  retainer_login: string | null;
  retainer_first_name: string | null;
  retainer_middle_name: string | null;
  retainer_last_name: string | null;
}

export function selectDevices(db: Db | Tx) {
  return db
    .selectFrom('devices')
    .leftJoin('users', 'users.id', 'devices.retained_by')
    .selectAll('devices')
    .select([
      'users.login as retainer_login',
      'users.first_name as retainer_first_name',
      'users.middle_name as retainer_middle_name',
      'users.last_name as retainer_last_name',
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
  if (!row) throw new ApiFailure(deviceNotFound(match.text));
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
  if (!row) throw new ApiFailure(deviceNotFound(identifier.trim()));
  return row;
}

/** Spec 2.1's identifier rules as a filter and a preference, for any query over `devices`. */
function identifierMatch(identifier: string) {
  const text = identifier.trim();
  const guid = parseGuid(text);
  return {
    text,
    where: (eb: ExpressionBuilder<Database, 'devices'>) => {
      const alternatives = [eb('devices.vendor_unique_identifier', '=', text), eb('devices.serial_number', '=', text)];
      if (guid) alternatives.unshift(eb('devices.id', '=', guid));
      return eb.or(alternatives);
    },
    // A Guid match beats a serial-number match; a vendor id beats a serial number.
    preference: (eb: ExpressionBuilder<Database, 'devices'>) => eb.case()
      .when('devices.id', '=', guid ?? '00000000-0000-0000-0000-000000000000').then(0)
      .when('devices.vendor_unique_identifier', '=', text).then(1).else(2).end(),
  };
}

/** Locks the device row for the rest of the transaction (SELECT … FOR UPDATE) and returns it fresh. */
export async function lockDevice(trx: Tx, deviceId: string): Promise<DeviceWithRetainer> {
  await trx.selectFrom('devices').select('id').where('id', '=', deviceId).forUpdate().executeTakeFirstOrThrow();
  return selectDevices(trx).where('devices.id', '=', deviceId).executeTakeFirstOrThrow();
}

export function retainerDisplayName(row: DeviceWithRetainer): string | undefined {
  if (!row.retainer_login) return undefined;
  const name = [row.retainer_first_name, row.retainer_middle_name, row.retainer_last_name].filter((p) => p && p.trim()).join(' ');
  return name || row.retainer_login;
}

export const inUseBy = (row: DeviceWithRetainer): string =>
  `Device '${row.name}' is in use by '${row.retainer_login ?? row.retained_by}'.`;
