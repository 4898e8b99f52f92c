/**
 * Causes of expected availability flips (domain/availability-causes.ts): who switched a device's USB port or
 * rebooted it, until the flip it explains is recorded.
 */
import { type Kysely, sql } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`CREATE TABLE availability_causes (
    device_id uuid PRIMARY KEY REFERENCES devices(id) ON DELETE CASCADE,
    expected text NOT NULL CHECK (expected IN ('Online', 'Offline')),
    reason text NOT NULL,
    performed_by_id uuid,
    performed_by_name text,
    expires_at timestamptz NOT NULL
  )`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`DROP TABLE availability_causes`.execute(db);
}
