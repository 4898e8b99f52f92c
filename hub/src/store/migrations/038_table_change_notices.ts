/**
 * Every write to a table the hub's kept reads come from is told to every hub replica: row triggers NOTIFY
 * `devicelab_table_changes` with the table's name, at commit (events/kept-reads.ts LISTENs and drops what the
 * table's rows were used for). Per row, so a statement that changes nothing (an update whose WHERE matched no row,
 * or set every value to what it was) tells nobody; PostgreSQL folds identical notices of one transaction into one,
 * so a write of a thousand rows is still one notice. Tables added later get the triggers at each start
 * (`attach_table_change_notices`, store/table-change-notices.ts), so a read built on a new table is dropped on
 * its writes too without anyone remembering to list it.
 */
import { type Kysely, sql } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`CREATE FUNCTION note_table_change() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN PERFORM pg_notify('devicelab_table_changes', TG_TABLE_NAME); RETURN NULL; END $$`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`DO $$ DECLARE t record; BEGIN
    FOR t IN SELECT tgname, tgrelid::regclass AS rel FROM pg_trigger WHERE tgname LIKE 'table_change_notice%' LOOP
      EXECUTE format('DROP TRIGGER %I ON %s', t.tgname, t.rel);
    END LOOP; END $$`.execute(db);
  await sql`DROP FUNCTION note_table_change()`.execute(db);
}
