/** `/Report/History`: EventHistory, newest first, stable under paging (spec 4.5, wire rule 16 of docs/wire-rules.md). */
import { formatWireDate, type Event, type EventHistory, type EventType } from '@devicelab/shared';
import type { Db } from '../store/database';
import type { EventRow } from '../store/schema';
import type { ResolvedReportQuery } from './reports-query';

export async function eventHistory(db: Db, query: ResolvedReportQuery): Promise<EventHistory> {
  let filtered = db.selectFrom('events');
  if (query.applicationId) filtered = filtered.where('application_id', '=', query.applicationId);
  if (query.deviceId) filtered = filtered.where('device_id', '=', query.deviceId);
  if (query.userId) {
    const userId = query.userId;
    // The user the event is about (retainer, new user, ...) or the one who performed it.
    filtered = filtered.where((eb) => eb.or([eb('user_id', '=', userId), eb('performed_by_id', '=', userId)]));
  }
  const { from, to, toInclusive } = query.range;
  if (from) filtered = filtered.where('event_date', '>=', from);
  if (to) filtered = filtered.where('event_date', toInclusive ? '<=' : '<', to);

  const { total } = await filtered.select((eb) => eb.fn.countAll<string>().as('total')).executeTakeFirstOrThrow();
  const rows = query.take === 0 ? [] : await filtered.selectAll()
    .orderBy('event_date', 'desc').orderBy('seq', 'desc')
    .offset(query.skip).limit(query.take)
    .execute();
  const events = rows.map(toWireEvent);
  return { count: Number(total), pageSize: events.length, events };
}

/** Both spellings of the date and the application id; null keys are dropped by the response writer. */
export function toWireEvent(row: EventRow): Event {
  const date = formatWireDate(row.event_date);
  return {
    id: row.id,
    deviceId: row.device_id ?? undefined,
    deviceName: row.device_name ?? undefined,
    eventType: row.event_type as EventType,
    EventDate: date,
    eventDate: date,
    performedById: row.performed_by_id ?? undefined,
    performedByName: row.performed_by_name ?? undefined,
    intValue: row.int_value,
    boolValue: row.bool_value,
    stringValue: row.string_value ?? undefined,
    message: row.message,
    isSuccess: row.is_success,
    propertiesId: row.application_id ?? undefined,
    applicationId: row.application_id ?? undefined,
    applicationName: row.application_name ?? undefined,
    userId: row.user_id ?? undefined,
    deviceInuseCount: row.device_inuse_count,
    deviceOnlineCount: row.device_online_count,
    isAutomationSession: row.automation_session ? true : undefined,
  };
}
