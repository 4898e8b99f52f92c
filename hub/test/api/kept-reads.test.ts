/**
 * What "served from memory" means: once a hub has heard every write (its kept reads live, its background pings
 * answered), the hot reads of a client that changes nothing (GET /Device, /Device/Available, /Service, /Gateway,
 * /Application) send no statement at all to PostgreSQL, not even a sync on the listening connection; and with that
 * connection cut they are read from the records again, with the same answers.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { startHub, type RunningHub } from '../../src/server';
import { LISTENER_NAME } from '../../src/events/kept-reads';
import { PING_QUERY } from '../../src/events/freshness-proof';
import { waitFor } from '../support/lab';
import { createTestDatabase, type TestDatabase } from '../support/test-database';

const ADMIN_TOKEN = '3e5a7c9b-1d2f-4a6b-8c0d-9e8f7a6b5c4d';
const READS = ['/Device', '/Device?properties=true', '/Device/Available', '/Service', '/Gateway', '/Application'];

let t: TestDatabase;
let dataDir: string;
let hub: RunningHub;
/**
 * The statements these reads cost when nothing is kept: the credential read (with the lists' stamps), the device
 * rows, the gateways, the data-port setting, the library. (The hub's own background work, e.g. the leader's, is
 * not counted; /Service's live replicas are read at most every 100 ms, by design.)
 */
const READ_STATEMENTS = /asked_login|list_stamp_rows|from "devices" left join "users"|from "gateways"\s+order by|"hub_settings"|from "applications"/i;
/** Statements sent by this process, by text ('' is a request's sync), the background pings left out. */
const sent: string[] = [];
const query = pg.Client.prototype.query;

beforeAll(async () => {
  t = await createTestDatabase();
  dataDir = mkdtempSync(path.join(os.tmpdir(), 'devicelab-kept-'));
  hub = await startHub({
    port: 0, host: '127.0.0.1', linkPort: 0, databaseUrl: t.url, dataDir, adminToken: ADMIN_TOKEN, uploadLimitBytes: 64 * 1024 * 1024,
  });
  for (let i = 0; i < 20; i++) {
    await t.db.insertInto('devices').values({
      vendor_unique_identifier: `KEPT${i}`, serial_number: `KEPT${i}`, name: `Kept ${i}`, operating_system: 'Android',
      availability: 'Online', readiness: 'Ready',
    }).execute();
  }
  pg.Client.prototype.query = function counted(this: pg.Client, ...args: unknown[]) {
    const text = typeof args[0] === 'string' ? args[0] : (args[0] as { text?: string } | undefined)?.text;
    if (text !== PING_QUERY && !text?.includes('pg_locks')) sent.push(text ?? '?');
    return (query as (...a: unknown[]) => unknown).apply(this, args);
  } as typeof query;
}, 60_000);

afterAll(async () => {
  pg.Client.prototype.query = query;
  await hub?.stop();
  await t?.drop();
  rmSync(dataDir, { recursive: true, force: true });
}, 60_000);

const authorization = `Basic ${Buffer.from(`admin:${ADMIN_TOKEN}`).toString('base64')}`;
const read = async (pathAndQuery: string) => {
  const res = await fetch(`${hub.url}/apiv1${pathAndQuery}`, { headers: { authorization } });
  return { status: res.status, text: await res.text() };
};

async function statementsFor(rounds: number): Promise<{ statements: string[]; syncs: number; answers: string[]; all: string[] }> {
  const answers: string[] = [];
  sent.length = 0;
  for (let i = 0; i < rounds; i++) {
    for (const p of READS) {
      const answer = await read(p);
      expect(answer.status).toBe(200);
      if (i === 0) answers.push(answer.text.replace(/"systemDateTime(Utc)?":"[^"]*"/g, ''));
    }
  }
  return {
    statements: sent.filter((text) => READ_STATEMENTS.test(text)), syncs: sent.filter((text) => text === '').length, answers, all: [...sent],
  };
}

test('a client that changes nothing costs PostgreSQL no statement, not even a sync', async () => {
  // First reads of each kind, the login noted once, and the hub's proof in force (it serves from it once it has been
  // seen live long enough for other replicas' writers to know of it).
  await statementsFor(2);
  // Rounds of every read until one sends nothing: on a loaded machine a ping may take longer than the window now and
  // then, and a request meanwhile reads the records (fail safe); a round without any shows what a request costs.
  await waitFor(async () => {
    const round = await statementsFor(3);
    return round.statements.length === 0 && round.syncs === 0;
  }, 20_000, 'a round of reads without a statement');
});

test('with the listening connection cut, the same reads go to the records and answer the same', async () => {
  const live = await statementsFor(1);
  let cutting = true;
  const cutter = (async () => {
    const client = new pg.Client({ connectionString: t.url });
    await client.connect();
    try {
      while (cutting) {
        await client.query('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = $1',
          [`${LISTENER_NAME}-${process.pid}`]);
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
    } finally {
      await client.end();
    }
  })();
  try {
    await waitFor(async () => {
      sent.length = 0;
      await read('/Gateway');
      return sent.some((text) => READ_STATEMENTS.test(text));
    }, 10_000, 'reads from the records');
    const cut = await statementsFor(2);
    expect(cut.statements.length).toBeGreaterThanOrEqual(2 * READS.length);
    expect(cut.answers).toEqual(live.answers);
  } finally {
    cutting = false;
    await cutter;
  }
}, 60_000);

test('a poll answered from memory refuses a rotated token at once, and one without credentials gets the challenge', async () => {
  const post = (pathAndQuery: string, body?: unknown) => fetch(`${hub.url}/apiv1${pathAndQuery}`, {
    method: 'POST', headers: { authorization, 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body),
  }).then((res) => res.json() as Promise<{ isSuccess: boolean; data?: { apiToken?: string } }>);
  expect((await post('/User?verb=add', { UserName: 'poller@kept.example', roles: ['Tester'] })).isSuccess).toBe(true);
  const users = JSON.parse((await read('/User')).text) as { id: string; email: string }[];
  const id = users.find((user) => user.email === 'poller@kept.example')!.id;
  const token = (await post(`/User?action=generateToken&id=${id}`)).data!.apiToken!;
  const poll = (pollerToken: string) => fetch(`${hub.url}/apiv1/Device`, {
    headers: { authorization: `Basic ${Buffer.from(`poller@kept.example:${pollerToken}`).toString('base64')}` },
  });
  // Verified, then kept: the later polls are answered without reading the credentials.
  for (let i = 0; i < 5; i++) expect((await poll(token)).status).toBe(200);
  const rotated = (await post(`/User?action=generateToken&id=${id}`)).data!.apiToken!;
  expect((await poll(token)).status).toBe(401);
  expect((await poll(rotated)).status).toBe(200);

  const refused = await fetch(`${hub.url}/apiv1/Service`);
  expect(refused.status).toBe(401);
  expect(refused.headers.get('www-authenticate')).toBe('Basic realm="DeviceLab"');
  expect(await refused.text()).toBe('{"isSuccess":false,"errorMessage":"Authentication required."}');
});
