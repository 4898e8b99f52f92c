/**
 * Reservations (extension /Reservation) against a whole lab: booking, listing, moving and cancelling through
 * HTTP; the database refusing an overlapping booking, also one racing in from another hub replica's connection;
 * what a booking does to the device record, to another user's /Device/Available and retain; who may cancel what;
 * bookings on the event stream; weekly series, booked all or none.
 */
import { sql } from 'kysely';
import { createDatabase, type Db } from '../../src/store/database';
import { openEventStream } from '../support/event-stream-client';
import { startTestLab, type TestLab } from '../support/lab';
import { createTestDatabase, type TestDatabase } from '../support/test-database';

let records: TestDatabase;
let lab: TestLab;
/** Another hub replica's connections to the same records. */
let replica: Db;
let alice: { login: string; token: string };
let bob: { login: string; token: string };
let serial: string;
let deviceName: string;

beforeAll(async () => {
  records = await createTestDatabase({ maxConnections: 3 });
  lab = await startTestLab({ androidCount: 1, databaseUrl: records.url });
  replica = createDatabase(records.url, { maxConnections: 2 });
  alice = await lab.addUser('alice@example.com', ['Tester']);
  bob = await lab.addUser('bob@example.com', ['Tester']);
  serial = lab.devices[0].serial;
  deviceName = (await device())!.name;
}, 60_000);
afterAll(async () => {
  await lab.stop();
  await replica.destroy();
  await records.drop();
}, 60_000);
afterEach(async () => {
  await replica.deleteFrom('reservations').execute();
  await lab.api(lab.admin, `/Device?action=release&id=${serial}`, { method: 'POST' });
});

interface Result<T = unknown> { isSuccess: boolean; errorMessage?: string; data?: T }
interface Booking { id: string; deviceId: string; reservedById: string; reservedByDisplayName: string; start: string; end: string; note: string }
interface DeviceRecord {
  name: string; serialNumber: string; nextReservationStartTime?: string; nextReservationEndTime?: string; reservedById?: string;
  reservedByDisplayName?: string;
}

const post = async <T>(as: { login: string; token: string }, query: string, body?: object): Promise<Result<T>> => {
  const res = await lab.api(as, `/Reservation?${query}`, {
    method: 'POST', headers: { 'content-type': 'application/json' }, body: body ? JSON.stringify(body) : undefined,
  });
  expect(res.status).toBe(200);
  return res.json() as Promise<Result<T>>;
};
const get = async <T>(as: { login: string; token: string }, path: string): Promise<Result<T>> =>
  (await lab.api(as, path)).json() as Promise<Result<T>>;
const wire = (ms: number) => new Date(Math.floor(ms / 1000) * 1000).toISOString().replace(/\.\d{3}Z$/, 'Z');
const inMinutes = (m: number) => wire(Date.now() + m * 60_000);
const book = (as: { login: string; token: string }, start: string, end: string, note = '') =>
  post<Booking>(as, 'add', { deviceId: serial, start, end, note });
/** The device lists answer the array itself (spec 4.2). */
const devices = async (as: { login: string; token: string }, path: string) => (await lab.api(as, path)).json() as Promise<DeviceRecord[]>;
const device = async (as = lab.admin) => (await devices(as, '/Device')).find((d) => d.serialNumber === serial);
const available = async (as: { login: string; token: string }) =>
  (await devices(as, '/Device/Available')).some((d) => d.serialNumber === serial);

it('books, lists, moves and cancels through HTTP, and the device record shows the next booking', async () => {
  const [start, end] = [inMinutes(60), inMinutes(120)];
  const created = await book(alice, start, end, 'release testing');
  expect(created).toMatchObject({ isSuccess: true, data: { start, end, note: 'release testing', reservedByDisplayName: alice.login } });
  const { id, reservedById } = created.data!;
  expect(await device(bob)).toMatchObject({
    nextReservationStartTime: start, nextReservationEndTime: end, reservedById, reservedByDisplayName: alice.login,
  });

  const listed = await get<Booking[]>(bob, `/Reservation?deviceId=${serial}`);
  expect(listed.data!.map((b) => b.id)).toEqual([id]);
  expect((await get<Booking[]>(bob, `/Reservation?from=${inMinutes(180)}`)).data).toEqual([]);

  const later = inMinutes(150);
  expect(await post<Booking>(alice, `action=update&id=${id}`, { end: later, note: 'longer' }))
    .toMatchObject({ isSuccess: true, data: { start, end: later, note: 'longer' } });
  expect((await device())?.nextReservationEndTime).toBe(later);

  expect(await post(alice, `action=delete&id=${id}`)).toEqual({ isSuccess: true });
  expect((await get<Booking[]>(alice, '/Reservation')).data).toEqual([]);
  expect((await device())?.reservedById).toBeUndefined();
}, 30_000);

it('refuses a booking that overlaps another, naming it, and bookings that break the rules', async () => {
  const [start, end] = [inMinutes(60), inMinutes(120)];
  expect((await book(alice, start, end)).isSuccess).toBe(true);
  expect(await book(bob, inMinutes(90), inMinutes(150))).toEqual({
    isSuccess: false, errorMessage: `Device '${deviceName}' is already reserved from ${start} to ${end} by '${alice.login}'.`, errorCode: 'DEVICE_RESERVED',
  });
  // Half-open ranges: the next booking may start when this one ends.
  expect((await book(bob, end, inMinutes(180))).isSuccess).toBe(true);

  expect((await book(bob, inMinutes(300), inMinutes(240))).errorMessage).toBe('A booking must end after it starts.');
  expect((await book(bob, inMinutes(-120), inMinutes(-60))).errorMessage).toBe('A booking cannot start in the past.');
  expect((await book(bob, inMinutes(300), inMinutes(300 + 8 * 24 * 60))).errorMessage).toBe('A booking lasts at most 7 days.');
  expect((await post(bob, 'add', { deviceId: 'no-such-device', start, end })).errorMessage).toBe("Device 'no-such-device' not found.");
  expect((await get<Booking[]>(lab.admin, '/Reservation')).data).toHaveLength(2);
}, 30_000);

it('lets exactly one of two racing bookings in, whichever hub replica takes the other', async () => {
  const [start, end] = [inMinutes(60), inMinutes(120)];
  const { id: deviceId } = await replica.selectFrom('devices').select('id').where('serial_number', '=', serial).executeTakeFirstOrThrow();
  const { id: bobId } = await replica.selectFrom('users').select('id').where('login', '=', bob.login).executeTakeFirstOrThrow();
  let bookingThroughHub: Promise<Result<Booking>> | undefined;
  await replica.transaction().execute(async (trx) => {
    // The other replica's booking is written but not committed when this hub's arrives.
    await trx.insertInto('reservations').values({ device_id: deviceId, user_id: bobId, starts_at: start, ends_at: end }).execute();
    bookingThroughHub = book(alice, inMinutes(90), inMinutes(150));
    await waitUntil(async () => (await sql<{ waiting: number }>`SELECT count(*)::int AS waiting FROM pg_stat_activity
      WHERE datname = current_database() AND wait_event_type = 'Lock' AND query LIKE 'insert into "reservations"%'`.execute(replica)).rows[0].waiting === 1);
  });
  expect(await bookingThroughHub).toEqual({
    isSuccess: false, errorMessage: `Device '${deviceName}' is already reserved from ${start} to ${end} by '${bob.login}'.`, errorCode: 'DEVICE_RESERVED',
  });
  expect((await get<Booking[]>(lab.admin, '/Reservation')).data!.map((b) => b.reservedByDisplayName)).toEqual([bob.login]);
}, 30_000);

it("hides a device booked now from another user's Available and refuses their retain; the booker may retain", async () => {
  const end = inMinutes(60);
  expect((await book(alice, inMinutes(0), end)).isSuccess).toBe(true);
  expect(await available(bob)).toBe(false);
  expect(await available(alice)).toBe(true);
  const refused = await (await lab.api(bob, `/Device?action=retain&id=${serial}`, { method: 'POST' })).json();
  expect(refused).toEqual({
    isSuccess: false, errorMessage: `Device '${deviceName}' is reserved by '${alice.login}' until ${end}.`, errorCode: 'DEVICE_RESERVED',
  });
  // The other device actions apply the same rule.
  expect(await (await lab.api(bob, `/Device?action=reboot&id=${serial}`, { method: 'POST' })).json()).toEqual(refused);
  const retained = await (await lab.api(alice, `/Device?action=retain&id=${serial}`, { method: 'POST' })).json() as Result;
  expect(retained.isSuccess).toBe(true);
}, 30_000);

it('takes effect when a booking made earlier begins', async () => {
  const start = Date.now() + 3_000;
  expect((await book(alice, wire(start), inMinutes(60))).isSuccess).toBe(true);
  expect(await available(bob)).toBe(true);
  await waitUntil(async () => !(await available(bob)));
  expect(Date.now()).toBeGreaterThanOrEqual(Math.floor(start / 1000) * 1000);
}, 30_000);

it('shows the next booking on the device record once the current one ends', async () => {
  const end = Date.now() + 3_000;
  expect((await book(alice, inMinutes(0), wire(end))).isSuccess).toBe(true);
  const next = await book(bob, inMinutes(60), inMinutes(120));
  expect((await device())?.reservedByDisplayName).toBe(alice.login);
  await waitUntil(async () => (await device())?.reservedByDisplayName === bob.login);
  expect(await device()).toMatchObject({ nextReservationStartTime: next.data!.start, reservedById: next.data!.reservedById });
  expect(Date.now()).toBeGreaterThanOrEqual(Math.floor(end / 1000) * 1000);
}, 30_000);

interface UsageRecord {
  eventType: string; startDate: string; endDate?: string; performedById?: string; performedByName?: string;
  reservedById?: string; reservedByName?: string;
}

it('names the booker in the usage during a booking (the holder as performer), and nobody outside bookings', async () => {
  const retain = async (as: { login: string; token: string }) =>
    expect(await (await lab.api(as, `/Device?action=retain&id=${serial}`, { method: 'POST' })).json()).toMatchObject({ isSuccess: true });
  const release = async (as: { login: string; token: string }) =>
    expect(await (await lab.api(as, `/Device?action=release&id=${serial}`, { method: 'POST' })).json()).toEqual({ isSuccess: true });
  const since = new Date(Date.now() - 1000).toISOString();
  await retain(bob);
  await release(bob);
  // The booking starts after bob's first use (its start is on the second) and while he holds the device again:
  // the lab releases it from him and holds it for alice.
  await new Promise((resolve) => setTimeout(resolve, 1100));
  await retain(bob);
  const booked = await book(alice, inMinutes(0), inMinutes(60));
  expect(booked.isSuccess).toBe(true);
  const aliceId = booked.data!.reservedById;
  const retainer = async () => ((await devices(lab.admin, '/Device')).find((d) => d.serialNumber === serial) as { retainedById?: string }).retainedById;
  await waitUntil(async () => (await retainer()) === aliceId);
  await release(alice);

  const usage = async (query: string) => (await get<never>(lab.admin, `/Report/Usage?fromDate=${since}&${query}`) as unknown as
    { deviceUsage: UsageRecord[] }).deviceUsage.filter((u) => u.eventType === 'DeviceRetained');
  const records = await usage(`deviceId=${serial}`);
  const bobId = records[2].performedById;
  expect(records.map((u) => [u.performedByName, u.reservedById ?? null, u.reservedByName ?? null])).toEqual([
    [alice.login, aliceId, alice.login],
    [bob.login, aliceId, alice.login],
    [bob.login, null, null],
  ]);
  // Alice's usage: hers and bob's during her booking; bob's: his own two periods.
  expect((await usage(`userId=${aliceId}`)).map((u) => u.performedByName)).toEqual([alice.login, bob.login]);
  expect((await usage(`userId=${bobId}`)).map((u) => u.reservedByName ?? null)).toEqual([alice.login, null]);

  // Cancelling the booking now that it has started ends it: what happened during it keeps its booker.
  await new Promise((resolve) => setTimeout(resolve, 1100));
  expect(await post(alice, `action=delete&id=${booked.data!.id}`)).toEqual({ isSuccess: true });
  const [kept] = (await get<Booking[]>(lab.admin, `/Reservation?deviceId=${serial}&from=${since}`)).data!;
  expect(kept).toMatchObject({ id: booked.data!.id, start: booked.data!.start });
  expect(Date.parse(kept.end)).toBeLessThanOrEqual(Date.now());
  expect((await usage(`deviceId=${serial}`)).map((u) => u.reservedById ?? null)).toEqual([aliceId, aliceId, null]);
  expect(await post(alice, `action=delete&id=${booked.data!.id}`)).toMatchObject({
    isSuccess: false, errorMessage: `Reservation '${booked.data!.id}' ended at ${kept.end}: a past booking is history and cannot be cancelled.`,
  });
}, 30_000);

it("lets a Tester change only their own bookings, and an admin anyone's", async () => {
  const { data } = await book(alice, inMinutes(60), inMinutes(120));
  expect(await post(bob, `action=delete&id=${data!.id}`)).toEqual({
    isSuccess: false,
    errorMessage: `Reservation '${data!.id}' is ${alice.login}'s: changing another user's booking requires the DeviceReleaseAny entitlement.`, errorCode: 'ENTITLEMENT_REQUIRED',
  });
  expect((await post(bob, `action=update&id=${data!.id}`, { note: 'mine now' })).isSuccess).toBe(false);
  expect(await post(lab.admin, `action=delete&id=${data!.id}`)).toEqual({ isSuccess: true });
  expect((await get<Booking[]>(alice, '/Reservation')).data).toEqual([]);
}, 30_000);

async function waitUntil(condition: () => Promise<boolean>, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

it("tells another user's event stream of a booking made, moved and cancelled, as GET /Reservation shows it", async () => {
  const basic = { authorization: `Basic ${Buffer.from(`${bob.login}:${bob.token}`).toString('base64')}` };
  const stream = await openEventStream(lab.hub.url, basic);
  try {
    const created = (await book(alice, inMinutes(60), inMinutes(120), 'stream')).data!;
    const of = (list: { type: string; data: { id: string; object: any } }[]) => list.filter((e) => e.type === 'reservation' && e.data.id === created.id);
    const [made] = of(await stream.waitFor((list) => of(list).length >= 1, 10_000));
    expect(made.data.object).toEqual((await get<Booking[]>(bob, `/Reservation?deviceId=${serial}`)).data![0]);
    const later = inMinutes(150);
    await post(alice, `action=update&id=${created.id}`, { end: later });
    expect(of(await stream.waitFor((list) => of(list).length >= 2, 10_000))[1].data.object).toMatchObject({ id: created.id, end: later });
    await post(alice, `action=delete&id=${created.id}`);
    expect(of(await stream.waitFor((list) => of(list).length >= 3, 10_000))[2].data.object).toBeNull();
  } finally {
    stream.close();
  }
});

it('books a weekly series all or none, names the booking in the way, and cancels an occurrence and the later ones', async () => {
  const week = 7 * 24 * 60;
  // One clock reading for every time of the test, so they compare to the second.
  const base = Date.now();
  const inMinutes = (m: number) => wire(base + m * 60_000);
  // Bob holds the third week's slot: Alice's four-week series is refused whole, naming his booking.
  const blocking = (await book(bob, inMinutes(2 * week + 60), inMinutes(2 * week + 90))).data!;
  const refused = await post(alice, 'add', { deviceId: serial, start: inMinutes(60), end: inMinutes(120), weeks: 4 });
  expect(refused).toMatchObject({ isSuccess: false, errorMessage: `Device '${deviceName}' is already reserved from ${blocking.start} to ${blocking.end} by '${bob.login}'.` });
  expect((await get<Booking[]>(alice, `/Reservation?deviceId=${serial}`)).data!.map((b) => b.id)).toEqual([blocking.id]);
  await post(bob, `action=delete&id=${blocking.id}`);

  const series = await post<Booking & { seriesId: string }>(alice, 'add', { deviceId: serial, start: inMinutes(60), end: inMinutes(120), weeks: 4 });
  expect(series).toMatchObject({ isSuccess: true, data: { start: inMinutes(60), seriesId: expect.any(String) } });
  const listed = (await get<(Booking & { seriesId: string })[]>(bob, `/Reservation?deviceId=${serial}`)).data!;
  expect(listed.map((b) => [b.start, b.end, b.seriesId])).toEqual([0, 1, 2, 3].map((i) =>
    [inMinutes(60 + i * week), inMinutes(120 + i * week), series.data!.seriesId]));
  expect(await post(alice, 'add', { deviceId: serial, start: inMinutes(60), end: inMinutes(120), weeks: 13 }))
    .toMatchObject({ isSuccess: false, errorMessage: "Property 'weeks' must be a whole number from 1 to 12." });

  // The second occurrence and the later ones go; the first stays.
  expect(await post(alice, `action=delete&id=${listed[1].id}&series=true`)).toEqual({ isSuccess: true });
  expect((await get<Booking[]>(bob, `/Reservation?deviceId=${serial}`)).data!.map((b) => b.id)).toEqual([listed[0].id]);
});
