/**
 * The live screen of simulated Android devices through the real adb server: the minicap build chosen by ABI and
 * SDK (native for SDK 30, the apk for SDK 34; the simulated loader refuses a wrong ABI), one capture shared by three
 * viewers, touch and text through minitouch and the Unicode IME, a view-only viewer's input dropped, and the device
 * programs killed after the last viewer left.
 */
import Adb from '@devicefarmer/adbkit';
import { specFromPreset, type SimAndroidDevice } from '@devicelab/labsim';
import { createLogger, type ScreenControl, type ScreenInput, type ScreenStart } from '@devicelab/shared';
import { DeviceScreens, type ScreenViewer } from '../../src/screen/device-screens';
import { eventually } from '../support/eventually';
import { startDriverLab, type DriverLab } from '../support/driver-lab';

jest.setTimeout(120_000);

let lab: DriverLab;
let screens: DeviceScreens;
const native = specFromPreset('moto-g9-play', 0);
const apkOnly = specFromPreset('pixel-7', 1);

class RecordingViewer implements ScreenViewer {
  start: ScreenStart | undefined;
  frames: Buffer[] = [];
  ended: string | undefined;
  constructor(readonly viewOnly: boolean) {}
  control(message: ScreenControl): void {
    if (message.t === 'start') this.start = message;
  }
  frame(image: Buffer): void {
    this.frames.push(image);
    if (this.frames.length > 5) this.frames.shift();
  }
  end(reason: string): void {
    this.ended = reason;
  }
}

beforeAll(async () => {
  lab = await startDriverLab();
  for (const spec of [native, apkOnly]) await lab.world.addAndroidDevice(spec);
  await eventually(() => [native, apkOnly].every((s) => lab.recorder.latest(adbId(s.serial))?.readiness === 'Ready'), 60_000);
  screens = new DeviceScreens(() => lab.driver.screen, { logger: createLogger('test', 'silent'), lingerMs: 200 });
}, 120_000);
afterAll(async () => {
  await screens?.stop();
  await lab?.stop();
}, 60_000);

const device = (serial: string): SimAndroidDevice => lab.world.device(serial);
/** The device as adb (and so the gateway) names it. */
const adbId = (serial: string): string => lab.world.device(serial).adbSerial;
const programs = async (serial: string): Promise<string> =>
  (await Adb.util.readAll(await lab.driver.client.getDevice(adbId(serial)).shell('ps -A'))).toString();
const nodes = (n: ReturnType<SimAndroidDevice['screen']['hierarchy']>): ReturnType<SimAndroidDevice['screen']['hierarchy']>[] =>
  [n, ...n.children.flatMap(nodes)];

/** Where a node's centre is, as a viewer points at it (0..1 across the frame). */
function pointAt(serial: string, find: (n: ReturnType<SimAndroidDevice['screen']['hierarchy']>) => boolean): { x: number; y: number } {
  const screen = device(serial).screen;
  const node = nodes(screen.hierarchy()).find(find);
  if (!node) throw new Error('no such node on the screen');
  return { x: (node.bounds[0] + node.bounds[2]) / 2 / screen.width, y: (node.bounds[1] + node.bounds[3]) / 2 / screen.height };
}

async function tap(serial: string, viewer: ScreenViewer, at: { x: number; y: number }): Promise<void> {
  const touch = (a: 'd' | 'u'): ScreenInput => ({ t: 'touch', a, ...at, c: 0 });
  await screens.input(adbId(serial), viewer, touch('d'));
  await screens.input(adbId(serial), viewer, touch('u'));
}

test('one native minicap for three viewers of an SDK 30 arm64 device; frames reach all of them', async () => {
  const before = screens.startedCount;
  const viewers = [new RecordingViewer(false), new RecordingViewer(true), new RecordingViewer(true)];
  const detach = viewers.map((v) => screens.attach(adbId(native.serial), v));
  await eventually(() => viewers.every((v) => v.start && v.frames.length > 0), 30_000);
  expect(screens.startedCount - before).toBe(1);
  expect(viewers[0].start).toMatchObject({ source: 'minicap', width: 720, height: 1600, rotation: 0, viewOnly: false,
    controls: { touch: true, keys: true, text: true } });
  expect(viewers[1].start).toMatchObject({ viewOnly: true, controls: { touch: false, keys: false, text: false, rotate: false } });
  for (const v of viewers) expect(v.frames[0].subarray(0, 2)).toEqual(Buffer.from([0xff, 0xd8]));
  const ps = await programs(native.serial);
  expect(ps.match(/minicap/g)).toHaveLength(1);
  expect(ps).toMatch(/minitouch/);

  // A view-only viewer's tap on an app icon is dropped; the controller's opens the app, and a new frame shows it.
  device(native.serial).screen.pressKey(3);
  const icon = pointAt(native.serial, (n) => n.text === 'Settings');
  await tap(native.serial, viewers[1], icon);
  await new Promise((r) => setTimeout(r, 500));
  expect(device(native.serial).screen.foregroundPackage()).toBeNull();
  const framesBefore = viewers[2].frames.at(-1);
  await tap(native.serial, viewers[0], icon);
  await eventually(() => device(native.serial).screen.foregroundPackage() === 'com.android.settings', 10_000);
  await eventually(() => viewers[2].frames.at(-1) !== framesBefore, 10_000);

  for (const d of detach) d();
  await eventually(async () => screens.running().length === 0 && !/minicap|minitouch/.test(await programs(native.serial)), 15_000);
});

/** A baseline JPEG's size, from its start-of-frame segment. */
function jpegSize(image: Buffer): { width: number; height: number } {
  const at = image.indexOf(Buffer.from([0xff, 0xc0]));
  return { width: image.readUInt16BE(at + 7), height: image.readUInt16BE(at + 5) };
}

test('a turn of the display made on the device restarts the capture with the new projection; touch follows it', async () => {
  const viewer = new RecordingViewer(false);
  const watcher = new RecordingViewer(true);
  const detach = [screens.attach(adbId(native.serial), viewer), screens.attach(adbId(native.serial), watcher)];
  await eventually(() => viewer.start && viewer.frames.length > 0, 30_000);
  expect(viewer.start).toMatchObject({ rotation: 0, width: 720, height: 1600 });
  expect(jpegSize(viewer.frames.at(-1)!).height).toBeGreaterThan(jpegSize(viewer.frames.at(-1)!).width);
  const shell = async (command: string) => Adb.util.readAll(await lab.driver.client.getDevice(adbId(native.serial)).shell(command));
  await shell('input keyevent KEYCODE_HOME; settings put system user_rotation 1');
  try {
    // Both viewers get the new start message, then landscape frames.
    await eventually(() => [viewer, watcher].every((v) => v.start?.rotation === 90), 15_000);
    expect(watcher.start).toMatchObject({ viewOnly: true, width: 720, height: 1600 });
    await eventually(() => {
      const newest = viewer.frames.at(-1);
      return newest !== undefined && jpegSize(newest).width > jpegSize(newest).height;
    }, 15_000);
    expect(jpegSize(viewer.frames.at(-1)!)).toEqual({ width: 960, height: 432 });
    expect((await programs(native.serial)).match(/minicap/g)).toHaveLength(1);

    // A tap where the viewer sees the icon in the landscape frame opens that app.
    const screen = device(native.serial).screen;
    const chrome = nodes(screen.hierarchy()).find((n) => n.text === 'Chrome')!;
    await tap(native.serial, viewer, {
      x: (chrome.bounds[0] + chrome.bounds[2]) / 2 / screen.displayWidth, y: (chrome.bounds[1] + chrome.bounds[3]) / 2 / screen.displayHeight,
    });
    await eventually(() => screen.foregroundPackage() === 'com.android.chrome', 10_000);

    // Turned back by the Rotate input, the capture is upright again.
    await screens.input(adbId(native.serial), viewer, { t: 'rotate', rotation: 0 });
    await eventually(() => viewer.start?.rotation === 0 && jpegSize(viewer.frames.at(-1)!).height > jpegSize(viewer.frames.at(-1)!).width, 15_000);
  } finally {
    await shell('settings put system user_rotation 0; input keyevent KEYCODE_HOME');
  }
  for (const d of detach) d();
  await eventually(async () => screens.running().length === 0 && !/minicap|minitouch/.test(await programs(native.serial)), 15_000);
});

test('an SDK 34 device without a native minicap library runs the apk; keys and non-ASCII text reach it', async () => {
  const viewer = new RecordingViewer(false);
  const detach = screens.attach(adbId(apkOnly.serial), viewer);
  await eventually(() => viewer.start && viewer.frames.length > 0, 30_000);
  expect(viewer.start?.source).toBe('minicap-apk');
  expect(await programs(apkOnly.serial)).toMatch(/app_process/);
  await screens.input(adbId(apkOnly.serial), viewer, { t: 'key', key: 'home' });
  const firefox = pointAt(apkOnly.serial, (n) => n.text === 'Firefox');
  await tap(apkOnly.serial, viewer, firefox);
  await eventually(() => device(apkOnly.serial).screen.foregroundPackage() === 'org.mozilla.firefox', 10_000);
  const field = pointAt(apkOnly.serial, (n) => n.className === 'android.widget.EditText');
  await tap(apkOnly.serial, viewer, field);
  await screens.input(adbId(apkOnly.serial), viewer, { t: 'text', text: 'Grüße 日本' });
  await eventually(() => nodes(device(apkOnly.serial).screen.hierarchy())
    .some((n) => n.className === 'android.widget.EditText' && n.text.includes('Grüße 日本')), 30_000);
  detach();
  await eventually(async () => !/app_process|minitouch/.test(await programs(apkOnly.serial)), 15_000);
});
