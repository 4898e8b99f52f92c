/**
 * Reservations: bookings of a device for a time range. Two bookings of one device never overlap, and the
 * database itself refuses the second (an exclusion constraint over the range), so two hub replicas accepting
 * bookings at the same moment cannot both succeed. A booking change re-stamps its device (migration 014), so
 * the kept device lists and the event stream show the booking at once.
 * `retain_refusal` gains the current booker as an argument (store/routines/device-retain.ts): the old signature
 * is dropped here, the routines create the new one after the migrations.
 */
import { type Kysely, sql } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    CREATE EXTENSION IF NOT EXISTS btree_gist;
    CREATE TABLE reservations (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      device_id uuid NOT NULL REFERENCES devices (id) ON DELETE CASCADE,
      user_id uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
      starts_at timestamptz NOT NULL,
      ends_at timestamptz NOT NULL,
      -- Half-open: a booking may start the moment the previous one ends.
      during tstzrange NOT NULL GENERATED ALWAYS AS (tstzrange(starts_at, ends_at, '[)')) STORED,
      note text NOT NULL DEFAULT '',
      created_at timestamptz NOT NULL DEFAULT now(),
      created_by uuid REFERENCES users (id) ON DELETE SET NULL,
      CONSTRAINT reservations_ends_after_start CHECK (ends_at > starts_at),
      CONSTRAINT reservations_no_overlap EXCLUDE USING gist (device_id WITH =, during WITH &&)
    );
    CREATE INDEX reservations_by_end ON reservations (ends_at);
    CREATE FUNCTION stamp_reserved_device() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      IF TG_OP <> 'INSERT' THEN UPDATE devices SET list_change = nextval('list_changes') WHERE id = OLD.device_id; END IF;
      IF TG_OP <> 'DELETE' THEN UPDATE devices SET list_change = nextval('list_changes') WHERE id = NEW.device_id; END IF;
      RETURN NULL;
    END $$;
    CREATE TRIGGER reservations_list_change AFTER INSERT OR UPDATE OR DELETE ON reservations
      FOR EACH ROW EXECUTE FUNCTION stamp_reserved_device();
    DROP FUNCTION IF EXISTS retain_refusal(devices, uuid);
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`
    DROP TABLE reservations;
    DROP FUNCTION stamp_reserved_device();
    DROP FUNCTION IF EXISTS retain_refusal(devices, uuid, uuid);
  `.execute(db);
}
