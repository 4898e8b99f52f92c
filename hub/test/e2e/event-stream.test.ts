/**
 * GET /apiv1/Events against a whole lab: authentication, a device change arriving as an event, entitlement
 * filtering (a user without DeviceList hears no device), and resuming with Last-Event-ID.
 */
import { openEventStream, readEvents as readStream, type StreamEvent } from '../support/event-stream-client';
import { startTestLab, type TestLab } from '../support/lab';

let lab: TestLab;

beforeAll(async () => {
  lab = await startTestLab({ androidCount: 1 });
}, 90_000);
afterAll(() => lab?.stop(), 60_000);

/** A stream on the lab's hub (readEvents of the shared client, bound to this hub). */
const readEvents = (headers: Record<string, string>, until: (events: StreamEvent[]) => boolean, timeoutMs = 5000) =>
  readStream(lab.hub.url, headers, until, timeoutMs);

const basic = (c: { login: string; token: string }) => ({ authorization: `Basic ${Buffer.from(`${c.login}:${c.token}`).toString('base64')}` });
const deviceId = async () => ((await (await lab.api(lab.admin, '/Device')).json()) as { id: string }[])[0].id;

it('needs authentication', async () => {
  const { status } = await readEvents({}, () => true);
  expect(status).toBe(401);
});

it('a device change made right after the stream opened reaches it as a device event carrying the device', async () => {
  const id = await deviceId();
  // No pause: the change follows the stream's first frame at once (a change committed while the stream opened was
  // once lost, on a single replica too).
  const stream = await openEventStream(lab.hub.url, basic(lab.admin));
  try {
    expect(await (await lab.api(lab.admin, `/Device?action=disable&id=${id}`, { method: 'POST' })).json()).toEqual({ isSuccess: true });
    const events = await stream.waitFor((list) => list.some((e) => e.type === 'device' && e.data.object?.enabled === false), 20_000);
    const event = events.find((e) => e.type === 'device' && e.data.object?.enabled === false)!;
    expect(event.data.id).toBe(id);
    expect(event.data.object).toMatchObject({ id, enabled: false, operatingSystem: 'Android' });
    expect(event.id).toMatch(/^\d+$/);
    // And the next change on the same open stream.
    await lab.api(lab.admin, `/Device?action=enable&id=${id}`, { method: 'POST' });
    await stream.waitFor((list) => list.some((e) => e.type === 'device' && e.data.object?.enabled === true), 20_000);
  } finally {
    stream.close();
  }
});

it('a user without DeviceList hears no device events; an admin on the same change does', async () => {
  const id = await deviceId();
  const guest = await lab.addUser('no-devices', []);
  const admin = await openEventStream(lab.hub.url, basic(lab.admin));
  const blind = await openEventStream(lab.hub.url, basic(guest));
  try {
    await lab.api(lab.admin, `/Device?action=disable&id=${id}`, { method: 'POST' });
    await admin.waitFor((events) => events.some((e) => e.type === 'device' && e.data.id === id), 20_000);
    // The admin's stream has it; the guest's, opened before the change, still shows no device.
    expect(blind.status).toBe(200);
    expect(blind.events.filter((e) => e.type === 'device')).toEqual([]);
  } finally {
    admin.close();
    blind.close();
  }
  await lab.api(lab.admin, `/Device?action=enable&id=${id}`, { method: 'POST' });
});

it('a client that reconnects with Last-Event-ID is replayed the changes it missed, in order', async () => {
  const id = await deviceId();
  const first = await readEvents(basic(lab.admin), (events) => events.length > 0, 3000).catch(() => ({ events: [] as StreamEvent[] }));
  // Take a position: the latest event id a client saw (make one if none came).
  let position = first.events.at(-1)?.id;
  if (!position) {
    const stream = await openEventStream(lab.hub.url, basic(lab.admin));
    await lab.api(lab.admin, `/Device?action=disable&id=${id}`, { method: 'POST' });
    position = (await stream.waitFor((events) => events.some((e) => e.type === 'device'), 20_000).finally(() => stream.close()))
      .filter((e) => e.type === 'device').at(-1)!.id;
    await lab.api(lab.admin, `/Device?action=enable&id=${id}`, { method: 'POST' });
  }
  // While "disconnected": two changes.
  await lab.api(lab.admin, `/Device?action=disable&id=${id}`, { method: 'POST' });
  await lab.api(lab.admin, `/Device?action=enable&id=${id}`, { method: 'POST' });
  const { events } = await readEvents({ ...basic(lab.admin), 'last-event-id': position },
    (list) => list.filter((e) => e.type === 'device' && e.data.id === id).length >= 2);
  const mine = events.filter((e) => e.type === 'device' && e.data.id === id);
  expect(mine.length).toBeGreaterThanOrEqual(2);
  expect(mine.every((e) => BigInt(e.id) > BigInt(position!))).toBe(true);
  const ids = events.map((e) => BigInt(e.id));
  expect([...ids].sort((a, b) => (a < b ? -1 : 1))).toEqual(ids);
});
