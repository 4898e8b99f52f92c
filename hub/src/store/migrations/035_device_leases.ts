/**
 * The terms of each device's current retain: the lease name its holder gave (two jobs of one login never share a
 * device unknowingly), when it was last used (idle release), its own idle time, and when it must end (maximum
 * lease length, renewable). One row per device, replaced by every new retain; a row whose retain_id is not the
 * device's current one belongs to a retain that ended and means nothing. `release_device` gains the reason a
 * release is recorded with (an idle or expired lease says so in the history): the old signature is dropped here,
 * the routines create the new one. Roles may carry their own maximum lease length.
 */
import { type Kysely, sql } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    CREATE TABLE device_leases (
      device_id uuid PRIMARY KEY REFERENCES devices (id) ON DELETE CASCADE,
      retain_id uuid NOT NULL,
      user_id uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
      lease_name text NOT NULL DEFAULT '',
      started_at timestamptz NOT NULL,
      last_used_at timestamptz NOT NULL,
      idle_minutes int,
      ends_at timestamptz,
      warned_at timestamptz
    );
    -- A lease change (use, renewal) re-stamps its device (migration 014), as a booking does (030); a new lease is
    -- written in the transaction of the retain, which stamps the device itself.
    CREATE TRIGGER device_leases_list_change AFTER UPDATE ON device_leases
      FOR EACH ROW WHEN (OLD.retain_id = NEW.retain_id) EXECUTE FUNCTION stamp_reserved_device();
    ALTER TABLE roles ADD COLUMN max_lease_minutes int;
    DROP FUNCTION IF EXISTS release_device(text, uuid, uuid, text, boolean, timestamptz, text);
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`
    DROP TABLE device_leases;
    ALTER TABLE roles DROP COLUMN max_lease_minutes;
    DROP FUNCTION IF EXISTS release_device(text, uuid, uuid, text, boolean, timestamptz, text, text);
  `.execute(db);
}
