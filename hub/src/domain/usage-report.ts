/**
 * `/Report/Usage`: DeviceUsageSummary records derived from the events when read, so they can never disagree with
 * the history. A retain period runs from a `Device Retained` event to the device's next DeviceRetained event (its
 * release); with none yet the period is open (`isDirty`, no endDate, duration up to now). Every ApplicationInstall
 * and ApplicationLaunch is a record of its own (zero duration). `reservedById`/`reservedByName` name who had booked
 * the device when the usage happened (reservations), as the device record's reservedBy fields do; none outside
 * bookings.
 */
import { sql, type RawBuilder } from 'kysely';
import {
  formatTimeSpan, formatWireDate, type DeviceOperatingSystem, type DeviceUsageHistory, type DeviceUsageSummary,
  type EventType,
} from '@devicelab/shared';
import type { Db } from '../store/database';
import type { ResolvedReportQuery } from './reports-query';
import { USER_DISPLAY_NAME } from './devices';

interface UsageRow {
  id: string;
  device_id: string;
  device_name: string | null;
  performed_by_id: string | null;
  performed_by_name: string | null;
  application_id: string | null;
  application_name: string | null;
  reserved_by_id: string | null;
  reserved_by_name: string | null;
  event_type: string;
  start_date: Date;
  end_date: Date | null;
  operating_system: string | null;
  operating_system_version: string | null;
  automation_session: boolean;
}

/** Usage periods and instants as the events record them; `end_date` of an instant is its start. */
const USAGE_PERIODS = sql`
  SELECT s.id, s.seq, s.device_id, s.device_name, s.performed_by_id, s.performed_by_name,
         NULL::uuid AS application_id, NULL::text AS application_name,
         s.event_type, s.event_date AS start_date, next_event.event_date AS end_date, s.automation_session
  FROM events s
  LEFT JOIN LATERAL (
    SELECT r.event_date FROM events r
    WHERE r.device_id = s.device_id AND r.event_type = 'DeviceRetained' AND (r.event_date, r.seq) > (s.event_date, s.seq)
    ORDER BY r.event_date, r.seq LIMIT 1
  ) next_event ON true
  WHERE s.event_type = 'DeviceRetained' AND s.bool_value AND s.device_id IS NOT NULL
  UNION ALL
  SELECT e.id, e.seq, e.device_id, e.device_name, e.performed_by_id, e.performed_by_name,
         e.application_id, e.application_name, e.event_type, e.event_date, e.event_date,
         coalesce(holder.automation_session, false)
  FROM events e
  -- Done within a WebDriver session's retain: the retain that held the device then says so.
  LEFT JOIN LATERAL (
    SELECT r.bool_value, r.automation_session FROM events r
    WHERE r.device_id = e.device_id AND r.event_type = 'DeviceRetained' AND (r.event_date, r.seq) <= (e.event_date, e.seq)
    ORDER BY r.event_date DESC, r.seq DESC LIMIT 1
  ) holder ON holder.bool_value
  WHERE e.event_type IN ('ApplicationInstall', 'ApplicationLaunch') AND e.device_id IS NOT NULL`;

/**
 * Each record with the booking it happened during (the spec's reservedBy: who booked the device, as on the device
 * record), or none outside bookings. A period counts as during a booking when they overlap (a retain released
 * for a booking ends as it starts: not during it); an instant when the booking holds it (start included, end not).
 */
const USAGE_RECORDS = sql`
  SELECT p.*, booking.user_id AS reserved_by_id, booking.display_name AS reserved_by_name
  FROM (${USAGE_PERIODS}) p
  LEFT JOIN LATERAL (
    SELECT b.user_id, ${USER_DISPLAY_NAME} AS display_name
    FROM reservations b JOIN users ON users.id = b.user_id
    WHERE b.device_id = p.device_id AND b.during && tstzrange(p.start_date, coalesce(p.end_date, 'infinity'), '[]')
      AND b.ends_at > p.start_date AND (b.starts_at <= p.start_date OR b.starts_at < p.end_date OR p.end_date IS NULL)
    ORDER BY b.starts_at LIMIT 1
  ) booking ON true`;

export async function deviceUsageHistory(db: Db, query: ResolvedReportQuery, now: Date): Promise<DeviceUsageHistory> {
  const where = usageConditions(query);
  const { rows: [{ total }] } = await sql<{ total: string }>`
    WITH usage AS (${USAGE_RECORDS}) SELECT count(*) AS total FROM usage u WHERE ${where}`.execute(db);
  const rows = query.take === 0 ? [] : (await sql<UsageRow>`
    WITH usage AS (${USAGE_RECORDS})
    SELECT u.*, d.operating_system, d.operating_system_version
    FROM usage u LEFT JOIN devices d ON d.id = u.device_id
    WHERE ${where}
    ORDER BY u.start_date DESC, u.seq DESC
    OFFSET ${query.skip} LIMIT ${query.take}`.execute(db)).rows;
  const deviceUsage = rows.map((row) => toUsageSummary(row, now));
  return { count: Number(total), pageSize: deviceUsage.length, deviceUsage };
}

/** Same filters as the history; a record matches the dates when its period overlaps the range. */
function usageConditions(query: ResolvedReportQuery): RawBuilder<unknown> {
  const conditions: RawBuilder<unknown>[] = [sql`true`];
  if (query.applicationId) conditions.push(sql`u.application_id = ${query.applicationId}`);
  if (query.deviceId) conditions.push(sql`u.device_id = ${query.deviceId}`);
  if (query.userId) {
    conditions.push(sql`(u.performed_by_id = ${query.userId} OR u.reserved_by_id = ${query.userId})`);
  }
  const { from, to, toInclusive } = query.range;
  if (from) conditions.push(sql`(u.end_date IS NULL OR u.end_date >= ${from})`);
  if (to) conditions.push(toInclusive ? sql`u.start_date <= ${to}` : sql`u.start_date < ${to}`);
  return sql.join(conditions, sql` AND `);
}

function toUsageSummary(row: UsageRow, now: Date): DeviceUsageSummary {
  const end = row.end_date ?? now;
  return {
    id: row.id,
    deviceId: row.device_id,
    deviceName: row.device_name ?? undefined,
    performedById: row.performed_by_id ?? undefined,
    performedByName: row.performed_by_name ?? undefined,
    applicationId: row.application_id ?? undefined,
    applicationName: row.application_name ?? undefined,
    reservedById: row.reserved_by_id ?? undefined,
    reservedByName: row.reserved_by_name ?? undefined,
    eventType: row.event_type as EventType,
    operatingSystem: (row.operating_system ?? 'Unknown') as DeviceOperatingSystem,
    operatingSystemVersion: row.operating_system_version ?? undefined,
    startDate: formatWireDate(row.start_date),
    endDate: row.end_date ? formatWireDate(row.end_date) : undefined,
    duration: formatTimeSpan(Math.max(0, end.getTime() - row.start_date.getTime())),
    isDirty: row.end_date === null,
    isAutomationSession: row.automation_session ? true : undefined,
  };
}
