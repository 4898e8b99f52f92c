/**
 * The change-notice triggers (migration 038) on every table of the records' schema, given at each start to the
 * tables that lack it, so that a table a later migration adds is covered without being named anywhere. Left out:
 * tables no kept read is made of and whose writes are frequent (the change feed itself, relayed commands, webhook
 * deliveries, blob chunks, the stamp mirrors, kysely's own), so their writes do not drop every kept read; and the
 * replicas' table, whose rows every replica touches every few seconds as a heartbeat (the live replicas are read
 * anew at most 100 ms apart instead, api/service-routes.ts).
 */
import { sql } from 'kysely';
import { LockKind } from '../fleet/advisory-locks';
import { withTx, type Db } from './database';

export const TABLE_CHANGE_CHANNEL = 'devicelab_table_changes';
const TRIGGER = 'table_change_notice';
export const UNNOTED_TABLES = [
  'change_feed', 'relayed_commands', 'hub_replicas', 'webhook_deliveries', 'blob_chunks', 'list_stamp_rows', 'device_tallies',
  'kysely_migration', 'kysely_migration_lock',
];

export async function attachTableChangeNotices(db: Db): Promise<void> {
  const missing = () => sql<{ name: string }>`SELECT c.relname AS name FROM pg_class c
    WHERE c.relnamespace = current_schema()::regnamespace AND c.relkind IN ('r', 'p') AND NOT c.relispartition
      AND c.relname <> ALL(${UNNOTED_TABLES}::text[])
      AND NOT EXISTS (SELECT 1 FROM pg_trigger t WHERE t.tgrelid = c.oid AND t.tgname = ${TRIGGER})
    ORDER BY c.relname`;
  // `*<>` compares the rows' stored bytes, so it works for every column type (json has no equality operator).
  // Nearly every start finds nothing to do: only then is the lock taken and the list read again under it.
  if ((await missing().execute(db)).rows.length === 0) return;
  await withTx(db, async (trx) => {
    await sql`SELECT pg_advisory_xact_lock(${sql.lit(LockKind.tableNotices)}, 0)`.execute(trx);
    for (const { name } of (await missing().execute(trx)).rows) {
      const table = sql.table(name);
      await sql`CREATE TRIGGER ${sql.id(TRIGGER)} AFTER INSERT OR DELETE ON ${table}
        FOR EACH ROW EXECUTE FUNCTION note_table_change()`.execute(trx);
      await sql`CREATE TRIGGER ${sql.id(`${TRIGGER}_update`)} AFTER UPDATE ON ${table}
        FOR EACH ROW WHEN (OLD *<> NEW) EXECUTE FUNCTION note_table_change()`.execute(trx);
      await sql`CREATE TRIGGER ${sql.id(`${TRIGGER}_truncate`)} AFTER TRUNCATE ON ${table}
        FOR EACH STATEMENT EXECUTE FUNCTION note_table_change()`.execute(trx);
    }
  });
}
