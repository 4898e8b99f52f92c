/**
 * Exactly-once metrics delivery: the batches the hub has stored, by gateway and the gateway process's
 * (epoch, sequence). A batch resent after a lost ack is found here and acknowledged without storing it again.
 * Rows are kept for a day (hub/src/metrics/received-batches.ts prunes them).
 */
import { type Kysely, sql } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    CREATE TABLE metrics.received_batches (
      gateway_id uuid NOT NULL REFERENCES gateways(id) ON DELETE CASCADE,
      epoch text NOT NULL CHECK (length(epoch) BETWEEN 1 AND 64),
      sequence bigint NOT NULL,
      received_at timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (gateway_id, epoch, sequence)
    );
    CREATE INDEX received_batches_received_at ON metrics.received_batches (received_at);
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`DROP TABLE metrics.received_batches`.execute(db);
}
