/** Event records, always written inside the transaction of the change they describe. */
import { sql } from 'kysely';
import type { EventType } from '@devicelab/shared';
import type { Tx } from '../store/database';

export interface EventInput {
  eventType: EventType;
  message: string;
  deviceId?: string | null;
  deviceName?: string | null;
  performedById?: string | null;
  performedByName?: string | null;
  userId?: string | null;
  applicationId?: string | null;
  applicationName?: string | null;
  intValue?: number;
  boolValue?: boolean;
  stringValue?: string | null;
  isSuccess?: boolean;
}

export async function recordEvent(trx: Tx, event: EventInput): Promise<void> {
  const counts = await trx
    .selectFrom('devices')
    .select([
      sql<number>`count(*) filter (where availability = 'Online' and not deleted)::int`.as('online'),
      sql<number>`count(*) filter (where retained_by is not null and not deleted)::int`.as('inuse'),
    ])
    .executeTakeFirstOrThrow();
  await trx.insertInto('events').values({
    event_type: event.eventType,
    message: event.message,
    device_id: event.deviceId ?? null,
    device_name: event.deviceName ?? null,
    performed_by_id: event.performedById ?? null,
    performed_by_name: event.performedByName ?? null,
    user_id: event.userId ?? null,
    application_id: event.applicationId ?? null,
    application_name: event.applicationName ?? null,
    int_value: event.intValue ?? 0,
    bool_value: event.boolValue ?? false,
    string_value: event.stringValue ?? null,
    is_success: event.isSuccess ?? true,
    device_online_count: counts.online,
    device_inuse_count: counts.inuse,
  }).execute();
}
