/** The gateway daemon's metrics settings from its environment (README "Device metrics on the gateway"). */
import { optionsFromEnv } from '../../src/main';

const BASE = { DEVICELAB_GATEWAY_NAME: 'lab-2', DEVICELAB_GATEWAY_TOKEN: 't', DEVICELAB_HUB: 'hub:7443' };

describe('metrics settings from the environment', () => {
  it('reads intervals in seconds, the log rate and the buffer bound', () => {
    const options = optionsFromEnv({
      ...BASE, DEVICELAB_SAMPLE_INTERVAL_S: '1', DEVICELAB_HEALTH_CHECK_INTERVAL_S: '0.5', DEVICELAB_LOG_LINES_PER_SECOND: '0',
      DEVICELAB_METRICS_BUFFER_ROWS: '5000',
    });
    expect(options.sampling).toEqual({ sampleIntervalMs: 1000, healthCheckIntervalMs: 500, logLinesPerSecond: 0 });
    expect(options.metricsUplink).toEqual({ bufferRows: 5000 });
  });

  it('leaves the defaults alone when unset and turns sampling off on request', () => {
    expect(optionsFromEnv(BASE).sampling).toEqual({});
    expect(optionsFromEnv(BASE).metricsUplink).toBeUndefined();
    expect(optionsFromEnv({ ...BASE, DEVICELAB_SAMPLING: 'off' }).sampling).toBe(false);
  });

  it('refuses values that are not numbers >= 0 with the variable in the message', () => {
    expect(() => optionsFromEnv({ ...BASE, DEVICELAB_SAMPLE_INTERVAL_S: 'fast' })).toThrow('DEVICELAB_SAMPLE_INTERVAL_S must be a number >= 0 (got "fast")');
    expect(() => optionsFromEnv({ ...BASE, DEVICELAB_METRICS_BUFFER_ROWS: '-1' })).toThrow(/DEVICELAB_METRICS_BUFFER_ROWS/);
  });
});
