/**
 * Metrics ingest through a real link session: OUR gateway (its samplers on simulated Android devices behind a
 * real adb server, and its metrics uplink) sends batches to the hub's link server, which stores them in the
 * PostgreSQL metrics store and acknowledges them. Passive logging switched off reaches the gateway as
 * MetricsSettings and rows of such devices are not stored; the gateway's dropped-rows counter lands on its record.
 */
import { sql } from 'kysely';
import { specFromPreset } from '@devicelab/labsim';
import type { MetricsSettings } from '@devicelab/proto';
import type { AuthenticatedUser } from '../../src/auth/authenticated-user';
import { setMetricsEnabled } from '../../src/metrics/passive-logging';
import { createUser } from '../domain/helpers';
import {
  deviceRow, gatewayRow, startLinkLab, waitForAvailability, waitUntil, type LabDevice, type LinkLab, type TestGateway,
} from '../gateways/real-gateway-lab';

let lab: LinkLab;
let A: LabDevice;
let B: LabDevice;
let gateway: TestGateway;
let admin: AuthenticatedUser;

const idOf = async (device: LabDevice) => (await deviceRow(lab, device.vui))!.id;
const logLines = async (deviceId: string) => (await sql<{ log: string }>`
  SELECT log FROM metrics.log WHERE device_id = ${deviceId}::uuid AND log LIKE 'probe %' ORDER BY time`.execute(lab.t.db)).rows.map((r) => r.log);
const probe = (device: LabDevice | string, text: string, time = Date.now()) => gateway.running.metrics.record({
  vendorUniqueIdentifier: typeof device === 'string' ? device : device.vui, table: 'log', time, fields: { log: text },
});

beforeAll(async () => {
  lab = await startLinkLab({ gatewayName: 'metrics-gw', devices: [specFromPreset('pixel-7', 0), specFromPreset('galaxy-s23', 1)] });
  [A, B] = lab.devices;
  admin = await createUser(lab.t.db, 'admin@metrics.test');
  gateway = await lab.startGateway({
    gatewayOptions: {
      sampling: { sampleIntervalMs: 300, healthCheckIntervalMs: 1_000, logLinesPerSecond: 0 },
      metricsUplink: { maxBatchRows: 50, flushIntervalMs: 100, bufferRows: 50 },
    },
  });
  await waitForAvailability(lab, [A.vui, B.vui], 'Online', 20_000);
}, 60_000);

afterAll(() => lab?.stop(), 30_000);

describe('metrics over the link', () => {
  it("stores the gateway's sampled rows: memory, CPU and network fields of each device, and health checks", async () => {
    const a = await idOf(A);
    // Loads and rates need two readings: wait for a row that has them.
    const columnOf = async (field: string) => (await sql<{ column_name: string }>`
      SELECT column_name FROM metrics.fields WHERE table_name = 'sample' AND field = ${field}`.execute(lab.t.db)).rows[0]?.column_name;
    const row = await waitUntil(async () => {
      const load = await columnOf('Load');
      if (!load) return undefined;
      return (await sql<Record<string, unknown>>`SELECT * FROM metrics.sample WHERE device_id = ${a}::uuid
        AND ${sql.ref(load)} IS NOT NULL ORDER BY time DESC LIMIT 1`.execute(lab.t.db)).rows[0];
    }, 20_000, 'a sample row of device A with a CPU load');
    for (const field of ['Used', 'Free', 'Active (anon)', 'Load', 'Bytes In', 'Bytes In Per Second']) {
      expect(typeof row[(await columnOf(field)) ?? '-']).toBe('number');
    }
    await waitUntil(async () => (await sql`SELECT 1 FROM metrics.health_check WHERE device_id = ${a}::uuid`.execute(lab.t.db)).rows.length > 0,
      20_000, 'a health check of device A');
  });

  it('acknowledges each stored batch (the uplink holds nothing back); rows of unknown devices are discarded', async () => {
    probe(A, 'probe 1');
    probe('no-such-device', 'probe ghost');
    probe(A, 'probe 2');
    const a = await idOf(A);
    await waitUntil(async () => (await logLines(a)).length === 2, 10_000, 'both probe lines stored');
    expect(await logLines(a)).toEqual(['probe 1', 'probe 2']);
    await waitUntil(() => gateway.running.metrics.unackedBatches === 0 && gateway.running.metrics.bufferedRows === 0,
      10_000, 'every batch acknowledged');
    expect((await sql`SELECT 1 FROM metrics.log WHERE log = 'probe ghost'`.execute(lab.t.db)).rows).toEqual([]);
  });

  it('passive logging off: the gateway is told (MetricsSettings) at once and after every Welcome; the hub stores none of its rows', async () => {
    const settings: MetricsSettings[] = [];
    gateway.running.link.on('metricsSettings', (s: MetricsSettings) => settings.push(s));
    expect(await setMetricsEnabled(lab.t.db, admin, B.vui, false)).toBe(true);
    lab.link.directory.notifyMetricsSettings();
    await waitUntil(() => settings.some((s) => s.disabledVendorUniqueIdentifiers?.includes(B.vui)), 5_000, 'settings naming B');

    const b = await idOf(B);
    probe(B, 'probe muted');
    probe(A, 'probe 3');
    await waitUntil(async () => (await logLines(await idOf(A))).includes('probe 3'), 10_000, 'probe 3 stored');
    expect(await logLines(b)).toEqual([]);

    // A restarted hub sends the settings again right after Welcome.
    settings.length = 0;
    await lab.stopHub();
    await lab.startHub();
    await waitUntil(() => settings.some((s) => s.disabledVendorUniqueIdentifiers?.includes(B.vui)), 15_000, 'settings after Welcome');
    await setMetricsEnabled(lab.t.db, admin, B.vui, true);
    lab.link.directory.notifyMetricsSettings();
    await waitUntil(() => settings.some((s) => (s.disabledVendorUniqueIdentifiers ?? []).length === 0), 5_000, 'settings naming nobody');
  }, 40_000);

  it("records the gateway's dropped-rows counter when its buffer overflowed while the hub was away", async () => {
    const disconnects = gateway.disconnects;
    await lab.stopHub();
    await waitUntil(() => gateway.disconnects > disconnects, 10_000, 'link down');
    for (let i = 0; i < 120; i++) probe(A, `probe overflow ${i}`);
    expect(gateway.running.metrics.droppedRows).toBeGreaterThan(0);
    await lab.startHub();
    await waitUntil(async () => Number((await gatewayRow(lab))!.metrics_dropped_rows) >= 70, 15_000, 'dropped rows on the gateway record');
    // The newest rows survived the overflow and were stored.
    const a = await idOf(A);
    await waitUntil(async () => (await logLines(a)).includes('probe overflow 119'), 10_000, 'newest overflow row stored');
  }, 40_000);
});
