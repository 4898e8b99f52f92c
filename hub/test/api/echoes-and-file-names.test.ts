/**
 * What a client can make the hub keep or repeat: an upload's file name is capped, and user text quoted back in a
 * failure (an unknown key, an unknown action) is cut to a short prefix. A real hub on its own database.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { ECHO_MAX_CHARS, FAILURE_MESSAGE_MAX_CHARS } from '../../src/http/echo';
import { MAX_FILE_NAME_LENGTH } from '../../src/http/upload';
import { startHub, type RunningHub } from '../../src/server';
import { createTestDatabase, type TestDatabase } from '../support/test-database';
import { fixture } from '../../../scripts/jest/shared-files';

const ADMIN_TOKEN = '2d3e4f5a-6b7c-4d8e-9f0a-1b2c3d4e5f6a';
let database: TestDatabase;
let hub: RunningHub;
let dataDir: string;

beforeAll(async () => {
  database = await createTestDatabase({ maxConnections: 2 });
  dataDir = mkdtempSync(path.join(os.tmpdir(), 'devicelab-echoes-'));
  hub = await startHub({ port: 0, host: '127.0.0.1', linkPort: 0, databaseUrl: database.url, dataDir, adminToken: ADMIN_TOKEN,
    uploadLimitBytes: 16 * 1024 * 1024 });
}, 60_000);
afterAll(async () => {
  await hub?.stop();
  await database?.drop();
  rmSync(dataDir, { recursive: true, force: true });
});

async function post(pathAndQuery: string, body: string | FormData): Promise<{ status: number; result: any }> {
  const headers: Record<string, string> = { authorization: `Basic ${Buffer.from(`admin:${ADMIN_TOKEN}`).toString('base64')}` };
  if (typeof body === 'string') headers['content-type'] = 'application/json';
  const res = await fetch(`${hub.url}/apiv1${pathAndQuery}`, { method: 'POST', headers, body });
  return { status: res.status, result: await res.json() };
}

async function upload(fileName: string) {
  const form = new FormData();
  form.append('upload', new Blob([await readFile(fixture('ContactManager.apk'))]), fileName);
  return post('/Application?add&wait=true', form);
}

it(`refuses an upload whose file name is longer than ${MAX_FILE_NAME_LENGTH} characters, and keeps one that long`, async () => {
  const tooLong = await upload(`${'n'.repeat(10_000)}.apk`);
  expect(tooLong).toEqual({ status: 200, result: { isSuccess: false, errorMessage: 'The file name must not be longer than 255 characters.' } });
  expect(await hub.db.selectFrom('applications').select('id').execute()).toEqual([]);

  const longest = `${'é'.repeat(MAX_FILE_NAME_LENGTH - 4)}.apk`;
  const stored = await upload(longest);
  expect(stored.result).toMatchObject({ isSuccess: true, data: { fileName: longest } });
});

it('quotes at most a short prefix of an unknown key, action or report type back', async () => {
  const key = `k${'x'.repeat(64_999)}`;
  for (const [pathAndQuery, body] of [
    ['/Device?update&id=00000000-0000-4000-8000-000000000000', JSON.stringify({ [key]: 1 })],
    ['/Role?add', JSON.stringify({ [key]: 1 })],
    ['/User?add', JSON.stringify({ [key]: 1 })],
    ['/Settings?update', JSON.stringify({ [key]: 1 })],
    [`/User?action=${key.slice(0, 5_000)}`, '{}'], // a request line is at most 16 KiB
  ]) {
    const { status, result } = await post(pathAndQuery, body);
    expect(status).toBe(200);
    expect(result.isSuccess).toBe(false);
    expect(result.errorMessage).toContain(`'k${'x'.repeat(ECHO_MAX_CHARS - 1)}…'`);
    expect(result.errorMessage.length).toBeLessThan(ECHO_MAX_CHARS + 300);
  }
});

it('cuts any failure message that quotes an identifier as sent, wherever the message is made', async () => {
  const headers = { authorization: `Basic ${Buffer.from(`admin:${ADMIN_TOKEN}`).toString('base64')}`,
    'content-type': 'application/x-www-form-urlencoded' };
  const res = await fetch(`${hub.url}/apiv1/Device`, { method: 'POST', headers, body: `action=retain&id=${'d'.repeat(65_000)}` });
  const result: any = await res.json();
  expect(result).toEqual({ isSuccess: false, errorMessage: `Device '${'d'.repeat(FAILURE_MESSAGE_MAX_CHARS - 8)}…`, errorCode: 'DEVICE_NOT_FOUND' });
});
