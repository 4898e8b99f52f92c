/**
 * Hostile uploads against a real hub process over HTTP: a generated corpus of broken zips
 * (truncated, false sizes, bad CRCs, traversal names, bombs, nested archives, seeded random corruptions of the
 * fixtures). For every file: a failure Result (success only when the archive is genuinely intact), the hub alive
 * and answering, nothing stored for a failure, no temporary file left, and the hub's memory bounded.
 * `DEVICELAB_HOSTILE_CORPUS=<n>` (default 120) and `DEVICELAB_HOSTILE_SEED` run a longer or other corpus.
 */
import { randomUUID } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import { corruptedFixtures, craftedUploads, type HostileUpload } from '../apps/broken-zips';
import { archiveIsIntact, referenceName } from '../apps/reference-zip-check';
import { startHubProcess, type HubProcess } from '../support/hub-process';
import { createTestDatabase, type TestDatabase } from '../support/test-database';
import { fixture } from '../../../scripts/jest/shared-files';

const CORPUS = Number(process.env.DEVICELAB_HOSTILE_CORPUS || 120);
const SEED = Number(process.env.DEVICELAB_HOSTILE_SEED || 9);
const MB = 1024 * 1024;

let database: TestDatabase;
let dataDir: string;
let hub: HubProcess;
const adminToken = randomUUID();
const uploadsDir = () => path.join(dataDir, 'uploads');
const blobsDir = () => path.join(dataDir, 'blobs');
/** The blob store's rows: each address with the transaction that wrote it, and how many chunks there are. */
async function storedBlobs(): Promise<string> {
  const { rows } = await sql<{ sha256: string; xmin: string }>`select sha256, xmin::text from blobs order by sha256`
    .execute(database.db);
  const { n } = await database.db.selectFrom('blob_chunks').select((eb) => eb.fn.countAll<string>().as('n'))
    .executeTakeFirstOrThrow();
  return JSON.stringify({ rows, chunks: n });
}
const scratch = mkdtempSync(path.join(os.tmpdir(), 'hostile-uploads-'));

beforeAll(async () => {
  database = await createTestDatabase({ maxConnections: 2 });
  dataDir = mkdtempSync(path.join(os.tmpdir(), 'devicelab-hostile-'));
  // What a hub killed in the middle of uploads leaves behind.
  mkdirSync(uploadsDir(), { recursive: true });
  writeFileSync(path.join(uploadsDir(), `${randomUUID()}.upload`), 'half an upload');
  // ...and what a hub from before migration 020 (binaries on disk) left of a copy.
  mkdirSync(path.join(blobsDir(), 'tmp'), { recursive: true });
  writeFileSync(path.join(blobsDir(), 'tmp', randomUUID()), 'half a copy');
  hub = await startHubProcess({ databaseUrl: database.url, dataDir, adminToken });
}, 60_000);
afterAll(async () => {
  await hub?.stop();
  await database?.drop();
  rmSync(dataDir, { recursive: true, force: true });
  rmSync(scratch, { recursive: true, force: true });
});

interface UploadReply { isSuccess: boolean; errorMessage?: string; data?: { applicationBlob: string } }

async function upload(fileName: string, bytes: Buffer): Promise<UploadReply> {
  const form = new FormData();
  form.append('upload', new Blob([bytes]), fileName);
  const res = await hub.api('/Application?add&wait=true', { method: 'POST', body: form });
  expect(res.status).toBe(200);
  return await res.json() as UploadReply;
}

async function applicationCount(): Promise<number> {
  const { n } = await database.db.selectFrom('applications').select((eb) => eb.fn.countAll<string>().as('n'))
    .executeTakeFirstOrThrow();
  return Number(n);
}

it('removes the temporary files a killed hub left behind when it starts', () => {
  expect(readdirSync(uploadsDir())).toEqual([]);
  expect(existsSync(blobsDir())).toBe(false);
});

it(`answers every file of the broken-zip corpus (${CORPUS} random corruptions, seed ${SEED}) and stays well`, async () => {
  const corpus: HostileUpload[] = [...craftedUploads(fixture), ...corruptedFixtures(fixture, CORPUS, SEED)];
  const baselineRss = hub.memory().rss;
  const problems: string[] = [];
  let accepted = 0;
  for (const item of corpus) {
    const problem = (text: string) => problems.push(`${item.label}: ${text}`);
    const appsBefore = await applicationCount();
    const blobsBefore = await storedBlobs();
    const reply = await upload(item.fileName, item.bytes);
    if (!hub.alive()) throw new Error(`the hub died on ${item.label}:\n${hub.output()}`);
    if ((await hub.api('/Service')).status !== 200) problem('the next request failed');
    if (readdirSync(uploadsDir()).length > 0) problem(`temporary files left: ${readdirSync(uploadsDir())}`);
    if (reply.isSuccess) {
      accepted++;
      if (item.expect === 'failure') problem('accepted');
      if (item.expect === 'reference') {
        const file = path.join(scratch, item.fileName);
        writeFileSync(file, item.bytes);
        if (!archiveIsIntact(file, item.bytes)) problem(`accepted, but ${referenceName} finds the archive damaged`);
      }
      continue;
    }
    if (item.expect === 'success') problem(`refused: ${reply.errorMessage}`);
    if (!reply.errorMessage || (item.message && !item.message.test(reply.errorMessage))) {
      problem(`unexpected failure text: ${reply.errorMessage}`);
    }
    if (await applicationCount() !== appsBefore) problem('an application was recorded for a failed upload');
    if (await storedBlobs() !== blobsBefore) problem('the blob store changed for a failed upload');
  }
  expect(problems).toEqual([]);
  expect(accepted).toBeGreaterThan(0); // the nested-archive cases are valid packages
  const { peakRss } = hub.memory();
  expect(peakRss - baselineRss).toBeLessThan(300 * MB);
}, 240_000);

it('a re-upload of a stored binary writes nothing to the blob store and succeeds', async () => {
  const bytes = readFileSync(fixture('app-info-android.apk'));
  const first = await upload('app-info-android.apk', bytes);
  expect(first.isSuccess).toBe(true);
  // The same rows, written by the same transaction, before and after: not replaced by a second copy.
  const before = await storedBlobs();
  expect(before).toContain(first.data!.applicationBlob);
  const second = await upload('app-info-android.apk', bytes);
  expect(second).toMatchObject({ isSuccess: true, data: { applicationBlob: first.data!.applicationBlob } });
  expect(await storedBlobs()).toEqual(before);
  expect(readdirSync(uploadsDir())).toEqual([]);
});

it('a client that aborts mid-upload leaves no temporary file and the hub answers on', async () => {
  const boundary = `----hostile${randomUUID()}`;
  const head = `--${boundary}\r\nContent-Disposition: form-data; name="upload"; filename="big.apk"\r\n`
    + 'Content-Type: application/octet-stream\r\n\r\n';
  const request = http.request(`${hub.url}/apiv1/Application?add&wait=true`, {
    method: 'POST',
    headers: {
      authorization: `Basic ${Buffer.from(`admin:${adminToken}`).toString('base64')}`,
      'content-type': `multipart/form-data; boundary=${boundary}`,
      'content-length': String(head.length + 32 * MB),
    },
  });
  request.on('error', () => undefined); // the abort is ours
  request.write(head);
  request.write(Buffer.alloc(4 * MB, 1));
  const started = Date.now();
  while (readdirSync(uploadsDir()).length === 0) {
    if (Date.now() - started > 10_000) throw new Error('the upload never reached the temporary directory');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  request.destroy();
  while (readdirSync(uploadsDir()).length > 0) {
    if (Date.now() - started > 10_000) throw new Error(`temporary files left: ${readdirSync(uploadsDir())}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  expect(hub.alive()).toBe(true);
  expect((await hub.api('/Service')).status).toBe(200);
});
