/**
 * Application icons are bounded where they enter: every list answer carries every icon, so a package's icon of
 * megabytes must not become megabytes in each `GET /Application`. Through a real hub process over HTTP.
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { PNG } from 'pngjs';
import { ICON_MAX_BYTES, ICON_MAX_SIDE } from '../../src/apps/app-icon';
import { MAX_STORED_ICON_CHARS } from '../../src/store/migrations/032_bounded_icons';
import { startHubProcess, type HubProcess } from '../support/hub-process';
import { apkWithIcon, heavyIconPng, pixelBombPng, undecodablePng } from '../support/hostile-packages';
import { createTestDatabase, type TestDatabase } from '../support/test-database';
import { fixture } from '../../../scripts/jest/shared-files';

const APPS = 50;

let database: TestDatabase;
let dataDir: string;
let hub: HubProcess;
const adminToken = randomUUID();

beforeAll(async () => {
  database = await createTestDatabase({ maxConnections: 2 });
  dataDir = mkdtempSync(path.join(os.tmpdir(), 'devicelab-icons-'));
  hub = await startHubProcess({ databaseUrl: database.url, dataDir, adminToken });
}, 60_000);
afterAll(async () => {
  await hub?.stop();
  await database?.drop();
  rmSync(dataDir, { recursive: true, force: true });
});

interface App { id: string; iconBlob?: string; applicationErrors: string[] }

async function upload(bytes: Buffer): Promise<App> {
  const form = new FormData();
  form.append('upload', new Blob([bytes]), 'icon.apk');
  const reply = await (await hub.api('/Application?add&wait=true', { method: 'POST', body: form })).json() as
    { isSuccess: boolean; errorMessage?: string; data: App };
  expect(reply.errorMessage).toBeUndefined();
  return reply.data;
}

function iconImage(app: App): PNG {
  const match = /^data:image\/png;base64,(.*)$/.exec(app.iconBlob ?? '');
  expect(match).not.toBeNull();
  const png = Buffer.from(match![1], 'base64');
  expect(png.length).toBeLessThanOrEqual(ICON_MAX_BYTES);
  return PNG.sync.read(png);
}

it(`an icon of 7.8 MB is kept as a small PNG; with ${APPS} such apps GET /Application answers 200 and stays small`, async () => {
  const heavy = apkWithIcon(fixture, heavyIconPng());
  const first = await upload(heavy);
  const image = iconImage(first);
  expect([image.width, image.height]).toEqual([ICON_MAX_SIDE, ICON_MAX_SIDE]);
  expect(first.applicationErrors).toEqual([]);
  const oneApp = await hub.api('/Application');
  expect((await oneApp.text()).length).toBeLessThan(MAX_STORED_ICON_CHARS + 4096);

  // Two at a time, as the hub parses two packages at once.
  for (let i = 1; i < APPS; i += 2) await Promise.all([upload(heavy), ...i + 1 < APPS ? [upload(heavy)] : []]);
  const started = Date.now();
  const list = await hub.api('/Application');
  const text = await list.text();
  expect(list.status).toBe(200);
  const apps = JSON.parse(text) as App[];
  expect(apps).toHaveLength(APPS);
  // Every icon is there, and the whole answer is what 50 bounded icons and their records take.
  expect(apps.every((app) => app.iconBlob?.startsWith('data:image/png;base64,'))).toBe(true);
  expect(text.length).toBeLessThan(APPS * (MAX_STORED_ICON_CHARS + 4096));
  expect(Date.now() - started).toBeLessThan(5_000);
}, 180_000);

it.each([
  ['claims more pixels than the budget in its header', pixelBombPng(), /30000 x 30000 pixels, more than the limit/],
  ['does not decode', undecodablePng(), /cannot be decoded/],
])('an icon that %s is dropped with a warning; the upload is kept', async (_what, icon, warning) => {
  const app = await upload(apkWithIcon(fixture, icon));
  expect(app.id).toMatch(/^[0-9a-f-]{36}$/);
  expect(app.iconBlob).toBeUndefined();
  expect(app.applicationErrors).toEqual([expect.stringMatching(warning)]);
  expect(app.applicationErrors[0]).toMatch(/^The application's icon was not kept: /);
});
