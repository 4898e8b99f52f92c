/**
 * Appium through the lab, as a user runs it: webdriverio pointed at the hub's `/Appium`, the real Appium server
 * and UiAutomator2 driver on the gateway, a simulated Android device. A session from W3C capabilities with Basic
 * auth and one from the product's deviceConnect* capabilities; find, click, source, screenshot relayed; the device
 * retained and marked while the session runs; delete releasing the device only after the driver's teardown; the
 * session log; another user refused; a hub restart mid-session.
 */
import { PNG } from 'pngjs';
import { WdioUser } from '../../../labsim/test/appium/wdio-user';
import { startTestLab, waitFor, type TestLab } from '../support/lab';

jest.setTimeout(300_000);

let lab: TestLab;
let tester: { login: string; token: string };
let other: { login: string; token: string };
const users: WdioUser[] = [];

beforeAll(async () => {
  lab = await startTestLab({ androidCount: 1 });
  tester = await lab.addUser('tester@example.com', ['Tester']);
  other = await lab.addUser('other@example.com', ['Tester']);
}, 120_000);
afterAll(async () => {
  for (const user of users) await user.close();
  await lab?.stop();
}, 60_000);

function wdio(): WdioUser {
  const user = new WdioUser();
  users.push(user);
  return user;
}

const port = () => Number(new URL(lab.hub.url).port);
const serial = () => lab.devices[0].serial;

interface DeviceRecord { id: string; retainedByUserName?: string; automationSessionSignature?: string; automationSessionStartTime?: string }
async function deviceRecord(): Promise<DeviceRecord> {
  const res = await lab.api(lab.admin, '/Device');
  return ((await res.json()) as DeviceRecord[])[0];
}

async function appiumLog(currentSessionOnly: boolean, reader = tester): Promise<string> {
  const res = await lab.api(reader, `/Device/AppiumLog?id=${serial()}&currentSessionOnly=${currentSessionOnly}`);
  const body = await res.json() as { isSuccess: boolean; data?: string };
  expect(body.isSuccess).toBe(true);
  return body.data ?? '';
}

async function command(sessionId: string, path: string, who?: { login: string; token: string }) {
  const headers: Record<string, string> = who ? { authorization: `Basic ${Buffer.from(`${who.login}:${who.token}`).toString('base64')}` } : {};
  const res = await fetch(`${lab.hub.url}/Appium/session/${sessionId}${path}`, { headers });
  return { status: res.status, body: await res.json() as { value: { error?: string; message?: string } | string } };
}

const uiServerListening = () => lab.world.device(serial()).sockets.isListening({ kind: 'tcp', port: 6790 });

test('a W3C session with Basic auth: find, click, source, screenshot; retained and marked; delete releases after teardown', async () => {
  const user = wdio();
  const session = await user.session({
    protocol: 'http', hostname: '127.0.0.1', port: port(), path: '/Appium', user: tester.login, key: tester.token, connectionRetryTimeout: 240_000,
    capabilities: { platformName: 'Android', 'appium:automationName': 'UiAutomator2', 'appium:newCommandTimeout': 120 },
  });
  expect(session.sessionId).toMatch(/^[0-9a-f-]{36}$/);
  const record = await deviceRecord();
  expect(record).toMatchObject({ retainedByUserName: tester.login, automationSessionSignature: session.sessionId.slice(0, 8) });
  expect(record.automationSessionStartTime).toMatch(/Z$/);

  const source = await user.browser<string>('getPageSource');
  expect(source).toContain('text="Chrome"');
  expect(await user.element('android=new UiSelector().text("Chrome")', 'getText')).toBe('Chrome');
  await user.element('//*[@text="Chrome" and @clickable="true"]', 'click');
  await waitFor(async () => lab.world.device(serial()).screen.foregroundPackage() === 'com.android.chrome', 30_000, 'Chrome in front');
  expect(await user.browser<string>('getPageSource')).toContain('package="com.android.chrome"');
  const shot = PNG.sync.read(Buffer.from(await user.browser<string>('takeScreenshot'), 'base64'));
  expect([shot.width, shot.height]).toEqual([1080, 2400]);

  // Another user's credentials cannot drive it; the owner's (or none: the session id) can.
  expect((await command(session.sessionId, '/window/rect', other)).status).toBe(403);
  expect((await command(session.sessionId, '/window/rect', tester)).status).toBe(200);

  // The session's log: its lines carry its id; the device's whole log has more (the server's start).
  const current = await appiumLog(true);
  expect(current).toContain(session.sessionId);
  const whole = await appiumLog(false);
  expect(whole.length).toBeGreaterThan(current.length);
  // The id is the session's only credential: another user reads the log and the session by its signature alone.
  const seenByOther = await appiumLog(false, other);
  expect(seenByOther).toContain(session.sessionId.slice(0, 8));
  expect(seenByOther).not.toContain(session.sessionId);
  const view = await (await lab.api(other, `/Device/AutomationSession?id=${serial()}`)).json() as { data?: { sessionId?: string; sessionSignature: string } };
  expect(view.data).toMatchObject({ sessionSignature: session.sessionId.slice(0, 8) });
  expect(view.data?.sessionId).toBeUndefined();
  const ownView = await (await lab.api(tester, `/Device/AutomationSession?id=${serial()}`)).json() as { data?: { sessionId?: string } };
  expect(ownView.data?.sessionId).toBe(session.sessionId);

  // While the delete runs, the device must not be free before the driver has torn its server down.
  let freeWhileServing: boolean | undefined;
  let watching = true;
  const watcher = (async () => {
    while (watching) {
      const device = await lab.hub.db.selectFrom('devices').select('retained_by').executeTakeFirstOrThrow();
      if (device.retained_by === null) {
        freeWhileServing = uiServerListening();
        return;
      }
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  })();
  await user.browser('deleteSession');
  const afterDelete = await deviceRecord();
  watching = false;
  await watcher;
  expect(afterDelete.retainedByUserName).toBeUndefined();
  expect(afterDelete.automationSessionSignature).toBeUndefined();
  expect(freeWhileServing).toBe(false);
  const gone = await command(session.sessionId, '/source');
  expect(gone).toEqual({ status: 404, body: { value: expect.objectContaining({ error: 'invalid session id', message: expect.stringMatching(/has ended: its client deleted it/) }) } });
  // The last session's lines stay readable after it ended.
  expect(await appiumLog(true)).toContain(session.sessionId);
});

test('the product\'s capabilities: deviceConnectUserName/ApiKey/Device, automationName Appium, legacy names without prefix', async () => {
  const user = wdio();
  const device = await deviceRecord();
  const session = await user.session({
    hostname: '127.0.0.1', port: port(), path: '/wd/hub', connectionRetryTimeout: 240_000,
    capabilities: { platformName: 'Android', 'appium:automationName': 'Appium', 'appium:deviceConnectUserName': other.login,
      'appium:deviceConnectApiKey': other.token, 'appium:deviceConnectDevice': device.id, 'appium:deviceName': 'Any' },
  });
  expect((await deviceRecord()).retainedByUserName).toBe(other.login);
  expect(session.capabilities).toMatchObject({ automationName: 'UiAutomator2' });
  expect(await user.browser<string>('getPageSource')).toContain('<hierarchy');
  // The first user's credentials cannot end it.
  const res = await fetch(`${lab.hub.url}/wd/hub/session/${session.sessionId}`, {
    method: 'DELETE', headers: { authorization: `Basic ${Buffer.from(`${tester.login}:${tester.token}`).toString('base64')}` } });
  expect(res.status).toBe(403);
  await user.browser('deleteSession');
  expect((await deviceRecord()).retainedByUserName).toBeUndefined();
});

test('the hub restarted mid-session keeps relaying it (the map is in PostgreSQL)', async () => {
  const user = wdio();
  const session = await user.session({
    protocol: 'http', hostname: '127.0.0.1', port: port(), path: '/Appium', user: tester.login, key: tester.token, connectionRetryTimeout: 240_000,
    capabilities: { platformName: 'Android' },
  });
  expect(await user.browser<string>('getPageSource')).toContain('<hierarchy');
  await lab.restartHub();
  // At once: while the gateway reconnects the device reads Offline for a moment, which the command waits out.
  expect(await user.browser<string>('getPageSource')).toContain('<hierarchy');
  expect((await deviceRecord()).automationSessionSignature).toBe(session.sessionId.slice(0, 8));
  await user.browser('deleteSession');
  expect((await deviceRecord()).retainedByUserName).toBeUndefined();
});
