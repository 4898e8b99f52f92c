/**
 * The waiting line served by the database itself: a release hands the device to the earliest waiter it suits in the
 * release's own transaction (`hand_over_device`, store/routines/waiting-line.ts), and a pass over the line is one
 * statement (`serve_waiting_line`). For that a waiter's filter is kept in a form SQL reads: the parsed filter
 * (shared/src/device-filter.ts `DeviceFilter`) as JSON, NULL for a request naming one device. Rows written before
 * this column existed have none and match no device through SQL; they last only as long as their request.
 */
import { type Kysely, sql } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    ALTER TABLE device_waiters ADD COLUMN filter_terms jsonb;
    -- The line's unassigned requests in order: what every hand-over and pass walks.
    CREATE INDEX device_waiters_waiting ON device_waiters (place) WHERE assigned_device IS NULL;
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`
    DROP INDEX device_waiters_waiting;
    ALTER TABLE device_waiters DROP COLUMN filter_terms;
  `.execute(db);
}
