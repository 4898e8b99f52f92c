/**
 * Webhooks end to end: a whole lab and a real HTTP receiver. The receiver checks each delivery's signature as an
 * integrator would, and sees every device's events in the order /Report/History lists them, also after it was
 * down for a while (the hub retried with backoff meanwhile).
 */
import { createHmac } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { startTestLab, waitFor, type TestLab } from '../support/lab';

const SECRET = 'whsec-0123456789abcdef';
let lab: TestLab;
let receiver: Receiver;

interface Received { path: string; signature: string; eventType: string; body: string; event: { id: string; deviceId?: string; eventType: string } }

class Receiver {
  readonly received: Received[] = [];
  private server?: http.Server;
  port = 0;

  async start(port = 0): Promise<void> {
    this.server = http.createServer((req, res) => {
      let body = '';
      req.setEncoding('utf8');
      req.on('data', (chunk: string) => (body += chunk));
      req.on('end', () => {
        this.received.push({
          path: req.url ?? '',
          signature: String(req.headers['x-devicelab-signature']), eventType: String(req.headers['x-devicelab-event']),
          body, event: JSON.parse(body),
        });
        res.writeHead(204).end();
      });
    });
    await new Promise<void>((resolve) => this.server!.listen(port, '127.0.0.1', resolve));
    this.port = (this.server.address() as AddressInfo).port;
  }

  async stop(): Promise<void> {
    const server = this.server;
    if (!server) return;
    await new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    });
  }
}

beforeAll(async () => {
  lab = await startTestLab({ androidCount: 2, hubConfig: { webhookDelivery: { retryInitialMs: 100, retryMaxMs: 800, pollMs: 50 } } });
  receiver = new Receiver();
  await receiver.start();
}, 90_000);
afterAll(async () => {
  await receiver?.stop();
  await lab?.stop();
}, 60_000);

const json = async (res: Response | Promise<Response>): Promise<any> => (await res).json();
const postJson = (path: string, body: unknown) => lab.api(lab.admin, path, {
  method: 'POST', body: JSON.stringify(body), headers: { 'content-type': 'application/json' },
});
const device = (i: number) => lab.devices[i].serial;
async function retainAndRelease(serial: string): Promise<void> {
  for (const action of ['Retain', 'Release']) {
    const res = await json(lab.api(lab.admin, `/Device?action=${action}&id=${serial}`, { method: 'POST' }));
    expect(res.isSuccess).toBe(true);
  }
}
/** The device's events since `since`, oldest first, as /Report/History says. */
async function historyIds(serial: string, sinceIds: Set<string>): Promise<string[]> {
  const history = await json(lab.api(lab.admin, `/Report/History?deviceId=${serial}&take=1000`));
  return (history.events as { id: string }[]).map((e) => e.id).filter((id) => !sinceIds.has(id)).reverse();
}

let hookId: string;
let before: Set<string>;

it('only administrators manage webhooks; the secret is never returned; unknown parameters are refused', async () => {
  const user = await lab.addUser('plain-user', []);
  expect(await json(lab.api(user, '/Webhook'))).toMatchObject({ isSuccess: false });
  const history = await json(lab.api(lab.admin, '/Report/History?take=1000'));
  before = new Set((history.events as { id: string }[]).map((e) => e.id));

  const added = await json(postJson('/Webhook?add', { url: `http://127.0.0.1:${receiver.port}/hook`, eventTypes: [], secret: SECRET }));
  expect(added).toMatchObject({ isSuccess: true, data: { url: `http://127.0.0.1:${receiver.port}/hook`, eventTypes: [], hasSecret: true } });
  hookId = added.data.id;
  const listed = await lab.api(lab.admin, '/Webhook');
  const text = await listed.text();
  expect(text).not.toContain(SECRET);
  expect(JSON.parse(text).data.map((h: { id: string }) => h.id)).toEqual([hookId]);

  expect(await json(lab.api(lab.admin, '/Webhook?bogus=1'))).toMatchObject({ isSuccess: false });
  expect(await json(postJson('/Webhook?add', { url: 'ftp://x', secret: SECRET }))).toMatchObject({ isSuccess: false });
  expect(await json(postJson('/Webhook?add', { url: 'http://x', secret: SECRET, colour: 'red' }))).toMatchObject({ isSuccess: false });
  expect(await json(postJson('/Webhook?add', { url: 'http://x', secret: SECRET, eventTypes: ['NoSuch'] }))).toMatchObject({ isSuccess: false });
});

it('delivers every event signed, in order per device', async () => {
  await retainAndRelease(device(0));
  await retainAndRelease(device(1));
  await retainAndRelease(device(0));
  const expected0 = await historyIds(device(0), before);
  const expected1 = await historyIds(device(1), before);
  expect(expected0).toHaveLength(4);
  await waitFor(async () => receiver.received.length >= expected0.length + expected1.length, 15_000, 'the deliveries');
  for (const delivery of receiver.received) {
    expect(delivery.signature).toBe(`sha256=${createHmac('sha256', SECRET).update(delivery.body).digest('hex')}`);
    expect(delivery.eventType).toBe(delivery.event.eventType);
  }
  const ids = (serialIds: string[]) => receiver.received.map((r) => r.event.id).filter((id) => serialIds.includes(id));
  expect(ids(expected0)).toEqual(expected0);
  expect(ids(expected1)).toEqual(expected1);
});

it('retries while the receiver is down and delivers everything in order once it is back', async () => {
  const seen = new Set([...before, ...receiver.received.map((r) => r.event.id)]);
  const port = receiver.port;
  await receiver.stop();
  await retainAndRelease(device(0));
  await retainAndRelease(device(0));
  const expected = await historyIds(device(0), seen);
  expect(expected).toHaveLength(4);
  // The hub keeps trying: the delivery log shows failed attempts with their error.
  await waitFor(async () => {
    const log = await json(lab.api(lab.admin, `/Webhook/Delivery?id=${hookId}`));
    return (log.data as { status: string; attempts: number; lastError?: string }[])
      .some((d) => d.status === 'pending' && d.attempts >= 2 && d.lastError);
  }, 15_000, 'failed attempts in the delivery log');
  const countBefore = receiver.received.length;
  await receiver.start(port);
  await waitFor(async () => receiver.received.length >= countBefore + expected.length, 20_000, 'the held-back deliveries');
  const after = receiver.received.slice(countBefore).map((r) => r.event.id).filter((id) => expected.includes(id));
  expect(after).toEqual(expected);
  const log = await json(lab.api(lab.admin, `/Webhook/Delivery?id=${hookId}`));
  const mine = (log.data as { eventId: string; status: string; attempts: number }[]).filter((d) => expected.includes(d.eventId));
  expect(mine.map((d) => d.status)).toEqual(['delivered', 'delivered', 'delivered', 'delivered']);
  expect(mine.some((d) => d.attempts > 1)).toBe(true);
});

it('a deleted webhook receives nothing more', async () => {
  expect(await json(lab.api(lab.admin, `/Webhook?action=delete&id=${hookId}`, { method: 'POST' }))).toEqual({ isSuccess: true });
  expect((await json(lab.api(lab.admin, '/Webhook'))).data).toEqual([]);
  // A webhook that stays: its delivery of the same events shows the hub has delivered them, so the deleted one's
  // silence is not just slowness (deliveries are queued when the event is recorded and sent in that order).
  const stays = await json(postJson('/Webhook?add', { url: `http://127.0.0.1:${receiver.port}/stays`, eventTypes: [], secret: SECRET }));
  expect(stays.isSuccess).toBe(true);
  const count = receiver.received.length;
  await retainAndRelease(device(1));
  const released = (await historyIds(device(1), new Set(receiver.received.map((r) => r.event.id))));
  await waitFor(async () => receiver.received.some((r) => r.path === '/stays' && r.event.id === released.at(-1)), 15_000, 'the other webhook');
  expect(receiver.received.slice(count).filter((r) => r.path !== '/stays')).toEqual([]);
});
