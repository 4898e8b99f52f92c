/**
 * The waiting line: one row per request waiting for a device, in the order they came (`place`), whichever hub
 * replica holds the request. A device that frees up is assigned to the earliest waiter it suits by whichever replica
 * serves the line first (under one advisory lock), retained for that waiter in the same transaction; the waiter's
 * replica takes it from the row. A row lives as long as its request: its replica deletes it when the request ends,
 * and rows of a replica that died are deleted (and a device assigned to them released) by the others.
 */
import { type Kysely, sql } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    CREATE TABLE device_waiters (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      place bigserial NOT NULL UNIQUE,
      user_id uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
      -- As the retain's event names the retainer.
      user_name text NOT NULL,
      -- The filter as the client wrote it (shared/src/device-filter.ts), or '' with device_id for one device.
      filter text NOT NULL DEFAULT '',
      device_id uuid REFERENCES devices (id) ON DELETE CASCADE,
      purpose text NOT NULL CHECK (purpose IN ('retain', 'automation')),
      lease_name text,
      idle_minutes int,
      replica_id text NOT NULL,
      since timestamptz NOT NULL DEFAULT now(),
      deadline timestamptz NOT NULL,
      assigned_device uuid REFERENCES devices (id) ON DELETE SET NULL,
      assigned_at timestamptz
    );
    CREATE INDEX device_waiters_by_replica ON device_waiters (replica_id);
    CREATE INDEX device_waiters_by_user ON device_waiters (user_id);
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`DROP TABLE device_waiters`.execute(db);
}
