/**
 * Device history on the change feed: every event recorded about a device is a `history` change (the event's id),
 * so the event stream can show it to a dashboard with the device page open.
 */
import { type Kysely, sql } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`CREATE TRIGGER events_history_changed AFTER INSERT ON events
    FOR EACH ROW WHEN (NEW.device_id IS NOT NULL) EXECUTE FUNCTION note_row_change('history')`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`DROP TRIGGER events_history_changed ON events`.execute(db);
}
