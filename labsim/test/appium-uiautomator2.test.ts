/**
 * The real Appium server with the real UiAutomator2 driver against a simulated Android device, driven by
 * webdriverio as a user would: the driver installs the real server APKs, starts the instrumentation, and every
 * command reaches the simulated UiAutomator2 server through adb forward.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { PNG } from 'pngjs';
import { LabWorld, specFromPreset, type SimAndroidDevice } from '../src';
import { ephemeralPort } from '../src/util/ports';
import { adbOn, startWorld, waitFor } from './helpers';
import { AppiumServer, startAppium } from './appium/appium-process';
import { WdioUser } from './appium/wdio-user';

jest.setTimeout(240_000);

let world: LabWorld;
let device: SimAndroidDevice;
let appium: AppiumServer;
let user: WdioUser;

beforeAll(async () => {
  world = await startWorld();
  const spec = specFromPreset('pixel-7', 0);
  await world.addAndroidDevice(spec);
  device = world.device(spec.serial);
  appium = await startAppium();
  user = new WdioUser();
}, 180_000);

afterAll(async () => {
  await user?.close();
  await appium?.stop();
  await world?.stop();
}, 60_000);

/** The capabilities a gateway passes: the device, its forwarded server port and the adb server it is on. */
async function capabilities(): Promise<Record<string, unknown>> {
  return {
    platformName: 'Android',
    'appium:automationName': 'UiAutomator2',
    'appium:udid': device.adbSerial,
    'appium:systemPort': await ephemeralPort(),
    'appium:adbPort': world.adbCli.serverPort,
    'appium:newCommandTimeout': 120,
  };
}

/** `adb exec-out screencap -p`: the device's own picture of its screen. */
async function screencap(): Promise<Buffer> {
  const { adbPath, serverPort } = world.adbCli;
  const { stdout } = await promisify(execFile)(adbPath, ['-P', String(serverPort), '-s', device.adbSerial, 'exec-out', 'screencap', '-p'],
    { env: { ...process.env, ...world.adbCli.env() }, encoding: 'buffer', maxBuffer: 64 * 1024 * 1024 });
  return stdout;
}

const serverProcesses = async () =>
  (await adbOn(world, device.adbSerial)('shell', 'ps', '-A')).stdout.split('\n').filter((l) => /\sio\.appium\.uiautomator2\.server$/.test(l.trim()));

it('creates a session, opens an app from its launcher icon, reads the source and a screenshot, and ends the server on delete', async () => {
  const started = await user.session({ hostname: '127.0.0.1', port: appium.port, connectionRetryTimeout: 180_000, capabilities: await capabilities() });
  expect(started.sessionId).toMatch(/^[0-9a-f-]{36}$/);
  // The driver installed the real server APKs and the instrumentation is running the server.
  expect(device.installedPackages().map((p) => p.packageName)).toEqual(expect.arrayContaining(['io.appium.uiautomator2.server', 'io.appium.uiautomator2.server.test', 'io.appium.settings']));
  expect(await serverProcesses()).toHaveLength(1);
  expect(appium.log.some((l) => l.message.includes('[Instrumentation] io.appium.uiautomator2.server.test.AppiumUiAutomator2Server:'))).toBe(true);

  const home = await user.browser<string>('getPageSource');
  expect(home).toMatch(/^<\?xml version='1.0' encoding='UTF-8' standalone='yes' \?>\n<hierarchy index="0" class="hierarchy" rotation="0" width="1080" height="2400">/);
  expect(home).toContain('text="Chrome"');
  expect(home).not.toContain('package="com.android.chrome"');

  expect(await user.element('android=new UiSelector().text("Chrome")', 'getText')).toBe('Chrome');
  await user.element('//*[@text="Chrome" and @clickable="true"]', 'click');
  await waitFor('Chrome in the foreground', async () => device.screen.foregroundPackage() === 'com.android.chrome');
  expect(await user.browser<string>('getPageSource')).toContain('package="com.android.chrome"');
  // What the user sees is the screen: the launcher icon is gone with the launcher.
  expect(await user.count('~Chrome')).toBe(0);

  // The driver's screenshot is the device's own picture (screencap); touch marks fade, so both are taken until
  // the screen has settled.
  await waitFor('the same picture through Appium and screencap', async () => {
    const ours = PNG.sync.read(Buffer.from(await user.browser<string>('takeScreenshot'), 'base64'));
    const theirs = PNG.sync.read(await screencap());
    expect([ours.width, ours.height]).toEqual([1080, 2400]);
    return Buffer.compare(ours.data, theirs.data) === 0;
  }, 30_000, 500);

  await user.browser('deleteSession');
  await waitFor('the server process gone', async () => (await serverProcesses()).length === 0, 30_000);
  expect(device.sockets.isListening({ kind: 'tcp', port: 6790 })).toBe(false);
});

it('a second session on the same device types into the app, taps with W3C actions and goes home with a key', async () => {
  await user.session({ hostname: '127.0.0.1', port: appium.port, connectionRetryTimeout: 180_000, capabilities: await capabilities() });
  // The APKs from the first session are kept: the driver found them installed at the same version.
  expect(appium.log.some((l) => l.message.includes('Server packages are not going to be (re)installed'))).toBe(true);
  expect(device.screen.foregroundPackage()).toBe('com.android.chrome');

  await user.element('id=com.android.chrome:id/input', 'setValue', 'hello lab');
  expect(await user.element('//android.widget.EditText', 'getText')).toBe('hello lab');

  const at = await user.element<{ x: number; y: number }>('android=new UiSelector().text("Tap me")', 'getLocation');
  const size = await user.element<{ width: number; height: number }>('android=new UiSelector().text("Tap me")', 'getSize');
  const button = { ...at, ...size };
  await user.browser('performActions', [{
    type: 'pointer', id: 'finger1', parameters: { pointerType: 'touch' },
    actions: [
      { type: 'pointerMove', duration: 0, x: Math.round(button.x + button.width / 2), y: Math.round(button.y + button.height / 2) },
      { type: 'pointerDown', button: 0 }, { type: 'pause', duration: 50 }, { type: 'pointerUp', button: 0 },
    ],
  }]);
  expect(await user.element('id=com.android.chrome:id/status', 'getText')).toBe('Tapped 1 time');

  await user.browser('pressKeyCode', 3);
  await waitFor('the launcher in front', async () => device.screen.foregroundPackage() === null);
  expect(await user.browser<string>('getPageSource')).toContain('text="Chrome"');
  await user.browser('deleteSession');
  await waitFor('the server process gone', async () => (await serverProcesses()).length === 0, 30_000);
});
