/**
 * The device lists' change stamps (migration 014) in a narrow table of their own: `list_stamp_rows` mirrors
 * each device and application row's `list_change`, kept by triggers in the writing transaction. Every list
 * request reads count + sum + max of the stamps (domain/device-list-cache.ts); over the wide device rows
 * (installed packages, facts: ~2 rows a page) that scan cost ~0.5 ms for 1,000 devices, over this table it
 * is ~10 pages. A row's mirror is written under the row's own lock, so writers of different devices still
 * never wait for each other.
 */
import { type Kysely, sql } from 'kysely';

const SOURCES = ['devices', 'applications'];

export async function up(db: Kysely<unknown>): Promise<void> {
  // A low fill factor leaves room for HOT updates (list_change is not indexed), so the table stays small.
  await sql`CREATE TABLE list_stamp_rows (
    source text NOT NULL, row_id uuid NOT NULL, list_change bigint NOT NULL, PRIMARY KEY (source, row_id)
  ) WITH (fillfactor = 50)`.execute(db);
  await sql`CREATE FUNCTION mirror_list_change() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      IF TG_OP = 'DELETE' THEN
        DELETE FROM list_stamp_rows WHERE source = TG_TABLE_NAME AND row_id = OLD.id;
      ELSIF TG_OP = 'INSERT' THEN
        INSERT INTO list_stamp_rows (source, row_id, list_change) VALUES (TG_TABLE_NAME, NEW.id, NEW.list_change);
      ELSE
        UPDATE list_stamp_rows SET list_change = NEW.list_change WHERE source = TG_TABLE_NAME AND row_id = NEW.id;
      END IF;
      RETURN NULL;
    END $$`.execute(db);
  for (const table of SOURCES) {
    await sql`INSERT INTO list_stamp_rows (source, row_id, list_change)
      SELECT ${table}, id, list_change FROM ${sql.table(table)}`.execute(db);
    await sql`CREATE TRIGGER ${sql.id(`${table}_list_stamp_row`)} AFTER INSERT OR DELETE ON ${sql.table(table)}
      FOR EACH ROW EXECUTE FUNCTION mirror_list_change()`.execute(db);
    await sql`CREATE TRIGGER ${sql.id(`${table}_list_stamp_change`)} AFTER UPDATE ON ${sql.table(table)}
      FOR EACH ROW WHEN (OLD.list_change IS DISTINCT FROM NEW.list_change) EXECUTE FUNCTION mirror_list_change()`.execute(db);
  }
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const table of SOURCES) {
    await sql`DROP TRIGGER ${sql.id(`${table}_list_stamp_change`)} ON ${sql.table(table)}`.execute(db);
    await sql`DROP TRIGGER ${sql.id(`${table}_list_stamp_row`)} ON ${sql.table(table)}`.execute(db);
  }
  await sql`DROP FUNCTION mirror_list_change()`.execute(db);
  await sql`DROP TABLE list_stamp_rows`.execute(db);
}
