/**
 * History marks automation sessions: a retain the waiting line made for a WebDriver session (purpose `automation`)
 * has its DeviceRetained event marked, so `/Report/History` and the usage records tell a test run from a person.
 */
import { type Kysely, sql } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`ALTER TABLE events ADD COLUMN automation_session boolean NOT NULL DEFAULT false`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`ALTER TABLE events DROP COLUMN automation_session`.execute(db);
}
