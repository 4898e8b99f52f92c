/**
 * The per-device schedules on real parts: the AndroidDriver over the REAL adb server and labsim devices, the
 * samplers writing into a collecting MetricsSink (the rows the hub would receive). Checked: which tables get
 * rows for which devices, how often, and that the hub's MetricsSettings and a device leaving Ready stop them.
 */
import { LabWorld, specFromPreset, type DeviceSnapshot } from '@devicelab/labsim';
import { createLogger } from '@devicelab/shared';
import { AndroidDriver } from '../../src/drivers/android/android-driver';
import { DeviceSamplers } from '../../src/samplers/device-samplers';
import { runHealthCheck } from '../../src/samplers/health-check-job';
import { droppedNote } from '../../src/samplers/log-job';
import type { MetricsSink, SampledRow } from '../../src/samplers/metrics-sink';
import { startDriverLab, type DriverLab } from '../support/driver-lab';
import type { Recorder } from '../support/recorder';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const logger = createLogger('test', process.env.GW_TEST_LOG ?? 'silent');

class CollectingSink implements MetricsSink {
  readonly rows: SampledRow[] = [];
  record(row: SampledRow): void { this.rows.push(row); }
  of(id: string, table: string, since = 0): SampledRow[] {
    return this.rows.filter((r) => r.vendorUniqueIdentifier === id && r.table === table && r.time >= since);
  }
}

async function until(check: () => boolean, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${check.toString()}`);
    await sleep(50);
  }
}

describe('DeviceSamplers over adb + labsim', () => {
  let world: LabWorld;
  let driver: AndroidDriver;
  let recorder: Recorder;
  let samplers: DeviceSamplers;
  let sink: CollectingSink;
  let lab: DriverLab;
  const specA = specFromPreset('pixel-7', 3);
  const specB = specFromPreset('galaxy-s23', 4);
  let a: DeviceSnapshot;
  let b: DeviceSnapshot;

  beforeAll(async () => {
    sink = new CollectingSink();
    lab = await startDriverLab({
      logger,
      listen: (d) => (samplers = new DeviceSamplers(d.sampling, sink, {
        sampleIntervalMs: 400, healthCheckIntervalMs: 500, healthCheckTimeoutMs: 5_000, logLinesPerSecond: 20,
      }, logger)),
    });
    ({ world, driver, recorder } = lab);
    [a, b] = await Promise.all([world.addAndroidDevice(specA), world.addAndroidDevice(specB)]);
    await Promise.all([a, b].map((d) => recorder.waitReadiness(d.adbSerial, 'Ready')));
  });

  afterAll(async () => {
    await samplers?.stop();
    await lab?.stop();
  });

  it('writes sample, health_check and log rows for every Ready device on their intervals', async () => {
    const since = Date.now();
    // Enough rows of every table for both devices; how fast they come depends on the machine, not on the samplers.
    await until(() => [a, b].every((d) => sink.of(d.adbSerial, 'sample', since).length >= 3
      && sink.of(d.adbSerial, 'health_check', since).length >= 2 && sink.of(d.adbSerial, 'log', since).length >= 1), 30_000);
    const elapsedMs = Date.now() - since;
    for (const d of [a, b]) {
      const samples = sink.of(d.adbSerial, 'sample', since);
      // Never more often than the 400 ms interval (the first tick is spread over one interval).
      expect(samples.length).toBeLessThanOrEqual(Math.ceil(elapsedMs / 400) + 2);
      expect(samples.some((r) => typeof r.fields.Load === 'number' && typeof r.fields['Bytes In Per Second'] === 'number')).toBe(true);
      const checks = sink.of(d.adbSerial, 'health_check', since);
      expect(checks.length).toBeGreaterThanOrEqual(2);
      for (const c of checks) {
        expect(c.fields.is_error).toBe(false);
        expect(c.fields.elapsed_seconds).toBeGreaterThan(0);
        expect(c.fields.elapsed_seconds).toBeLessThan(5);
        expect(c.fields).not.toHaveProperty('failure_reason');
      }
      // labsim logs ambient system chatter every 1.5 s.
      expect(sink.of(d.adbSerial, 'log', since).length).toBeGreaterThanOrEqual(1);
    }
    expect(samplers.sampledDevices.sort()).toEqual([a.adbSerial, b.adbSerial].sort());
  });

  it('stops every table for a device the hub disables, and starts again when enabled', async () => {
    samplers.applySettings({ disabledVendorUniqueIdentifiers: [a.adbSerial] });
    await sleep(200); // a read in flight may still land
    const since = Date.now();
    await sleep(1_500);
    expect(sink.of(a.adbSerial, 'sample', since)).toHaveLength(0);
    expect(sink.of(a.adbSerial, 'health_check', since)).toHaveLength(0);
    expect(sink.of(a.adbSerial, 'log', since)).toHaveLength(0);
    expect(sink.of(b.adbSerial, 'sample', since).length).toBeGreaterThan(0);
    samplers.applySettings({ disabledVendorUniqueIdentifiers: [] });
    await until(() => sink.of(a.adbSerial, 'sample', since).length > 0);
  });

  it('pauses a device while it reboots (not Ready) and resumes after', async () => {
    const from = recorder.events.length;
    await world.reboot(specB.serial);
    await recorder.waitFor((e) => e.type === 'changed' && e.state.vendorUniqueIdentifier === b.adbSerial && e.state.readiness !== 'Ready', 10_000, from);
    expect(samplers.sampledDevices).not.toContain(b.adbSerial);
    await recorder.waitReadiness(b.adbSerial, 'Ready', 20_000, from);
    const since = Date.now();
    await until(() => sink.of(b.adbSerial, 'sample', since).length > 0);
    expect(samplers.sampledDevices).toContain(b.adbSerial);
  });

  it('bounds the log rate per device and says in the log how many lines were dropped', async () => {
    const since = Date.now();
    const device = world.device(specA.serial);
    for (let i = 0; i < 300; i++) device.logcat.log('D', 'Flood', `flood line ${i}`, 5000, 5001);
    await until(() => sink.of(a.adbSerial, 'log', since).some((r) => String(r.fields.log).startsWith('--------- devicelab')), 10_000);
    const rows = sink.of(a.adbSerial, 'log', since);
    const flood = rows.filter((r) => String(r.fields.log).includes('flood line'));
    const note = rows.find((r) => String(r.fields.log).startsWith('--------- devicelab'));
    const dropped = Number(/dropped (\d+)/.exec(String(note?.fields.log))?.[1]);
    // Burst of 2 x 20 lines passes, the rest is counted (a few may pass as tokens refill meanwhile).
    expect(flood.length).toBeGreaterThanOrEqual(30);
    expect(flood.length).toBeLessThan(80);
    expect(dropped).toBeGreaterThan(200);
    expect(note?.fields.log).toBe(droppedNote(dropped, 20));
    expect(samplers.droppedLogLines).toBeGreaterThanOrEqual(dropped);
  });

  it('reports a failed probe with its reason', async () => {
    const result = await runHealthCheck('127.0.0.1:9', driver.sampling, 2_000);
    expect(result.is_error).toBe(true);
    expect(String(result.failure_reason)).toMatch(/127\.0\.0\.1:9/);
    expect(result.elapsed_seconds).toBeGreaterThanOrEqual(0);
  });
});
