/** `health_check` rows: a periodic probe with elapsed_seconds, is_error and (on failure) failure_reason. */
import type { DeviceSampling } from '../drivers/device-driver';
import type { MetricFieldValue, MetricsSink } from './metrics-sink';
import { startPeriodic, type Periodic } from './periodic';

export async function runHealthCheck(id: string, sampling: DeviceSampling, timeoutMs: number): Promise<Record<string, MetricFieldValue>> {
  const started = performance.now();
  try {
    await sampling.probe(id, timeoutMs);
    return { elapsed_seconds: (performance.now() - started) / 1000, is_error: false };
  } catch (err) {
    return {
      elapsed_seconds: (performance.now() - started) / 1000,
      is_error: true,
      failure_reason: err instanceof Error ? err.message : String(err),
    };
  }
}

export function startHealthCheckJob(id: string, sampling: DeviceSampling, sink: MetricsSink, intervalMs: number, timeoutMs: number): Periodic {
  return startPeriodic(intervalMs, async (active) => {
    const time = Date.now();
    const fields = await runHealthCheck(id, sampling, timeoutMs);
    if (active()) sink.record({ vendorUniqueIdentifier: id, table: 'health_check', time, fields });
  });
}
