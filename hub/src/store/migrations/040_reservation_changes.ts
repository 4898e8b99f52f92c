/**
 * Bookings on the change feed: every booking made, moved or cancelled is a `reservation` change, so the event
 * stream tells a calendar at once (the device's own event says only that its next booking may have changed).
 * Weekly series: the occurrences of one booking request share a `series_id` (they are written in one statement,
 * so the exclusion constraint refuses all of them or none), and can be cancelled together.
 */
import { type Kysely, sql } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`ALTER TABLE reservations ADD COLUMN series_id uuid;
    CREATE INDEX reservations_by_series ON reservations (series_id) WHERE series_id IS NOT NULL`.execute(db);
  await sql`CREATE TRIGGER reservations_changed AFTER INSERT OR UPDATE OR DELETE ON reservations
    FOR EACH ROW EXECUTE FUNCTION note_row_change('reservation')`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`DROP TRIGGER reservations_changed ON reservations`.execute(db);
  await sql`ALTER TABLE reservations DROP COLUMN series_id`.execute(db);
}
