/**
 * Reads kept in memory between writes, across two hub replicas (processes) on one PostgreSQL: a token revoked, a
 * user deactivated or a role taken away through replica A is refused by replica B on its very next read after A
 * answered (so within 100 ms, whatever a read takes), and a device changed through A is in B's next list; a
 * dashboard session signed out, or its user deactivated, through A likewise; and while B's listening connection is cut (its backend terminated over and over) or
 * stalled (its backend stopped), all of it still holds, B reading from the records as before.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { createUser } from '../../src/auth/users';
import { LISTENER_NAME } from '../../src/events/kept-reads';
import { startHubProcess, type HubProcess } from '../support/hub-process';
import { waitFor } from '../support/lab';
import { createTestDatabase, type TestDatabase } from '../support/test-database';

const ADMIN_TOKEN = '7a3c9e1d-4b2f-4c6a-9d8e-0f1a2b3c4d5e';

let t: TestDatabase;
let dataDir: string;
let a: HubProcess;
let b: HubProcess;
let deviceId: string;

beforeAll(async () => {
  t = await createTestDatabase();
  dataDir = mkdtempSync(path.join(os.tmpdir(), 'devicelab-kept-'));
  const env = { DEVICELAB_LOG_LEVEL: 'error' };
  a = await startHubProcess({ databaseUrl: t.url, dataDir: path.join(dataDir, 'a'), adminToken: ADMIN_TOKEN, env });
  b = await startHubProcess({ databaseUrl: t.url, dataDir: path.join(dataDir, 'b'), adminToken: ADMIN_TOKEN, env });
  const device = await t.db.insertInto('devices').values({
    vendor_unique_identifier: 'KEPT0001', serial_number: 'KEPT0001', name: 'Kept', operating_system: 'Android',
    availability: 'Online', readiness: 'Ready',
  }).returning('id').executeTakeFirstOrThrow();
  deviceId = device.id;
  // Both replicas listening (a kept read is used only then): B's answers stop costing a round trip.
  for (const hub of [a, b]) await waitFor(async () => (await listenerPids(hub)).length > 0, 20_000, 'the listening connection');
}, 180_000);

afterAll(async () => {
  await a?.stop();
  await b?.stop();
  await t?.drop();
  rmSync(dataDir, { recursive: true, force: true });
}, 60_000);

async function listenerPids(hub: HubProcess): Promise<number[]> {
  const client = new pg.Client({ connectionString: t.url });
  await client.connect();
  try {
    const { rows } = await client.query<{ pid: number }>(
      'SELECT pid FROM pg_stat_activity WHERE application_name = $1', [`${LISTENER_NAME}-${hub.child.pid}`]);
    return rows.map((row) => row.pid);
  } finally {
    await client.end();
  }
}

const basic = (login: string, token: string) => ({ authorization: `Basic ${Buffer.from(`${login}:${token}`).toString('base64')}` });
const get = (hub: HubProcess, pathAndQuery: string, headers: Record<string, string>) =>
  fetch(`${hub.url}/apiv1${pathAndQuery}`, { headers });
const adminPost = async (hub: HubProcess, pathAndQuery: string, body?: string) =>
  (await hub.api(pathAndQuery, { method: 'POST', body, headers: body ? { 'content-type': 'application/json' } : {} })).json() as
    Promise<{ isSuccess: boolean; data?: { apiToken: string } }>;

/**
 * Reads until `probe` holds (at most 5 s) and says how many reads it took. One: the change counted on the very first
 * read after the write answered, i.e. within 0 ms of it, which is stronger than the 100 ms required and does not
 * depend on how long a read takes on a loaded machine.
 */
async function readsUntil(probe: () => Promise<boolean>): Promise<number> {
  const started = performance.now();
  let reads = 1;
  while (!(await probe())) {
    if (performance.now() - started > 5000) throw new Error('not within 5 s');
    reads++;
  }
  return reads;
}

/** A user of role Tester whose credentials B has verified (and keeps). */
async function verifiedOnB(login: string): Promise<{ id: string; headers: Record<string, string> }> {
  const { user, token } = await createUser(t.db, { login, roles: ['Tester'] });
  const headers = basic(login, token);
  for (let i = 0; i < 3; i++) expect((await get(b, '/Device', headers)).status).toBe(200);
  return { id: user.id, headers };
}

const notesOnB = async (headers: Record<string, string>) =>
  ((await (await get(b, '/Device', headers)).json()) as { id: string; notes?: string }[]).find((d) => d.id === deviceId)?.notes;

/** A dashboard session of a new user, signed in on B and used there (so B keeps it). */
async function sessionOnB(login: string): Promise<{ id: string; cookie: string }> {
  const { user, token } = await createUser(t.db, { login, roles: ['Tester'] });
  const signedIn = await fetch(`${b.url}/apiv1/Session`, {
    method: 'POST', body: new URLSearchParams({ login, token }).toString(), headers: { 'content-type': 'application/x-www-form-urlencoded' },
  });
  expect(signedIn.status).toBe(200);
  const cookie = signedIn.headers.get('set-cookie')!.split(';')[0];
  for (let i = 0; i < 3; i++) expect((await get(b, '/Device', { cookie })).status).toBe(200);
  return { id: user.id, cookie };
}

/** Revocation, sign-out, deactivation and a role taken away through A, each refused (or narrowed) by B's next read. */
async function changesThroughAReachB(prefix: string): Promise<void> {
  const signedOut = await sessionOnB(`${prefix}-signed-out@example.com`);
  const signOut = await fetch(`${a.url}/apiv1/Session`, { method: 'DELETE', headers: { cookie: signedOut.cookie, 'x-devicelab-csrf': '1' } });
  expect(signOut.status).toBe(200);
  expect(await readsUntil(async () => (await get(b, '/Device', { cookie: signedOut.cookie })).status === 401)).toBe(1);

  const sessionDeactivated = await sessionOnB(`${prefix}-session-deactivated@example.com`);
  expect((await adminPost(a, `/User?update&id=${sessionDeactivated.id}`, '{"IsActive":"False"}')).isSuccess).toBe(true);
  expect(await readsUntil(async () => (await get(b, '/Device', { cookie: sessionDeactivated.cookie })).status === 401)).toBe(1);

  const rotated = await verifiedOnB(`${prefix}-rotated@example.com`);
  expect((await adminPost(a, `/User?action=generateToken&id=${rotated.id}`)).isSuccess).toBe(true);
  expect(await readsUntil(async () => (await get(b, '/Device', rotated.headers)).status === 401)).toBe(1);

  const deactivated = await verifiedOnB(`${prefix}-deactivated@example.com`);
  expect((await adminPost(a, `/User?update&id=${deactivated.id}`, '{"IsActive":"False"}')).isSuccess).toBe(true);
  expect(await readsUntil(async () => (await get(b, '/Device', deactivated.headers)).status === 401)).toBe(1);

  // Without DeviceList a lister gets [] (wire rule 20): the role's loss shows as an empty list.
  const narrowed = await verifiedOnB(`${prefix}-narrowed@example.com`);
  expect(((await (await get(b, '/Device', narrowed.headers)).json()) as unknown[]).length).toBeGreaterThan(0);
  expect((await adminPost(a, `/User?update&id=${narrowed.id}`, '{"Roles":[]}')).isSuccess).toBe(true);
  expect(await readsUntil(async () => ((await (await get(b, '/Device', narrowed.headers)).json()) as unknown[]).length === 0))
    .toBe(1);

  const reader = await verifiedOnB(`${prefix}-reader@example.com`);
  for (const notes of Array.from({ length: 20 }, (_, i) => `${prefix} ${i}`)) {
    expect(await adminPost(a, `/Device?verb=update&id=${deviceId}`, JSON.stringify({ notes }))).toEqual({ isSuccess: true });
    expect(await notesOnB(reader.headers)).toBe(notes);
  }
}

test('a revoked token, a deactivated user and a lost role through A are refused by B within 100 ms; a device change is in B\'s next list', async () => {
  await changesThroughAReachB('live');
}, 60_000);

test('with B\'s listening connection cut, B reads from the records and all of it still holds', async () => {
  let cuts = 0;
  let cutting = true;
  const cutter = (async () => {
    const client = new pg.Client({ connectionString: t.url });
    await client.connect();
    try {
      while (cutting) {
        const { rows } = await client.query<{ cut: boolean }>(
          'SELECT pg_terminate_backend(pid) AS cut FROM pg_stat_activity WHERE application_name = $1', [`${LISTENER_NAME}-${b.child.pid}`]);
        cuts += rows.filter((row) => row.cut).length;
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    } finally {
      await client.end();
    }
  })();
  try {
    await waitFor(async () => cuts > 0, 10_000, 'the listening connection cut');
    await changesThroughAReachB('cut');
  } finally {
    cutting = false;
    await cutter;
  }
  // And B listens again afterwards.
  await waitFor(async () => (await listenerPids(b)).length > 0, 20_000, 'the listening connection back');
  await changesThroughAReachB('back');
}, 180_000);

test('with B\'s listening backend stalled (stopped, answering nothing), B reads from the records and all of it still holds', async () => {
  const [pid] = await listenerPids(b);
  expect(pid).toBeDefined();
  process.kill(pid, 'SIGSTOP');
  try {
    await changesThroughAReachB('stalled');
  } finally {
    process.kill(pid, 'SIGCONT');
  }
  await changesThroughAReachB('resumed');
}, 180_000);
