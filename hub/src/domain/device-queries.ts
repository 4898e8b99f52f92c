/** Device rows as the domain reads them: the device with its retainer's login and name. */
import { ApiFailure, parseGuid } from '@devicelab/shared';
import type { Db, Tx } from '../store/database';
import type { DeviceRow } from '../store/schema';

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
  const text = identifier.trim();
  const guid = parseGuid(text);
  const row = await selectDevices(db)
    .where((eb) => {
      const alternatives = [eb('devices.vendor_unique_identifier', '=', text), eb('devices.serial_number', '=', text)];
      if (guid) alternatives.unshift(eb('devices.id', '=', guid));
      return eb.or(alternatives);
    })
    // A Guid match beats a serial-number match; a vendor id beats a serial number.
    .orderBy((eb) => eb.case().when('devices.id', '=', guid ?? '00000000-0000-0000-0000-000000000000').then(0)
      .when('devices.vendor_unique_identifier', '=', text).then(1).else(2).end())
    .executeTakeFirst();
  if (!row) throw new ApiFailure(deviceNotFound(text));
  return row;
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
