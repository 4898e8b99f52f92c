/**
 * Housekeeping of the metrics store while the hub runs: partitions for today and tomorrow exist before rows
 * need them, and days older than the retention setting are dropped; with the hub database, records of received
 * batches older than a day are deleted (received-batches.ts). Runs at start and then hourly.
 */
import type { Logger } from '@devicelab/shared';
import type { Db } from '../store/database';
import type { MetricsStore } from './metrics-store';
import { pruneReceivedBatches } from './received-batches';
import { DEFAULT_RETENTION_DAYS } from './postgres-metrics-store';

export const RETENTION_DAYS_ENV = 'DEVICELAB_METRICS_RETENTION_DAYS';
const HOUR_MS = 3_600_000;

/** Retention in whole days from the environment; default 30. Anything but a whole number >= 1 is refused. */
export function metricsRetentionDays(env: NodeJS.ProcessEnv = process.env): number {
  const text = env[RETENTION_DAYS_ENV]?.trim();
  if (!text) return DEFAULT_RETENTION_DAYS;
  if (!/^\d{1,5}$/.test(text) || Number(text) < 1) {
    throw new Error(`${RETENTION_DAYS_ENV} must be a whole number of days, 1 or more (got '${text}')`);
  }
  return Number(text);
}

/** Runs one pass now (awaited, so a broken store fails the start) and then hourly; returns stop. */
export async function startMetricsMaintenance(
  store: MetricsStore, options: { retentionDays: number; logger: Logger; db?: Db },
): Promise<() => Promise<void>> {
  const pass = async () => {
    await store.prepare();
    const dropped = await store.applyRetention(options.retentionDays);
    if (dropped.length > 0) options.logger.info({ dropped }, 'metrics retention dropped old days');
    if (options.db) await pruneReceivedBatches(options.db);
  };
  await pass();
  const timer = setInterval(() => {
    pass().catch((err) => options.logger.warn({ err }, 'metrics maintenance failed; retrying next hour'));
  }, HOUR_MS);
  timer.unref();
  return async () => clearInterval(timer);
}
