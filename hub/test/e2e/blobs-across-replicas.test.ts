/**
 * Application binaries live in PostgreSQL, so every hub replica serves what any replica received. Two hub
 * processes on one database: an app uploaded through A is fetched from B's gateway link byte for byte, its deletion
 * through B is seen by A (also by A's disk copy of it), and B streams a 200 MB binary to a slow reader with its memory
 * bounded.
 */
import { createHash, randomBytes } from 'node:crypto';
import { createWriteStream, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import * as grpc from '@grpc/grpc-js';
import { BlobStore } from '../../src/apps/blob-store';
import { registerGateway } from '../../src/gateways/gateway-tokens';
import { withTx } from '../../src/store/database';
import { startHubProcess, type HubProcess } from '../support/hub-process';
import { fetchBlobAs, streamBlobAs } from '../support/misbehaving-gateway';
import { createTestDatabase, type TestDatabase } from '../support/test-database';
import { fixture } from '../../../scripts/jest/shared-files';

const MiB = 1024 * 1024;
const adminToken = '5d1c7a52-93c4-4d0e-8a53-2f4c1b0e9a77';
let database: TestDatabase;
let dirs: string[];
let replicaA: HubProcess;
let replicaB: HubProcess;
let gatewayToken: string;

beforeAll(async () => {
  database = await createTestDatabase({ maxConnections: 3 });
  dirs = [0, 1, 2].map(() => mkdtempSync(path.join(os.tmpdir(), 'devicelab-blob-replicas-')));
  replicaA = await startHubProcess({ databaseUrl: database.url, dataDir: dirs[0], adminToken });
  replicaB = await startHubProcess({ databaseUrl: database.url, dataDir: dirs[1], adminToken });
  gatewayToken = await registerGateway(database.db, 'blob-reader');
}, 120_000);

afterAll(async () => {
  await replicaA?.stop();
  await replicaB?.stop();
  await database?.drop();
  for (const dir of dirs ?? []) rmSync(dir, { recursive: true, force: true });
});

const sha256Of = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

it('an app uploaded through one replica is served by the other; a delete through either is seen by both', async () => {
  const apk = await readFile(fixture('ContactManager.apk'));
  const form = new FormData();
  form.append('upload', new Blob([apk]), 'ContactManager.apk');
  const reply = await (await replicaA.api('/Application?add&wait=true', { method: 'POST', body: form })).json() as
    { isSuccess: boolean; data: { id: string; applicationBlob: string } };
  expect(reply.isSuccess).toBe(true);
  expect(reply.data.applicationBlob).toBe(sha256Of(apk));
  // Each replica's disk copy (blob-disk-cache.ts): A kept the uploaded file; B makes its own when it first serves it.
  const copyIn = (dir: string) => path.join(dir, 'blob-copies', reply.data.applicationBlob);
  expect(existsSync(copyIn(dirs[0]))).toBe(true);
  expect(existsSync(copyIn(dirs[1]))).toBe(false);

  const chunks = await fetchBlobAs(replicaB.linkPort, 'blob-reader', gatewayToken, reply.data.applicationBlob);
  expect(chunks[0].totalSize).toBe(apk.length);
  expect(Buffer.concat(chunks.map((c) => Buffer.from(c.data))).equals(apk)).toBe(true);
  expect((await readFile(copyIn(dirs[1]))).equals(apk)).toBe(true);

  const deleted = await (await replicaB.api(`/Application?delete&id=${reply.data.id}`, { method: 'POST' })).json();
  expect(deleted).toEqual({ isSuccess: true });
  // A still has its copy on disk (the delete ran on B), yet PostgreSQL is the record: A serves nothing.
  expect(existsSync(copyIn(dirs[0]))).toBe(true);
  await expect(fetchBlobAs(replicaA.linkPort, 'blob-reader', gatewayToken, reply.data.applicationBlob))
    .rejects.toMatchObject({ code: grpc.status.NOT_FOUND });
  expect(existsSync(copyIn(dirs[1]))).toBe(false);
});

it('streams a 200 MB binary to a slow reader with the serving replica\'s memory far below the binary\'s size', async () => {
  const size = 200 * MiB;
  const file = path.join(dirs[2], 'large.bin');
  const hash = createHash('sha256');
  const out = createWriteStream(file);
  const base = randomBytes(MiB);
  for (let i = 0; i < size / MiB; i++) {
    const piece = Buffer.from(base);
    piece.writeUInt32BE(i, 0);
    hash.update(piece);
    if (!out.write(piece)) await new Promise<void>((resolve) => out.once('drain', () => resolve()));
  }
  await new Promise<void>((resolve) => out.end(() => resolve()));
  const sha256 = hash.digest('hex');
  const blobs = new BlobStore(database.db);
  await withTx(database.db, (trx) => blobs.adopt(trx, file, sha256));
  rmSync(file);

  const rssBefore = replicaB.memory().rss;
  const received = createHash('sha256');
  let bytes = 0;
  for await (const chunk of streamBlobAs(replicaB.linkPort, 'blob-reader', gatewayToken, sha256)) {
    received.update(chunk.data);
    bytes += chunk.data.length;
    // A reader slower than the replica: without backpressure the replica would queue the binary in memory.
    if (bytes % (8 * MiB) === 0) await new Promise((resolve) => setTimeout(resolve, 50));
  }
  expect(bytes).toBe(size);
  expect(received.digest('hex')).toBe(sha256);
  expect(replicaB.memory().peakRss - rssBefore).toBeLessThan(100 * MiB);
  await withTx(database.db, (trx) => blobs.remove(trx, sha256));
}, 300_000);
