/**
 * HubLink against the hub's REAL link server (hub/src/gateways/link-server.ts) on a real PostgreSQL test
 * database: authentication, snapshot into the records, deltas, commands, blob fetch, hub restart.
 */
import { createHash } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { createLogger } from '@devicelab/shared';
import { BlobStore } from '../../../hub/src/apps/blob-store';
import { startLinkServer, type LinkServer } from '../../../hub/src/gateways/link-server';
import { registerGateway } from '../../../hub/src/gateways/gateway-tokens';
import { createTestDatabase, type TestDatabase } from '../../../hub/test/support/test-database';
import { AppCache } from '../../src/apps/app-cache';
import { HubLink } from '../../src/link/hub-link';
import { FakeDriver } from '../support/fake-driver';
import { makeTestCerts } from '../support/test-certs';
import { fixture } from '../../../scripts/jest/shared-files';

const logger = createLogger('test', 'silent');
const android = (id: string, readiness = 'Ready', extra: Record<string, unknown> = {}) =>
  ({ vendorUniqueIdentifier: id, operatingSystem: 'Android', readiness, model: 'Pixel 7', ...extra });

async function eventually<T>(probe: () => Promise<T | undefined | false>, timeoutMs = 10_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value) return value;
    if (Date.now() > deadline) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe('HubLink with the hub link server', () => {
  let t: TestDatabase;
  let blobs: BlobStore;
  let dir: string;
  let server: LinkServer | undefined;
  let link: HubLink | undefined;
  let driver: FakeDriver;
  let token: string;

  beforeAll(async () => {
    t = await createTestDatabase({ maxConnections: 4 });
    dir = await mkdtemp(path.join(os.tmpdir(), 'gw-hublink-'));
    blobs = new BlobStore(path.join(dir, 'blobs'));
    await blobs.init();
    token = await registerGateway(t.db, 'lab-int');
  });

  afterAll(async () => {
    await link?.stop();
    await server?.stop();
    await t?.drop();
    await rm(dir, { recursive: true, force: true });
  });

  afterEach(async () => {
    await link?.stop();
    link = undefined;
  });

  const startServer = async (port = 0) => {
    server = await startLinkServer({ db: t.db, blobs, port, host: '127.0.0.1', heartbeatIntervalMs: 200, logger });
    return server.port;
  };

  const startLink = (port: number, withToken = token, tls?: { ca: Buffer; serverName?: string }) => {
    link = new HubLink({
      tls,
      name: 'lab-int', token: withToken, hubAddress: `127.0.0.1:${port}`, publicAddress: 'lab-int.local', publicPort: 7200,
      driver, appCache: new AppCache(path.join(dir, 'cache')), logger, backoff: { initialMs: 50, maxMs: 500 },
    });
    void driver.start(link);
    link.start();
    return link;
  };

  const deviceRow = (id: string) =>
    t.db.selectFrom('devices').select(['vendor_unique_identifier', 'availability', 'readiness', 'model', 'installed_packages'])
      .where('vendor_unique_identifier', '=', id).executeTakeFirst();

  it('connects, the snapshot and deltas land in the records, commands run, heartbeats keep it alive', async () => {
    driver = new FakeDriver();
    driver.devices.set('int-1', android('int-1'));
    const port = await startServer();
    const l = startLink(port);
    await new Promise((r) => l.once('connected', r));
    await eventually(async () => (await deviceRow('int-1'))?.availability === 'Online');
    const gw = server!.directory.connectedGateways();
    expect(gw).toMatchObject([{ name: 'lab-int', publicAddress: 'lab-int.local', publicPort: 7200, deviceVendorUniqueIdentifiers: ['int-1'] }]);

    driver.put(android('int-2', 'Booting'));
    await eventually(async () => (await deviceRow('int-2'))?.readiness === 'Booting');
    expect((await deviceRow('int-2'))?.availability).toBe('Offline');
    driver.put(android('int-2', 'Ready'));
    await eventually(async () => (await deviceRow('int-2'))?.availability === 'Online');

    const result = await server!.directory.sendCommand('int-1', { action: 'readLog', readLog: { maxLines: 3 } }, 5_000);
    expect(result).toMatchObject({ ok: true, text: 'log of int-1 (3)' });
    const failed = await server!.directory.sendCommand('int-1', {
      action: 'launch', launch: { applicationIdentifier: 'com.missing', arguments: '', startOnly: false },
    }, 5_000);
    expect(failed).toMatchObject({ ok: false, errorMessage: 'No launchable activity found for com.missing' });

    // Blob served by the hub's BlobStore, cached by the gateway, then installed.
    const stored = await blobs.putFile(fixture('ContactManager.apk'));
    const install = await server!.directory.sendCommand('int-1', {
      action: 'install',
      install: { blobSha256: stored.sha256, fileName: 'ContactManager.apk', applicationIdentifier: 'com.example.android.contactmanager', force: false, nativeAutomation: false },
    }, 10_000);
    expect(install).toMatchObject({ ok: true });
    const cached = await readFile(path.join(dir, 'cache', `${stored.sha256}.apk`));
    expect(createHash('sha256').update(cached).digest('hex')).toBe(stored.sha256);

    driver.remove('int-2');
    await eventually(async () => (await deviceRow('int-2'))?.availability === 'Offline');

    // Well past three heartbeat intervals: the session is still up because the gateway heartbeats.
    await new Promise((r) => setTimeout(r, 1_000));
    expect(l.connected).toBe(true);
    expect((await deviceRow('int-1'))?.availability).toBe('Online');
  });

  it('a wrong token is refused by the hub; the gateway keeps retrying and never connects', async () => {
    driver = new FakeDriver();
    const port = server!.port;
    const l = startLink(port, 'not-the-token');
    let connected = false;
    l.on('connected', () => { connected = true; });
    await new Promise((r) => setTimeout(r, 600));
    expect(connected).toBe(false);
    expect(server!.directory.connectedGateways()).toEqual([]);
  });

  it('reconnects with backoff after a hub restart and reconciles with a fresh snapshot', async () => {
    driver = new FakeDriver();
    driver.devices.set('int-1', android('int-1'));
    const port = server!.port;
    const l = startLink(port);
    await new Promise((r) => l.once('connected', r));
    await eventually(async () => (await deviceRow('int-1'))?.availability === 'Online');

    const disconnected = new Promise((r) => l.once('disconnected', r));
    await server!.stop();
    server = undefined;
    await disconnected;
    // While the hub is away, int-1 goes away and int-3 appears.
    driver.remove('int-1');
    driver.put(android('int-3'));
    await new Promise((r) => setTimeout(r, 400));

    const started = Date.now();
    await startServer(port);
    await new Promise((r) => l.once('connected', r));
    expect(Date.now() - started).toBeLessThan(2_000); // backoff capped at 500 ms in this test
    await eventually(async () => (await deviceRow('int-3'))?.availability === 'Online');
    await eventually(async () => (await deviceRow('int-1'))?.availability === 'Offline');
  });

  it('speaks TLS when a CA is configured', async () => {
    const certs = makeTestCerts(dir);
    const tlsServer = await startLinkServer({
      db: t.db, blobs, port: 0, host: '127.0.0.1', heartbeatIntervalMs: 200, logger, tls: { cert: certs.cert, key: certs.key },
    });
    try {
      driver = new FakeDriver();
      driver.devices.set('int-tls', android('int-tls'));
      const l = startLink(tlsServer.port, token, { ca: certs.ca, serverName: 'localhost' });
      await new Promise((r) => l.once('connected', r));
      await eventually(async () => (await deviceRow('int-tls'))?.availability === 'Online');
      await l.stop();
      // Without the CA the hub's certificate is not trusted: no session.
      const untrusted = startLink(tlsServer.port, token, { ca: makeTestCerts(await mkdtemp(path.join(dir, 'other-'))).ca, serverName: 'localhost' });
      let connected = false;
      untrusted.on('connected', () => { connected = true; });
      await new Promise((r) => setTimeout(r, 500));
      expect(connected).toBe(false);
    } finally {
      await link?.stop();
      link = undefined;
      await tlsServer.stop();
    }
  });
});
