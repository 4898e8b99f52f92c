/**
 * The link server's defences against protocol faults OUR gateway never makes, injected with the misbehaving
 * peer (hub/test/support/misbehaving-gateway.ts): a message before Hello, a Hello naming another gateway, a
 * peer that falls silent after Hello without closing its stream, FetchBlob with a bad token or a malformed
 * address. Everything a real gateway does is tested with the real gateway (link-server, link-liveness).
 */
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import * as grpc from '@grpc/grpc-js';
import { BlobStore } from '../../src/apps/blob-store';
import { registerGateway } from '../../src/gateways/gateway-tokens';
import { startLinkServer, type LinkServer } from '../../src/gateways/link-server';
import { fetchBlobAs, MisbehavingGateway } from '../support/misbehaving-gateway';
import { createTestDatabase, type TestDatabase } from '../support/test-database';
import { waitUntil } from './real-gateway-lab';

const HEARTBEAT_MS = 200;
let t: TestDatabase;
let blobDir: string;
let blobs: BlobStore;
let link: LinkServer;
let token: string;
const peers: MisbehavingGateway[] = [];

const peer = (name = 'lab-3', withToken = token) => {
  const created = new MisbehavingGateway({ port: link.port, name, token: withToken });
  peers.push(created);
  return created;
};
const gatewayConnected = async () =>
  (await t.db.selectFrom('gateways').select('connected').where('name', '=', 'lab-3').executeTakeFirstOrThrow()).connected;
const deviceCount = async () => (await t.db.selectFrom('devices').select('id').execute()).length;

beforeAll(async () => {
  t = await createTestDatabase();
  blobDir = await fs.mkdtemp(path.join(os.tmpdir(), 'devicelab-blobs-'));
  blobs = new BlobStore(t.db);
  token = await registerGateway(t.db, 'lab-3');
  await registerGateway(t.db, 'lab-4');
  link = await startLinkServer({ db: t.db, blobs, port: 0, host: '127.0.0.1', heartbeatIntervalMs: HEARTBEAT_MS });
});

afterAll(async () => {
  for (const p of peers) p.close();
  await link.stop();
  await t.drop();
  await fs.rm(blobDir, { recursive: true, force: true });
});

describe('link server: protocol faults', () => {
  it('ends a stream whose first message is not Hello, recording nothing', async () => {
    const early = peer();
    early.snapshot([{ vendorUniqueIdentifier: 'early-1', operatingSystem: 'Android', readiness: 'Ready' }]);
    await expect(early.closed).resolves.toMatchObject({ code: grpc.status.FAILED_PRECONDITION, details: 'Hello must come first' });
    expect(early.received).toEqual([]);
    expect(await gatewayConnected()).toBe(false);
    expect(await deviceCount()).toBe(0);
    expect(link.directory.connectedGateways()).toEqual([]);
  });

  it('refuses a Hello naming another gateway than the one the token authenticated', async () => {
    const impostor = peer('lab-3');
    impostor.hello('lab-4');
    await expect(impostor.closed).resolves.toMatchObject({ code: grpc.status.PERMISSION_DENIED, details: 'authenticated as lab-3, Hello says lab-4' });
    expect(impostor.received.filter((m) => m.body === 'welcome')).toEqual([]);
    expect(await gatewayConnected()).toBe(false);
    const lab4 = await t.db.selectFrom('gateways').select('connected').where('name', '=', 'lab-4').executeTakeFirstOrThrow();
    expect(lab4.connected).toBe(false);
    expect(link.directory.connectedGateways()).toEqual([]);
  });

  it('ends the session of a peer that falls silent after Hello, three heartbeat intervals after its last message', async () => {
    const silent = peer();
    silent.hello();
    expect((await silent.welcome).heartbeatIntervalMs).toBe(HEARTBEAT_MS);
    silent.snapshot([{ vendorUniqueIdentifier: 'quiet-1', operatingSystem: 'Android', readiness: 'Ready', model: 'Pixel 7' }]);
    const lastMessageAt = Date.now();
    await waitUntil(async () => (await t.db.selectFrom('devices').select('availability').where('vendor_unique_identifier', '=', 'quiet-1')
      .executeTakeFirst())?.availability === 'Online', 5_000, 'quiet-1 Online');

    await expect(silent.closed).resolves.toMatchObject({ code: grpc.status.UNAVAILABLE, details: 'heartbeat timeout' });
    const silentFor = Date.now() - lastMessageAt;
    expect(silentFor).toBeGreaterThanOrEqual(3 * HEARTBEAT_MS - 50);
    const quiet = await waitUntil(async () => {
      const row = await t.db.selectFrom('devices').select(['availability', 'readiness_detail'])
        .where('vendor_unique_identifier', '=', 'quiet-1').executeTakeFirst();
      return row?.availability === 'Offline' && row;
    }, 5_000, 'quiet-1 Offline');
    // Dropped by the rule (more than three intervals without a message) as the hub measured it; how late a loaded
    // machine ran the check is bounded by the waits above, not by a tighter timing guess.
    expect(Number(/no message for (\d+) ms/.exec(quiet.readiness_detail ?? '')?.[1])).toBeGreaterThan(3 * HEARTBEAT_MS);
    // The devices go Offline first and the gateway's flag right after: wait for it, not race it.
    await waitUntil(async () => (await gatewayConnected()) === false, 5_000, 'the gateway recorded as disconnected');
  });

  it('refuses FetchBlob with a bad token or an unknown gateway, and finds nothing at a malformed address', async () => {
    await fs.writeFile(path.join(blobDir, 'app'), 'app bytes');
    const stored = await blobs.putFile(path.join(blobDir, 'app'));
    // Control: these credentials and this address do fetch the blob.
    await expect(fetchBlobAs(link.port, 'lab-3', token, stored.sha256)).resolves.toEqual([
      expect.objectContaining({ totalSize: 9 }),
    ]);
    await expect(fetchBlobAs(link.port, 'lab-3', '00000000-0000-0000-0000-000000000000', stored.sha256))
      .rejects.toMatchObject({ code: grpc.status.UNAUTHENTICATED });
    await expect(fetchBlobAs(link.port, 'lab-9', token, stored.sha256)).rejects.toMatchObject({ code: grpc.status.UNAUTHENTICATED });
    for (const address of ['not-a-sha', `../${stored.sha256}`, `tmp/../${stored.sha256}`]) {
      await expect(fetchBlobAs(link.port, 'lab-3', token, address)).rejects.toMatchObject({ code: grpc.status.NOT_FOUND });
    }
  });
});
