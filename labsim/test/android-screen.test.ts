/**
 * The simulated Android screen as a user's tools see it through the real adb server: `screencap -p` shows the
 * launcher, `input tap` on an icon opens that app and `input keyevent KEYCODE_HOME` goes back, `dumpsys window`
 * names the app in front, and Appium's Unicode IME turns a modified UTF-7 `input text` into non-ASCII text.
 */
import { execFile } from 'node:child_process';
import * as path from 'node:path';
import { PNG } from 'pngjs';
import type { LabWorld, SimAndroidDevice } from '../src';
import type { UiNode } from '../src/android/screen';
import { encodeModifiedUtf7 } from '../src/android/screen/utf7';
import { adbOn, startOnePixel7 } from './helpers';

const SETTINGS_APK = path.join(
  path.dirname(require.resolve('appium-uiautomator2-driver/package.json', { paths: [path.join(__dirname, '../../gateway')] })),
  'node_modules/io.appium.settings/apks/settings_apk-debug.apk',
);

let world: LabWorld;
let device: SimAndroidDevice;
let adb: ReturnType<typeof adbOn>;

beforeAll(async () => {
  ({ world, device, adb } = await startOnePixel7());
}, 60_000);
afterAll(() => world?.stop(), 60_000);

/** `adb exec-out <command>` as bytes. */
function execOut(command: string): Promise<Buffer> {
  const cli = world.adbCli;
  return new Promise((resolve, reject) => {
    execFile(cli.adbPath, ['-P', String(cli.serverPort), '-s', device.adbSerial, 'exec-out', command],
      { env: { ...process.env, ...cli.env() }, encoding: 'buffer', maxBuffer: 64 * 1024 * 1024, timeout: 30_000 },
      (err, stdout) => (err ? reject(err) : resolve(stdout)));
  });
}

async function screencap(): Promise<PNG> {
  return PNG.sync.read(await execOut('screencap -p'));
}

const pixel = (png: PNG, x: number, y: number): number[] => {
  const i = (Math.round(y) * png.width + Math.round(x)) * 4;
  return [png.data[i], png.data[i + 1], png.data[i + 2]];
};

const nodes = (n: UiNode): UiNode[] => [n, ...n.children.flatMap(nodes)];
const centre = (n: UiNode): [number, number] => [Math.round((n.bounds[0] + n.bounds[2]) / 2), Math.round((n.bounds[1] + n.bounds[3]) / 2)];
const byText = (text: string) => nodes(device.screen.hierarchy()).find((n) => n.text === text);
const field = () => nodes(device.screen.hierarchy()).find((n) => n.className === 'android.widget.EditText');

it('screencap -p is a PNG of the launcher at the display size, the same picture the screen model holds', async () => {
  await adb('shell', 'input', 'keyevent', 'KEYCODE_HOME');
  const png = await screencap();
  expect([png.width, png.height]).toEqual([1080, 2400]);
  expect(device.screen.foregroundPackage()).toBeNull();
  expect(Buffer.compare(png.data, device.screen.rgba())).toBe(0);
  const chrome = byText('Chrome');
  expect(chrome?.clickable).toBe(true);
  // The icon's tile differs from the wallpaper around it.
  const [x] = centre(chrome!);
  expect(pixel(png, x, chrome!.bounds[1] + 60)).not.toEqual(pixel(png, 5, 300));
});

it('input tap on an app icon opens that app, KEYCODE_HOME returns to the launcher', async () => {
  const chrome = byText('Chrome')!;
  const before = device.screen.frameNumber;
  const [x, y] = centre(chrome);
  expect((await adb('shell', 'input', 'tap', String(x), String(y))).code).toBe(0);
  expect(device.screen.foregroundPackage()).toBe('com.android.chrome');
  expect(device.screen.frameNumber).toBeGreaterThan(before);
  expect(nodes(device.screen.hierarchy()).find((n) => n.resourceId === 'com.android.chrome:id/title')?.text).toBe('Chrome');
  expect((await adb('shell', 'dumpsys', 'window', 'displays')).stdout).toMatch(/mCurrentFocus=Window\{\w+ u0 com\.android\.chrome\/com\.google\.android\.apps\.chrome\.Main\}/);
  expect((await adb('shell', 'pidof', 'com.android.chrome')).stdout.trim()).toMatch(/^\d+$/);
  // The title bar is drawn where the hierarchy says it is.
  const png = await screencap();
  const title = nodes(device.screen.hierarchy()).find((n) => n.resourceId.endsWith(':id/title'))!;
  expect(pixel(png, 5, title.bounds[1] + 5)).not.toEqual(pixel(png, 5, title.bounds[3] + 40));

  await adb('shell', 'input', 'keyevent', 'KEYCODE_HOME');
  expect(device.screen.foregroundPackage()).toBeNull();
  expect(byText('Chrome')).toBeDefined();
});

it('am start and monkey bring an app to the front; am force-stop of it shows the launcher', async () => {
  await adb('shell', 'am', 'start', '-n', 'org.mozilla.firefox/org.mozilla.fenix.HomeActivity');
  expect(device.screen.foregroundPackage()).toBe('org.mozilla.firefox');
  await adb('shell', 'monkey', '-p', 'com.android.settings', '-c', 'android.intent.category.LAUNCHER', '1');
  expect(device.screen.foregroundPackage()).toBe('com.android.settings');
  await adb('shell', 'am', 'force-stop', 'com.android.settings');
  expect(device.screen.foregroundPackage()).toBeNull();
});

it('input text types ASCII into the focused field; non-ASCII fails without the Unicode IME, as on a phone', async () => {
  await adb('shell', 'am', 'start', '-n', 'org.mozilla.firefox/org.mozilla.fenix.HomeActivity');
  await adb('shell', 'input', 'text', 'hello%sworld');
  expect(field()?.text).toBe('hello world');
  const refused = await adb('shell', 'input', 'text', 'caf\u00e9');
  expect(refused.stdout + refused.stderr).toMatch(/NullPointerException/);
  expect(field()?.text).toBe('hello world');
  await adb('shell', 'input', 'keyevent', 'KEYCODE_DEL', 'KEYCODE_DEL', 'KEYCODE_DEL', 'KEYCODE_DEL', 'KEYCODE_DEL', 'KEYCODE_DEL');
  expect(field()?.text).toBe('hello');
  await adb('shell', 'am', 'force-stop', 'org.mozilla.firefox');
});

it("Appium's Unicode IME: input text of modified UTF-7 shows the decoded text in the field", async () => {
  expect((await adb('install', SETTINGS_APK)).code).toBe(0);
  expect((await adb('shell', 'ime', 'enable', 'io.appium.settings/.UnicodeIME')).code).toBe(0);
  expect((await adb('shell', 'ime', 'set', 'io.appium.settings/.UnicodeIME')).code).toBe(0);
  expect((await adb('shell', 'ime', 'list', '-s')).stdout).toContain('io.appium.settings/.UnicodeIME');
  await adb('shell', 'am', 'start', '-n', 'org.mozilla.firefox/org.mozilla.fenix.HomeActivity');
  const text = 'Gr\u00fc\u00dfe & \u4f60\u597d \ud83d\ude00';
  const encoded = encodeModifiedUtf7(text);
  expect(encoded).toMatch(/^[\x20-\x7e]+$/);
  expect((await adb('shell', 'input', 'text', `'${encoded}'`)).code).toBe(0);
  expect(field()?.text).toBe(text);
  await adb('shell', 'ime', 'set', 'com.google.android.inputmethod.latin/com.android.inputmethod.latin.LatinIME');
  await adb('shell', 'am', 'force-stop', 'org.mozilla.firefox');
});

it('keys change the screen: POWER turns it off and on, BACK leaves an app, wm size answers as a device does', async () => {
  await adb('shell', 'input', 'keyevent', '26');
  const off = await screencap();
  expect(pixel(off, 540, 1200)).toEqual([0, 0, 0]);
  expect((await adb('shell', 'dumpsys', 'power')).stdout).toContain('mWakefulness=Asleep');
  await adb('shell', 'input', 'keyevent', 'KEYCODE_POWER');
  expect(device.screen.isOn).toBe(true);
  await adb('shell', 'monkey', '-p', 'com.android.settings', '1');
  await adb('shell', 'input', 'keyevent', 'KEYCODE_BACK');
  expect(device.screen.foregroundPackage()).toBeNull();
  expect((await adb('shell', 'wm', 'size')).stdout).toBe('Physical size: 1080x2400\n');
  expect((await adb('shell', 'wm', 'density')).stdout).toBe('Physical density: 420\n');
});

it('a flood of typed text is bounded and still draws at once', async () => {
  await adb('shell', 'monkey', '-p', 'com.android.settings', '1');
  device.screen.setText('');
  device.screen.typeText('\u00e9x'.repeat(200_000));
  expect(field()?.text.length).toBe(10_000);
  const started = Date.now();
  expect(device.screen.png().length).toBeGreaterThan(0);
  expect(Date.now() - started).toBeLessThan(20_000);
  await adb('shell', 'am', 'force-stop', 'com.android.settings');
});

it('recents (APP_SWITCH) lists the apps last used; a swipe over an icon is no tap', async () => {
  await adb('shell', 'monkey', '-p', 'com.android.settings', '1');
  await adb('shell', 'input', 'keyevent', 'KEYCODE_HOME');
  expect(device.screen.foregroundPackage()).toBeNull();
  const youtube = centre(byText('YouTube')!);
  await adb('shell', 'input', 'swipe', String(youtube[0]), String(youtube[1]), String(youtube[0] + 300), String(youtube[1] + 300), '100');
  expect(device.screen.foregroundPackage()).toBeNull();
  await adb('shell', 'input', 'keyevent', 'KEYCODE_APP_SWITCH');
  const card = nodes(device.screen.hierarchy()).find((n) => n.resourceId.endsWith(':id/task'));
  expect(card?.text).toBe('Settings');
  await adb('shell', 'input', 'tap', ...centre(card!).map(String));
  expect(device.screen.foregroundPackage()).toBe('com.android.settings');
  await adb('shell', 'am', 'force-stop', 'com.android.settings');
});

it('turned a quarter, the display is landscape: screencap, the hierarchy and input taps use its coordinates', async () => {
  device.screen.rotation = 1;
  try {
    const png = await screencap();
    expect([png.width, png.height]).toEqual([2400, 1080]);
    expect(device.screen.hierarchy().bounds).toEqual([0, 0, 2400, 1080]);
    const chrome = byText('Chrome')!;
    expect(chrome.bounds[2]).toBeLessThanOrEqual(2400);
    await adb('shell', 'input', 'tap', ...centre(chrome).map(String));
    expect(device.screen.foregroundPackage()).toBe('com.android.chrome');
    // The display draws a change at its next tick: the capture shows the picture of just before or just after it.
    const before = device.screen.rgba();
    const captured = (await screencap()).data;
    expect(captured.equals(before) || captured.equals(device.screen.rgba())).toBe(true);
  } finally {
    device.screen.rotation = 0;
    await adb('shell', 'input', 'keyevent', 'KEYCODE_HOME');
  }
  expect([(await screencap()).width]).toEqual([1080]);
});
