/** `sample` rows: one batched device read per tick (the driver computes loads and rates). */
import type { Logger } from '@devicelab/shared';
import type { DeviceSampling } from '../drivers/device-driver';
import type { MetricsSink } from './metrics-sink';
import { startPeriodic, type Periodic } from './periodic';

export function startSampleJob(id: string, sampling: DeviceSampling, sink: MetricsSink, intervalMs: number, logger: Logger): Periodic {
  return startPeriodic(intervalMs, async (active) => {
    try {
      const sample = await sampling.sample(id);
      if (!active() || Object.keys(sample.fields).length === 0) return;
      sink.record({ vendorUniqueIdentifier: id, table: 'sample', time: sample.time, fields: sample.fields });
    } catch (err) {
      // The health check reports a device that stops answering; one failed read is not worth a row.
      logger.debug({ device: id, err }, 'sample failed');
    }
  });
}
