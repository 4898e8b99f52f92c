/**
 * Request deadlines of the hub's REST server: a body that trickles (a few bytes a window) is answered 408 and its
 * connection closed at the end of the first slow window, instead of holding the connection for minutes; an upload
 * that keeps moving is never cut, however long it takes. The windows are short here; the hub's are 10 s.
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { hubConfigFromEnv } from '../../src/config';
import { tooSlow, type RequestDeadlines } from '../../src/http/request-deadlines';
import { startHub, type RunningHub } from '../../src/server';
import { createTestDatabase, type TestDatabase } from '../support/test-database';
import { fixture } from '../../../scripts/jest/shared-files';

const deadlines: RequestDeadlines = { headersMs: 20_000, requestMs: 60_000, bodyWindowMs: 400, minBodyBytes: 1024 };
const adminToken = randomUUID();
let database: TestDatabase;
let dataDir: string;
let hub: RunningHub;

beforeAll(async () => {
  database = await createTestDatabase({ maxConnections: 2 });
  dataDir = mkdtempSync(path.join(os.tmpdir(), 'devicelab-deadlines-'));
  hub = await startHub({ ...hubConfigFromEnv({}), port: 0, host: '127.0.0.1', linkPort: 0, databaseUrl: database.url,
    dataDir, adminToken, requestDeadlines: deadlines });
}, 60_000);
afterAll(async () => {
  await hub.stop();
  await database.drop();
  rmSync(dataDir, { recursive: true, force: true });
});

interface Sent { status: number; body: string; connection?: string }

/**
 * A POST whose body (`length` bytes announced) is written by `feed`, which stops when the answer has come. A
 * request still unanswered when `feed` is done is abandoned (status 0) if it sent less than it announced.
 */
function post(pathAndQuery: string, headers: Record<string, string>, length: number,
  feed: (write: (chunk: Buffer | string) => void, answered: () => boolean) => Promise<void>): Promise<Sent> {
  let sent = 0;
  return new Promise((resolve, reject) => {
    let answered = false;
    const request = http.request(`${hub.url}/apiv1${pathAndQuery}`, {
      method: 'POST',
      headers: { authorization: `Basic ${Buffer.from(`admin:${adminToken}`).toString('base64')}`,
        'content-length': String(length), ...headers },
    }, (res) => {
      answered = true;
      let body = '';
      res.setEncoding('utf8').on('data', (text: string) => { body += text; })
        .on('end', () => resolve({ status: res.statusCode!, body, connection: res.headers.connection }))
        .on('error', reject);
    });
    request.on('error', (err) => (answered ? undefined : reject(err)));
    feed((chunk) => { sent += chunk.length; request.write(chunk); }, () => answered).then(() => {
      if (answered) return;
      if (sent >= length) request.end();
      else {
        request.destroy();
        resolve({ status: 0, body: '' });
      }
    }, reject);
  });
}

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

it('a body sent 4 bytes at a time is answered 408 at the end of its first slow window', async () => {
  const started = Date.now();
  const answer = await post('/User?add', { 'content-type': 'application/json' }, 10_000, async (write, answered) => {
    while (!answered() && Date.now() - started < 20 * deadlines.bodyWindowMs) {
      write('{"a"');
      await pause(100);
    }
  });
  expect(answer).toEqual({ status: 408, connection: 'close',
    body: JSON.stringify({ isSuccess: false, errorMessage: tooSlow(deadlines) }) });
  expect((await fetch(`${hub.url}/apiv1/Service`, { headers: { authorization: `Basic ${Buffer.from(`admin:${adminToken}`).toString('base64')}` } })).status).toBe(200);
});

it('an upload that keeps moving is taken whole, over many windows', async () => {
  const apk = readFileSync(fixture('ContactManager.apk'));
  const boundary = `----moving${randomUUID()}`;
  const body = Buffer.concat([
    Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="upload"; filename="c.apk"\r\n\r\n`),
    apk, Buffer.from(`\r\n--${boundary}--\r\n`),
  ]);
  const answer = await post('/Application?add&wait=true', { 'content-type': `multipart/form-data; boundary=${boundary}` },
    body.length, async (write) => {
      // 2 KB every 50 ms: above the pace, and about 1 s in all (more than two windows).
      for (let at = 0; at < body.length; at += 2048) {
        write(body.subarray(at, at + 2048));
        await pause(50);
      }
    });
  expect(answer.status).toBe(200);
  expect(JSON.parse(answer.body)).toMatchObject({ isSuccess: true, data: { applicationIdentifier: 'com.example.android.contactmanager' } });
}, 30_000);
