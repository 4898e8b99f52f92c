/** Event records, always written inside the transaction of the change they describe. */
import { sql } from 'kysely';
import type { EventType } from '@devicelab/shared';
import { withTx, type Db, type Tx } from '../store/database';
import { LockKind, lockHeldSql } from '../fleet/advisory-locks';
import { thisReplica } from '../fleet/replica';

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
  // The lab's counts as the database defines them (store/routines/device-retain.ts), with this transaction's changes.
  const { rows: [counts] } = await sql<{ online: number; in_use: number }>`SELECT * FROM lab_counts()`.execute(trx);
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
    device_inuse_count: counts.in_use,
    ...(event.eventDate ? { event_date: event.eventDate } : {}),
  }).execute();
}

/**
 * hub_settings key present while a hub runs (each replica has its own, `<flag>:<replica id>`); a flag still there
 * at a start whose replica is not live means that run ended uncleanly. The bare key is a hub before replicas.
 */
export const RUNNING_FLAG = 'hub_running_since';

/**
 * Records ServerStarting (and ServerRestarting first for each earlier run that never stopped cleanly and is not
 * running now: another live replica's flag is left alone) and marks this replica as running. Returns the
 * clean-stop step that clears the mark.
 */
export async function recordServerStart(db: Db): Promise<() => Promise<void>> {
  const ownFlag = `${RUNNING_FLAG}:${thisReplica.id}`;
  await withTx(db, async (trx) => {
    const previous = await trx.selectFrom('hub_settings').select(['key', 'value'])
      .where((eb) => eb.or([eb('key', '=', RUNNING_FLAG), eb('key', 'like', `${RUNNING_FLAG}:%`)]))
      .where(sql<boolean>`NOT ${lockHeldSql(LockKind.replica, sql`split_part(key, ':', 2)`)}`)
      .orderBy('value').forUpdate().execute();
    const at = new Date();
    for (const run of previous) {
      await recordEvent(trx, {
        eventType: 'ServerRestarting', message: 'Server Restarting', isSuccess: false, eventDate: at,
        stringValue: `The previous run (started ${run.value}) did not stop cleanly.`,
      });
    }
    if (previous.length > 0) await trx.deleteFrom('hub_settings').where('key', 'in', previous.map((run) => run.key)).execute();
    await recordEvent(trx, { eventType: 'ServerStarting', message: 'Server Starting', eventDate: at });
    await trx.insertInto('hub_settings').values({ key: ownFlag, value: at.toISOString() })
      .onConflict((oc) => oc.column('key').doUpdateSet({ value: at.toISOString() })).execute();
  });
  return async () => {
    await db.deleteFrom('hub_settings').where('key', '=', ownFlag).execute();
  };
}
