/**
 * The real Appium server with the real XCUITest driver against a simulated iPhone, as a Linux gateway runs it:
 * WebDriverAgent is reached at `appium:webDriverAgentUrl`, a local port forwarded through usbmuxd to the device's
 * port 8100; webdriverio drives it as a user would.
 */
import { PNG } from 'pngjs';
import { LabWorld, iosSpecFromPreset } from '../src';
import type { SimIosDevice } from '../src/ios/device';
import { ephemeralPort } from '../src/util/ports';
import { startWorld, waitFor } from './helpers';
import { AppiumServer, startAppium } from './appium/appium-process';
import { forwardUsbmuxPort } from '../src/ios/usbmux-forward';
import { readMjpegFrames } from './appium/mjpeg-client';
import { WdioUser } from './appium/wdio-user';

jest.setTimeout(240_000);

let world: LabWorld;
let device: SimIosDevice;
let appium: AppiumServer;
let user: WdioUser;
let forward: { port: number; close(): Promise<void> };

beforeAll(async () => {
  world = await startWorld();
  const spec = iosSpecFromPreset('iphone-13', 0);
  await world.addIosDevice(spec);
  device = world.iosDevice(spec.udid);
  // A lab's devices are paired with their gateway's host; the driver reads the pair record through usbmuxd.
  await world.iosFleet.pairWithIdevicepair(spec.udid);
  forward = await forwardUsbmuxPort(world.iosFleet.usbmuxd.socketPath, spec.udid, 8100);
  appium = await startAppium(world.iosFleet.env());
  user = new WdioUser();
}, 180_000);

afterAll(async () => {
  await user?.close();
  await appium?.stop();
  await forward?.close();
  await world?.stop();
}, 60_000);

it('creates a session through WebDriverAgent, opens an app from its home screen icon, reads source and screenshot, and deletes it', async () => {
  const started = await user.session({
    hostname: '127.0.0.1', port: appium.port, connectionRetryTimeout: 180_000,
    capabilities: {
      platformName: 'iOS', 'appium:automationName': 'XCUITest', 'appium:udid': device.udid, 'appium:platformVersion': device.spec.productVersion,
      'appium:deviceName': device.spec.deviceName, 'appium:webDriverAgentUrl': `http://127.0.0.1:${forward.port}`, 'appium:newCommandTimeout': 120,
      // The driver forwards WDA's MJPEG port to this host port itself: a free one, not the default 9100.
      'appium:mjpegServerPort': await ephemeralPort(),
    },
  });
  expect(started.sessionId).toMatch(/^[0-9a-f-]{36}$/);
  expect(device.wda.session).not.toBeNull();

  const home = await user.browser<string>('getPageSource');
  expect(home).toMatch(/^<\?xml version="1.0" encoding="UTF-8"\?>\n<XCUIElementTypeApplication type="XCUIElementTypeApplication" name=" " label=" "/);
  expect(home).toContain('<XCUIElementTypeIcon type="XCUIElementTypeIcon" name="Chrome" label="Chrome"');

  // On the home screen WDA's screenshot is the device's own picture (what screenshotr captures too).
  await waitFor('the home screen picture through WDA', async () => {
    const shot = PNG.sync.read(Buffer.from(await user.browser<string>('takeScreenshot'), 'base64'));
    return Buffer.compare(shot.data, PNG.sync.read(device.screen.png()).data) === 0;
  }, 30_000, 500);

  expect(await user.element('-ios predicate string:type == "XCUIElementTypeIcon" AND label BEGINSWITH "Chr"', 'getAttribute', 'name')).toBe('Chrome');
  await user.element('~Chrome', 'click');
  expect(device.wda.screen.activeBundle()).toBe('com.google.chrome.ios');
  const app = await user.browser<string>('getPageSource');
  expect(app).toContain('<XCUIElementTypeApplication type="XCUIElementTypeApplication" name="Chrome" label="Chrome"');
  expect(await user.count('-ios class chain:**/XCUIElementTypeIcon')).toBe(0);
  expect(await user.element('//XCUIElementTypeNavigationBar/XCUIElementTypeStaticText', 'getText')).toBe('Chrome');

  const shot = PNG.sync.read(Buffer.from(await user.browser<string>('takeScreenshot'), 'base64'));
  expect([shot.width, shot.height]).toEqual([390 * 3, 844 * 3]);

  // WDA's screenshot stream on device port 9100, forwarded the same way.
  const mjpegForward = await forwardUsbmuxPort(world.iosFleet.usbmuxd.socketPath, device.udid, 9100);
  try {
    const mjpeg = await readMjpegFrames(mjpegForward.port, 2);
    expect(mjpeg.head).toContain('Server: WDA MJPEG Server');
    expect(mjpeg.frames[0].subarray(0, 2)).toEqual(Buffer.from([0xff, 0xd8]));
  } finally {
    await mjpegForward.close();
  }

  await user.browser('deleteSession');
  expect(device.wda.session).toBeNull();
});

it('starts a session on an app by bundleId, then manages apps and the home screen through mobile: commands', async () => {
  await user.session({
    hostname: '127.0.0.1', port: appium.port, connectionRetryTimeout: 180_000,
    capabilities: {
      platformName: 'iOS', 'appium:automationName': 'XCUITest', 'appium:udid': device.udid, 'appium:platformVersion': device.spec.productVersion,
      'appium:webDriverAgentUrl': `http://127.0.0.1:${forward.port}`, 'appium:mjpegServerPort': await ephemeralPort(), 'appium:bundleId': 'com.apple.Preferences',
    },
  });
  expect(device.wda.screen.activeBundle()).toBe('com.apple.Preferences');
  expect(await user.browser('execute', 'mobile: queryAppState', { bundleId: 'com.apple.Preferences' })).toBe(4);
  expect(await user.browser('execute', 'mobile: queryAppState', { bundleId: 'com.apple.mobilesafari' })).toBe(1);

  await user.browser('execute', 'mobile: launchApp', { bundleId: 'com.apple.mobilesafari' });
  expect(await user.element('//XCUIElementTypeNavigationBar', 'getAttribute', 'name')).toBe('Safari');
  expect(await user.browser('execute', 'mobile: queryAppState', { bundleId: 'com.apple.Preferences' })).toBe(3);
  expect(await user.browser('execute', 'mobile: terminateApp', { bundleId: 'com.apple.mobilesafari' })).toBe(true);
  expect(device.wda.screen.activeBundle()).toBe('com.apple.springboard');

  await user.browser('execute', 'mobile: activateApp', { bundleId: 'com.apple.Preferences' });
  await user.element('//XCUIElementTypeTextField', 'setValue', 'lab');
  expect(await user.element('//XCUIElementTypeTextField', 'getText')).toBe('lab');
  await user.browser('execute', 'mobile: pressButton', { name: 'home' });
  expect(await user.count('~Settings')).toBe(1);
  await user.browser('deleteSession');
});

it('refuses WebDriverAgent connections while WDA does not run on the device', async () => {
  device.wdaRunning = false;
  try {
    await expect(fetch(`http://127.0.0.1:${forward.port}/status`)).rejects.toThrow();
  } finally {
    device.wdaRunning = true;
  }
  const status = (await (await fetch(`http://127.0.0.1:${forward.port}/status`)).json()) as { value: Record<string, unknown> };
  expect(status.value).toMatchObject({ ready: true, state: 'success', message: 'WebDriverAgent is ready to accept commands', os: { name: 'iOS', version: '17.2.1' } });
});
