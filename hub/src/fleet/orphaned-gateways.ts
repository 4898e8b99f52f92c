/**
 * Gateways recorded as connected (or with Online devices) whose link no replica holds: their replica died or
 * stopped without recording it. Their devices go Offline (retains stay) and the gateway is recorded disconnected,
 * unless the gateway has reconnected somewhere meanwhile: each gateway is settled in a transaction that holds its
 * link lock, so a link arriving at the same moment waits for it and then reports its devices afresh.
 */
import { sql } from 'kysely';
import { setGatewayConnected, takeDevicesOfflineIn } from '../gateways/device-inventory';
import { withTx, type Db } from '../store/database';
import { LockKind, lockHeldSql, lockKeySql } from './advisory-locks';

/** Settles every orphaned gateway; returns the ids of those it took offline. */
export async function settleOrphanedGateways(db: Db, detail: string): Promise<string[]> {
  const candidates = await db.selectFrom('gateways').select('id')
    .where((eb) => eb.or([
      eb('connected', '=', true),
      eb.exists(eb.selectFrom('devices').select('devices.id')
        .whereRef('devices.gateway_id', '=', 'gateways.id').where('devices.availability', '=', 'Online')),
    ]))
    .where(sql<boolean>`NOT ${lockHeldSql(LockKind.gatewayLink, sql`gateways.id::text`)}`)
    .execute();
  const settled: string[] = [];
  for (const { id } of candidates) {
    const took = await withTx(db, async (trx) => {
      const { rows } = await sql<{ locked: boolean }>`
        SELECT pg_try_advisory_xact_lock(${sql.lit(LockKind.gatewayLink)}, ${lockKeySql(id)}) AS locked`.execute(trx);
      if (!rows[0]?.locked) return false; // a link holds it now: the gateway is back
      await takeDevicesOfflineIn(trx, { gatewayId: id, detail });
      await setGatewayConnected(trx, id, false);
      return true;
    });
    if (took) settled.push(id);
  }
  return settled;
}
