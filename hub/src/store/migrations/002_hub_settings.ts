/** Hub-wide settings that must survive restarts (node id, ticket signing key, system-area defaults). */
import { type Kysely, sql } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`CREATE TABLE hub_settings (key text PRIMARY KEY, value text NOT NULL)`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`DROP TABLE hub_settings`.execute(db);
}
