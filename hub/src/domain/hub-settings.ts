/**
 * System-area settings an administrator reads and changes (`GET/POST /Settings`, an extension of the spec):
 * the defaults of a device reset when the request omits `uninstallAll` / `reboot` (spec 4.2), how `/Gateway`
 * names a data-mode port's state (wire rule 26, docs/wire-rules.md), and the licensed device limit (spec 8: disabled
 * devices do not count toward it).
 *
 * The reset defaults live in `hub_settings` so a change survives restarts. The licensed device limit is the
 * hub's configuration (`DEVICELAB_LICENSED_DEVICES`, unlimited when unset): it is reported here but not
 * changeable over the API, because a limit an administrator can lift from the API would limit nothing.
 */
import { sql } from 'kysely';
import { ApiFailure, DataPortStateName, parseEnumValue } from '@devicelab/shared';
import type { AuthenticatedUser } from '../auth/authenticated-user';
import { requireEntitlement } from '../auth/entitlements';
import type { Db, Tx } from '../store/database';
import { licensedDeviceLimit } from '../config';
import { readDeferred, type Deferred } from './deferred-input';
import { LEASE_SETTING_KEYS, readLeaseSettings, type LeaseSettings } from './lease-settings';

interface HubSettings extends LeaseSettings {
  /** Reset without `uninstallAll`: remove every user-installed application. */
  resetUninstallAll: boolean;
  /** Reset without `reboot`: reboot the device afterwards. */
  resetReboot: boolean;
  /** Most devices that may be enabled (and not deleted) at once; omitted (null) = unlimited. */
  licensedDeviceLimit: number | null;
}

/** `/Settings` as an administrator reads it: the stored settings with the hub's configured default applied. */
interface HubSettingsView extends HubSettings {
  /** `Data` (the spec) or `Sync` (the vendor's C# client): how `/Gateway` writes a data-mode port's state. */
  dataPortState: DataPortStateName;
}

const DATA_PORT_STATE_KEY = 'gateway.dataPortState';

/** The settings stored in `hub_settings`, the ones `POST /Settings?update` changes. */
export const STORED_SETTINGS = ['resetUninstallAll', 'resetReboot'] as const;
export type SettingsChanges = Partial<Pick<HubSettings, (typeof STORED_SETTINGS)[number]>>
  & { dataPortState?: DataPortStateName } & Partial<LeaseSettings>;

const STORED: Record<(typeof STORED_SETTINGS)[number], { key: string; fallback: boolean }> = {
  resetUninstallAll: { key: 'reset.uninstallAll', fallback: true },
  resetReboot: { key: 'reset.reboot', fallback: true },
};

export async function readHubSettings(db: Db | Tx): Promise<HubSettings> {
  const rows = await db.selectFrom('hub_settings').select(['key', 'value'])
    .where('key', 'in', Object.values(STORED).map((s) => s.key)).execute();
  const stored = new Map(rows.map((r) => [r.key, r.value]));
  const flag = (name: keyof typeof STORED) => {
    const value = stored.get(STORED[name].key);
    return value === undefined ? STORED[name].fallback : value === 'true';
  };
  return {
    resetUninstallAll: flag('resetUninstallAll'), resetReboot: flag('resetReboot'), licensedDeviceLimit: licensedDeviceLimit(),
    ...await readLeaseSettings(db),
  };
}

/** The stored dataPortState, or `configured` (the hub's DEVICELAB_DATA_PORT_STATE) when none was set. */
export async function readDataPortState(db: Db | Tx, configured: DataPortStateName): Promise<DataPortStateName> {
  const row = await db.selectFrom('hub_settings').select('value').where('key', '=', DATA_PORT_STATE_KEY).executeTakeFirst();
  return (row && parseEnumValue(DataPortStateName, row.value)) || configured;
}

/** GET /Settings; `configuredDataPortState` is the hub configuration's default. */
export async function getHubSettings(
  db: Db, user: AuthenticatedUser, configuredDataPortState: DataPortStateName,
): Promise<HubSettingsView> {
  requireEntitlement(user, 'SystemManageSettings');
  return { ...await readHubSettings(db), dataPortState: await readDataPortState(db, configuredDataPortState) };
}

/** POST /Settings?update. The changes are read (and so checked) only after the entitlement check. */
export async function updateHubSettings(db: Db, user: AuthenticatedUser, settings: Deferred<SettingsChanges>): Promise<void> {
  requireEntitlement(user, 'SystemManageSettings');
  const { dataPortState, ...rest } = readDeferred(settings);
  const changes = Object.entries(rest).map(([name, value]) => ({
    key: name in STORED ? STORED[name as keyof typeof STORED].key : LEASE_SETTING_KEYS[name as keyof LeaseSettings].key,
    value: String(value),
  }));
  if (dataPortState) changes.push({ key: DATA_PORT_STATE_KEY, value: dataPortState });
  if (changes.length === 0) return;
  await db.insertInto('hub_settings').values(changes)
    .onConflict((oc) => oc.column('key').doUpdateSet({ value: (eb) => eb.ref('excluded.value') }))
    .execute();
}

/** Serialises every decision that counts licensed devices (enable, undelete, discovery) for the transaction. */
export async function lockLicensedDevices(trx: Tx): Promise<void> {
  await sql`SELECT pg_advisory_xact_lock(hashtext('devicelab.licensed-devices'))`.execute(trx);
}

/** Devices counting toward the limit: enabled and not deleted, other than `exceptId`. */
export async function countLicensedDevices(trx: Tx, exceptId?: string): Promise<number> {
  let q = trx.selectFrom('devices').select(sql<number>`count(*)::int`.as('n'))
    .where('enabled', '=', true).where('deleted', '=', false);
  if (exceptId) q = q.where('id', '<>', exceptId);
  return (await q.executeTakeFirstOrThrow()).n;
}

export const licensedLimitReached = (limit: number): string =>
  `The licensed device limit of ${limit} enabled device${limit === 1 ? '' : 's'} is reached; disable or delete another device first.`;

/**
 * Fails with `licensedLimitReached` when one more licensed device (`deviceId`, not yet counted) would exceed the
 * limit. Takes the licensing lock first, so two concurrent enables cannot both pass.
 */
export async function assertLicenseAllows(trx: Tx, deviceId: string): Promise<void> {
  const limit = licensedDeviceLimit();
  if (limit === null) return;
  await lockLicensedDevices(trx);
  if ((await countLicensedDevices(trx, deviceId)) >= limit) throw new ApiFailure(licensedLimitReached(limit));
}
