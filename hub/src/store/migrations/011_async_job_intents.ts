/**
 * What an async job does to a device (`intent`), so that a job a hub restart interrupted is
 * reconciled with the device's real state instead of failed blindly; `interrupted_at` is when a start found it
 * still running.
 */
import { type Kysely, sql } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`ALTER TABLE async_jobs ADD COLUMN intent jsonb, ADD COLUMN interrupted_at timestamptz`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`ALTER TABLE async_jobs DROP COLUMN intent, DROP COLUMN interrupted_at`.execute(db);
}
