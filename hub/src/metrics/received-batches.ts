/**
 * The hub's record of the metrics batches it stored (migration 010), for exactly-once delivery across
 * reconnects: a gateway resends its unacknowledged batches with their original (epoch, sequence); a batch found
 * here was stored before and only needs its ack. The record is written by the store's claim, in the transaction
 * that writes the batch's rows, so a batch is either stored and recorded or neither.
 */
import { sql } from 'kysely';
import type { Db } from '../store/database';
import type { IngestClaim } from './metrics-store';

/** An epoch is a UUID in practice; anything longer is not one of ours. */
export const MAX_EPOCH_LENGTH = 64;
/**
 * How long a record is kept. A gateway resends right after it reconnects, so a day covers any outage it keeps
 * running through; a batch resent later than that would be stored twice.
 */
const RECEIVED_BATCH_KEEP_MS = 86_400_000;

interface BatchName {
  gatewayId: string;
  epoch: string;
  sequence: number;
}

/** Records the batch; false when it was recorded (stored) before. */
export function claimBatch(name: BatchName): IngestClaim {
  return async (trx) => {
    const { rows } = await sql`INSERT INTO metrics.received_batches (gateway_id, epoch, sequence)
      VALUES (${name.gatewayId}::uuid, ${name.epoch}, ${name.sequence}) ON CONFLICT DO NOTHING RETURNING 1 AS claimed`
      .execute(trx);
    return rows.length === 1;
  };
}

/** Deletes records kept longer than RECEIVED_BATCH_KEEP_MS before `now`; returns how many. */
export async function pruneReceivedBatches(db: Db, now = new Date()): Promise<number> {
  const cutoff = new Date(now.getTime() - RECEIVED_BATCH_KEEP_MS).toISOString();
  const result = await sql`DELETE FROM metrics.received_batches WHERE received_at < ${cutoff}::timestamptz`.execute(db);
  return Number(result.numAffectedRows ?? 0);
}
