/**
 * GET /apiv1/Events against a whole lab: authentication, a device change arriving as an event, entitlement
 * filtering (a user without DeviceList hears no device), and resuming with Last-Event-ID.
 */
import { startTestLab, type TestLab } from '../support/lab';

let lab: TestLab;

beforeAll(async () => {
  lab = await startTestLab({ androidCount: 1 });
}, 90_000);
afterAll(() => lab?.stop(), 60_000);

interface StreamEvent { id: string; type: string; data: { id: string; object: any } }

/** Reads an event stream until `until` says stop or `timeoutMs` passes; returns the events seen. */
async function readEvents(headers: Record<string, string>, until: (events: StreamEvent[]) => boolean, timeoutMs = 5000): Promise<{ status: number; events: StreamEvent[] }> {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), timeoutMs);
  const res = await fetch(`${lab.hub.url}/apiv1/Events`, { headers, signal: controller.signal });
  const events: StreamEvent[] = [];
  if (res.status !== 200 || !res.body) {
    clearTimeout(timer);
    await res.body?.cancel();
    return { status: res.status, events };
  }
  const decoder = new TextDecoder();
  let buffer = '';
  try {
    for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
      buffer += decoder.decode(chunk, { stream: true });
      let end: number;
      while ((end = buffer.indexOf('\n\n')) >= 0) {
        const block = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        const fields = Object.fromEntries(block.split('\n').filter((l) => !l.startsWith(':') && l.includes(': '))
          .map((l) => [l.slice(0, l.indexOf(': ')), l.slice(l.indexOf(': ') + 2)]));
        if (fields.event) events.push({ id: fields.id, type: fields.event, data: JSON.parse(fields.data) });
      }
      if (until(events)) break;
    }
  } catch (err) {
    if ((err as Error).name !== 'AbortError') throw err;
  } finally {
    clearTimeout(timer);
    controller.abort();
  }
  return { status: res.status, events };
}

const basic = (c: { login: string; token: string }) => ({ authorization: `Basic ${Buffer.from(`${c.login}:${c.token}`).toString('base64')}` });
const deviceId = async () => ((await (await lab.api(lab.admin, '/Device')).json()) as { id: string }[])[0].id;

it('needs authentication', async () => {
  const { status } = await readEvents({}, () => true);
  expect(status).toBe(401);
});

it('a device change reaches a subscriber as a device event carrying the device', async () => {
  const id = await deviceId();
  const reading = readEvents(basic(lab.admin), (events) => events.some((e) => e.type === 'device' && e.data.object?.enabled === false));
  await new Promise((resolve) => setTimeout(resolve, 300)); // the stream is open before the change
  expect(await (await lab.api(lab.admin, `/Device?action=disable&id=${id}`, { method: 'POST' })).json()).toEqual({ isSuccess: true });
  const { events } = await reading;
  const event = events.find((e) => e.type === 'device' && e.data.object?.enabled === false)!;
  expect(event.data.id).toBe(id);
  expect(event.data.object).toMatchObject({ id, enabled: false, operatingSystem: 'Android' });
  expect(event.id).toMatch(/^\d+$/);
  await lab.api(lab.admin, `/Device?action=enable&id=${id}`, { method: 'POST' });
});

it('a user without DeviceList hears no device events; an admin on the same change does', async () => {
  const id = await deviceId();
  const guest = await lab.addUser('no-devices', []);
  const admin = readEvents(basic(lab.admin), (events) => events.some((e) => e.type === 'device'), 5000);
  const blind = readEvents(basic(guest), () => false, 3000);
  await new Promise((resolve) => setTimeout(resolve, 300));
  await lab.api(lab.admin, `/Device?action=disable&id=${id}`, { method: 'POST' });
  const [seen, unseen] = await Promise.all([admin, blind]);
  expect(seen.events.some((e) => e.type === 'device' && e.data.id === id)).toBe(true);
  expect(unseen.status).toBe(200);
  expect(unseen.events.filter((e) => e.type === 'device')).toEqual([]);
  await lab.api(lab.admin, `/Device?action=enable&id=${id}`, { method: 'POST' });
});

it('a client that reconnects with Last-Event-ID is replayed the changes it missed, in order', async () => {
  const id = await deviceId();
  const first = await readEvents(basic(lab.admin), (events) => events.length > 0, 3000).catch(() => ({ events: [] as StreamEvent[] }));
  // Take a position: the latest event id a client saw (make one if none came).
  let position = first.events.at(-1)?.id;
  if (!position) {
    const reading = readEvents(basic(lab.admin), (events) => events.some((e) => e.type === 'device'));
    await new Promise((resolve) => setTimeout(resolve, 300));
    await lab.api(lab.admin, `/Device?action=disable&id=${id}`, { method: 'POST' });
    position = (await reading).events.filter((e) => e.type === 'device').at(-1)!.id;
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
