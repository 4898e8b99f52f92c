/**
 * Change stamps for the cached device lists (domain/device-list-cache.ts): every insert or real change of a
 * device or application row takes a new value of one sequence in `list_change`, and a change of a user's login
 * or names re-stamps the devices that user retains (their lists show the retainer). A hub compares
 * count + sum + max of the stamps with what its cached list was built from: one cheap query per request that
 * sees every committed change, whichever hub replica made it. A sequence, not a shared counter row, so that
 * writers to different devices never wait for each other.
 */
import { type Kysely, sql } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`CREATE SEQUENCE list_changes`.execute(db);
  for (const table of ['devices', 'applications']) {
    await sql`ALTER TABLE ${sql.table(table)} ADD COLUMN list_change bigint NOT NULL DEFAULT nextval('list_changes')`.execute(db);
  }
  await sql`CREATE FUNCTION stamp_list_change() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN NEW.list_change := nextval('list_changes'); RETURN NEW; END $$`.execute(db);
  for (const table of ['devices', 'applications']) {
    await sql`CREATE TRIGGER ${sql.id(`${table}_list_change`)} BEFORE UPDATE ON ${sql.table(table)}
      FOR EACH ROW WHEN (OLD IS DISTINCT FROM NEW) EXECUTE FUNCTION stamp_list_change()`.execute(db);
  }
  await sql`CREATE FUNCTION stamp_retained_devices() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN UPDATE devices SET list_change = nextval('list_changes') WHERE retained_by = NEW.id; RETURN NULL; END $$`.execute(db);
  await sql`CREATE TRIGGER users_list_change AFTER UPDATE OF login, first_name, middle_name, last_name ON users
    FOR EACH ROW WHEN (OLD.login IS DISTINCT FROM NEW.login OR OLD.first_name IS DISTINCT FROM NEW.first_name
      OR OLD.middle_name IS DISTINCT FROM NEW.middle_name OR OLD.last_name IS DISTINCT FROM NEW.last_name)
    EXECUTE FUNCTION stamp_retained_devices()`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`DROP TRIGGER users_list_change ON users`.execute(db);
  await sql`DROP FUNCTION stamp_retained_devices()`.execute(db);
  for (const table of ['devices', 'applications']) {
    await sql`DROP TRIGGER ${sql.id(`${table}_list_change`)} ON ${sql.table(table)}`.execute(db);
    await sql`ALTER TABLE ${sql.table(table)} DROP COLUMN list_change`.execute(db);
  }
  await sql`DROP FUNCTION stamp_list_change()`.execute(db);
  await sql`DROP SEQUENCE list_changes`.execute(db);
}
