/**
 * Two hub replicas (processes) on one PostgreSQL, a gateway on each (each with its own simulated
 * lab). Through replica A, for a device whose gateway is linked to replica B: a retain (B's gateway opens the
 * device's access endpoint for it, and a live event stream on B hears it), a device connection (forwarded to B),
 * an app install and a USB port switch work and show on reads through both replicas. B is killed with SIGKILL: its gateway is back Online through A within 5 s with the same Guids, the
 * retain kept, and nothing ran twice (one ServerStarting per replica, one install job, one Offline per device).
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startGateway, type RunningGateway } from '@devicelab/gateway';
import { LabWorld, specFromPreset, type AndroidDeviceSpec } from '@devicelab/labsim';
import WebSocket from 'ws';
import { fixture } from '../../../scripts/jest/shared-files';
import { openEventStream } from '../support/event-stream-client';
import { registerGateway } from '../../src/gateways/gateway-tokens';
import { startHubProcess, type HubProcess } from '../support/hub-process';
import { waitFor } from '../support/lab';
import { createTestDatabase, type TestDatabase } from '../support/test-database';

const ADMIN_TOKEN = '5d0c9a3e-2f41-4b7a-8e6d-1c2b3a4f5e60';
const HUB_SERIAL = 'REPLHUB1';
const ADMIN_HEADERS = { authorization: `Basic ${Buffer.from(`admin:${ADMIN_TOKEN}`).toString('base64')}` };

interface Side {
  hub: HubProcess;
  linkPort: number;
  replicaId: string;
  world: LabWorld;
  device: AndroidDeviceSpec;
  gateway?: RunningGateway;
  gatewayName: string;
  gatewayToken: string;
}

let t: TestDatabase;
let dataDir: string;
let a: Side;
let b: Side;

/** Where a hub process serves: its replica row (link port, id) matched by its API port. */
async function replicaOf(hub: HubProcess): Promise<{ id: string; linkPort: number }> {
  const apiPort = new URL(hub.url).port;
  const { value } = await waitFor(async () => {
    const rows = await t.db.selectFrom('hub_replicas').select(['id', 'api_address', 'link_address']).execute();
    return rows.find((row) => row.api_address?.endsWith(`:${apiPort}`));
  }, 10_000, 'the replica row');
  return { id: value.id, linkPort: Number(value.link_address!.split(':').pop()) };
}

function launchGateway(side: Side, world: LabWorld, linkPorts: number[], usbHub?: string): Promise<RunningGateway> {
  return startGateway({
    name: side.gatewayName, token: side.gatewayToken, hubAddress: linkPorts.map((port) => `127.0.0.1:${port}`),
    cacheDir: path.join(dataDir, `${side.gatewayName}-cache`), adbPort: world.adbServerPort,
    publicAddress: '127.0.0.1', publicPort: 9000, backoff: { initialMs: 100, maxMs: 500 },
    usbHubs: usbHub ? {
      cambrionix: [{ path: usbHub }], uhubctl: [], pollIntervalMs: 300, telemetryIntervalMs: 0, batteryCare: false,
      recovery: false, reopenDelayMs: 250, commandTimeoutMs: 2000,
      portMap: [{ hubSerialNumber: HUB_SERIAL, port: 1, device: side.device.serial }],
    } : undefined,
  });
}

/** A replica (its own data dir: app binaries are in PostgreSQL), its lab and its gateway, which knows `otherLinkPorts` too. */
async function startSide(name: string, device: AndroidDeviceSpec, withUsbHub: boolean, otherLinkPorts: number[]): Promise<Side> {
  const hub = await startHubProcess({
    databaseUrl: t.url, dataDir: path.join(dataDir, `hub-${name}`), adminToken: ADMIN_TOKEN, env: { DEVICELAB_LOG_LEVEL: 'warn' },
  });
  const { id, linkPort } = await replicaOf(hub);
  const world = new LabWorld({ stateDir: path.join(dataDir, `labsim-${name}`), timings: { rebootMs: 1500, bootCompleteMs: 1000 } });
  await world.start();
  await world.addAndroidDevice(device);
  const usbHub = withUsbHub ? await world.addCambrionixHub(
    { serial: HUB_SERIAL, ports: 4, path: path.join(dataDir, `tty-${name}`), rebootMs: 1000 }, { 1: device.serial }) : undefined;
  const side: Side = {
    hub, linkPort, replicaId: id, world, device, gatewayName: `gateway-${name}`,
    gatewayToken: await registerGateway(t.db, `gateway-${name}`),
  };
  side.gateway = await launchGateway(side, world, [linkPort, ...otherLinkPorts], usbHub?.path);
  return side;
}

type Json = Record<string, any>;

/**
 * Opens /Device/Connect through `side` and speaks adb's first packet (CNXN) into the device's access endpoint:
 * the endpoint's first answer (AUTH: it asks for the client's key) proves the bytes reach the device's gateway.
 */
function adbHello(side: Side, id: string, headers: Record<string, string> = ADMIN_HEADERS): Promise<{ endpoint: string | undefined; answer: string }> {
  const payload = Buffer.from('host::\0');
  const header = Buffer.alloc(24);
  const command = 0x4e584e43; // 'CNXN'
  header.writeUInt32LE(command, 0);
  header.writeUInt32LE(0x01000001, 4);
  header.writeUInt32LE(256 * 1024, 8);
  header.writeUInt32LE(payload.length, 12);
  header.writeUInt32LE([...payload].reduce((sum, byte) => sum + byte, 0), 16);
  header.writeUInt32LE((command ^ 0xffffffff) >>> 0, 20);
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(`${side.hub.url.replace('http', 'ws')}/apiv1/Device/Connect?id=${id}`, { headers });
    let endpoint: string | undefined;
    let received = Buffer.alloc(0);
    ws.once('upgrade', (res) => { endpoint = res.headers['devicelab-endpoint'] as string | undefined; });
    ws.once('unexpected-response', (_req, res) => {
      let text = '';
      res.on('data', (chunk: Buffer) => { text += chunk; });
      res.on('end', () => reject(new Error(`refused: HTTP ${res.statusCode} ${text}`)));
    });
    ws.once('open', () => ws.send(Buffer.concat([header, payload])));
    ws.on('message', (data: Buffer) => {
      received = Buffer.concat([received, data]);
      if (received.length < 4) return;
      ws.close();
      resolve({ endpoint, answer: received.subarray(0, 4).toString('latin1') });
    });
    ws.once('error', reject);
    setTimeout(() => { ws.terminate(); reject(new Error('no answer from the device endpoint in 15 s')); }, 15_000).unref();
  });
}
const call = async (side: Side, pathAndQuery: string, method = 'GET'): Promise<any> => (await side.hub.api(pathAndQuery, { method })).json();
/** A device as GET /Device through `side` shows it, found by its serial number (its Guid once known). */
const device = async (side: Side, serial: string): Promise<any> => {
  const row = await t.db.selectFrom('devices').select('id').where('serial_number', '=', serial).executeTakeFirst();
  return row ? (await call(side, `/Device?id=${row.id}&allApplications=true`))[0] : undefined;
};
const guid = async (serial: string): Promise<string> =>
  (await t.db.selectFrom('devices').select('id').where('serial_number', '=', serial).executeTakeFirstOrThrow()).id;

beforeAll(async () => {
  t = await createTestDatabase();
  dataDir = mkdtempSync(path.join(os.tmpdir(), 'devicelab-replicas-'));
  a = await startSide('a', specFromPreset('pixel-7', 21), false, []);
  b = await startSide('b', specFromPreset('galaxy-s23', 22), true, [a.linkPort]); // DEVICELAB_HUB=b,a
  try {
    await waitFor(async () => (await device(a, b.device.serial))?.availability === 'Online'
      && (await device(b, a.device.serial))?.availability === 'Online', 60_000, 'both devices Online');
  } catch (err) {
    const devices = await t.db.selectFrom('devices').select(['vendor_unique_identifier', 'availability', 'readiness', 'readiness_detail', 'gateway_id']).execute();
    const gateways = await t.db.selectFrom('gateways').select(['id', 'name', 'connected', 'hub_replica']).execute();
    throw new Error(`${(err as Error).message}\n${JSON.stringify({ devices, gateways, a: a.hub.output(), b: b.hub.output() }, null, 1)}`);
  }
}, 150_000);

afterAll(async () => {
  for (const side of [a, b]) {
    await side?.gateway?.stop();
    await side?.world.stop();
    await side?.hub.stop();
  }
  await t?.drop();
  rmSync(dataDir, { recursive: true, force: true });
}, 60_000);

test('each gateway is owned by its replica; /Service lists both replicas; a second link of a gateway is refused', async () => {
  const gateways = await t.db.selectFrom('gateways').select(['name', 'hub_replica', 'connected']).orderBy('name').execute();
  expect(gateways).toEqual([
    { name: 'gateway-a', hub_replica: a.replicaId, connected: true },
    { name: 'gateway-b', hub_replica: b.replicaId, connected: true },
  ]);
  for (const side of [a, b]) {
    const service = await call(side, '/Service');
    expect(service.hubReplicas.map((r: Json) => r.id).sort()).toEqual([a.replicaId, b.replicaId].sort());
    // Gateways of both replicas, through either.
    const vendorIds = (await t.db.selectFrom('devices').select('vendor_unique_identifier').execute()).map((d) => d.vendor_unique_identifier);
    expect(service.deviceGatewayInformation.flatMap((g: Json) => g.deviceVendorUniqueIdentifiers).sort()).toEqual(vendorIds.sort());
  }
  // gateway-b dialling replica A while its link on B lives: refused, and B keeps it.
  const intruder = await launchGateway(b, b.world, [a.linkPort]);
  try {
    await new Promise((resolve) => setTimeout(resolve, 2_500));
    const row = await t.db.selectFrom('gateways').select('hub_replica').where('name', '=', 'gateway-b').executeTakeFirstOrThrow();
    expect(row.hub_replica).toBe(b.replicaId);
    expect(a.hub.output()).not.toContain('gateway session ended');
  } finally {
    await intruder.stop();
  }
}, 30_000);

test('through replica A: retain, install and USB port switch of a device on B, seen through both', async () => {
  const serial = b.device.serial;
  const id = await guid(serial);
  // Retain: B's gateway hears of it (the relayed broadcast) and opens the device's access endpoint, whose port
  // (the relayed accessPort) the retain answers with instead of the gateway's public port.
  // The live event stream of replica B hears the retain made through A (B's feed LISTENs on the shared change_feed).
  const streamOnB = await openEventStream(b.hub.url, ADMIN_HEADERS);
  const retained = await call(a, `/Device?action=retain&id=${id}`, 'POST');
  expect(retained.isSuccess).toBe(true);
  try {
    const events = await streamOnB.waitFor((list) => list.some((e) => e.type === 'device' && e.data.id === id
      && e.data.object?.retainedByUserName === 'admin'), 20_000);
    expect(events.find((e) => e.type === 'device' && e.data.id === id && e.data.object?.retainedByUserName)!.data.object)
      .toMatchObject({ id, retainedByUserName: 'admin' });
  } finally {
    streamOnB.close();
  }
  expect(retained.data.gatewayPort).toBeGreaterThan(0);
  expect(retained.data.gatewayPort).not.toBe(9000);
  for (const side of [a, b]) expect((await device(side, serial)).retainedByUserName).toBe('admin');
  // A device connection through A is forwarded to B (which authenticates the caller again) and reaches the device.
  expect(await adbHello(a, id)).toEqual({ endpoint: 'adb', answer: expect.stringMatching(/^(AUTH|CNXN)$/) });
  expect(await adbHello(b, id)).toEqual({ endpoint: 'adb', answer: expect.stringMatching(/^(AUTH|CNXN)$/) }); // same as direct
  // The retain's ticket (Bearer) too: B verifies it again.
  const ticket = { authorization: `Bearer ${retained.data.authenticator}` };
  expect(await adbHello(a, id, ticket)).toEqual({ endpoint: 'adb', answer: expect.stringMatching(/^(AUTH|CNXN)$/) });
  // A connection that says it was forwarded already is not forwarded again (no loops): 503, and never a tunnel.
  await expect(adbHello(a, id, { ...ADMIN_HEADERS, 'DeviceLab-Forwarded-By': 'some-replica' }))
    .rejects.toThrow(/HTTP 503 .*hub replica/);

  const form = new FormData();
  form.append('upload', new Blob([readFileSync(fixture('ContactManager.apk'))]), 'ContactManager.apk');
  const uploaded = await (await a.hub.api('/Application?add&wait=true', { method: 'POST', body: form })).json() as Json;
  expect(uploaded.isSuccess).toBe(true);
  // An async install started through A, polled through B: the job is A's, its status is the lab's.
  const started = await call(a, `/Application?action=install&id=${uploaded.data.id}&deviceId=${id}`, 'POST');
  expect(started.isSuccess).toBe(true);
  const { value: done } = await waitFor(async () => {
    const status = await call(b, `/Async?id=${started.data.asyncResponseId}`);
    return status.isComplete ? status : undefined;
  }, 60_000, 'the install job complete');
  expect(done.data).toEqual({ isSuccess: true });
  for (const side of [a, b]) {
    const apps = ((await device(side, serial)).installedApplications ?? []).map((app: Json) => app.applicationIdentifier);
    expect(apps).toContain(uploaded.data.applicationIdentifier);
  }

  const portState = async (side: Side) => {
    const gateways = await call(side, '/Gateway') as Json[];
    const hub = gateways.flatMap((g) => g.usbHubList).find((h: Json) => h.serialNumber === HUB_SERIAL);
    return hub?.devices.find((p: Json) => p.usbHubPortNumber === 1)?.state;
  };
  expect(await portState(a)).toBe('Data');
  expect(await call(a, `/Device/UsbPort?update&id=${id}&usbHubPortState=Charge`, 'POST')).toEqual({ isSuccess: true });
  expect(await portState(a)).toBe('Charge'); // read-your-writes through the replica that relayed it
  expect(await portState(b)).toBe('Charge');
  // Charge carries no data: the phone drops off adb (settled before switching back, so no late Offline follows).
  await waitFor(async () => (await device(a, serial)).availability === 'Offline', 30_000, 'the device off data');
  expect(await call(a, `/Device/UsbPort?update&id=${id}&usbHubPortState=Data`, 'POST')).toEqual({ isSuccess: true });
  expect(await portState(a)).toBe('Data');
  await waitFor(async () => (await device(a, serial)).availability === 'Online', 30_000, 'the device back on data');
}, 120_000);

test('replica B killed: its gateway (DEVICELAB_HUB=b,a) is back Online through A within 5 s, same Guid, retain kept, nothing twice', async () => {
  const serial = b.device.serial;
  const before = await device(a, serial);
  const killedAt = Date.now();
  b.hub.child.kill('SIGKILL');
  await b.hub.exited;
  // The gateway, configured with both replicas, moves to A by itself.
  const { elapsedMs } = await waitFor(async () => {
    const row = await t.db.selectFrom('gateways').select('hub_replica').where('name', '=', 'gateway-b').executeTakeFirstOrThrow();
    return row.hub_replica === a.replicaId && (await device(a, serial)).availability === 'Online';
  }, 15_000, 'the device Online through A');
  const backAfterMs = Date.now() - killedAt;
  expect(backAfterMs).toBeLessThan(5_000);
  expect(elapsedMs).toBeLessThan(5_000);
  const after = await device(a, serial);
  expect(after.id).toBe(before.id);
  expect(after.retainedByUserName).toBe('admin');
  expect((await call(a, '/Service')).hubReplicas.map((r: Json) => r.id)).toEqual([a.replicaId]);

  // Commands now run on A's own link.
  expect(await call(a, `/Device?action=release&id=${before.id}`, 'POST')).toMatchObject({ isSuccess: true });

  // Nothing ran twice: one start per replica and no restart noted (A never restarted), the install job once, and
  // the device went Offline at most once after the kill (by A's leader or the link's snapshot, not both).
  const events = await t.db.selectFrom('events').select(['event_type', 'device_id', 'string_value', 'event_date']).execute();
  expect(events.filter((e) => e.event_type === 'ServerStarting')).toHaveLength(2);
  expect(events.filter((e) => e.event_type === 'ServerRestarting')).toHaveLength(0);
  const offline = events.filter((e) => e.event_type === 'DeviceAvailability' && e.device_id === before.id
    // From the kill on: case 2's port switch to Charge took this device Offline moments before (its own event).
    && e.string_value === 'Offline' && e.event_date.getTime() >= killedAt);
  expect(offline.length).toBeLessThanOrEqual(1);
  const jobs = await t.db.selectFrom('async_jobs').select(['kind', 'status', 'replica_id']).execute();
  expect(jobs.filter((j) => j.kind === 'install')).toEqual([{ kind: 'install', status: 'delivered', replica_id: a.replicaId }]);
  expect(jobs.filter((j) => j.status === 'running')).toEqual([]);
  expect(await t.db.selectFrom('relayed_commands').select('id').execute()).toEqual([]);
}, 60_000);
