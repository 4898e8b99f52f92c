/**
 * Metrics end to end on real parts: a gateway started by `startGateway` (AndroidDriver over the REAL adb server
 * in front of labsim devices, samplers, MetricsUplink, HubLink) and the hub's REAL link server storing batches
 * in PostgreSQL. What is checked is what a user of `GET /Device/Metrics` sees (queried through the hub's domain
 * function): sample, health_check and log rows arrive; switching a device's logging off stops its rows; rows
 * sampled while the hub was down arrive after it is back.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { defaultAndroidLab, LabWorld, type DeviceSnapshot } from '@devicelab/labsim';
import { createLogger } from '@devicelab/shared';
import { BlobStore } from '../../../hub/src/apps/blob-store';
import type { AuthenticatedUser } from '../../../hub/src/auth/authenticated-user';
import { registerGateway } from '../../../hub/src/gateways/gateway-tokens';
import { startLinkServer, type LinkServer } from '../../../hub/src/gateways/link-server';
import { queryDeviceMetrics } from '../../../hub/src/metrics/device-metrics-query';
import { setMetricsEnabled } from '../../../hub/src/metrics/passive-logging';
import { PostgresMetricsStore } from '../../../hub/src/metrics/postgres-metrics-store';
import type { MetricsRequest } from '../../../hub/src/metrics/query-plan';
import { createUser } from '../../../hub/test/domain/helpers';
import { createTestDatabase, type TestDatabase } from '../../../hub/test/support/test-database';
import { startGateway, type RunningGateway } from '../../src/gateway';
import { eventually } from '../support/eventually';

const logger = createLogger('test', process.env.GW_TEST_LOG ?? 'silent');
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('metrics from labsim devices to the hub store', () => {
  let world: LabWorld;
  let t: TestDatabase;
  let dir: string;
  let server: LinkServer;
  let gateway: RunningGateway;
  let store: PostgresMetricsStore;
  let user: AuthenticatedUser;
  let a: DeviceSnapshot;
  let b: DeviceSnapshot;
  let linkPort: number;
  const savedHome = process.env.HOME;

  const rows = async (device: DeviceSnapshot, table: string, start: Date, fields?: string) => {
    const doc = await queryDeviceMetrics(t.db, store, user, device.adbSerial, { table, start, fields } as unknown as MetricsRequest);
    const series = doc.series[0];
    if (!series) return [];
    return series.values.map((v) => Object.fromEntries(series.columns.map((c, i) => [c, v[i]])) as Record<string, unknown>);
  };

  beforeAll(async () => {
    world = new LabWorld({ timings: { rebootMs: 800, bootCompleteMs: 700 } });
    await world.start();
    process.env.HOME = world.env().HOME;
    [a, b] = await Promise.all(defaultAndroidLab(2).map((spec) => world.addAndroidDevice(spec)));
    t = await createTestDatabase({ maxConnections: 6 });
    dir = await mkdtemp(path.join(os.tmpdir(), 'gw-metrics-e2e-'));
    const blobs = new BlobStore(t.db);
    const token = await registerGateway(t.db, 'lab-metrics');
    store = new PostgresMetricsStore(t.db);
    // One store for the link server and the queries, as in the hub process (the catalog is cached per store).
    server = await startLinkServer({ db: t.db, blobs, port: 0, host: '127.0.0.1', heartbeatIntervalMs: 200, logger, metrics: store });
    linkPort = server.port;
    user = await createUser(t.db, 'metrics-e2e@lab.test');
    gateway = await startGateway({
      name: 'lab-metrics', token, hubAddress: `127.0.0.1:${linkPort}`, cacheDir: path.join(dir, 'cache'),
      adbPort: world.adbServerPort, publicAddress: 'lab.local', publicPort: 7100, logger,
      backoff: { initialMs: 50, maxMs: 300 },
      sampling: { sampleIntervalMs: 500, healthCheckIntervalMs: 700, healthCheckTimeoutMs: 5_000, logLinesPerSecond: 50 },
      metricsUplink: { flushIntervalMs: 200, maxBatchRows: 50, maxUnackedBatches: 2 },
    });
    await eventually(async () => (await t.db.selectFrom('devices').select('id').where('availability', '=', 'Online').execute()).length === 2);
  });

  afterAll(async () => {
    await gateway?.stop();
    await server?.stop();
    await t?.drop();
    await world?.stop();
    process.env.HOME = savedHome;
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('stores sample rows with memory, CPU and network fields, health checks and log lines for each device', async () => {
    const start = new Date(Date.now() - 60_000);
    for (const device of [a, b]) {
      const samples = await eventually(async () => {
        const found = await rows(device, 'sample', start);
        return found.some((r) => typeof r.Load === 'number') && found;
      });
      const latest = samples.filter((r) => typeof r.Load === 'number').pop()!;
      expect(latest.Used).toBeGreaterThan(0);
      expect(latest.Free).toBeGreaterThan(0);
      expect(latest['Active (anon)']).toBeGreaterThan(0);
      expect(latest.Load).toBeGreaterThan(0);
      expect(latest.Load).toBeLessThanOrEqual(100);
      expect(latest['Bytes In Per Second']).toBeGreaterThan(0);
      expect(latest.Frequency).toBeGreaterThan(0);
      const checks = await eventually(async () => (await rows(device, 'health_check', start)).filter((r) => r.is_error === false).length > 0
        && rows(device, 'health_check', start));
      expect(checks[0].elapsed_seconds).toBeGreaterThan(0);
      const logs = await eventually(async () => { const l = await rows(device, 'log', start); return l.length > 0 && l; });
      expect(String(logs[0].log)).toMatch(/^\d\d-\d\d \d\d:\d\d:\d\d\.\d{3}\s+\d+\s+\d+ [VDIWEF] /);
    }
    expect(gateway.metrics.acknowledgedRows).toBeGreaterThan(0);
  });

  it('stops a device\'s rows when its passive logging is switched off at the hub', async () => {
    await setMetricsEnabled(t.db, user, a.adbSerial, false);
    server.directory.notifyMetricsSettings();
    await eventually(async () => !gateway.samplers!.sampledDevices.includes(a.adbSerial));
    await sleep(300);
    const since = new Date();
    await sleep(1_500);
    expect(gateway.samplers!.sampledDevices).toContain(b.adbSerial);
    await setMetricsEnabled(t.db, user, a.adbSerial, true);
    server.directory.notifyMetricsSettings();
    expect(await rows(a, 'sample', since)).toHaveLength(0);
    expect((await rows(b, 'sample', since)).length).toBeGreaterThan(0);
    await eventually(async () => (await rows(a, 'sample', new Date())).length > 0 || (await rows(a, 'sample', since)).length > 0);
  });

  it('keeps sampling while the hub is down and delivers those rows after it is back', async () => {
    await server.stop();
    await eventually(async () => !gateway.link.connected);
    const downAt = new Date();
    await sleep(2_000);
    const backAt = new Date();
    expect(gateway.metrics.bufferedRows).toBeGreaterThan(0);
    const blobs = new BlobStore(t.db);
    server = await startLinkServer({ db: t.db, blobs, port: linkPort, host: '127.0.0.1', heartbeatIntervalMs: 200, logger, metrics: store });
    await eventually(async () => gateway.link.connected);
    const during = await eventually(async () => {
      const found = (await rows(b, 'sample', downAt)).filter((r) => new Date(String(r.time)) < backAt);
      return found.length >= 2 && found;
    });
    expect(during.every((r) => typeof r.Used === 'number')).toBe(true);
    expect(gateway.metrics.droppedRows).toBe(0);
  });
});
