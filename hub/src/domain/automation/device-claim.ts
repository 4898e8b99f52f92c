/**
 * How a new session gets its device: the capabilities become a device filter, and the device is claimed for the
 * session's user as a retain (waiting its turn when none is free). A device the user holds already (retained in the
 * dashboard or with the CLI) never frees up for them: when one matches and no session uses it, the session adopts
 * that retain at once instead of waiting. Ending such a session leaves the retain as it was (`retainMadeForSession`).
 */
import { sql } from 'kysely';
import { ApiFailure, type DeviceFilter } from '@devicelab/shared';
import type { AuthenticatedUser } from '../../auth/authenticated-user';
import type { Db } from '../../store/database';
import { filterTerms, waitForDevice, type WaitingLineContext } from '../waiting-line';
import type { DeviceCriteria } from './capabilities';

type AutomationDeviceFilter = DeviceFilter;

export interface ClaimedDevice {
  id: string;
  name: string;
  vendorUniqueIdentifier: string;
  operatingSystem: 'Android' | 'iOS';
  retainId: string;
  gatewayId: string | null;
}

/** Retains a device matching `filter` for `user`, waiting up to `waitMs`; an aborted `signal` leaves the wait. */
export type ClaimDevice = (
  user: AuthenticatedUser, filter: AutomationDeviceFilter, waitMs: number, signal: AbortSignal,
) => Promise<ClaimedDevice>;

/**
 * The filter of one capability set. `deviceName` names the device, or else its model: it is the name when some
 * device's name holds it (one query), the model otherwise. A `devicelab:filter` is read by `parseFilter` and the
 * capabilities add to it.
 */
export async function filterOfCriteria(
  db: Db, criteria: DeviceCriteria, parseFilter: (text: string) => AutomationDeviceFilter,
): Promise<AutomationDeviceFilter> {
  const base = criteria.filterText ? parseFilter(criteria.filterText) : { text: '' };
  const filter: AutomationDeviceFilter = { ...base };
  const parts = criteria.filterText ? [criteria.filterText] : [];
  const add = <K extends keyof AutomationDeviceFilter>(key: K, value: AutomationDeviceFilter[K] | undefined, label: string) => {
    if (value === undefined) return;
    if (filter[key] !== undefined && String(filter[key]).toLowerCase() !== String(value).toLowerCase()) {
      throw new ApiFailure(`Capability ${label} '${String(value)}' contradicts devicelab:filter '${criteria.filterText}'.`, 'INVALID_CAPABILITIES');
    }
    filter[key] = value;
    parts.push(`${String(key)}=${String(value)}`);
  };
  add('os', criteria.os, 'platformName');
  add('osVersion', criteria.osVersion, 'platformVersion');
  add('id', criteria.id, 'udid/deviceConnectDevice');
  add('formFactor', criteria.formFactor, 'devicelab:formFactor');
  if (criteria.deviceName) {
    const named = await db.selectFrom('devices').select('id').where('deleted', '=', false)
      .where((eb) => eb(eb.fn('strpos', [eb.fn('lower', ['name']), eb.val(criteria.deviceName!.toLowerCase())]), '>', 0))
      .limit(1).executeTakeFirst();
    add(named ? 'name' : 'model', criteria.deviceName, 'deviceName');
  }
  filter.text = parts.join(',');
  return filter;
}

/**
 * The claim of the lab: a matching device the user holds with no session on it (adopted), else the shared
 * first-come waiting line, marked as an automation request.
 */
export function waitingLineClaim(ctx: WaitingLineContext): ClaimDevice {
  return async (user, filter, waitMs, signal) => {
    const held = await heldMatchingRetain(ctx.db, user, filter);
    if (held) {
      const adopted = await adoptableRetain(ctx.db, user, held).catch(() => undefined); // taken meanwhile: the line then
      if (adopted) return adopted;
    }
    const { deviceId } = await waitForDevice(ctx, { user, filter, waitMs, signal, purpose: 'automation' });
    return claimedDevice(ctx.db, deviceId);
  };
}

/** The retain of an online device `user` holds that matches `filter` and no session uses, the oldest first. */
async function heldMatchingRetain(db: Db, user: AuthenticatedUser, filter: DeviceFilter): Promise<string | undefined> {
  const row = await db.selectFrom('devices as d').select('d.retain_id')
    .where('d.retained_by', '=', user.id).where('d.deleted', '=', false).where('d.availability', '=', 'Online')
    .where(sql<boolean>`device_matches_filter(d, ${filterTerms(filter)}::jsonb)`)
    .where(({ not, exists, selectFrom }) => not(exists(selectFrom('automation_sessions as s').select('s.id')
      .whereRef('s.device_id', '=', 'd.id').where('s.state', '<>', 'closed'))))
    .orderBy('d.retained_at').limit(1).executeTakeFirst();
  return row?.retain_id ?? undefined;
}

/**
 * A session may adopt a retain only when `user` holds the device by that very retain and no session uses it yet:
 * the one rule for a held device named by a new session here and for a creation forwarded by another replica.
 * Throws DEVICE_NOT_RETAINED saying why not.
 */
export async function adoptableRetain(db: Db, user: AuthenticatedUser, retainId: string,
  more?: (device: { id: string; vendor_unique_identifier: string }) => Promise<string | undefined>): Promise<ClaimedDevice> {
  const refuse = (why: string) => new ApiFailure(`The session cannot be created on that retain: ${why}.`, 'DEVICE_NOT_RETAINED');
  const row = await db.selectFrom('devices').select(['id', 'vendor_unique_identifier'])
    .where('retain_id', '=', retainId).where('retained_by', '=', user.id).where('deleted', '=', false).executeTakeFirst();
  if (!row) throw refuse('that retain is not yours, or has ended');
  const otherwise = await more?.(row);
  if (otherwise) throw refuse(otherwise);
  const used = await db.selectFrom('automation_sessions').select('id')
    .where('retain_id', '=', retainId).where('state', '<>', 'closed').executeTakeFirst();
  if (used) throw refuse('a session uses that retain already');
  return claimedDevice(db, row.id);
}

/**
 * Whether the device's current retain was made for a WebDriver session (the waiting line marks its retain event so)
 * rather than adopted from a retain the user held before: only the former ends with its session.
 */
export async function retainMadeForSession(db: Db, deviceId: string): Promise<boolean> {
  const row = await db.selectFrom('events').select('automation_session')
    .where('device_id', '=', deviceId).where('event_type', '=', 'DeviceRetained').where('bool_value', '=', true)
    .orderBy('seq', 'desc').limit(1).executeTakeFirst();
  return row?.automation_session === true;
}

/** The claimed device as the retain left it. */
export async function claimedDevice(db: Db, deviceId: string): Promise<ClaimedDevice> {
  const row = await db.selectFrom('devices')
    .select(['id', 'name', 'vendor_unique_identifier', 'operating_system', 'retain_id', 'gateway_id'])
    .where('id', '=', deviceId).executeTakeFirstOrThrow();
  return {
    id: row.id, name: row.name, vendorUniqueIdentifier: row.vendor_unique_identifier,
    operatingSystem: row.operating_system === 'iOS' ? 'iOS' : 'Android', retainId: row.retain_id ?? '', gatewayId: row.gateway_id,
  };
}
