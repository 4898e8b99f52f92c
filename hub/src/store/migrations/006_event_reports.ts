/**
 * Reports (spec 4.5): an insertion sequence on events, so rows written at the same instant still page in one stable
 * order (newest first, then last written first), and the indexes the report filters and usage pairing use.
 */
import { type Kysely, sql } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    ALTER TABLE events ADD COLUMN seq bigint GENERATED ALWAYS AS IDENTITY;
    CREATE INDEX events_report_order ON events (event_date DESC, seq DESC);
    CREATE INDEX events_device_type ON events (device_id, event_type, event_date, seq);
    CREATE INDEX events_user ON events (user_id, event_date DESC);
    CREATE INDEX events_performed_by ON events (performed_by_id, event_date DESC);
    CREATE INDEX events_application ON events (application_id, event_date DESC);
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`
    DROP INDEX events_report_order, events_device_type, events_user, events_performed_by, events_application;
    ALTER TABLE events DROP COLUMN seq;
  `.execute(db);
}
