/**
 * Leases end by themselves, on the hub's clock (moved forward here instead of sleeping): an idle retain is warned
 * (a Note event) and then released, the history saying why; traffic through the hub tunnel keeps it alive; a
 * maximum lease length (the lab's, or a role's more generous one) ends a lease unless renewed, and a renewal
 * beyond the maximum is refused.
 */
import WebSocket from 'ws';
import { startAdbClient } from '../support/adb-client';
import { startTestLab, waitFor, type TestLab } from '../support/lab';

type Login = { login: string; token: string };
interface Result<T = unknown> { isSuccess: boolean; errorMessage?: string; errorCode?: string; data?: T }
interface DeviceRecord { id: string; serialNumber: string; retainedById?: string; leaseEndTime?: string; idleReleaseTime?: string }

let lab: TestLab;
let offsetMs = 0;
let tester: Login;
const now = () => new Date(Date.now() + offsetMs);
const advance = (minutes: number) => { offsetMs += minutes * 60_000; };

beforeAll(async () => {
  lab = await startTestLab({ androidCount: 1, clock: now });
  tester = await lab.addUser('tester@example.com', ['Tester']);
}, 60_000);
afterAll(async () => lab?.stop(), 60_000);

const post = async <T>(who: Login, query: string, body?: object): Promise<Result<T>> => (await lab.api(who, query, {
  method: 'POST', headers: { 'content-type': 'application/json' }, body: body ? JSON.stringify(body) : undefined,
})).json() as Promise<Result<T>>;
const serial = () => lab.devices[0].serial;
const device = async (): Promise<DeviceRecord> =>
  ((await (await lab.api(lab.admin, '/Device')).json()) as DeviceRecord[]).find((d) => d.serialNumber === serial())!;
const history = async (deviceId: string) => (await lab.hub.db.selectFrom('events').select(['event_type', 'message', 'event_date'])
  .where('device_id', '=', deviceId).orderBy('event_date').execute());
const minutesFromNow = (wire: string | undefined) => (Date.parse(wire ?? '') - now().getTime()) / 60_000;

/** Sends adb's CNXN through the hub tunnel and waits for the device endpoint's first answer. */
function tunnelTraffic(who: Login, id: string): Promise<void> {
  const payload = Buffer.from('host::\0');
  const header = Buffer.alloc(24);
  header.writeUInt32LE(0x4e584e43, 0);
  header.writeUInt32LE(0x01000001, 4);
  header.writeUInt32LE(256 * 1024, 8);
  header.writeUInt32LE(payload.length, 12);
  header.writeUInt32LE([...payload].reduce((sum, byte) => sum + byte, 0), 16);
  header.writeUInt32LE((0x4e584e43 ^ 0xffffffff) >>> 0, 20);
  const authorization = `Basic ${Buffer.from(`${who.login}:${who.token}`).toString('base64')}`;
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(`${lab.hub.url.replace('http', 'ws')}/apiv1/Device/Connect?id=${id}`, { headers: { authorization } });
    ws.once('unexpected-response', (_req, res) => reject(new Error(`tunnel refused: HTTP ${res.statusCode}`)));
    ws.once('open', () => ws.send(Buffer.concat([header, payload])));
    ws.once('message', () => { ws.close(); resolve(); });
    ws.once('error', reject);
    setTimeout(() => { ws.terminate(); reject(new Error('no answer through the tunnel in 15 s')); }, 15_000).unref();
  });
}

it('warns, then releases an idle retain and says why; tunnel traffic keeps it alive', async () => {
  expect(await post(lab.admin, '/Settings?update', { retainIdleMinutes: 10, leaseMaxMinutes: 0 })).toMatchObject({ isSuccess: true });
  expect(await post(tester, `/Device?action=retain&id=${serial()}`)).toMatchObject({ isSuccess: true });
  const { id, idleReleaseTime } = await device();
  expect(minutesFromNow(idleReleaseTime)).toBeCloseTo(10, 0);

  advance(8.5); // inside the warning time (the last fifth of 10 minutes)
  await waitFor(async () => (await history(id)).some((e) => e.event_type === 'Note' && /will be released at .*unused since/.test(e.message)),
    20_000, 'the idle warning');
  expect((await device()).retainedById).toBeDefined();

  await tunnelTraffic(tester, id);
  await waitFor(async () => minutesFromNow((await device()).idleReleaseTime) > 9, 20_000, 'the idle time started again');
  advance(3); // past the first deadline: used since, so kept
  await new Promise((resolve) => setTimeout(resolve, 6_000)); // three sweeps
  expect((await device()).retainedById).toBeDefined();

  advance(8); // ten idle minutes since the tunnel traffic
  await waitFor(async () => !(await device()).retainedById, 20_000, 'the idle release');
  const released = (await history(id)).filter((e) => e.event_type === 'DeviceRetained').at(-1)!;
  expect(released.message).toBe('Device Released (idle for 10 min)');
}, 120_000);

it('ends a lease at the lab\'s maximum unless renewed; a role may allow longer; renewal beyond the maximum is refused', async () => {
  expect(await post(lab.admin, '/Settings?update', { retainIdleMinutes: 0, leaseMaxMinutes: 60 })).toMatchObject({ isSuccess: true });
  expect(await post(tester, `/Device?action=retain&id=${serial()}`)).toMatchObject({ isSuccess: true });
  const { id, leaseEndTime, idleReleaseTime } = await device();
  expect(minutesFromNow(leaseEndTime)).toBeCloseTo(60, 0);
  expect(idleReleaseTime).toBeUndefined();

  expect(await post(tester, `/Device?action=renew&id=${serial()}&minutes=90`)).toMatchObject({ isSuccess: false, errorCode: 'LEASE_LIMIT' });
  advance(50);
  const renewed = await post<{ leaseEndTime: string }>(tester, `/Device?action=renew&id=${serial()}`);
  expect(renewed.isSuccess).toBe(true);
  expect(minutesFromNow(renewed.data!.leaseEndTime)).toBeCloseTo(60, 0);
  advance(30);
  await new Promise((resolve) => setTimeout(resolve, 4_000)); // two sweeps: past the first end, renewed, so kept
  expect((await device()).retainedById).toBeDefined();
  advance(26); // inside the last five minutes of the renewed lease
  await waitFor(async () => (await history(id)).some((e) => e.event_type === 'Note' && /when its lease ends/.test(e.message)),
    20_000, 'the lease end warning');
  advance(5);
  await waitFor(async () => !(await device()).retainedById, 20_000, 'the release at the lease end');
  const events = await history(id);
  expect(events.filter((e) => e.event_type === 'DeviceRetained').at(-1)!.message).toBe('Device Released (lease ended: maximum length reached)');
  expect(await post(tester, `/Device?action=renew&id=${serial()}`)).toMatchObject({ isSuccess: false, errorCode: 'DEVICE_NOT_RETAINED' });

  expect(await post(lab.admin, '/Role?add', { name: 'LongJobs', entitlements: ['DeviceConnect', 'DeviceList'], maxLeaseMinutes: 120 }))
    .toMatchObject({ isSuccess: true });
  const longJobs = await lab.addUser('long@example.com', ['Tester', 'LongJobs']);
  expect(await post(longJobs, `/Device?action=retain&id=${serial()}`)).toMatchObject({ isSuccess: true });
  expect(minutesFromNow((await device()).leaseEndTime)).toBeCloseTo(120, 0);
  await post(longJobs, `/Device?action=release&id=${serial()}`);
}, 120_000);

it('releases a device from its holder when someone else\'s booking starts, after a warning, and holds it for the booker', async () => {
  expect(await post(lab.admin, '/Settings?update', { retainIdleMinutes: 0, leaseMaxMinutes: 0 })).toMatchObject({ isSuccess: true });
  const booker = await lab.addUser('booker@example.com', ['Tester']);
  expect(await post(tester, `/Device?action=retain&id=${serial()}`)).toMatchObject({ isSuccess: true });
  const { id } = await device();
  const wire = (ms: number) => new Date(Math.ceil(ms / 1000) * 1000).toISOString().replace(/\.\d{3}Z$/, 'Z');
  const start = now().getTime() + 10 * 60_000;
  const booked = await post(booker, '/Reservation?add', { deviceId: id, start: wire(start), end: wire(start + 60 * 60_000) });
  expect(booked).toMatchObject({ isSuccess: true });
  expect((await device()).retainedById).toBeDefined();

  advance(6); // five minutes before the booking
  await waitFor(async () => (await history(id)).some((e) => e.event_type === 'Note' && /booker@example.com has booked it/.test(e.message)),
    20_000, 'the booking warning');
  advance(5);
  const bookerId = (await lab.hub.db.selectFrom('users').select('id').where('login', '=', booker.login).executeTakeFirstOrThrow()).id;
  await waitFor(async () => (await device()).retainedById === bookerId, 20_000, 'the device held for the booker');
  const retains = (await history(id)).filter((e) => e.event_type === 'DeviceRetained');
  expect(retains.at(-2)!.message).toMatch(/^Device Released \(booked by booker@example.com from /);
  expect(await post(tester, `/Device?action=retain&id=${serial()}`)).toMatchObject({ isSuccess: false, errorCode: 'DEVICE_IN_USE' });
  await post(booker, `/Device?action=release&id=${serial()}`);
}, 120_000);

it('counts adb traffic through the device\'s own endpoint (a real adb client) as use', async () => {
  expect(await post(lab.admin, '/Settings?update', { retainIdleMinutes: 10, leaseMaxMinutes: 0 })).toMatchObject({ isSuccess: true });
  await lab.hub.db.deleteFrom('reservations').execute(); // the booking of the test before
  const adb = await startAdbClient('idle-user');
  try {
    const [self] = (await (await lab.api(tester, '/User')).json()) as { id: string }[];
    const added = await lab.api(tester, `/User?action=addAdbKey&id=${self.id}`, {
      method: 'POST', body: new URLSearchParams({ key: adb.publicKey }), headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    expect(((await added.json()) as { isSuccess: boolean }).isSuccess).toBe(true);
    const retained = await post<{ gatewayAddress: string; gatewayPort: number }>(tester, `/Device?action=retain&id=${serial()}`);
    expect(retained.isSuccess).toBe(true);
    const address = `${retained.data!.gatewayAddress}:${retained.data!.gatewayPort}`;
    await adb.adb(['connect', address]);
    advance(9);
    // Within the 30 s the gateway reports use at most once per device: the shell bytes are the first since connecting.
    await waitFor(async () => (await adb.adb(['-s', address, 'shell', 'echo', 'busy'])).stdout.includes('busy'), 20_000, 'adb shell');
    await waitFor(async () => minutesFromNow((await device()).idleReleaseTime) > 9, 40_000, 'the idle time started again');
    advance(3);
    await new Promise((resolve) => setTimeout(resolve, 6_000)); // three sweeps past the first deadline
    expect((await device()).retainedById).toBeDefined();
    await adb.adb(['disconnect', address]);
  } finally {
    await adb.stop();
    await post(tester, `/Device?action=release&id=${serial()}`);
  }
}, 120_000);
