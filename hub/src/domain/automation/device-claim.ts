/**
 * How a new session gets its device: the capabilities become a device filter, and the device is claimed for the
 * session's user as a retain (waiting its turn when none is free).
 */
import { ApiFailure, type DeviceFilter } from '@devicelab/shared';
import type { AuthenticatedUser } from '../../auth/authenticated-user';
import type { Db } from '../../store/database';
import { waitForDevice, type WaitingLineContext } from '../waiting-line';
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

/** The claim of the lab: the shared first-come waiting line, marked as an automation request. */
export function waitingLineClaim(ctx: WaitingLineContext): ClaimDevice {
  return async (user, filter, waitMs, signal) => {
    const { deviceId } = await waitForDevice(ctx, { user, filter, waitMs, signal, purpose: 'automation' });
    return claimedDevice(ctx.db, deviceId);
  };
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
