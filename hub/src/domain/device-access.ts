/**
 * Who may open a device right now, as the gateways are told in Retention messages: the retainer, with
 * their registered adb keys, while the device is retained, enabled and not deleted. Anything else (released,
 * disabled, deleted) is an empty retain id, which closes the device's access endpoint and voids its tickets.
 * Told after every change that affects it; a gateway that misses one gets the whole set in its next Welcome.
 */
import type { AdbPublicKey, Retention } from '@devicelab/proto';
import type { GatewayDirectory } from '../gateways/gateway-directory';
import type { Db, Tx } from '../store/database';

type AccessNotifier = Pick<GatewayDirectory, 'notifyRetention'>;

export interface AccessRow {
  vendor_unique_identifier: string;
  retain_id: string | null;
  retained_by: string | null;
  enabled: boolean;
  deleted: boolean;
  login: string | null;
}

function accessQuery(db: Db | Tx) {
  return db.selectFrom('devices').leftJoin('users', 'users.id', 'devices.retained_by')
    .select(['devices.vendor_unique_identifier', 'devices.retain_id', 'devices.retained_by', 'devices.enabled',
      'devices.deleted', 'users.login']);
}

async function retentionsOf(db: Db | Tx, rows: AccessRow[]): Promise<Retention[]> {
  const userIds = [...new Set(rows.filter(isOpenForAccess).map((row) => row.retained_by as string))];
  const keys = userIds.length === 0 ? [] : await db.selectFrom('user_adb_keys')
    .select(['user_id', 'key', 'fingerprint', 'comment']).where('user_id', 'in', userIds).orderBy('added_at').execute();
  return rows.map((row) => retentionOf(row, keys.filter((k) => k.user_id === row.retained_by)));
}

const isOpenForAccess = (row: AccessRow): boolean => !!(row.retain_id && row.retained_by && row.enabled && !row.deleted);

/** The Retention message of one device, given its retainer's adb keys (oldest first). */
export function retentionOf(row: AccessRow, retainerKeys: readonly AdbPublicKey[]): Retention {
  if (!isOpenForAccess(row)) return { vendorUniqueIdentifier: row.vendor_unique_identifier, retainId: '' };
  return {
    vendorUniqueIdentifier: row.vendor_unique_identifier,
    retainId: row.retain_id as string,
    userId: row.retained_by as string,
    userLogin: row.login ?? '',
    adbKeys: retainerKeys.map((k) => ({ key: k.key, fingerprint: k.fingerprint, comment: k.comment })),
  };
}

/** Every retained device of a gateway, for its Welcome (devices closed to access come as released). */
export async function gatewayRetentions(db: Db, gatewayId: string): Promise<Retention[]> {
  const rows = await accessQuery(db).where('devices.gateway_id', '=', gatewayId)
    .where('devices.retain_id', 'is not', null).execute();
  return retentionsOf(db, rows);
}

/** The current access of these devices (by vendor unique identifier), as their gateways are told it. */
export async function currentRetentions(db: Db, vendorUniqueIdentifiers: readonly string[]): Promise<Retention[]> {
  if (vendorUniqueIdentifiers.length === 0) return [];
  const rows = await accessQuery(db).where('devices.vendor_unique_identifier', 'in', [...vendorUniqueIdentifiers]).execute();
  return retentionsOf(db, rows);
}

/** Tells the gateways the current access of these devices (Guids). Best effort: a read failure is reported, never thrown. */
export async function announceDeviceAccess(
  db: Db, gateways: AccessNotifier | undefined, deviceIds: readonly string[],
): Promise<Retention[]> {
  if (!gateways || deviceIds.length === 0) return [];
  try {
    const retentions = await retentionsOf(db, await accessQuery(db).where('devices.id', 'in', [...deviceIds]).execute());
    for (const retention of retentions) gateways.notifyRetention(retention);
    return retentions;
  } catch {
    return []; // the records store is away: the gateway's next Welcome carries the whole set
  }
}

/** The devices a user retains now (their access changes with the user's keys). */
export async function devicesRetainedBy(db: Db, userId: string): Promise<string[]> {
  const rows = await db.selectFrom('devices').select('id').where('retained_by', '=', userId).execute();
  return rows.map((row) => row.id);
}
