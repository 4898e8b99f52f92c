/**
 * Appium sessions waiting for a device and sessions left behind, against a whole lab with one simulated Android
 * device and the real Appium server on the gateway: a second client waits in the lab's first-come line (shown to
 * admins by GET /Appium/queue) and gets the device when the first deletes its session; a client that disconnects
 * leaves the line at once; a session idle past its newCommandTimeout is deleted on the gateway and the device
 * released (the hub's clock is moved, not waited for); a release by an admin, or the device unplugged past the grace
 * a reconnect gets, ends the session with a clear error.
 */
import { WdioUser } from '../../../labsim/test/appium/wdio-user';
import { startTestLab, waitFor, type TestLab } from '../support/lab';

jest.setTimeout(300_000);

let lab: TestLab;
let first: { login: string; token: string };
let second: { login: string; token: string };
let clockOffsetMs = 0;
const users: WdioUser[] = [];

beforeAll(async () => {
  lab = await startTestLab({ androidCount: 1, clock: () => new Date(Date.now() + clockOffsetMs) });
  first = await lab.addUser('first@example.com', ['Tester']);
  second = await lab.addUser('second@example.com', ['Tester']);
}, 120_000);
afterAll(async () => {
  for (const user of users) await user.close();
  await lab?.stop();
}, 60_000);

const port = () => Number(new URL(lab.hub.url).port);
const basic = (who: { login: string; token: string }) => `Basic ${Buffer.from(`${who.login}:${who.token}`).toString('base64')}`;

function sessionOf(who: { login: string; token: string }, capabilities: Record<string, unknown> = {}) {
  const user = new WdioUser();
  users.push(user);
  return { user, started: user.session({
    protocol: 'http', hostname: '127.0.0.1', port: port(), path: '/Appium', user: who.login, key: who.token,
    connectionRetryTimeout: 240_000, capabilities: { platformName: 'Android', ...capabilities },
  }) };
}

interface Waiter { userName: string; purpose: string; filter: string }
async function queue(): Promise<Waiter[]> {
  const res = await fetch(`${lab.hub.url}/Appium/queue`, { headers: { authorization: basic(lab.admin) } });
  expect(res.status).toBe(200);
  return ((await res.json()) as { value: Waiter[] }).value;
}
const uiServerListening = () => lab.world.device(lab.devices[0].serial).sockets.isListening({ kind: 'tcp', port: 6790 });
const retainer = async () => (await lab.hub.db.selectFrom('devices').innerJoin('users', 'users.id', 'devices.retained_by')
  .select('users.login').executeTakeFirst())?.login;

test('a second client waits in line behind the first and gets the device when the first deletes its session', async () => {
  const a = sessionOf(first);
  await a.started;
  const b = sessionOf(second, { 'devicelab:queueTimeout': 240 });
  await waitFor(async () => (await queue()).length === 1, 30_000, 'the second request in the line');
  expect(await queue()).toEqual([expect.objectContaining({ userName: second.login, purpose: 'automation', filter: 'os=Android' })]);
  expect(await retainer()).toBe(first.login);
  await a.user.browser('deleteSession');
  const session = await b.started;
  expect(session.sessionId).toMatch(/^[0-9a-f-]{36}$/);
  expect(await retainer()).toBe(second.login);
  expect(await queue()).toEqual([]);
  expect(await b.user.browser<string>('getPageSource')).toContain('<hierarchy');
  await b.user.browser('deleteSession');
  expect(await retainer()).toBeUndefined();
});

test('a client that disconnects while waiting leaves the line at once; a wait that ends says the device is busy', async () => {
  const a = sessionOf(first);
  await a.started;
  const gone = new AbortController();
  const waiting = fetch(`${lab.hub.url}/Appium/session`, {
    method: 'POST', signal: gone.signal, headers: { authorization: basic(second), 'content-type': 'application/json' },
    body: JSON.stringify({ capabilities: { alwaysMatch: { platformName: 'Android', 'devicelab:queueTimeout': 240 } } }),
  }).catch(() => undefined);
  await waitFor(async () => (await queue()).length === 1, 30_000, 'the waiting request in the line');
  gone.abort();
  await waiting;
  await waitFor(async () => (await queue()).length === 0, 5_000, 'the line empty after the client left');
  // A wait that runs out names why: the one matching device is busy.
  const timedOut = await fetch(`${lab.hub.url}/Appium/session`, {
    method: 'POST', headers: { authorization: basic(second), 'content-type': 'application/json' },
    body: JSON.stringify({ capabilities: { alwaysMatch: { platformName: 'Android', 'devicelab:queueTimeout': 1 } } }),
  });
  expect(timedOut.status).toBe(500);
  expect(((await timedOut.json()) as { value: unknown }).value).toMatchObject({ error: 'session not created', message: expect.stringMatching(/busy|in use/i) });
  expect(await retainer()).toBe(first.login);
  await a.user.browser('deleteSession');
});

test('a session idle past its newCommandTimeout is deleted on the gateway and its device released', async () => {
  const a = sessionOf(first, { 'appium:newCommandTimeout': 90 });
  const { sessionId } = await a.started;
  expect(await a.user.browser<string>('getPageSource')).toContain('<hierarchy');
  clockOffsetMs += 60_000; // not yet
  await new Promise((resolve) => setTimeout(resolve, 2_500)); // two sweeps
  expect(await retainer()).toBe(first.login);
  clockOffsetMs += 31_000;
  await waitFor(async () => (await retainer()) === undefined, 30_000, 'the idle session\'s device released');
  const res = await fetch(`${lab.hub.url}/Appium/session/${sessionId}/source`);
  expect(res.status).toBe(404);
  expect(((await res.json()) as { value: unknown }).value).toMatchObject({
    error: 'invalid session id', message: expect.stringMatching(/no command for 90 s \(newCommandTimeout\)/) });
  // Deleted on the gateway too: the driver's teardown stopped the UiAutomator2 server on the device.
  expect(uiServerListening()).toBe(false);
});

test('a release by an admin ends the session: the next command gets invalid session id, saying why', async () => {
  const a = sessionOf(first);
  const { sessionId } = await a.started;
  const release = await lab.api(lab.admin, `/Device?action=release&id=${lab.devices[0].serial}`, { method: 'POST' });
  expect(await release.json()).toEqual({ isSuccess: true });
  const res = await fetch(`${lab.hub.url}/Appium/session/${sessionId}/source`);
  expect(res.status).toBe(404);
  expect(((await res.json()) as { value: unknown }).value).toMatchObject({
    error: 'invalid session id', message: expect.stringMatching(/was released \(by an administrator/) });
  await waitFor(async () => !uiServerListening(), 30_000, 'the session deleted on the gateway');
  // The row closes once the gateway's answer to the delete is in, a moment after the device's server stopped.
  const state = async () => (await lab.hub.db.selectFrom('automation_sessions').select('state').where('session_id', '=', sessionId).executeTakeFirstOrThrow()).state;
  await waitFor(async () => (await state()) === 'closed', 30_000, 'the session row closed');
});

test('a device unplugged ends its session once it stayed away past the grace: invalid session id, device released', async () => {
  const a = sessionOf(first);
  const { sessionId } = await a.started;
  await lab.world.unplug(lab.devices[0].serial);
  await waitFor(async () => (await lab.hub.db.selectFrom('devices').select('availability').executeTakeFirstOrThrow()).availability === 'Offline',
    30_000, 'the device Offline');
  clockOffsetMs += 31_000; // past the grace a reconnect gets
  await waitFor(async () => (await retainer()) === undefined, 30_000, 'the unplugged device\'s session ended and the device released');
  const res = await fetch(`${lab.hub.url}/Appium/session/${sessionId}/source`);
  expect(res.status).toBe(404);
  expect(((await res.json()) as { value: unknown }).value).toMatchObject({
    error: 'invalid session id', message: expect.stringMatching(/went offline \(unplugged, or its gateway is gone\)/) });
});
