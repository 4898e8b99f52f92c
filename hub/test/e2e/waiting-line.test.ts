/**
 * The waiting line (extension `POST /Device?action=retain&filter=..&wait=..`) across two hub replicas on one
 * PostgreSQL: requests are served in the order they came whichever replica holds them; a client that disconnects
 * leaves the line (and the device that frees up goes to nobody); a wait that runs out says why; a restart of one
 * replica loses no place of the requests held by the other; two jobs of one login with different lease names never
 * share a device.
 */
import path from 'node:path';
import { startHubProcess, type HubProcess } from '../support/hub-process';
import { ADMIN_TOKEN, startTestLab, waitFor, type TestLab } from '../support/lab';
import { createTestDatabase, type TestDatabase } from '../support/test-database';

type Login = { login: string; token: string };
interface Result<T = unknown> { isSuccess: boolean; errorMessage?: string; errorCode?: string; data?: T }
interface Ticket { serialNumber: string }
interface Waiter { userName: string; filter: string; replicaId: string; place: number; leaseName?: string }

let records: TestDatabase;
let lab: TestLab;
let other: HubProcess;
let users: Login[];
let serials: string[];

beforeAll(async () => {
  records = await createTestDatabase({ maxConnections: 3 });
  lab = await startTestLab({ androidCount: 2, databaseUrl: records.url });
  other = await startHubProcess({
    databaseUrl: records.url, dataDir: path.join(lab.dataDir, 'replica-b'), adminToken: ADMIN_TOKEN,
    env: { DEVICELAB_LOG_LEVEL: 'warn' },
  });
  users = [];
  for (const name of ['holder', 'w1', 'w2', 'w3']) users.push(await lab.addUser(`${name}@example.com`, ['Tester']));
  serials = lab.devices.map((d) => d.serial);
}, 120_000);
afterAll(async () => {
  await other?.stop();
  await lab?.stop();
  await records?.drop();
}, 60_000);
afterEach(async () => {
  for (const serial of serials) await lab.api(lab.admin, `/Device?action=release&id=${serial}`, { method: 'POST' });
});

const auth = (who: Login) => `Basic ${Buffer.from(`${who.login}:${who.token}`).toString('base64')}`;
/** A request to replica A (the lab's hub) or B (the hub process). */
async function call<T>(replica: 'A' | 'B', who: Login, query: string, signal?: AbortSignal): Promise<Result<T>> {
  const base = replica === 'A' ? lab.hub.url : other.url;
  const res = await fetch(`${base}/apiv1${query}`, { method: 'POST', headers: { authorization: auth(who) }, signal });
  return res.json() as Promise<Result<T>>;
}
const retain = (replica: 'A' | 'B', who: Login, params: string, signal?: AbortSignal) =>
  call<Ticket>(replica, who, `/Device?action=retain&${params}`, signal);
const release = (who: Login, serial: string, replica: 'A' | 'B' = 'A') => call(replica, who, `/Device?action=release&id=${serial}`);
async function line(): Promise<Waiter[]> {
  return ((await (await lab.api(lab.admin, '/Device/WaitingLine')).json()) as Result<Waiter[]>).data!;
}
const lineLength = async (n: number) => waitFor(async () => (await line()).length === n, 15_000, `${n} waiting`);

it('serves requests in the order they came across two replicas, one device each as devices free up', async () => {
  const [holder, w1, w2, w3] = users;
  for (const serial of serials) expect((await retain('A', holder, `id=${serial}`)).isSuccess).toBe(true);
  const first = retain('A', w1, 'filter=os=android&wait=60');
  await lineLength(1);
  const second = retain('B', w2, 'filter=os=android&wait=60');
  await lineLength(2);
  const third = retain('A', w3, 'filter=os=android&wait=60');
  await lineLength(3);
  const waiting = await line();
  expect(waiting.map((w) => [w.userName, w.place])).toEqual([[w1.login, 1], [w2.login, 2], [w3.login, 3]]);
  expect(new Set(waiting.map((w) => w.replicaId)).size).toBe(2);

  expect((await release(holder, serials[1])).isSuccess).toBe(true);
  const got1 = await first;
  expect(got1).toMatchObject({ isSuccess: true, data: { serialNumber: serials[1] } });
  expect((await release(holder, serials[0])).isSuccess).toBe(true);
  expect(await second).toMatchObject({ isSuccess: true, data: { serialNumber: serials[0] } });
  expect((await line()).map((w) => w.userName)).toEqual([w3.login]);
  expect((await release(w1, serials[1])).isSuccess).toBe(true);
  expect(await third).toMatchObject({ isSuccess: true, data: { serialNumber: serials[1] } });
  expect(await line()).toEqual([]);
}, 90_000);

it('drops a client that disconnected: the device that frees up stays free', async () => {
  const [holder, w1] = users;
  expect((await retain('A', holder, `id=${serials[0]}`)).isSuccess).toBe(true);
  expect((await retain('A', holder, `id=${serials[1]}`)).isSuccess).toBe(true);
  const gone = new AbortController();
  const request = retain('B', w1, 'filter=os=android&wait=60', gone.signal).catch((err: Error) => err);
  await lineLength(1);
  gone.abort();
  expect(await request).toMatchObject({ name: 'AbortError' });
  await lineLength(0);
  expect((await release(holder, serials[0])).isSuccess).toBe(true);
  // Whatever the line would do, it has done by the time a new waiter is served: the device is still free for it.
  expect(await retain('A', users[2], `id=${serials[0]}&wait=5`)).toMatchObject({ isSuccess: true });
}, 60_000);

it('says why a wait ran out: nothing matches, or which matching devices are busy', async () => {
  const [holder, w1] = users;
  expect(await retain('A', w1, 'filter=os=ios&wait=1'))
    .toMatchObject({ isSuccess: false, errorCode: 'DEVICE_WAIT_TIMEOUT', errorMessage: expect.stringContaining('No device matches') });
  for (const serial of serials) await retain('A', holder, `id=${serial}`);
  const busy = await retain('B', w1, 'filter=os=android&wait=1');
  expect(busy).toMatchObject({ isSuccess: false, errorCode: 'DEVICE_WAIT_TIMEOUT' });
  expect(busy.errorMessage).toMatch(/all 2 matching are busy/);
  expect(busy.errorMessage).toContain(`retained by ${holder.login}`);
  expect(await retain('A', w1, 'filter=osVersion=x&wait=1'))
    .toMatchObject({ isSuccess: false, errorCode: 'INVALID_PARAMETER' });
  expect(await line()).toEqual([]);
}, 60_000);

it('gives two jobs of one login with different lease names different devices, and refuses sharing', async () => {
  const [, w1] = users;
  const [a, b] = await Promise.all([
    retain('A', w1, 'filter=os=android&wait=30&lease=job-a'), retain('B', w1, 'filter=os=android&wait=30&lease=job-b'),
  ]);
  expect(a.isSuccess && b.isSuccess).toBe(true);
  expect(a.data!.serialNumber).not.toBe(b.data!.serialNumber);
  const held = a.data!.serialNumber;
  expect(await retain('B', w1, `id=${held}&lease=job-b`)).toMatchObject({ isSuccess: false, errorCode: 'LEASE_CONFLICT' });
  expect(await retain('A', w1, `id=${held}`)).toMatchObject({ isSuccess: false, errorCode: 'LEASE_CONFLICT' });
  expect(await retain('A', w1, `id=${held}&lease=job-a`)).toMatchObject({ isSuccess: true });
}, 60_000);

it('keeps the places of requests held by one replica, and the bookings, while the other restarts', async () => {
  const [holder, w1, w2, w3] = users;
  const start = new Date(Date.now() + 3_600_000).toISOString().replace(/\.\d{3}Z$/, 'Z');
  const end = new Date(Date.now() + 7_200_000).toISOString().replace(/\.\d{3}Z$/, 'Z');
  const booked = await fetch(`${lab.hub.url}/apiv1/Reservation?add`, {
    method: 'POST', headers: { authorization: auth(w3), 'content-type': 'application/json' },
    body: JSON.stringify({ deviceId: serials[0], start, end, note: 'kept' }),
  });
  const booking = ((await booked.json()) as Result<{ id: string }>).data!;
  for (const serial of serials) await retain('A', holder, `id=${serial}`);
  const first = retain('B', w1, 'filter=os=android&wait=90');
  await lineLength(1);
  const second = retain('B', w2, 'filter=os=android&wait=90');
  await lineLength(2);
  await lab.restartHub();
  expect((await line()).map((w) => w.userName)).toEqual([w1.login, w2.login]);
  const bookings = ((await (await lab.api(lab.admin, '/Reservation')).json()) as Result<{ id: string; note: string }[]>).data!;
  expect(bookings).toEqual([expect.objectContaining({ id: booking.id, note: 'kept' })]);
  await release(holder, serials[0], 'B');
  expect(await first).toMatchObject({ isSuccess: true, data: { serialNumber: serials[0] } });
  await release(holder, serials[1], 'B');
  expect(await second).toMatchObject({ isSuccess: true, data: { serialNumber: serials[1] } });
}, 90_000);
