/** What a wait that ran out says: that no device matches at all, or which matching ones are busy and why. */
import { matchesDeviceFilter, type DeviceFilter } from '@devicelab/shared';
import type { Db } from '../store/database';
import { toDeviceModel } from './device-mapping';
import { selectDevices, type DeviceWithRetainer } from './device-queries';

/** At most this many busy devices are named. */
const NAMED = 10;

export async function waitTimeoutText(db: Db, filter: DeviceFilter, device: DeviceWithRetainer | undefined, waitMs: number): Promise<string> {
  const waited = `${Math.round(waitMs / 1000)} s`;
  const needApps = filter.app !== undefined;
  const rows = device ? [device] : await selectDevices(db, { properties: false, installedPackages: needApps })
    .where('devices.deleted', '=', false).execute();
  const matching = device ? rows : rows.filter((row) => matchesDeviceFilter(filter, toDeviceModel(row, { allApplications: needApps })));
  const what = device ? `device '${device.name}'` : `a device matching '${filter.text || '(any)'}'`;
  if (matching.length === 0) return `No device matches '${filter.text}'; waiting cannot help. Widen the filter.`;
  const busy = matching.slice(0, NAMED).map((row) => `${row.name} (${whyBusy(row)})`).join(', ');
  const more = matching.length > NAMED ? ` and ${matching.length - NAMED} more` : '';
  return `No ${what.replace(/^a /, '')} was free within ${waited}: all ${matching.length} matching are busy: ${busy}${more}.`;
}

function whyBusy(row: DeviceWithRetainer): string {
  if (row.retained_by) return `retained by ${row.retainer_login ?? 'someone'}`;
  if (!row.enabled) return 'disabled';
  if (row.availability !== 'Online') return 'offline';
  if (row.booker_login) return `booked by ${row.booker_login}`;
  return 'taken by an earlier waiter';
}
