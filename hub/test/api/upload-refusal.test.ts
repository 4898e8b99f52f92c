/**
 * A POST /Application is decided from its query and its caller before a byte of its body is read: a caller
 * without ApplicationUpload, or an operation that takes no file, gets its answer while the client is still
 * sending, and the body is never stored. What is read is bounded: one file part, short text fields.
 * Through a real hub process; the client sends the start of a large body and waits for the answer.
 */
import { randomUUID } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { Entitlement } from '@devicelab/shared';
import { createUser } from '../../src/auth/users';
import { startHubProcess, type HubProcess } from '../support/hub-process';
import { createTestDatabase, type TestDatabase } from '../support/test-database';

const MB = 1024 * 1024;
let database: TestDatabase;
let dataDir: string;
let hub: HubProcess;
const adminToken = randomUUID();
let noUpload: { login: string; token: string };

beforeAll(async () => {
  database = await createTestDatabase({ maxConnections: 2 });
  dataDir = mkdtempSync(path.join(os.tmpdir(), 'devicelab-refusal-'));
  hub = await startHubProcess({ databaseUrl: database.url, dataDir, adminToken });
  await database.db.insertInto('roles')
    .values({ name: 'NoUpload', entitlements: Entitlement.filter((e) => e !== 'ApplicationUpload') }).execute();
  const { token } = await createUser(database.db, { login: 'no-upload@example.com', roles: ['NoUpload'] });
  noUpload = { login: 'no-upload@example.com', token };
}, 60_000);
afterAll(async () => {
  await hub?.stop();
  await database?.drop();
  rmSync(dataDir, { recursive: true, force: true });
});

interface Answer { status: number; connection?: string; body: string }

/**
 * Starts a multipart request that announces `announcedBytes`, sends its first `sentBytes` and then nothing more
 * until the hub answers: an answer that comes is one given before the body was read.
 */
function answerBeforeBody(pathAndQuery: string, who: { login: string; token: string }, sentBytes = 64 * 1024,
  announcedBytes = 64 * MB): Promise<Answer> {
  const boundary = `----slow${randomUUID()}`;
  const head = `--${boundary}\r\nContent-Disposition: form-data; name="upload"; filename="big.apk"\r\n`
    + 'Content-Type: application/octet-stream\r\n\r\n';
  return new Promise((resolve, reject) => {
    const request = http.request(`${hub.url}/apiv1${pathAndQuery}`, {
      method: 'POST',
      headers: {
        authorization: `Basic ${Buffer.from(`${who.login}:${who.token}`).toString('base64')}`,
        'content-type': `multipart/form-data; boundary=${boundary}`,
        'content-length': String(head.length + announcedBytes),
      },
    }, (res) => {
      let body = '';
      res.setEncoding('utf8').on('data', (text: string) => { body += text; }).on('end', () => {
        resolve({ status: res.statusCode!, connection: res.headers.connection, body });
        request.destroy();
      }).on('error', reject);
    });
    request.on('error', reject);
    request.write(head);
    request.write(Buffer.alloc(sentBytes, 7));
  });
}

const uploads = (): string[] => {
  const dir = path.join(dataDir, 'uploads');
  return existsSync(dir) ? readdirSync(dir) : [];
};

it('a caller without ApplicationUpload is refused before the body is read, and nothing is written', async () => {
  const answer = await answerBeforeBody('/Application?add', noUpload);
  expect(answer).toEqual({ status: 200, connection: 'close',
    body: '{"isSuccess":false,"errorMessage":"User does not have required entitlement: ApplicationUpload","errorCode":"ENTITLEMENT_REQUIRED"}' });
  expect(uploads()).toEqual([]);
  expect((await hub.api('/Service')).status).toBe(200);
}, 30_000);

it('install and the other operations answer without reading a multipart body sent to them', async () => {
  const admin = { login: 'admin', token: adminToken };
  const install = await answerBeforeBody(`/Application?action=install&id=${randomUUID()}&deviceId=nothing`, admin);
  expect(install.status).toBe(200);
  expect(install.connection).toBe('close');
  expect(JSON.parse(install.body)).toMatchObject({ isSuccess: true, data: { asyncResponseId: expect.any(String) } });
  const uninstall = await answerBeforeBody(`/Application?action=uninstall&id=${randomUUID()}&deviceId=nothing`, admin);
  expect(JSON.parse(uninstall.body)).toMatchObject({ isSuccess: false });
  expect(uploads()).toEqual([]);
}, 30_000);

it('an upload with a text field beyond the limit or a second file is refused', async () => {
  const admin = { login: 'admin', token: adminToken };
  const withField = new FormData();
  withField.append('note', 'x'.repeat(MB));
  withField.append('upload', new Blob([Buffer.from('PK')]), 'a.apk');
  const twoFiles = new FormData();
  twoFiles.append('upload', new Blob([Buffer.from('PK')]), 'a.apk');
  twoFiles.append('other', new Blob([Buffer.from('PK')]), 'b.apk');
  const send = async (body: FormData) => {
    const auth = Buffer.from(`${admin.login}:${admin.token}`).toString('base64');
    return (await fetch(`${hub.url}/apiv1/Application?add&wait=true`, { method: 'POST', body, headers: { authorization: `Basic ${auth}` } })).json();
  };
  expect(await send(withField)).toEqual({ isSuccess: false, errorMessage: 'Invalid upload: a text field is longer than 4096 bytes.' });
  expect(await send(twoFiles)).toEqual({ isSuccess: false, errorMessage: 'Invalid upload: send one file per request.' });
  expect(uploads()).toEqual([]);
});
