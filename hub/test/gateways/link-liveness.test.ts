/** How fast the hub notices a gateway that went away: heartbeat silence, and a gateway process killed -9. */
import { spawn } from 'node:child_process';
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import readline from 'node:readline';
import * as grpc from '@grpc/grpc-js';
import { BlobStore } from '../../src/apps/blob-store';
import { registerGateway } from '../../src/gateways/gateway-tokens';
import { startLinkServer, type LinkServer } from '../../src/gateways/link-server';
import { deviceState, FakeGateway, waitUntil } from '../support/fake-gateway';
import { createTestDatabase, type TestDatabase } from '../support/test-database';

const HEARTBEAT_MS = 200;
let t: TestDatabase;
let blobDir: string;
let link: LinkServer;
let token: string;

const availability = async (vui: string) =>
  (await t.db.selectFrom('devices').select('availability').where('vendor_unique_identifier', '=', vui).executeTakeFirst())?.availability;

beforeAll(async () => {
  t = await createTestDatabase();
  blobDir = await fs.mkdtemp(path.join(os.tmpdir(), 'devicelab-blobs-'));
  token = await registerGateway(t.db, 'lab-2');
  link = await startLinkServer({
    db: t.db,
    blobs: new BlobStore(blobDir),
    port: 0,
    host: '127.0.0.1',
    heartbeatIntervalMs: HEARTBEAT_MS,
  });
});

afterAll(async () => {
  await link.stop();
  await t.drop();
  await fs.rm(blobDir, { recursive: true, force: true });
});

describe('gateway liveness', () => {
  it('ends a session after three silent heartbeat intervals and takes its devices Offline', async () => {
    const gateway = await FakeGateway.connect({ port: link.port, name: 'lab-2', token, heartbeats: false });
    expect((await gateway.welcome).heartbeatIntervalMs).toBe(HEARTBEAT_MS);
    gateway.snapshot([deviceState('quiet-1')]);
    await waitUntil(async () => (await availability('quiet-1')) === 'Online');
    const lastMessageAt = Date.now();

    await expect(gateway.closed).resolves.toMatchObject({ code: grpc.status.UNAVAILABLE, details: 'heartbeat timeout' });
    const silentFor = Date.now() - lastMessageAt;
    expect(silentFor).toBeGreaterThanOrEqual(3 * HEARTBEAT_MS - 50);
    expect(silentFor).toBeLessThan(3 * HEARTBEAT_MS + HEARTBEAT_MS + 500);
    await waitUntil(async () => (await availability('quiet-1')) === 'Offline', 5_000, 'quiet-1 Offline');
    gateway.kill();
  });

  it('keeps a heartbeating gateway connected well past three intervals', async () => {
    const gateway = await FakeGateway.connect({ port: link.port, name: 'lab-2', token });
    gateway.snapshot([deviceState('chatty-1')]);
    await waitUntil(async () => (await availability('chatty-1')) === 'Online');
    await new Promise((resolve) => setTimeout(resolve, 6 * HEARTBEAT_MS));
    expect(await availability('chatty-1')).toBe('Online');
    expect(gateway.received.filter((m) => m.body === 'heartbeat').length).toBeGreaterThanOrEqual(4);
    gateway.kill();
  });

  it('notices a gateway process killed with SIGKILL within 5 s', async () => {
    const support = path.join(__dirname, '..', 'support');
    const child = spawn(
      process.execPath,
      ['-r', path.join(support, 'ts-register.cjs'), path.join(support, 'fake-gateway-process.ts'), String(link.port), 'lab-2', token, 'proc-1', 'proc-2'],
      { stdio: ['ignore', 'pipe', 'inherit'] },
    );
    try {
      await new Promise<void>((resolve, reject) => {
        readline.createInterface({ input: child.stdout! }).once('line', () => resolve());
        child.once('exit', (code) => reject(new Error(`fake gateway exited with ${code}`)));
      });
      await waitUntil(async () => (await availability('proc-1')) === 'Online' && (await availability('proc-2')) === 'Online', 10_000);

      const killedAt = Date.now();
      child.kill('SIGKILL');
      await waitUntil(
        async () => (await availability('proc-1')) === 'Offline' && (await availability('proc-2')) === 'Offline',
        5_000,
        'devices of the killed gateway Offline',
      );
      expect(Date.now() - killedAt).toBeLessThan(5_000);
    } finally {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    }
  });
});
