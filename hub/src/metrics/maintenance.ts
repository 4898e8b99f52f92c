/**
 * Housekeeping of the metrics store while the hub runs: partitions for today and tomorrow exist before rows
 * need them, and days older than the retention setting are dropped; with the hub database, records of received
 * batches older than a day are deleted (received-batches.ts). Runs at start and then hourly.
 */
import type { Logger } from '@devicelab/shared';
import type { Db } from '../store/database';
import type { MetricsStore } from './metrics-store';
import { pruneReceivedBatches } from './received-batches';

const HOUR_MS = 3_600_000;

/**
 * Runs one pass now (awaited, so a broken store fails the start; inside `exclusive` when given, so replicas
 * starting together do not create the same partitions at once) and then hourly while `shouldRun` says so (only
 * the lab's leader among replicas); returns stop.
 */
export async function startMetricsMaintenance(
  store: MetricsStore,
  options: {
    retentionDays: number; logger: Logger; db?: Db;
    exclusive?: (pass: () => Promise<void>) => Promise<void>; shouldRun?: () => boolean;
  },
): Promise<() => Promise<void>> {
  const pass = async () => {
    await store.prepare();
    const dropped = await store.applyRetention(options.retentionDays);
    if (dropped.length > 0) options.logger.info({ dropped }, 'metrics retention dropped old days');
    if (options.db) await pruneReceivedBatches(options.db);
  };
  await (options.exclusive ? options.exclusive(pass) : pass());
  const timer = setInterval(() => {
    if (options.shouldRun && !options.shouldRun()) return;
    pass().catch((err) => options.logger.warn({ err }, 'metrics maintenance failed; retrying next hour'));
  }, HOUR_MS);
  timer.unref();
  return async () => clearInterval(timer);
}
