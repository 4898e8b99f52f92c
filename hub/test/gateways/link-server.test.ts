import { createHash, createHmac, randomBytes } from 'node:crypto';
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import * as grpc from '@grpc/grpc-js';
import { BlobStore } from '../../src/apps/blob-store';
import type { DeviceChange } from '../../src/gateways/device-inventory';
import { GatewayUnavailableError } from '../../src/gateways/gateway-directory';
import { registerGateway } from '../../src/gateways/gateway-tokens';
import { BLOB_CHUNK_BYTES, startLinkServer, type LinkServer } from '../../src/gateways/link-server';
import { deviceState, FakeGateway, fetchBlob, waitUntil } from '../support/fake-gateway';
import { createTestDatabase, type TestDatabase } from '../support/test-database';

let t: TestDatabase;
let blobDir: string;
let blobs: BlobStore;
let link: LinkServer;
let token: string;
const changes: DeviceChange[] = [];
const open: FakeGateway[] = [];

async function connect(options: Partial<ConstructorParameters<typeof FakeGateway>[0]> = {}): Promise<FakeGateway> {
  const gateway = await FakeGateway.connect({ port: link.port, name: 'lab-1', token, ...options });
  open.push(gateway);
  return gateway;
}

const device = (vui: string) => t.db.selectFrom('devices').selectAll().where('vendor_unique_identifier', '=', vui).executeTakeFirst();
const availabilityEvents = (deviceId: string) =>
  t.db.selectFrom('events').selectAll().where('device_id', '=', deviceId).where('event_type', '=', 'DeviceAvailability').orderBy('event_date').execute();

beforeAll(async () => {
  t = await createTestDatabase();
  blobDir = await fs.mkdtemp(path.join(os.tmpdir(), 'devicelab-blobs-'));
  blobs = new BlobStore(blobDir);
  await blobs.init();
  token = await registerGateway(t.db, 'lab-1');
  link = await startLinkServer({ db: t.db, blobs, port: 0, host: '127.0.0.1', onDevicesChanged: (c) => changes.push(...c) });
});

afterAll(async () => {
  for (const gateway of open) gateway.kill();
  await link.stop();
  await t.drop();
  await fs.rm(blobDir, { recursive: true, force: true });
});

describe('link server: authentication', () => {
  it.each([
    ['a wrong token', 'lab-1', '00000000-0000-0000-0000-000000000000'],
    ['an unknown gateway', 'lab-9', undefined],
    ['a malformed name', 'lab 1; drop', undefined],
  ])('rejects %s with UNAUTHENTICATED', async (_what, name, badToken) => {
    const gateway = new FakeGateway({ port: link.port, name, token: badToken ?? token });
    gateway.hello();
    await expect(gateway.welcome).rejects.toMatchObject({ code: grpc.status.UNAUTHENTICATED });
    const row = await t.db.selectFrom('gateways').select('connected').where('name', '=', 'lab-1').executeTakeFirstOrThrow();
    expect(row.connected).toBe(false);
  });

  it('answers Hello with a proof only the holder of the token hash can compute, and the default heartbeat', async () => {
    const gateway = await connect();
    const welcome = await gateway.welcome;
    const expected = createHmac('sha256', createHash('sha256').update(token).digest()).update(gateway.nonce).digest();
    expect(Buffer.from(welcome.hubProof).equals(expected)).toBe(true);
    expect(welcome.heartbeatIntervalMs).toBe(1000);
    await waitUntil(async () => (await t.db.selectFrom('gateways').selectAll().where('name', '=', 'lab-1').executeTakeFirst())?.connected);
    const row = await t.db.selectFrom('gateways').selectAll().where('name', '=', 'lab-1').executeTakeFirstOrThrow();
    expect(row).toMatchObject({ public_address: 'gw.test', public_port: 7000 });
    expect(link.directory.connectedGateways()).toEqual([
      expect.objectContaining({ name: 'lab-1', version: 'test-1.0', publicAddress: 'gw.test', publicPort: 7000 }),
    ]);
    gateway.kill();
  });
});

describe('link server: inventory', () => {
  it('upserts a snapshot Online, keeps Guids across a reconnect, and takes unreported devices Offline', async () => {
    const first = await connect();
    first.snapshot([deviceState('serial-a'), deviceState('serial-b', { vendorDeviceName: 'Bench B', model: 'iPhone 15', operatingSystem: 'iOS' })]);
    const a = await waitUntil(async () => (await device('serial-a'))?.availability === 'Online' && device('serial-a'));
    const b = await waitUntil(async () => (await device('serial-b'))?.availability === 'Online' && device('serial-b'));
    expect(a).toMatchObject({ name: 'Pixel 7', readiness: 'Ready', operating_system: 'Android', battery_percent: 80, disk_space: '128000000000' });
    expect(a!.properties).toEqual([{ name: 'ro.build.id', value: 'TQ3A' }]);
    expect(a!.installed_packages).toEqual([{ identifier: 'com.example', version: '1.0', buildVersion: '1', system: false }]);
    expect(a!.last_connected_at).toBeInstanceOf(Date);
    expect(b).toMatchObject({ name: 'Bench B', operating_system: 'iOS' });
    const online = await availabilityEvents(a!.id);
    expect(online).toEqual([expect.objectContaining({ message: 'Device Online', device_name: 'Pixel 7', device_online_count: expect.any(Number) })]);
    expect(changes).toEqual(expect.arrayContaining([expect.objectContaining({ vendorUniqueIdentifier: 'serial-a', flipped: true })]));

    // The same gateway connects again (e.g. restarted): the new stream replaces the old one.
    const second = await connect();
    await expect(first.closed).resolves.toMatchObject({ code: grpc.status.ABORTED });
    second.snapshot([deviceState('serial-a')]);
    await waitUntil(async () => (await device('serial-b'))?.availability === 'Offline', 5_000, 'serial-b Offline');
    const aAgain = await device('serial-a');
    expect(aAgain).toMatchObject({ id: a!.id, availability: 'Online' });
    expect((await device('serial-b'))!.id).toBe(b!.id);
    // No Offline/Online flap for a device that stayed connected through the reconnect.
    expect(await availabilityEvents(a!.id)).toHaveLength(1);
    expect((await availabilityEvents(b!.id)).map((e) => e.message)).toEqual(['Device Online', 'Device Offline']);
    expect(link.directory.connectedGateways()).toHaveLength(1);
    second.kill();
  });

  it('applies deltas, and the hub-side Rebooting holds until the gateway reports Ready', async () => {
    const gateway = await connect();
    gateway.snapshot([deviceState('serial-c', { serialNumber: 'SN-C' })]);
    await waitUntil(async () => (await device('serial-c'))?.availability === 'Online');

    gateway.send({ body: 'deviceUpdate', deviceUpdate: deviceState('serial-c', { readiness: 'Unauthorized', readinessDetail: 'Accept USB debugging' }) });
    await waitUntil(async () => (await device('serial-c'))?.availability === 'Offline');
    expect(await device('serial-c')).toMatchObject({ readiness: 'Unauthorized', readiness_detail: 'Accept USB debugging' });

    gateway.send({ body: 'deviceUpdate', deviceUpdate: deviceState('serial-c') });
    await waitUntil(async () => (await device('serial-c'))?.availability === 'Online');

    // The domain starts a reboot: the gateway's Booting/Offline reports do not clear Rebooting.
    await t.db.updateTable('devices').set({ readiness: 'Rebooting', availability: 'Offline' }).where('vendor_unique_identifier', '=', 'serial-c').execute();
    gateway.send({ body: 'deviceUpdate', deviceUpdate: deviceState('serial-c', { readiness: 'Booting', batteryPercent: 55 }) });
    await waitUntil(async () => (await device('serial-c'))?.battery_percent === 55);
    expect(await device('serial-c')).toMatchObject({ readiness: 'Rebooting', availability: 'Offline' });
    gateway.send({ body: 'deviceUpdate', deviceUpdate: deviceState('serial-c') });
    await waitUntil(async () => (await device('serial-c'))?.readiness === 'Ready');
    expect(await device('serial-c')).toMatchObject({ availability: 'Online' });

    // A report without facts (the gateway cannot read a booting device) keeps what earlier reports said.
    gateway.send({
      body: 'deviceUpdate',
      deviceUpdate: { vendorUniqueIdentifier: 'serial-c', operatingSystem: 'Android', readiness: 'Booting', serialNumber: '', model: '', batteryPercent: -1, properties: [], packages: [] },
    });
    await waitUntil(async () => (await device('serial-c'))?.readiness === 'Booting');
    expect(await device('serial-c')).toMatchObject({
      serial_number: 'SN-C',
      model: 'Pixel 7',
      battery_percent: 80,
      properties: [{ name: 'ro.build.id', value: 'TQ3A' }],
    });

    gateway.send({ body: 'deviceRemoved', deviceRemoved: { vendorUniqueIdentifier: 'serial-c' } });
    await waitUntil(async () => (await device('serial-c'))?.availability === 'Offline');
    await expect(link.directory.sendCommand('serial-c', { action: 'reboot', reboot: {} }, 1000)).rejects.toBeInstanceOf(GatewayUnavailableError);
    gateway.kill();
  });

  it('takes every device of a dropped stream Offline within 5 s and fails its pending commands', async () => {
    const gateway = await connect();
    gateway.snapshot([deviceState('serial-d'), deviceState('serial-e')]);
    await waitUntil(async () => (await device('serial-e'))?.availability === 'Online' && (await device('serial-d'))?.availability === 'Online');
    const pending = link.directory.sendCommand('serial-d', { action: 'reboot', reboot: {} }, 30_000);

    const killedAt = Date.now();
    gateway.kill();
    await expect(pending).rejects.toBeInstanceOf(GatewayUnavailableError);
    await waitUntil(
      async () => (await device('serial-d'))?.availability === 'Offline' && (await device('serial-e'))?.availability === 'Offline',
      5_000,
      'devices Offline',
    );
    expect(Date.now() - killedAt).toBeLessThan(5_000);
    const d = await device('serial-d');
    expect(d!.last_disconnected_at).toBeInstanceOf(Date);
    expect(d!.readiness_detail).toMatch(/Gateway disconnected/);
    const row = await t.db.selectFrom('gateways').select('connected').where('name', '=', 'lab-1').executeTakeFirstOrThrow();
    expect(row.connected).toBe(false);
    expect(link.directory.connectedGateways()).toEqual([]);
  });
});

describe('link server: commands', () => {
  it('round-trips a command by command id, and times out when the gateway does not answer', async () => {
    const gateway = await connect({
      onCommand: (command) =>
        command.action === 'readLog' ? { ok: true, errorMessage: '', text: `log of ${command.vendorUniqueIdentifier}: ${command.readLog.maxLines}` } : undefined,
    });
    gateway.snapshot([deviceState('serial-f')]);
    await waitUntil(async () => (await device('serial-f'))?.availability === 'Online');

    const result = await link.directory.sendCommand('serial-f', { action: 'readLog', readLog: { maxLines: 5 } }, 5_000);
    expect(result).toMatchObject({ ok: true, text: 'log of serial-f: 5' });
    const sent = gateway.received.find((m) => m.body === 'command');
    expect(sent).toMatchObject({ command: { vendorUniqueIdentifier: 'serial-f', deadlineMs: expect.any(Number) } });

    const started = Date.now();
    await expect(link.directory.sendCommand('serial-f', { action: 'reboot', reboot: {} }, 300)).rejects.toThrow(/did not answer within 300 ms/);
    expect(Date.now() - started).toBeGreaterThanOrEqual(290);
    await expect(link.directory.sendCommand('no-such-device', { action: 'reboot', reboot: {} }, 300)).rejects.toBeInstanceOf(GatewayUnavailableError);
    gateway.kill();
  });
});

describe('link server: FetchBlob', () => {
  it('streams a blob in 64 KiB chunks with the total size first', async () => {
    const bytes = randomBytes(3 * BLOB_CHUNK_BYTES + 1234);
    const stored = await blobs.put(Readable.from([bytes]));
    const chunks = await fetchBlob(link.port, 'lab-1', token, stored.sha256);
    expect(chunks.map((c) => c.data.length)).toEqual([BLOB_CHUNK_BYTES, BLOB_CHUNK_BYTES, BLOB_CHUNK_BYTES, 1234]);
    expect(chunks[0].totalSize).toBe(bytes.length);
    const received = Buffer.concat(chunks.map((c) => Buffer.from(c.data)));
    expect(createHash('sha256').update(received).digest('hex')).toBe(stored.sha256);
  });

  it('answers NOT_FOUND for an unknown address and UNAUTHENTICATED for a bad token', async () => {
    await expect(fetchBlob(link.port, 'lab-1', token, 'ab'.repeat(32))).rejects.toMatchObject({ code: grpc.status.NOT_FOUND });
    await expect(fetchBlob(link.port, 'lab-1', token, 'not-a-sha')).rejects.toMatchObject({ code: grpc.status.NOT_FOUND });
    const stored = await blobs.put(Readable.from([Buffer.from('x')]));
    await expect(fetchBlob(link.port, 'lab-1', randomBytes(8).toString('hex'), stored.sha256)).rejects.toMatchObject({
      code: grpc.status.UNAUTHENTICATED,
    });
  });
});
