/**
 * `devices.retain_id`: identifies the current retain of a device (DeviceAccessTicket claims carry it; a gateway
 * accepts a ticket only while it is current). Kept by a trigger so that every code path that sets or clears
 * `retained_by` keeps it right: a new id when the retainer changes, none while nobody retains the device.
 */
import { type Kysely, sql } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`ALTER TABLE devices ADD COLUMN retain_id uuid`.execute(db);
  await sql`
    CREATE FUNCTION devices_keep_retain_id() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      IF NEW.retained_by IS NULL THEN
        NEW.retain_id := NULL;
      ELSIF TG_OP = 'INSERT' OR OLD.retained_by IS DISTINCT FROM NEW.retained_by OR OLD.retain_id IS NULL THEN
        NEW.retain_id := gen_random_uuid();
      ELSE
        NEW.retain_id := OLD.retain_id;
      END IF;
      RETURN NEW;
    END $$`.execute(db);
  await sql`
    CREATE TRIGGER devices_keep_retain_id BEFORE INSERT OR UPDATE OF retained_by, retain_id ON devices
    FOR EACH ROW EXECUTE FUNCTION devices_keep_retain_id()`.execute(db);
  // Retains that exist already get their id.
  await sql`UPDATE devices SET retain_id = gen_random_uuid() WHERE retained_by IS NOT NULL`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`DROP TRIGGER devices_keep_retain_id ON devices`.execute(db);
  await sql`DROP FUNCTION devices_keep_retain_id()`.execute(db);
  await sql`ALTER TABLE devices DROP COLUMN retain_id`.execute(db);
}
