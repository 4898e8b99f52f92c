/** How often each metrics table is written per device (spec 2.5); 0 turns a table off. */
export interface SamplingOptions {
  /** `sample` table: one batched read of /proc, cpufreq and gfxinfo per tick. */
  sampleIntervalMs: number;
  /** `health_check` table: one probe per tick. */
  healthCheckIntervalMs: number;
  /** A probe slower than this counts as failed. */
  healthCheckTimeoutMs: number;
  /** `log` table: device log lines per second and device kept at most (bursts up to twice that); 0: no log. */
  logLinesPerSecond: number;
}

export const DEFAULT_SAMPLING: SamplingOptions = {
  sampleIntervalMs: 10_000,
  healthCheckIntervalMs: 60_000,
  healthCheckTimeoutMs: 10_000,
  logLinesPerSecond: 100,
};
