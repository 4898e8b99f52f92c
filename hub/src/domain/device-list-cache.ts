/**
 * The unfiltered device lists (GET /Device and /Device/Available, per detail view), kept in memory between
 * changes: dashboards and CI pipelines poll them, and mapping 1,000 rows on every poll was most of the hub's
 * time. Before using a kept list the hub reads the change stamps of the rows the list is made of (migrations
 * 014 and 026: count, sum and max of `list_change`, one cheap query); any committed change on any hub replica changes
 * them, so a change is visible on the next read. The stamps are read before the rows (usually in the same
 * statement as the request's credentials, auth/credential-reads.ts), so a list is never kept
 * under stamps newer than its rows. A list showing a retained device also depends on the current second (a
 * retained device is in use "now"), so it is kept for that second only. A list showing bookings shows each
 * device's current or next one, which changes when the current one ends: it is kept until the first shown booking
 * ends (a booking change itself re-stamps its device, migration 030). Each kept list is the same array
 * object until it changes, which lets the response writer keep its serialised bytes too. Requests that find the
 * list changed under the same new stamps share one load (equal stamps: nothing was committed between them).
 */
import { sql, type RawBuilder } from 'kysely';
import type { Device } from '@devicelab/shared';
import type { Db } from '../store/database';
import type { DeviceDetailOptions } from './device-mapping';

interface KeptList {
  stamps: string;
  /** The wall-clock second the list was made in, when it shows a retained device. */
  second?: number;
  /** When the first booking it shows ends (epoch ms). */
  until?: number;
  devices: Device[];
}

export interface LoadedList {
  devices: Device[];
  /** Whether a device in it is retained (its `lastInuseAt` is now). */
  showsRetained: boolean;
  /** When the first booking it shows ends (epoch ms), if it shows any. */
  firstBookingEnd?: number;
}

const caches = new WeakMap<Db, Map<string, KeptList>>();
/** Loads running, per view: requests that come with the same stamps meanwhile wait for it instead of loading too. */
const loads = new WeakMap<Db, Map<string, { stamps: ListStamps; loaded: Promise<LoadedList> }>>();

/**
 * The change stamps of the rows the lists are made of, as one text value (devices, then applications); read it
 * in the same statement as something else with listStampsSql (auth/credential-reads.ts does).
 */
export type ListStamps = string;

/** The list of one view (`detail`, Available or not), kept until the rows it is made of change. */
export async function keptDeviceList(
  db: Db, view: { detail: DeviceDetailOptions; availableOnly: boolean }, load: () => Promise<LoadedList>,
  /** Stamps read by a statement that began after the request did; read here when absent. */
  stamps?: ListStamps,
): Promise<Device[]> {
  const key = [view.availableOnly, !!view.detail.properties, !!view.detail.applications, !!view.detail.allApplications].join();
  let kept = caches.get(db);
  if (!kept) caches.set(db, kept = new Map());
  stamps ??= await readStamps(db);
  const now = Date.now();
  const second = Math.floor(now / 1000);
  const entry = kept.get(key);
  if (entry && entry.stamps === stamps && (entry.second === undefined || entry.second === second)
    && (entry.until === undefined || now < entry.until)) return entry.devices;
  let running = loads.get(db);
  if (!running) loads.set(db, running = new Map());
  const joined = running.get(key);
  if (joined && joined.stamps === stamps) return (await joined.loaded).devices;
  const loading = load();
  running.set(key, { stamps, loaded: loading });
  let loaded: LoadedList;
  try {
    loaded = await loading;
  } finally {
    if (running.get(key)?.loaded === loading) running.delete(key);
  }
  kept.set(key, {
    stamps, second: loaded.showsRetained ? second : undefined, until: loaded.firstBookingEnd, devices: loaded.devices,
  });
  return loaded.devices;
}

/**
 * The stamps as a SQL expression: count, sum and max of `list_change` over devices, then over applications,
 * read from their narrow mirror (migration 026). The sum catches a change whose stamp was taken before another
 * that committed first (sequence values are not handed out in commit order), the count a deleted row.
 */
export function listStampsSql(): RawBuilder<ListStamps> {
  const of = (source: string) => sql`(select count(*) || ':' || coalesce(sum(list_change), 0) || ':' || coalesce(max(list_change), 0)
    from list_stamp_rows where source = ${sql.lit(source)})`;
  return sql<ListStamps>`(${of('devices')} || '/' || ${of('applications')})`;
}

async function readStamps(db: Db): Promise<ListStamps> {
  const { rows } = await sql<{ stamps: ListStamps }>`select ${listStampsSql()} as stamps`.execute(db);
  return rows[0].stamps;
}
