/**
 * The simulated UiAutomator2 server as the driver finds it: the real server APKs installed with `adb install`,
 * started by `am instrument -w` (which stays open while it runs), spoken to over `adb forward` in its JSON
 * protocol, and ended by DELETE /session or by `am force-stop`.
 */
import { ChildProcess, spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { LabWorld, SimAndroidDevice } from '../src';
import { adbOn, startOnePixel7, waitFor } from './helpers';
import { readMjpegFrames } from './appium/mjpeg-client';

jest.setTimeout(120_000);

const SERVER_APKS = path.join(fs.realpathSync(path.join(__dirname, '..', '..', 'gateway', 'node_modules', 'appium-uiautomator2-driver')), 'node_modules', 'appium-uiautomator2-server', 'apks');
const INSTRUMENTATION = 'io.appium.uiautomator2.server.test/androidx.test.runner.AndroidJUnitRunner';

let world: LabWorld;
let device: SimAndroidDevice;
let adb: ReturnType<typeof adbOn>;

beforeAll(async () => {
  ({ world, device, adb } = await startOnePixel7());
  for (const apk of ['appium-uiautomator2-server-v10.6.6.apk', 'appium-uiautomator2-server-debug-androidTest.apk']) {
    const r = await adb('install', '-r', path.join(SERVER_APKS, apk));
    expect(r.stdout).toContain('Success');
  }
}, 90_000);
afterAll(() => world?.stop(), 60_000);

/** `adb shell am instrument -w ...` left running, as the driver starts it; its output collected. */
function instrument(): { child: ChildProcess; output: () => string; exited: Promise<number | null> } {
  const { adbPath, serverPort } = world.adbCli;
  const child = spawn(adbPath, ['-P', String(serverPort), '-s', device.adbSerial, 'shell', 'am', 'instrument', '-w', '-e', 'disableAnalytics', 'true', INSTRUMENTATION],
    { env: { ...process.env, ...world.adbCli.env() } });
  let text = '';
  child.stdout!.on('data', (d: Buffer) => (text += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (text += d.toString()));
  return { child, output: () => text, exited: new Promise((resolve) => child.once('exit', (code) => resolve(code))) };
}

async function serverUrl(): Promise<string> {
  const r = await adb('forward', 'tcp:0', 'tcp:6790');
  return `http://127.0.0.1:${r.stdout.trim()}`;
}

const serverRunning = async () => (await adb('shell', 'ps', '-A')).stdout.split('\n').some((l) => l.trim().endsWith(' io.appium.uiautomator2.server'));

interface Answer {
  status: number;
  json: { sessionId: string | null; value: Record<string, unknown> };
}

async function call(url: string, method = 'GET', body?: unknown): Promise<Answer> {
  const r = await fetch(url, { method, headers: { 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) });
  return { status: r.status, json: (await r.json()) as Answer['json'] };
}

it('lists its instrumentation and speaks the server protocol until its session is deleted', async () => {
  expect((await adb('shell', 'pm', 'list', 'instrumentation')).stdout).toContain(`instrumentation:${INSTRUMENTATION} (target=io.appium.uiautomator2.server)`);
  const run = instrument();
  await waitFor('the test class line', async () => run.output().includes('io.appium.uiautomator2.server.test.AppiumUiAutomator2Server:'));
  expect(await serverRunning()).toBe(true);
  const base = await serverUrl();

  const status = await call(`${base}/status`);
  expect(status).toEqual({ status: 200, json: { sessionId: null, value: { ready: true, message: 'UiAutomator2 Server is ready to accept commands', build: { version: '10.6.6', versionCode: 278 } } } });
  expect((await call(`${base}/sessions`)).json.value).toEqual([]);
  const created = await call(`${base}/session`, 'POST', { capabilities: { firstMatch: [{ platformName: 'Android' }], alwaysMatch: {} } });
  const id = created.json.value.sessionId as string;
  expect(created.status).toBe(200);
  expect((await call(`${base}/wd/hub/sessions`)).json.value).toEqual([{ id, sessionId: id, capabilities: { platformName: 'Android' } }]);

  const failures: Array<[string, string, unknown, number, string]> = [
    [`/session/${id}/element`, 'POST', { strategy: 'id', selector: 'nothing_here' }, 404, 'no such element'],
    [`/session/${id}/element`, 'POST', { strategy: 'magic', selector: 'x' }, 400, 'invalid argument'],
    [`/session/${id}/element`, 'POST', { strategy: 'xpath', selector: '//*[' }, 400, 'invalid selector'],
    [`/session/${id}/element`, 'POST', { strategy: '-android uiautomator', selector: 'new UiSelector().frobnicate("x")' }, 400, 'invalid selector'],
    ['/session/not-a-session/source', 'GET', undefined, 404, 'invalid session id'],
    [`/session/${id}/element/0000/click`, 'POST', {}, 404, 'stale element reference'],
    ['/no/such/route', 'GET', undefined, 404, 'unknown command'],
  ];
  for (const [route, method, body, wantStatus, wantError] of failures) {
    const r = await call(`${base}${route}`, method, body);
    expect([route, r.status, r.json.value.error]).toEqual([route, wantStatus, wantError]);
  }
  const bad = await fetch(`${base}/session/${id}/element`, { method: 'POST', body: '{not json' });
  expect(bad.status).toBe(400);

  const found = await call(`${base}/session/${id}/elements`, 'POST', { strategy: 'class name', selector: 'android.widget.TextView', context: '' });
  expect((found.json.value as unknown as unknown[]).length).toBeGreaterThan(3);
  const source = await call(`${base}/session/${id}/source`);
  expect(source.json.value).toMatch(/<hierarchy index="0" class="hierarchy" rotation="0" width="1080" height="2400">/);
  expect((await call(`${base}/session/${id}/orientation`, 'POST', { orientation: 'LANDSCAPE' })).json.value).toBe('LANDSCAPE');
  expect((await call(`${base}/session/${id}/source`)).json.value).toMatch(/<hierarchy index="0" class="hierarchy" rotation="1" width="2400" height="1080">/);
  expect((await call(`${base}/session/${id}/orientation`)).json.value).toBe('LANDSCAPE');
  await call(`${base}/session/${id}/orientation`, 'POST', { orientation: 'PORTRAIT' });
  expect((await call(`${base}/session/${id}/appium/device/info`)).json.value).toMatchObject({ model: 'Pixel 7', apiVersion: '34', realDisplaySize: '1080x2400' });

  // The screenshot stream on port 7810: JPEG frames at half the screen's size (mjpegScalingFactor 50).
  const mjpeg = await readMjpegFrames(Number((await adb('forward', 'tcp:0', 'tcp:7810')).stdout.trim()), 2);
  expect(mjpeg.head).toMatch(/^HTTP\/1\.1 200 OK\r\n[^]*Content-Type: multipart\/x-mixed-replace; boundary=--BoundaryString$/);
  for (const frame of mjpeg.frames) {
    expect(frame.subarray(0, 2)).toEqual(Buffer.from([0xff, 0xd8]));
    expect(frame.subarray(-2)).toEqual(Buffer.from([0xff, 0xd9]));
  }

  expect((await call(`${base}/session/${id}`, 'DELETE')).status).toBe(200);
  expect(await run.exited).toBe(0);
  expect(run.output()).toMatch(/OK \(1 test\)\n+INSTRUMENTATION_CODE: -1/);
  await waitFor('the server process gone', async () => !(await serverRunning()));
});

it('ends the run when the test package is force-stopped, as a crashed process', async () => {
  const run = instrument();
  await waitFor('the server listening', async () => device.sockets.isListening({ kind: 'tcp', port: 6790 }));
  await adb('shell', 'am', 'force-stop', 'io.appium.uiautomator2.server.test');
  expect(await run.exited).toBe(0);
  expect(run.output()).toContain('INSTRUMENTATION_RESULT: shortMsg=Process crashed.\nINSTRUMENTATION_CODE: 0');
  expect(device.sockets.isListening({ kind: 'tcp', port: 6790 })).toBe(false);
  expect(await serverRunning()).toBe(false);
});

it('a second server cannot start while one runs: the new run replaces the old one', async () => {
  const first = instrument();
  await waitFor('the first server listening', async () => device.sockets.isListening({ kind: 'tcp', port: 6790 }));
  const second = instrument();
  // am instrument force-stops the target first: the old run ends as a crashed process, the new one serves.
  expect(await first.exited).toBe(0);
  expect(first.output()).toContain('Process crashed.');
  await waitFor('the second server listening', async () => second.output().includes('AppiumUiAutomator2Server:') && device.sockets.isListening({ kind: 'tcp', port: 6790 }));
  await adb('shell', 'am', 'force-stop', 'io.appium.uiautomator2.server');
  expect(await second.exited).toBe(0);
});
