/** Event records, always written inside the transaction of the change they describe. */
import { sql } from 'kysely';
import type { EventType } from '@devicelab/shared';
import { withTx, type Db, type Tx } from '../store/database';

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
  /** When it happened; the database clock when omitted (tests and imports pass fixed dates). */
  eventDate?: Date;
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
    ...(event.eventDate ? { event_date: event.eventDate } : {}),
  }).execute();
}

/** hub_settings key present while a hub runs; still there at the next start means the last run ended uncleanly. */
export const RUNNING_FLAG = 'hub_running_since';

/**
 * Records ServerStarting (and ServerRestarting first when the previous run never stopped cleanly) and marks the
 * hub as running. Returns the clean-stop step that clears the mark.
 */
export async function recordServerStart(db: Db): Promise<() => Promise<void>> {
  await withTx(db, async (trx) => {
    const previous = await trx.selectFrom('hub_settings').select('value').where('key', '=', RUNNING_FLAG)
      .forUpdate().executeTakeFirst();
    const at = new Date();
    if (previous) {
      await recordEvent(trx, {
        eventType: 'ServerRestarting', message: 'Server Restarting', isSuccess: false, eventDate: at,
        stringValue: `The previous run (started ${previous.value}) did not stop cleanly.`,
      });
    }
    await recordEvent(trx, { eventType: 'ServerStarting', message: 'Server Starting', eventDate: at });
    await trx.insertInto('hub_settings').values({ key: RUNNING_FLAG, value: at.toISOString() })
      .onConflict((oc) => oc.column('key').doUpdateSet({ value: at.toISOString() })).execute();
  });
  return async () => {
    await db.deleteFrom('hub_settings').where('key', '=', RUNNING_FLAG).execute();
  };
}
