/**
 * Bookings on the change feed: every booking made, moved or cancelled is a `reservation` change, so the event
 * stream tells a calendar at once (the device's own event says only that its next booking may have changed).
 */
import { type Kysely, sql } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`CREATE TRIGGER reservations_changed AFTER INSERT OR UPDATE OR DELETE ON reservations
    FOR EACH ROW EXECUTE FUNCTION note_row_change('reservation')`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`DROP TRIGGER reservations_changed ON reservations`.execute(db);
}
