/**
 * Watching an automation run live on a simulated Android device, with the real Appium server and UiAutomator2
 * driver on the gateway. Through the hub: the session's user (webdriverio through `/Appium`) opens the live screen
 * on `/Device/Screen` and gets the UiAutomator2 server's MJPEG stream (frames at the session's mjpegScalingFactor)
 * whose frames show what the session does, as the device's screencap does; the viewer's keys and touch reach the
 * device and the session's commands keep working; after DELETE the device's next viewer gets minicap. A session
 * naming a device its user retained already starts on that retain at once, its viewer kept; DELETE leaves it. On the
 * gateway: a capture that runs when a session starts changes to the MJPEG stream and back to minicap after DELETE,
 * its viewer attached throughout (a retain ends the hub's viewers of the previous retain, so this part watches the
 * gateway's captures directly and drives the device's Appium server without the hub).
 */
import { pictureDistance, decodePicture } from '../../../labsim/test/appium/picture-distance';
import { WdioUser } from '../../../labsim/test/appium/wdio-user';
import type { ScreenControl, ScreenStart } from '@devicelab/shared';
import type { ScreenViewer } from '../../../gateway/src/screen/device-screens';
import { basic, openScreen, screenUrl, type ScreenClient } from '../support/screen-client';
import { startTestLab, waitFor, type TestLab } from '../support/lab';

jest.setTimeout(300_000);

let lab: TestLab;
let tester: { login: string; token: string };
let deviceId: string;
const clients: ScreenClient[] = [];
const users: WdioUser[] = [];

const json = async (res: Response): Promise<any> => res.json();
const serial = () => lab.devices[0].serial;
const sim = () => lab.world.device(serial()).screen;
type Node = ReturnType<ReturnType<typeof sim>['hierarchy']>;
const nodes = (n: Node): Node[] => [n, ...n.children.flatMap(nodes)];
const lastSource = (client: ScreenClient) => client.starts.at(-1)?.source;
const framesSince = async (client: ScreenClient, count: number, what: string) => {
  const from = client.frames;
  await waitFor(async () => client.frames >= from + count, 30_000, what);
};

beforeAll(async () => {
  lab = await startTestLab({ androidCount: 1 });
  tester = await lab.addUser('tester@watch.test', ['Tester']);
  const device = await waitFor(async () => (await json(await lab.api(lab.admin, '/Device')) as { id: string; serialNumber: string }[])
    .find((d) => d.serialNumber === serial()), 60_000, 'the device listed');
  deviceId = device.value.id;
  await waitFor(async () => (await json(await lab.api(lab.admin, `/Device?id=${deviceId}`)))[0]?.readiness === 'Ready', 60_000, 'device Ready');
}, 120_000);

afterAll(async () => {
  for (const c of clients) c.ws.terminate();
  for (const user of users) await user.close();
  await lab?.stop();
}, 60_000);

test('the session\'s user watches it through the hub: MJPEG frames follow the session, input does not break it', async () => {
  const user = new WdioUser();
  users.push(user);
  const port = Number(new URL(lab.hub.url).port);
  await user.session({
    protocol: 'http', hostname: '127.0.0.1', port, path: '/Appium', user: tester.login, key: tester.token, connectionRetryTimeout: 240_000,
    capabilities: { platformName: 'Android', 'appium:automationName': 'UiAutomator2', 'appium:newCommandTimeout': 120 },
  });
  const watcher = openScreen(screenUrl(lab.hub.url, `id=${deviceId}`), basic(tester));
  clients.push(watcher);
  await watcher.opened;
  // The capture may start before the gateway has read the session's start from Appium's log: then it changes.
  await waitFor(async () => watcher.frames > 0 && lastSource(watcher) === 'uiautomator2-mjpeg', 30_000, 'the first MJPEG frame');
  const start = watcher.starts.at(-1)!;
  expect(start).toMatchObject({ source: 'uiautomator2-mjpeg', width: 1080, height: 2400, rotation: 0, viewOnly: false,
    controls: { touch: true, keys: true, text: true } });
  expect(String(start.note)).toMatch(/Appium session/);
  await framesSince(watcher, 5, 'MJPEG frames');
  // The server's frames, at the session's mjpegScalingFactor (50 %).
  expect(decodePicture(watcher.lastFrame!)).toMatchObject({ width: 540, height: 1200 });

  // The session opens Chrome: the viewer's frames change to Chrome's screen, the one the device's screencap shows.
  const launcher = sim().png();
  expect(pictureDistance(watcher.lastFrame!, launcher)).toBeLessThan(6);
  await user.element('//*[@text="Chrome" and @clickable="true"]', 'click');
  await waitFor(async () => sim().foregroundPackage() === 'com.android.chrome', 30_000, 'Chrome in front');
  await waitFor(async () => pictureDistance(watcher.lastFrame!, sim().png()) < 6, 20_000, 'the viewer\'s frame shows Chrome');
  expect(pictureDistance(watcher.lastFrame!, launcher)).toBeGreaterThan(15);

  // The viewer presses Home and taps Chrome's icon (minitouch): the session sees both and still works.
  watcher.send({ t: 'key', key: 'home' });
  await waitFor(async () => sim().foregroundPackage() !== 'com.android.chrome', 10_000, 'home pressed by the viewer');
  expect(await user.browser<string>('getPageSource')).toContain('text="Chrome"');
  const icon = nodes(sim().hierarchy()).find((n) => n.text === 'Chrome' && n.clickable)!;
  const at = { x: (icon.bounds[0] + icon.bounds[2]) / 2 / 1080, y: (icon.bounds[1] + icon.bounds[3]) / 2 / 2400 };
  watcher.send({ t: 'touch', a: 'd', ...at });
  watcher.send({ t: 'touch', a: 'u', ...at });
  await waitFor(async () => sim().foregroundPackage() === 'com.android.chrome', 10_000, 'Chrome opened by the viewer\'s tap');
  expect(await user.browser<string>('getPageSource')).toContain('package="com.android.chrome"');
  const shot = decodePicture(Buffer.from(await user.browser<string>('takeScreenshot'), 'base64'));
  expect([shot.width, shot.height]).toEqual([1080, 2400]);
  await framesSince(watcher, 3, 'frames after the viewer\'s input');
  expect(pictureDistance(watcher.lastFrame!, sim().png())).toBeLessThan(6);
  expect(watcher.errors).toEqual([]);

  // DELETE ends the session and its retain (the viewer's right goes with it); the device's next viewer gets minicap.
  await user.browser('deleteSession');
  await waitFor(async () => watcher.closedAt !== undefined, 30_000, 'the viewer ended with the retain');
  const admin = openScreen(screenUrl(lab.hub.url, `id=${deviceId}`), basic(lab.admin));
  clients.push(admin);
  await admin.opened;
  await waitFor(async () => admin.frames > 0 && /^minicap/.test(String(lastSource(admin))), 30_000, 'minicap after the session');
  expect(Math.max(decodePicture(admin.lastFrame!).width, decodePicture(admin.lastFrame!).height)).toBe(960);
  expect(pictureDistance(admin.lastFrame!, sim().png())).toBeLessThan(6);
  admin.close();
});

/**
 * Frames per second a viewer gets over `ms` while the screen changes all the time (a finger dragged across it by
 * minitouch, 60 moves a second: the touch dot moves), the same for every source.
 */
async function framesPerSecond(vuid: string, viewer: RecordingViewer, ms = 4_000): Promise<number> {
  await lab.gateway.screens.input(vuid, viewer, { t: 'touch', a: 'd', x: 0.5, y: 0.3 });
  const from = viewer.frames;
  const started = Date.now();
  for (let i = 0; Date.now() - started < ms; i++) {
    await lab.gateway.screens.input(vuid, viewer, { t: 'touch', a: 'm', x: 0.2 + ((i % 60) / 100), y: 0.3 + ((i % 40) / 100) });
    await new Promise((resolve) => setTimeout(resolve, 16));
  }
  const fps = ((viewer.frames - from) * 1000) / (Date.now() - started);
  await lab.gateway.screens.input(vuid, viewer, { t: 'touch', a: 'u', x: 0.5, y: 0.3 });
  return fps;
}

class RecordingViewer implements ScreenViewer {
  readonly viewOnly = false;
  starts: ScreenStart[] = [];
  frames = 0;
  lastFrame?: Buffer;
  ended?: string;
  control(message: ScreenControl): void {
    if (message.t === 'start') this.starts.push(message);
  }
  frame(image: Buffer): void {
    this.frames++;
    this.lastFrame = image;
  }
  end(reason: string): void {
    this.ended = reason;
  }
}

test('a capture running when a session starts changes to its MJPEG stream and back to minicap after DELETE, its viewer kept', async () => {
  const vuid = lab.world.device(serial()).adbSerial;
  const viewer = new RecordingViewer();
  const detach = lab.gateway.screens.attach(vuid, viewer);
  try {
    await waitFor(async () => viewer.frames > 0 && /^minicap/.test(viewer.starts.at(-1)?.source ?? ''), 30_000, 'minicap frames');
    const minicapFps = await framesPerSecond(vuid, viewer);
    const appiumPort = await lab.gateway.automation!.serverFor(vuid);
    const user = new WdioUser();
    users.push(user);
    await user.session({
      protocol: 'http', hostname: '127.0.0.1', port: appiumPort, path: '/', connectionRetryTimeout: 240_000,
      capabilities: { platformName: 'Android', 'appium:automationName': 'UiAutomator2' },
    });
    await waitFor(async () => viewer.starts.at(-1)?.source === 'uiautomator2-mjpeg', 30_000, 'the MJPEG source');
    const switched = viewer.frames;
    await waitFor(async () => viewer.frames >= switched + 5, 30_000, 'MJPEG frames');
    expect(decodePicture(viewer.lastFrame!)).toMatchObject({ width: 540, height: 1200 });
    // The server's stream runs at the session's mjpegServerFramerate (10 by default) at most; labsim encodes every
    // frame in this process (as it does minicap's), so the figure says more of this machine than of a phone.
    const mjpegFps = await framesPerSecond(vuid, viewer);
    console.log(`frames per second on one device, the screen changing: minicap ${minicapFps.toFixed(1)}, UiAutomator2 MJPEG ${mjpegFps.toFixed(1)} (${(mjpegFps / minicapFps).toFixed(2)}x)`);
    expect(mjpegFps).toBeGreaterThan(0);
    expect(await user.element('android=new UiSelector().text("Chrome")', 'getText')).toBe('Chrome');
    await user.browser('deleteSession');
    await waitFor(async () => /^minicap/.test(viewer.starts.at(-1)?.source ?? ''), 30_000, 'minicap again');
    // minicap sends a frame when the screen changes: its first one, then one for the recent apps the viewer opens.
    const longEdge = () => Math.max(decodePicture(viewer.lastFrame!).height, decodePicture(viewer.lastFrame!).width);
    await waitFor(async () => longEdge() === 960, 30_000, 'a minicap frame after the session');
    const back = viewer.frames;
    await lab.gateway.screens.input(vuid, viewer, { t: 'key', key: 'app_switch' });
    // A frame already being encoded when the key came may show the screen before it: the newest must show after.
    await waitFor(async () => viewer.frames > back && pictureDistance(viewer.lastFrame!, sim().png()) < 6, 30_000,
      'a minicap frame of the recent apps');
    expect(longEdge()).toBe(960);
    expect(viewer.starts.map((s) => s.source.replace('minicap-apk', 'minicap'))).toEqual(['minicap', 'uiautomator2-mjpeg', 'minicap']);
    expect(viewer.ended).toBeUndefined();
    expect(lab.gateway.screens.running()).toEqual([vuid]);
  } finally {
    detach();
  }
});

test('a session naming a device its user holds starts on that retain at once; its viewer keeps watching, and DELETE leaves the retain', async () => {
  const retained = await lab.api(tester, `/Device?action=retain&id=${deviceId}`, { method: 'POST' });
  expect(retained.status).toBe(200);
  const retainOf = async () => (await lab.hub.db.selectFrom('devices').select(['retain_id', 'retained_by']).where('id', '=', deviceId)
    .executeTakeFirstOrThrow());
  const before = await retainOf();
  const watcher = openScreen(screenUrl(lab.hub.url, `id=${deviceId}`), basic(tester));
  clients.push(watcher);
  await watcher.opened;
  await waitFor(async () => watcher.frames > 0 && /^minicap/.test(String(lastSource(watcher))), 30_000, 'minicap frames of the retain');

  // A one-second queue timeout: a request that waited in line for the device its user holds would fail with it.
  const user = new WdioUser();
  users.push(user);
  const port = Number(new URL(lab.hub.url).port);
  await user.session({
    protocol: 'http', hostname: '127.0.0.1', port, path: '/Appium', user: tester.login, key: tester.token, connectionRetryTimeout: 240_000,
    capabilities: { platformName: 'Android', 'appium:automationName': 'UiAutomator2', 'appium:udid': deviceId,
      'devicelab:queueTimeout': 1, 'appium:newCommandTimeout': 120 },
  });
  const session = await lab.hub.db.selectFrom('automation_sessions').select(['retain_id', 'state']).where('device_id', '=', deviceId)
    .where('state', '=', 'open').executeTakeFirstOrThrow();
  expect(session.retain_id).toBe(before.retain_id);
  const record = (await json(await lab.api(tester, `/Device?id=${deviceId}`)))[0];
  expect(record.automationSessionSignature).toBeTruthy();

  // The same retain gained a session: its viewer stays and changes to the session's MJPEG stream.
  await waitFor(async () => lastSource(watcher) === 'uiautomator2-mjpeg', 30_000, 'the viewer switched to the MJPEG stream');
  await framesSince(watcher, 3, 'MJPEG frames');
  expect(watcher.closedAt).toBeUndefined();
  await user.element('//*[@text="Chrome" and @clickable="true"]', 'click');
  await waitFor(async () => sim().foregroundPackage() === 'com.android.chrome', 30_000, 'Chrome opened by the session');
  await waitFor(async () => pictureDistance(watcher.lastFrame!, sim().png()) < 6, 20_000, 'the viewer\'s frame shows Chrome');

  // DELETE ends the session only: the retain the user had before stays, and so does its viewer (back on minicap).
  await user.browser('deleteSession');
  const ended = await lab.hub.db.selectFrom('automation_sessions').select(['state', 'end_reason']).where('device_id', '=', deviceId)
    .orderBy('created_at', 'desc').limit(1).executeTakeFirstOrThrow();
  expect(ended).toEqual({ state: 'closed', end_reason: 'its client deleted it' });
  expect(await retainOf()).toEqual(before);
  const after = (await json(await lab.api(tester, `/Device?id=${deviceId}`)))[0];
  expect(after.retainedByUserName).toBe(tester.login);
  expect(after.automationSessionSignature).toBeUndefined();
  await waitFor(async () => /^minicap/.test(String(lastSource(watcher))), 30_000, 'minicap again after the session');
  expect(watcher.closedAt).toBeUndefined();
  expect(watcher.errors).toEqual([]);

  const released = await lab.api(tester, `/Device?action=release&id=${deviceId}`, { method: 'POST' });
  expect(released.status).toBe(200);
  await waitFor(async () => watcher.closedAt !== undefined, 30_000, 'the viewer ended with the release');
});
