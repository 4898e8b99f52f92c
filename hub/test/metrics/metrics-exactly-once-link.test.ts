/**
 * Exactly-once metrics delivery across a reconnect, on real parts: OUR gateway (AndroidDriver over a real adb
 * server in front of a labsim device, its metrics uplink and HubLink) dials the hub's real link server through a
 * TCP route the test breaks. The hub stores a batch and acknowledges it, but the ack never reaches the gateway (the
 * route swallows the hub's bytes, then resets the connection). The gateway reconnects and resends the batch; the
 * rows are in the store once, and the resend's ack releases the batch at the gateway.
 */
import { sql } from 'kysely';
import { specFromPreset } from '@devicelab/labsim';
import { cuttableRoute, type CuttableRoute } from '../gateways/cuttable-route';
import {
  deviceRow, startLinkLab, waitForAvailability, waitUntil, type LabDevice, type LinkLab, type TestGateway,
} from '../gateways/real-gateway-lab';

let lab: LinkLab;
let route: CuttableRoute;
let A: LabDevice;
let gateway: TestGateway;
let deviceId: string;

const copies = async (text: string) => Number((await sql<{ n: string }>`
  SELECT count(*) AS n FROM metrics.log WHERE device_id = ${deviceId}::uuid AND log = ${text}`.execute(lab.t.db)).rows[0].n);
const probe = (text: string) => gateway.running.metrics.record({
  vendorUniqueIdentifier: A.vui, table: 'log', time: Date.now(), fields: { log: text },
});
const settled = () => gateway.running.metrics.unackedBatches === 0 && gateway.running.metrics.bufferedRows === 0;

beforeAll(async () => {
  lab = await startLinkLab({ gatewayName: 'once-gw', devices: [specFromPreset('pixel-7', 0)] });
  [A] = lab.devices;
  route = await cuttableRoute(lab.linkPort);
  gateway = await lab.startGateway({
    hubPort: route.port,
    backoff: { initialMs: 50, maxMs: 200 },
    // Only the test's rows travel, so every batch is one the test knows.
    gatewayOptions: { sampling: false, metricsUplink: { maxBatchRows: 10, flushIntervalMs: 50 } },
  });
  await waitForAvailability(lab, [A.vui], 'Online', 20_000);
  deviceId = (await deviceRow(lab, A.vui))!.id;
}, 60_000);

afterAll(async () => {
  await route?.close();
  await lab?.stop();
}, 30_000);

describe('metrics delivery across a lost ack', () => {
  it('stores the rows of a batch whose ack was lost exactly once after the gateway reconnects and resends it', async () => {
    probe('before the cut');
    await waitUntil(async () => (await copies('before the cut')) === 1 && settled(), 10_000, 'first row stored and acknowledged');

    route.holdReplies();
    probe('ack lost 1');
    probe('ack lost 2');
    // The hub stored the batch and sent its ack; the route swallowed it.
    await waitUntil(async () => (await copies('ack lost 1')) === 1 && (await copies('ack lost 2')) === 1, 10_000, 'batch stored by the hub');
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(gateway.running.metrics.unackedBatches).toBe(1);
    const acknowledgedBefore = gateway.running.metrics.acknowledgedRows;
    const connections = gateway.connections;

    route.cut();
    await waitUntil(() => gateway.connections > connections, 15_000, 'the gateway reconnected');
    await waitUntil(settled, 10_000, 'the resent batch acknowledged');
    // The ack came for the resend: the hub answered it without storing the rows again.
    expect(gateway.running.metrics.acknowledgedRows).toBe(acknowledgedBefore + 2);
    expect(gateway.running.metrics.droppedRows).toBe(0);
    expect([await copies('ack lost 1'), await copies('ack lost 2')]).toEqual([1, 1]);

    // Delivery goes on normally on the new connection.
    probe('after the cut');
    await waitUntil(async () => (await copies('after the cut')) === 1 && settled(), 10_000, 'row after the cut stored');
    expect(await copies('ack lost 1')).toBe(1);
  }, 60_000);
});
