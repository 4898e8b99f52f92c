/**
 * Per-device metrics schedules (spec 2.5): for every Ready device whose passive logging is on, a `sample`
 * schedule, a `health_check` schedule and a followed `log` stream, all writing to one MetricsSink. A device
 * that leaves Ready, leaves the host or is named in the hub's MetricsSettings stops being sampled at once.
 */
import type { DeviceState, MetricsSettings } from '@devicelab/proto';
import type { Logger } from '@devicelab/shared';
import type { DeviceListener, DeviceSampling } from '../drivers/device-driver';
import { startHealthCheckJob } from './health-check-job';
import { startLogJob, type LogJob } from './log-job';
import type { MetricsSink } from './metrics-sink';
import type { Periodic } from './periodic';
import { startSampleJob } from './sample-job';
import type { SamplingOptions } from './sampling-options';

interface DeviceJobs {
  sample?: Periodic;
  health?: Periodic;
  log?: LogJob;
}

export class DeviceSamplers implements DeviceListener {
  private readonly ready = new Set<string>();
  private readonly running = new Map<string, DeviceJobs>();
  private disabled = new Set<string>();
  private stopped = false;
  /** Jobs told to stop whose last read is still running. */
  private readonly finishing = new Set<Promise<void>>();

  constructor(
    private readonly sampling: DeviceSampling,
    private readonly sink: MetricsSink,
    private readonly options: SamplingOptions,
    private readonly logger: Logger,
  ) {}

  /** Devices being sampled right now. */
  get sampledDevices(): string[] {
    return [...this.running.keys()];
  }

  /** Log lines dropped by the rate bound, over the devices sampled now. */
  get droppedLogLines(): number {
    return [...this.running.values()].reduce((sum, jobs) => sum + (jobs.log?.dropped ?? 0), 0);
  }

  deviceChanged(state: DeviceState): void {
    if (state.readiness === 'Ready') this.ready.add(state.vendorUniqueIdentifier);
    else this.ready.delete(state.vendorUniqueIdentifier);
    this.reconcile(state.vendorUniqueIdentifier);
  }

  deviceRemoved(vendorUniqueIdentifier: string): void {
    this.ready.delete(vendorUniqueIdentifier);
    this.reconcile(vendorUniqueIdentifier);
  }

  /** The hub's list of devices whose passive logging is off (replaces the previous list). */
  applySettings(settings: MetricsSettings): void {
    this.disabled = new Set(settings.disabledVendorUniqueIdentifiers ?? []);
    for (const id of new Set([...this.ready, ...this.running.keys()])) this.reconcile(id);
  }

  /**
   * Stops every job and waits for reads still in flight: none may reach the adb server after the gateway
   * stopped (adbkit would start a new server for it).
   */
  async stop(): Promise<void> {
    this.stopped = true;
    for (const id of [...this.running.keys()]) this.reconcile(id);
    await Promise.all(this.finishing);
  }

  private reconcile(id: string): void {
    const wanted = !this.stopped && this.ready.has(id) && !this.disabled.has(id);
    const jobs = this.running.get(id);
    if (wanted && !jobs) {
      this.running.set(id, this.startJobs(id));
      this.logger.debug({ device: id }, 'sampling started');
    } else if (!wanted && jobs) {
      const finished = Promise.all([jobs.sample?.stop(), jobs.health?.stop()]).then(() => undefined);
      this.finishing.add(finished);
      void finished.finally(() => this.finishing.delete(finished));
      jobs.log?.stop();
      this.running.delete(id);
      this.logger.debug({ device: id }, 'sampling stopped');
    }
  }

  private startJobs(id: string): DeviceJobs {
    const o = this.options;
    const logger = this.logger;
    return {
      sample: o.sampleIntervalMs > 0 ? startSampleJob(id, this.sampling, this.sink, o.sampleIntervalMs, logger) : undefined,
      health: o.healthCheckIntervalMs > 0
        ? startHealthCheckJob(id, this.sampling, this.sink, o.healthCheckIntervalMs, o.healthCheckTimeoutMs) : undefined,
      log: o.logLinesPerSecond > 0 ? startLogJob(id, this.sampling, this.sink, o.logLinesPerSecond, logger) : undefined,
    };
  }
}
