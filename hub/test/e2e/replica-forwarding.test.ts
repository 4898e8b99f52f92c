/**
 * Two hub replicas (processes) on one PostgreSQL and one gateway, linked to replica A only (with the real Appium
 * server and UiAutomator2 driver and a simulated Android device); B, without a link to the device, leads the lab.
 * Through B: an Appium session created through A is driven with webdriverio (find, click, source) and deleted, the
 * device released; a session created through B is created on A and works; an idle session is torn down on the
 * device before its release; the history marks the sessions' retains; the dashboard's cookie opens the device's
 * live screen (frames arrive), while forged forwarding headers from a client are refused.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startGateway, type RunningGateway } from '@devicelab/gateway';
import { LabWorld, specFromPreset } from '@devicelab/labsim';
import { WdioUser } from '../../../labsim/test/appium/wdio-user';
import { createUser } from '../../src/auth/users';
import { registerGateway } from '../../src/gateways/gateway-tokens';
import { startHubProcess, type HubProcess } from '../support/hub-process';
import { waitFor } from '../support/lab';
import { basic, openScreen, screenUrl } from '../support/screen-client';
import { createTestDatabase, type TestDatabase } from '../support/test-database';

jest.setTimeout(300_000);

const ADMIN_TOKEN = '3b9e2d71-6c4a-4f0e-8d2b-7a1c5e9f0b34';
const DEVICE = specFromPreset('pixel-7', 31);

let t: TestDatabase;
let dataDir: string;
let a: HubProcess;
let b: HubProcess;
let world: LabWorld;
let gateway: RunningGateway | undefined;
let tester: { login: string; token: string };
let deviceId: string;
const users: WdioUser[] = [];

beforeAll(async () => {
  t = await createTestDatabase();
  dataDir = mkdtempSync(path.join(os.tmpdir(), 'devicelab-forwarding-'));
  const env = { DEVICELAB_LOG_LEVEL: 'warn' };
  // B first: it takes the lab's leader lock, so the leader is the replica without the device's link.
  b = await startHubProcess({ databaseUrl: t.url, dataDir: path.join(dataDir, 'hub-b'), adminToken: ADMIN_TOKEN, env });
  await new Promise((resolve) => setTimeout(resolve, 1500));
  a = await startHubProcess({ databaseUrl: t.url, dataDir: path.join(dataDir, 'hub-a'), adminToken: ADMIN_TOKEN, env });
  world = new LabWorld({ stateDir: path.join(dataDir, 'labsim'), timings: { rebootMs: 1500, bootCompleteMs: 1000 } });
  await world.start();
  await world.addAndroidDevice(DEVICE);
  const first = 20000 + (process.pid % 90) * 100;
  gateway = await startGateway({
    name: 'gateway-a', token: await registerGateway(t.db, 'gateway-a'), hubAddress: `127.0.0.1:${a.linkPort}`,
    cacheDir: path.join(dataDir, 'gateway-cache'), adbPort: world.adbServerPort, publicAddress: '127.0.0.1', publicPort: 9000,
    backoff: { initialMs: 100, maxMs: 500 }, automation: { ports: { first, last: first + 99 } },
  });
  const { value } = await waitFor(async () => t.db.selectFrom('devices').select('id').where('serial_number', '=', DEVICE.serial)
    .where('availability', '=', 'Online').where('installed_packages', 'is not', null).executeTakeFirst(), 60_000, 'the device Online');
  deviceId = value.id;
  const created = await createUser(t.db, { login: 'tester@example.com', roles: ['Tester'] });
  tester = { login: 'tester@example.com', token: created.token };
}, 150_000);

afterAll(async () => {
  for (const user of users) await user.close();
  await gateway?.stop();
  await world?.stop();
  await a?.stop();
  await b?.stop();
  await t?.drop();
  rmSync(dataDir, { recursive: true, force: true });
}, 60_000);

function wdio(): WdioUser {
  const user = new WdioUser();
  users.push(user);
  return user;
}

const where = (hub: HubProcess, appiumPath = '/Appium') =>
  ({ protocol: 'http', hostname: '127.0.0.1', port: Number(new URL(hub.url).port), path: appiumPath });
const succeeded = async (answer: Promise<Response>) => ((await (await answer).json()) as { isSuccess: boolean }).isSuccess;
const retainer = async () => (await t.db.selectFrom('devices').select(['retained_by', 'retain_id']).where('id', '=', deviceId).executeTakeFirstOrThrow());

test('the gateway is linked to replica A only', async () => {
  const rows = await t.db.selectFrom('gateways').innerJoin('hub_replicas', 'hub_replicas.id', 'gateways.hub_replica')
    .select(['gateways.name', 'hub_replicas.api_address']).execute();
  expect(rows).toEqual([{ name: 'gateway-a', api_address: expect.stringMatching(new RegExp(`:${new URL(a.url).port}$`)) }]);
});

test('a session created through A is driven through B (find, click, source) and deleted through B, releasing the device', async () => {
  const creator = wdio();
  const session = await creator.session({
    ...where(a), user: tester.login, key: tester.token, connectionRetryTimeout: 240_000,
    capabilities: { platformName: 'Android', 'appium:automationName': 'UiAutomator2', 'appium:newCommandTimeout': 120 },
  });
  const driver = wdio();
  await driver.attach({ ...where(b, '/wd/hub'), sessionId: session.sessionId, capabilities: { platformName: 'Android' } });
  expect(await driver.browser<string>('getPageSource')).toContain('text="Chrome"');
  expect(await driver.element('android=new UiSelector().text("Chrome")', 'getText')).toBe('Chrome');
  await driver.element('//*[@text="Chrome" and @clickable="true"]', 'click');
  await waitFor(async () => world.device(DEVICE.serial).screen.foregroundPackage() === 'com.android.chrome', 30_000, 'Chrome in front');
  expect(await driver.browser<string>('getPageSource')).toContain('package="com.android.chrome"');
  expect((await retainer()).retained_by).not.toBeNull();

  await driver.browser('deleteSession');
  expect((await retainer()).retained_by).toBeNull();
  const closed = await t.db.selectFrom('automation_sessions').select(['state', 'end_reason']).where('session_id', '=', session.sessionId).executeTakeFirstOrThrow();
  expect(closed).toEqual({ state: 'closed', end_reason: 'its client deleted it' });
  // Ended everywhere: the creator's replica says so too.
  const res = await fetch(`${a.url}/Appium/session/${session.sessionId}/source`);
  expect(res.status).toBe(404);
});

test('a session created through B, whose line hands it a device linked to A, is created on A and works', async () => {
  const user = wdio();
  const session = await user.session({
    ...where(b), connectionRetryTimeout: 240_000,
    capabilities: { platformName: 'Android', 'appium:deviceConnectUserName': tester.login, 'appium:deviceConnectApiKey': tester.token },
  });
  expect(session.sessionId).toMatch(/^[0-9a-f-]{36}$/);
  expect(await user.browser<string>('getPageSource')).toContain('<hierarchy');
  const row = await t.db.selectFrom('automation_sessions').select(['retain_id', 'state']).where('session_id', '=', session.sessionId).executeTakeFirstOrThrow();
  expect(row).toEqual({ retain_id: (await retainer()).retain_id, state: 'open' });
  await user.browser('deleteSession');
  expect((await retainer()).retained_by).toBeNull();
});

test('an idle session is deleted on the device by the replica holding its link before the device is released', async () => {
  const user = wdio();
  const session = await user.session({
    ...where(b), user: tester.login, key: tester.token, connectionRetryTimeout: 240_000,
    capabilities: { platformName: 'Android', 'appium:newCommandTimeout': 2 },
  });
  expect(await user.browser<string>('getPageSource')).toContain('<hierarchy');
  const { value: serverUpWhenReleased } = await waitFor(async () => {
    const { retained_by } = await retainer();
    return retained_by === null ? { up: world.device(DEVICE.serial).sockets.isListening({ kind: 'tcp', port: 6790 }) } : undefined;
  }, 30_000, 'the idle session ended');
  expect(serverUpWhenReleased.up).toBe(false); // torn down on the device first
  const row = await t.db.selectFrom('automation_sessions').select('end_reason').where('session_id', '=', session.sessionId).executeTakeFirstOrThrow();
  expect(row.end_reason).toBe('it had no command for 2 s (newCommandTimeout)');
});

test('history marks the retains of automation sessions, and only those (/Report/History, /Report/Usage)', async () => {
  // A person's retain beside the two sessions' retains above.
  const admin = (pathAndQuery: string, init?: RequestInit) => a.api(pathAndQuery, init);
  expect(await succeeded(fetch(`${b.url}/apiv1/Device?action=retain&id=${deviceId}`, { method: 'POST', headers: basic(tester) }))).toBe(true);
  expect(await succeeded(fetch(`${b.url}/apiv1/Device?action=release&id=${deviceId}`, { method: 'POST', headers: basic(tester) }))).toBe(true);
  const history = await (await admin(`/Report/History?deviceId=${deviceId}&take=100`)).json() as { events: Record<string, unknown>[] };
  const retains = history.events.filter((e) => e.eventType === 'DeviceRetained' && e.boolValue === true);
  expect(retains.map((e) => e.isAutomationSession)).toEqual([undefined, true, true, true]); // newest first: the person's, then the sessions'
  expect(history.events.filter((e) => e.isAutomationSession).every((e) => e.eventType === 'DeviceRetained' && e.message === 'Device Retained')).toBe(true);
  const usage = await (await admin(`/Report/Usage?deviceId=${deviceId}&take=100`)).json() as { deviceUsage: Record<string, unknown>[] };
  expect(usage.deviceUsage.filter((u) => u.eventType === 'DeviceRetained').map((u) => u.isAutomationSession)).toEqual([undefined, true, true, true]);
});

test('a forged forwarded retain gets nothing: the caller holds no such retain', async () => {
  const res = await fetch(`${a.url}/Appium/session`, {
    method: 'POST',
    headers: { ...basic(tester), 'content-type': 'application/json', 'DeviceLab-Forwarded-By': 'x', 'DeviceLab-Forwarded-Retain': '00000000-0000-4000-8000-000000000001' },
    body: JSON.stringify({ capabilities: { alwaysMatch: { platformName: 'Android' } } }),
  });
  expect(res.status).toBe(500);
  expect(await res.json()).toEqual({ value: expect.objectContaining({ error: 'session not created', message: expect.stringMatching(/not yours/) }) });
  expect((await retainer()).retained_by).toBeNull();
});

/** Signs in to the dashboard through `hub` (from its own origin): the session cookie. */
async function signIn(hub: HubProcess, who: { login: string; token: string }): Promise<string> {
  const res = await fetch(`${hub.url}/apiv1/Session`, {
    method: 'POST', body: new URLSearchParams({ login: who.login, token: who.token }), headers: { origin: hub.url },
  });
  const cookie = (res.headers.get('set-cookie') ?? '').split(';')[0];
  expect(cookie).toMatch(/^devicelab_session=/);
  return cookie;
}

test('the dashboard cookie opens the live screen through B, the owner checking the session; forged forwarding headers are refused', async () => {
  const viaB = (pathAndQuery: string, who = tester) => fetch(`${b.url}/apiv1${pathAndQuery}`, { method: 'POST', headers: basic(who) });
  expect(await succeeded(viaB(`/Device?action=retain&id=${deviceId}`))).toBe(true);
  const cookie = await signIn(b, tester);
  const viewer = openScreen(screenUrl(b.url, `id=${deviceId}`), { cookie, origin: b.url });
  await viewer.opened;
  await waitFor(async () => viewer.frames > 0, 30_000, 'a frame through B');
  viewer.close();

  // Another user's session, forwarded the same way, is refused by the owner's own check of who may watch.
  const { token } = await createUser(t.db, { login: 'other@example.com', roles: ['Tester'] });
  const otherCookie = await signIn(b, { login: 'other@example.com', token });
  await expect(openScreen(screenUrl(b.url, `id=${deviceId}`), { cookie: otherCookie, origin: b.url }).opened).rejects.toThrow('HTTP 403');
  // A cross-site page's WebSocket through B: refused there.
  await expect(openScreen(screenUrl(b.url, `id=${deviceId}`), { cookie, origin: 'https://evil.example' }).opened).rejects.toThrow('HTTP 403');

  // Straight to A with B's origin: not A's own, refused; with forged forwarding headers: refused too.
  await expect(openScreen(screenUrl(a.url, `id=${deviceId}`), { cookie, origin: b.url }).opened).rejects.toThrow('HTTP 403');
  const forged = {
    cookie, origin: 'https://evil.example', 'DeviceLab-Forwarded-By': 'some-replica', 'DeviceLab-Forwarded-Host': 'evil.example',
    'DeviceLab-Forwarded-At': String(Date.now()), 'DeviceLab-Forwarded-Signature': Buffer.alloc(32, 7).toString('base64url'),
  };
  await expect(openScreen(screenUrl(a.url, `id=${deviceId}`), forged).opened).rejects.toThrow('HTTP 403');
  const { 'DeviceLab-Forwarded-Signature': _unsigned, ...withoutSignature } = forged;
  await expect(openScreen(screenUrl(a.url, `id=${deviceId}`), withoutSignature).opened).rejects.toThrow('HTTP 403');
  // The owner itself, from its own origin, still opens it.
  const direct = openScreen(screenUrl(a.url, `id=${deviceId}`), { cookie, origin: a.url });
  await direct.opened;
  await waitFor(async () => direct.frames > 0, 30_000, 'a frame through A');
  direct.close();
  expect(await succeeded(viaB(`/Device?action=release&id=${deviceId}`))).toBe(true);
});
