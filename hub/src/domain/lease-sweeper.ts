/**
 * Leases end by themselves: on the lab's leader replica, a sweep every few seconds (by the API's clock, so tests move
 * time instead of sleeping) finds retains that were idle too long (lease-settings.ts; a retain's own idleMinutes),
 * that reached their maximum length, or whose device someone else has booked from now. A few minutes before, the
 * holder is warned (a Note event on the device, which webhooks deliver); then the device is released as any release
 * is (DeviceRetained event, usage record, the gateway told at once, which closes the endpoints), the history's text
 * saying why. A device whose booking starts is then retained for its booker.
 */
import { sql } from 'kysely';
import { formatWireDate, type Logger } from '@devicelab/shared';
import { withTx, type Db } from '../store/database';
import { releaseForLease, type ReleaseOptions } from './device-actions';
import { recordEvent } from './events';
import { readLeaseSettings } from './lease-settings';

export const LEASE_SWEEP_MS = 2_000;
/** The longest warning ahead of an end; a shorter term is warned at its last fifth. */
const WARN_AHEAD_MS = 5 * 60_000;

interface SweeperOptions {
  isLeader: () => boolean;
  now: () => Date;
  logger: Logger;
  gateways?: ReleaseOptions['gateways'];
}

interface LeaseRow {
  device_id: string;
  device_name: string;
  user_id: string;
  holder_login: string;
  last_used_at: Date;
  idle_minutes: number | null;
  ends_at: Date | null;
  warned_at: Date | null;
  retained_at: Date;
  booker_id: string | null;
  booker_login: string | null;
  booking_starts_at: Date | null;
  booking_ends_at: Date | null;
}

/** Why a lease ends when it does: the first of idle time, maximum length and someone else's booking. */
interface LeaseEnd { at: number; warnFrom: number; reason: string; warning: string }

export function startLeaseSweeper(db: Db, options: SweeperOptions): () => Promise<void> {
  let running: Promise<void> | undefined;
  const timer = setInterval(() => {
    if (!options.isLeader()) return;
    running ??= sweepLeases(db, options).catch((err: unknown) => options.logger.warn({ err }, 'lease sweep failed; retrying'))
      .finally(() => { running = undefined; });
  }, LEASE_SWEEP_MS);
  timer.unref();
  return async () => {
    clearInterval(timer);
    await running;
  };
}

export async function sweepLeases(db: Db, options: Omit<SweeperOptions, 'isLeader'>): Promise<void> {
  const at = options.now();
  const settings = await readLeaseSettings(db);
  const { rows } = await sql<LeaseRow>`
    SELECT l.device_id, d.name AS device_name, l.user_id, u.login AS holder_login, l.last_used_at, l.idle_minutes, l.ends_at,
      l.warned_at, d.retained_at, b.user_id AS booker_id, bu.login AS booker_login, b.starts_at AS booking_starts_at,
      b.ends_at AS booking_ends_at
    FROM device_leases l
    JOIN devices d ON d.id = l.device_id AND d.retain_id = l.retain_id AND d.retained_by = l.user_id
    JOIN users u ON u.id = l.user_id
    LEFT JOIN LATERAL (SELECT r.user_id, r.starts_at, r.ends_at FROM reservations r
      WHERE r.device_id = d.id AND r.ends_at > ${at.toISOString()}::timestamptz AND r.user_id <> l.user_id
      ORDER BY r.starts_at LIMIT 1) b ON true
    LEFT JOIN users bu ON bu.id = b.user_id`.execute(db);
  for (const row of rows) {
    const end = leaseEnd(row, settings.retainIdleMinutes);
    if (!end) continue;
    if (at.getTime() >= end.at) {
      const released = await releaseForLease(db, row.device_id, row.user_id, end.reason, { now: options.now, gateways: options.gateways });
      if (released) options.logger.info({ device: row.device_name, holder: row.holder_login, reason: end.reason }, 'lease ended');
      if (released && row.booker_id && row.booking_starts_at && row.booking_starts_at.getTime() <= at.getTime()) {
        await holdForBooker(db, row, options);
      }
    } else if (at.getTime() >= end.warnFrom && !row.warned_at) {
      await withTx(db, async (trx) => {
        await recordEvent(trx, {
          eventType: 'Note', message: end.warning, deviceId: row.device_id, deviceName: row.device_name, userId: row.user_id,
          performedByName: 'DeviceLab', stringValue: 'LeaseEnding', eventDate: at,
        });
        await trx.updateTable('device_leases').set({ warned_at: at }).where('device_id', '=', row.device_id).execute();
      });
    }
  }
}

function leaseEnd(row: LeaseRow, labIdleMinutes: number): LeaseEnd | undefined {
  const ends: LeaseEnd[] = [];
  const warnFrom = (endMs: number, termMs: number) => endMs - Math.min(WARN_AHEAD_MS, termMs / 5);
  const when = (ms: number) => formatWireDate(new Date(ms));
  const idle = row.idle_minutes ?? labIdleMinutes;
  if (idle > 0) {
    const endMs = row.last_used_at.getTime() + idle * 60_000;
    ends.push({ at: endMs, warnFrom: warnFrom(endMs, idle * 60_000), reason: `Device Released (idle for ${idle} min)`,
      warning: `Device '${row.device_name}' will be released at ${when(endMs)}: unused since ${when(row.last_used_at.getTime())} `
        + `(idle limit ${idle} min). Use it to keep it.` });
  }
  if (row.ends_at) {
    const endMs = row.ends_at.getTime();
    ends.push({ at: endMs, warnFrom: warnFrom(endMs, endMs - row.retained_at.getTime()),
      reason: 'Device Released (lease ended: maximum length reached)',
      warning: `Device '${row.device_name}' will be released at ${when(endMs)}, when its lease ends. Renew it to keep it.` });
  }
  if (row.booking_starts_at && row.booker_login) {
    const endMs = row.booking_starts_at.getTime();
    ends.push({ at: endMs, warnFrom: endMs - WARN_AHEAD_MS,
      reason: `Device Released (booked by ${row.booker_login} from ${when(endMs)})`,
      warning: `Device '${row.device_name}' will be released at ${when(endMs)}: ${row.booker_login} has booked it from then.` });
  }
  return ends.sort((a, b) => a.at - b.at)[0];
}

/**
 * Retains the device for the booker whose booking has started, so nobody else takes it meanwhile; announced as
 * no replica (every replica, this one too, tells its gateways at commit).
 */
async function holdForBooker(db: Db, row: LeaseRow, options: Omit<SweeperOptions, 'isLeader'>): Promise<void> {
  const at = options.now();
  await sql`SELECT outcome FROM retain_lease(${row.device_id}::text, ${row.device_id}::uuid, ${row.booker_id}::uuid,
    ${row.booker_login}, ${at.toISOString()}::timestamptz, 'lease-sweeper'::text, NULL::text, NULL::int)`
    .execute(db);
}
