/**
 * The display's rotation on simulated Android devices as a shell changes and reads it: the rotation settings turn
 * the display (auto-rotate off: `user_rotation`; on: the upright phone's sensor), `dumpsys input` tells the
 * orientation in the form of the device's release, and minicap keeps the rotation it was started with: a turned
 * display lies sideways in its frames until it is started again with the new projection.
 */
import * as path from 'node:path';
import { execFile } from 'node:child_process';
import * as jpeg from 'jpeg-js';
import { PNG } from 'pngjs';
import { LabWorld, specFromPreset, type SimAndroidDevice } from '../src';
import { adbOn, startWorld } from './helpers';

const gatewayModules = [path.join(__dirname, '../../gateway')];
const MINICAP = path.join(path.dirname(require.resolve('@devicefarmer/minicap-prebuilt/package.json', { paths: gatewayModules })), 'prebuilt');

let world: LabWorld;
const moto = specFromPreset('moto-g9-play', 0);
const pixel = specFromPreset('pixel-7', 1);
const android15 = { ...specFromPreset('pixel-7', 2), androidVersion: '15', sdk: 35, buildId: 'AP3A.241005.015' };

beforeAll(async () => {
  world = await startWorld();
  for (const spec of [moto, pixel, android15]) await world.addAndroidDevice(spec);
}, 60_000);
afterAll(async () => {
  await world?.stop();
}, 60_000);

const device = (serial: string): SimAndroidDevice => world.device(serial);

/** `adb exec-out <command>` as bytes. */
function execOut(d: SimAndroidDevice, command: string): Promise<Buffer> {
  const cli = world.adbCli;
  return new Promise((resolve, reject) => {
    execFile(cli.adbPath, ['-P', String(cli.serverPort), '-s', d.adbSerial, 'exec-out', command],
      { env: { ...process.env, ...cli.env() }, encoding: 'buffer', maxBuffer: 64 * 1024 * 1024, timeout: 30_000 },
      (err, stdout) => (err ? reject(err) : resolve(stdout)));
  });
}

const orientationLine = async (serial: string): Promise<string> =>
  (await adbOn(world, device(serial).adbSerial)('shell', "dumpsys input | grep -E 'SurfaceOrientation|InputDeviceOrientation'")).stdout.trim();

test('the rotation settings turn the display, and dumpsys input tells it as each release prints it', async () => {
  const cases: [string, string, string][] = [
    [moto.serial, 'SurfaceOrientation: 0', 'SurfaceOrientation: 1'],
    [pixel.serial, 'InputDeviceOrientation: 0', 'InputDeviceOrientation: 1'],
    [android15.serial, 'InputDeviceOrientation: Rotation0', 'InputDeviceOrientation: Rotation90'],
  ];
  for (const [serial, upright, turned] of cases) {
    const adb = adbOn(world, device(serial).adbSerial);
    expect(await orientationLine(serial)).toBe(upright);
    expect((await adb('shell', 'settings get system accelerometer_rotation; settings get system user_rotation')).stdout).toBe('0\n0\n');
    await adb('shell', 'settings put system user_rotation 1');
    expect(device(serial).screen.rotation).toBe(1);
    expect(await orientationLine(serial)).toBe(turned);
    expect((await adb('shell', 'wm size; dumpsys window displays | grep cur=')).stdout).toContain(`cur=${device(serial).screen.height}x${device(serial).screen.width}`);
    // Auto-rotate on: the upright phone's sensor wins over the user's rotation.
    await adb('shell', 'settings put system accelerometer_rotation 1');
    expect(await orientationLine(serial)).toBe(upright);
    await adb('shell', 'settings put system accelerometer_rotation 0');
    expect(device(serial).screen.rotation).toBe(1);
    await adb('shell', 'settings put system user_rotation 0');
    expect(await orientationLine(serial)).toBe(upright);
  }
  const full = (await adbOn(world, device(moto.serial).adbSerial)('shell', 'dumpsys input')).stdout;
  expect(full).toMatch(/^INPUT MANAGER \(dumpsys input\)$/m);
  expect(full).toMatch(/Viewport INTERNAL: displayId=0, .*orientation=0, logicalFrame=\[0, 0, 720, 1600\]/);
});

test('minicap keeps its projection: a turned display lies sideways until minicap is started with the new rotation', async () => {
  const d = device(moto.serial);
  const adb = adbOn(world, d.adbSerial);
  for (const [local, remote] of [['arm64-v8a/bin/minicap', 'minicap'], ['arm64-v8a/lib/android-30/minicap.so', 'minicap.so']]) {
    expect((await adb('push', path.join(MINICAP, local), `/data/local/tmp/${remote}`)).code).toBe(0);
  }
  const minicap = (p: string) => execOut(d, `LD_LIBRARY_PATH=/data/local/tmp /data/local/tmp/minicap -P ${p} -s`)
    .then((bytes) => jpeg.decode(bytes, { formatAsRGBA: true }));
  await adb('shell', 'input keyevent KEYCODE_HOME; settings put system user_rotation 1');
  try {
    const shot = PNG.sync.read(await execOut(d, 'screencap -p'));
    expect([shot.width, shot.height]).toEqual([1600, 720]);
    const upright = await minicap('720x1600@360x800/90');
    const stale = await minicap('720x1600@360x800/0');
    expect([upright.width, upright.height]).toEqual([800, 360]);
    expect([stale.width, stale.height]).toEqual([360, 800]);
    const rgb = (img: { width: number; data: Buffer }, x: number, y: number) => {
      const i = (Math.round(y) * img.width + Math.round(x)) * 4;
      return [img.data[i], img.data[i + 1], img.data[i + 2]];
    };
    const near = (a: number[], b: number[]) => a.every((v, i) => Math.abs(v - b[i]) <= 40);
    // Points of the display (status bar, launcher, navigation bar) where the colours differ.
    const points = [[20, 10], [800, 300], [1590, 710], [20, 700]];
    for (const [x, y] of points) {
      expect(near(rgb(upright, x / 2, y / 2), rgb(shot, x, y))).toBe(true);
      // Sideways: the display's top edge is the frame's right edge (its picture turned clockwise).
      expect(near(rgb(stale, 359 - y / 2, x / 2), rgb(shot, x, y))).toBe(true);
    }
    expect(near(rgb(shot, 20, 10), rgb(shot, 800, 300))).toBe(false);
  } finally {
    await adb('shell', 'settings put system user_rotation 0');
  }
});

test('the streams\' frames, encoded off the event loop, show the picture as the JavaScript encoder does, in every turn', async () => {
  const screen = device(pixel.serial).screen;
  screen.rotation = 1;
  try {
    for (const turn of [0, 1, 2, 3]) {
      const [w, h] = turn % 2 ? [540, 1200] : [1200, 540];
      // Two qualities: two encodings of one picture, not one cached.
      const js = jpeg.decode(screen.jpeg(80, w, h, turn), { formatAsRGBA: true });
      const streamed = jpeg.decode(await screen.jpegAsync(81, w, h, turn), { formatAsRGBA: true });
      expect([streamed.width, streamed.height]).toEqual([w, h]);
      let far = 0;
      for (let i = 0; i < js.data.length; i += 4 * 97) {
        if (Math.abs(js.data[i] - streamed.data[i]) + Math.abs(js.data[i + 1] - streamed.data[i + 1]) + Math.abs(js.data[i + 2] - streamed.data[i + 2]) > 90) far++;
      }
      expect(far).toBeLessThan(js.data.length / (4 * 97) / 100);
    }
  } finally {
    screen.rotation = 0;
  }
});
