/**
 * `/Report/Availability`: how many devices were online and in use, per `window`, from the lab-wide counts every
 * device event snapshots in its own transaction (deviceOnlineCount / deviceInuseCount). Availability events move
 * the online count and retain/release events the in-use count, so both kinds are read. Each window reports the
 * highest counts it saw, including the state it started in, so a short retain inside a long window still shows.
 */
import { ApiFailure, formatWireDate, type DeviceAvailabilitySample } from '@devicelab/shared';
import type { Db } from '../store/database';
import { dateRange, type ReportFilters } from './reports-query';

/** Event types whose snapshot can differ from the one before (devices coming, going, retained, deleted). */
const SNAPSHOT_EVENTS = ['DeviceAvailability', 'DeviceRetained', 'DeviceDeletion', 'DeviceEnablement'];
/** A report never has more windows than this; a smaller window needs a shorter period. */
const MAX_AVAILABILITY_WINDOWS = 10_000;
const DEFAULT_AVAILABILITY_WINDOW = '01:00:00';

const TIME_SPAN = /^(-)?(?:(\d+)\.)?(\d{1,2}):(\d{1,2})(?::(\d{1,2})(?:\.(\d{1,7}))?)?$/;
const DAYS_ONLY = /^(-)?(\d+)$/;

/** .NET TimeSpan text (`hh:mm:ss`, `d.hh:mm:ss`, `hh:mm`, `d`, optional `.fffffff`) to milliseconds. */
export function parseTimeSpan(text: string): number | undefined {
  const value = text.trim();
  const days = DAYS_ONLY.exec(value);
  if (days) return (days[1] ? -1 : 1) * Number(days[2]) * 86_400_000;
  const m = TIME_SPAN.exec(value);
  if (!m) return undefined;
  const [hours, minutes, seconds] = [Number(m[3]), Number(m[4]), Number(m[5] ?? 0)];
  if (hours > 23 || minutes > 59 || seconds > 59) return undefined;
  const fraction = m[6] ? Number(`0.${m[6]}`) * 1000 : 0;
  const ms = ((Number(m[2] ?? 0) * 24 + hours) * 60 + minutes) * 60_000 + seconds * 1000 + fraction;
  return m[1] ? -ms : ms;
}

interface AvailabilityQuery extends Pick<ReportFilters, 'fromDate' | 'toDate' | 'days'> {
  /** TimeSpan text; DEFAULT_AVAILABILITY_WINDOW when omitted. */
  window?: string;
}

export async function availabilityTimeline(db: Db, query: AvailabilityQuery, now: Date): Promise<DeviceAvailabilitySample[]> {
  const windowText = query.window ?? DEFAULT_AVAILABILITY_WINDOW;
  const windowMs = parseTimeSpan(windowText);
  if (windowMs === undefined) throw new ApiFailure(`String '${windowText}' was not recognized as a valid TimeSpan.`);
  if (windowMs < 1000) throw new ApiFailure(`The window '${windowText}' must be at least one second.`);
  const range = dateRange(query, now);

  const snapshots = () => db.selectFrom('events')
    .select(['event_date', 'device_online_count', 'device_inuse_count'])
    .where('event_type', 'in', SNAPSHOT_EVENTS);
  const start = range.from ?? (await snapshots().orderBy('event_date').orderBy('seq').limit(1).executeTakeFirst())?.event_date;
  const end = range.to && range.to < now ? range.to : now;
  if (!start || start >= end) return [];
  const windows = Math.ceil((end.getTime() - start.getTime()) / windowMs);
  if (windows > MAX_AVAILABILITY_WINDOWS) {
    throw new ApiFailure(`The window '${windowText}' gives ${windows} intervals for this period; at most `
      + `${MAX_AVAILABILITY_WINDOWS} are reported. Use a larger window or a shorter period.`);
  }

  const before = await snapshots().where('event_date', '<', start)
    .orderBy('event_date', 'desc').orderBy('seq', 'desc').limit(1).executeTakeFirst();
  // A date-only toDate is exclusive (the next day's midnight); any other end is inclusive.
  const endExclusive = range.to !== undefined && end === range.to && !range.toInclusive;
  const inside = await snapshots().where('event_date', '>=', start).where('event_date', endExclusive ? '<' : '<=', end)
    .orderBy('event_date').orderBy('seq').execute();

  let online = before?.device_online_count ?? 0;
  let inUse = before?.device_inuse_count ?? 0;
  let next = 0;
  const timeline: DeviceAvailabilitySample[] = [];
  for (let i = 0; i < windows; i++) {
    const from = start.getTime() + i * windowMs;
    const until = Math.min(from + windowMs, end.getTime());
    let peakOnline = online;
    let peakInUse = inUse;
    const last = i === windows - 1;
    while (next < inside.length && (inside[next].event_date.getTime() < until || last)) {
      online = inside[next].device_online_count;
      inUse = inside[next].device_inuse_count;
      peakOnline = Math.max(peakOnline, online);
      peakInUse = Math.max(peakInUse, inUse);
      next += 1;
    }
    timeline.push({ date: formatWireDate(new Date(from)), online: peakOnline, inUse: peakInUse });
  }
  return timeline;
}
