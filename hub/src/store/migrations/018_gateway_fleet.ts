/**
 * Fleet visibility: what GET /Gateway shows of a gateway while it is disconnected: its version,
 * the hub replica its link last landed on, and its USB hubs as it last reported them.
 */
import { type Kysely, sql } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`ALTER TABLE gateways ADD COLUMN version text, ADD COLUMN hub_replica text, ADD COLUMN last_usb_hubs jsonb`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`ALTER TABLE gateways DROP COLUMN version, DROP COLUMN hub_replica, DROP COLUMN last_usb_hubs`.execute(db);
}
