/**
 * Work that runs once per lab, on the replica holding the leader lock (taken on its registry connection, so it
 * passes to another replica the moment the leader dies): gateways whose replica died go Offline unless they have
 * reconnected elsewhere, async jobs of dead replicas get their answer (or are held for reconciliation), relayed
 * commands whose requester died and rows of dead replicas are deleted. Metrics maintenance asks `isLeader` too.
 * Webhook delivery needs no leader (its queue is claimed with SKIP LOCKED).
 */
import { sql } from 'kysely';
import type { Logger } from '@devicelab/shared';
import { failInterruptedJobs } from '../domain/async-jobs';
import { holdInterruptedJobs } from '../domain/interrupted-jobs';
import type { Db } from '../store/database';
import { LockKind, lockHeldSql } from './advisory-locks';
import { settleOrphanedGateways } from './orphaned-gateways';
import type { ReplicaRegistry } from './replica-registry';

/** How often the leader looks for dead replicas' leftovers (and a follower tries to become leader). */
export const LEADER_TICK_MS = 1_000;

export function startLabLeader(db: Db, registry: Pick<ReplicaRegistry, 'tryLead'>, logger: Logger): () => Promise<void> {
  let running: Promise<void> | undefined;
  const tick = async () => {
    if (!(await registry.tryLead())) return;
    const settled = await settleOrphanedGateways(db, 'Gateway lost its hub replica');
    if (settled.length > 0) logger.info({ gateways: settled }, 'gateways of a dead replica taken offline');
    await holdInterruptedJobs(db);
    await failInterruptedJobs(db);
    await db.deleteFrom('relayed_commands').where('deadline', '<', sql<Date>`now() - interval '1 minute'`).execute();
    await db.deleteFrom('hub_replicas').where(sql<boolean>`NOT ${lockHeldSql(LockKind.replica, sql`hub_replicas.id`)}`).execute();
  };
  const timer = setInterval(() => {
    running ??= tick().catch((err: unknown) => logger.warn({ err }, 'lab leader work failed; retrying'))
      .finally(() => { running = undefined; });
  }, LEADER_TICK_MS);
  return async () => {
    clearInterval(timer);
    await running;
  };
}
