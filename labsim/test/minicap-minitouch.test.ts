/**
 * minicap and minitouch from @devicefarmer's prebuilt packages, pushed and started on simulated devices through
 * the real adb server as STF-style tools do, read and driven over `adb forward tcp:X localabstract:<name>`.
 */
import { ChildProcess, execFile, spawn } from 'node:child_process';
import { once } from 'node:events';
import net from 'node:net';
import * as path from 'node:path';
import * as jpeg from 'jpeg-js';
import { PNG } from 'pngjs';
import { LabWorld, specFromPreset, type SimAndroidDevice } from '../src';
import type { UiNode } from '../src/android/screen';
import { adbOn, startWorld, waitFor } from './helpers';

const gatewayModules = [path.join(__dirname, '../../gateway')];
const MINICAP = path.join(path.dirname(require.resolve('@devicefarmer/minicap-prebuilt/package.json', { paths: gatewayModules })), 'prebuilt');
const MINITOUCH = path.join(path.dirname(require.resolve('@devicefarmer/minitouch-prebuilt/package.json', { paths: gatewayModules })), 'prebuilt');

let world: LabWorld;
const started: ChildProcess[] = [];

beforeAll(async () => {
  world = await startWorld();
  for (const [preset, i] of [['moto-g9-play', 0], ['pixel-7', 1]] as const) await world.addAndroidDevice(specFromPreset(preset, i));
}, 60_000);
afterAll(async () => {
  for (const child of started) if (child.exitCode === null) child.kill();
  await world?.stop();
}, 60_000);

const deviceOf = (preset: string): SimAndroidDevice => world.device(world.devices().find((d) => d.model === (preset === 'moto' ? 'moto g(9) play' : 'Pixel 7'))!.serial);

/** `adb shell <command>` left running (a server on the device); its output is collected. */
function startOnDevice(device: SimAndroidDevice, command: string): { child: ChildProcess; output: () => string } {
  const cli = world.adbCli;
  const child = spawn(cli.adbPath, ['-P', String(cli.serverPort), '-s', device.adbSerial, 'shell', command], { env: { ...process.env, ...cli.env() } });
  started.push(child);
  let output = '';
  child.stdout!.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (output += d.toString()));
  return { child, output: () => output };
}

async function forward(device: SimAndroidDevice, remote: string): Promise<net.Socket> {
  const r = await adbOn(world, device.adbSerial)('forward', 'tcp:0', remote);
  expect(r.code).toBe(0);
  const socket = net.connect(Number(r.stdout.trim()), '127.0.0.1');
  await once(socket, 'connect');
  return socket;
}

/** Reads exactly n bytes from a socket. */
class Reader {
  private buffered = Buffer.alloc(0);
  private wake: (() => void) | undefined;
  constructor(socket: net.Socket) {
    socket.on('data', (d: Buffer) => {
      this.buffered = Buffer.concat([this.buffered, d]);
      this.wake?.();
    });
  }
  async read(n: number, timeoutMs = 30_000): Promise<Buffer> {
    const deadline = Date.now() + timeoutMs;
    while (this.buffered.length < n) {
      if (Date.now() > deadline) throw new Error(`timed out reading ${n} bytes`);
      await new Promise<void>((r) => {
        this.wake = r;
        setTimeout(r, 200);
      });
    }
    const out = this.buffered.subarray(0, n);
    this.buffered = this.buffered.subarray(n);
    return out;
  }
  async frame(): Promise<{ width: number; height: number; data: Buffer }> {
    const length = (await this.read(4)).readUInt32LE(0);
    return jpeg.decode(await this.read(length), { formatAsRGBA: true });
  }
}

const nodes = (n: UiNode): UiNode[] => [n, ...n.children.flatMap(nodes)];
const iconOf = (device: SimAndroidDevice, label: string) => nodes(device.screen.hierarchy()).find((n) => n.text === label && n.clickable)!;
const rgb = (img: { width: number; data: Buffer }, x: number, y: number) => {
  const i = (Math.round(y) * img.width + Math.round(x)) * 4;
  return [img.data[i], img.data[i + 1], img.data[i + 2]];
};
// JPEG at quality 80 with 4:2:0 chroma moves colours near edges by a few tens; the colours compared differ by more.
const near = (a: number[], b: number[]) => a.every((v, i) => Math.abs(v - b[i]) <= 40);

/** `adb exec-out <command>` as bytes. */
function execOut(device: SimAndroidDevice, command: string): Promise<Buffer> {
  const cli = world.adbCli;
  return new Promise((resolve, reject) => {
    execFile(cli.adbPath, ['-P', String(cli.serverPort), '-s', device.adbSerial, 'exec-out', command],
      { env: { ...process.env, ...cli.env() }, encoding: 'buffer', maxBuffer: 64 * 1024 * 1024, timeout: 30_000 },
      (err, stdout) => (err ? reject(err) : resolve(stdout)));
  });
}

const screencap = async (device: SimAndroidDevice): Promise<PNG> => PNG.sync.read(await execOut(device, 'screencap -p'));

async function push(device: SimAndroidDevice, local: string, remote: string): Promise<void> {
  expect((await adbOn(world, device.adbSerial)('push', local, remote)).code).toBe(0);
}

it('a pushed minicap for the device ABI and SDK streams its banner and JPEG frames of the same picture as screencap', async () => {
  const device = deviceOf('moto');
  const adb = adbOn(world, device.adbSerial);
  await adb('shell', 'input', 'keyevent', 'KEYCODE_HOME');
  await push(device, path.join(MINICAP, 'arm64-v8a/bin/minicap'), '/data/local/tmp/minicap');
  await push(device, path.join(MINICAP, 'arm64-v8a/lib/android-30/minicap.so'), '/data/local/tmp/minicap.so');
  const run = startOnDevice(device, 'LD_LIBRARY_PATH=/data/local/tmp exec /data/local/tmp/minicap -P 720x1600@360x800/0 -S -r 15');
  await waitFor('minicap to listen', async () => device.sockets.isListening({ kind: 'localabstract', name: 'minicap' }) || undefined, 20_000);
  expect((await adb('shell', 'ps', '-A')).stdout).toMatch(/\bminicap\n/);

  const socket = await forward(device, 'localabstract:minicap');
  const reader = new Reader(socket);
  const banner = await reader.read(24);
  expect([banner[0], banner[1]]).toEqual([1, 24]);
  expect([6, 10, 14, 18].map((o) => banner.readUInt32LE(o))).toEqual([720, 1600, 360, 800]);
  const pid = banner.readUInt32LE(2);
  const first = await reader.frame();
  expect([first.width, first.height]).toEqual([360, 800]);

  const shot = await screencap(device);
  const spotify = iconOf(device, 'Spotify');
  const tileX = (spotify.bounds[0] + spotify.bounds[2]) / 2;
  const tileY = spotify.bounds[1] + 40;
  const far = [[10, 400], [tileX, tileY], [10, 5]].filter(([x, y]) => !near(rgb(first, x / 2, y / 2), rgb(shot, x, y)));
  expect(far.map(([x, y]) => [x, y, rgb(first, x / 2, y / 2), rgb(shot, x, y)])).toEqual([]);

  // A change of the screen sends a new frame: the app opened by a tap.
  await adb('shell', 'input', 'tap', String(tileX), String(tileY));
  expect(device.screen.foregroundPackage()).toBe('com.spotify.music');
  const title = nodes(device.screen.hierarchy()).find((n) => n.resourceId.endsWith(':id/title'))!;
  const after = await waitFor('a frame of the app', async () => {
    const f = await reader.frame();
    return !near(rgb(f, 5, (title.bounds[1] + 10) / 2), rgb(first, 5, (title.bounds[1] + 10) / 2)) && f;
  });
  const now = await screencap(device);
  expect(near(rgb(after, 5, (title.bounds[1] + 10) / 2), rgb(now, 5, title.bounds[1] + 10))).toBe(true);
  socket.destroy();

  expect((await adb('shell', 'kill', String(pid))).code).toBe(0);
  await waitFor('minicap to end', async () => run.child.exitCode !== null || undefined, 20_000);
  expect(device.sockets.isListening({ kind: 'localabstract', name: 'minicap' })).toBe(false);
  expect(run.output()).toContain('INFO: Using projection 720x1600@360x800/0');
  await adb('shell', 'input', 'keyevent', 'KEYCODE_HOME');
});

it('a minicap for another ABI, or with the library of another SDK, fails as the phone fails', async () => {
  const pixel = adbOn(world, deviceOf('pixel').adbSerial);
  await push(deviceOf('pixel'), path.join(MINICAP, 'x86_64/bin/minicap'), '/data/local/tmp/minicap');
  const wrongMachine = await pixel('shell', '/data/local/tmp/minicap -i');
  expect(wrongMachine.stdout + wrongMachine.stderr).toContain('/data/local/tmp/minicap: not executable: 64-bit ELF file');
  await push(deviceOf('pixel'), path.join(MINICAP, 'armeabi-v7a/bin/minicap'), '/data/local/tmp/minicap');
  const thirtyTwo = await pixel('shell', '/data/local/tmp/minicap -i');
  expect(thirtyTwo.stdout + thirtyTwo.stderr).toContain('not executable: 32-bit ELF file');

  const moto = adbOn(world, deviceOf('moto').adbSerial);
  await push(deviceOf('moto'), path.join(MINICAP, 'arm64-v8a/bin/minicap'), '/data/local/tmp/minicap');
  await push(deviceOf('moto'), path.join(MINICAP, 'arm64-v8a/lib/android-29/minicap.so'), '/data/local/tmp/minicap.so');
  const wrongSdk = await moto('shell', 'LD_LIBRARY_PATH=/data/local/tmp /data/local/tmp/minicap -i');
  expect(wrongSdk.stdout + wrongSdk.stderr).toMatch(/CANNOT LINK EXECUTABLE "\/data\/local\/tmp\/minicap": cannot locate symbol/);
  const noLibrary = await moto('shell', '/data/local/tmp/minicap -i');
  expect(noLibrary.stdout + noLibrary.stderr).toContain('library "minicap.so" not found');
  await push(deviceOf('moto'), path.join(MINICAP, 'arm64-v8a/lib/android-30/minicap.so'), '/data/local/tmp/minicap.so');
  const info = await moto('shell', 'LD_LIBRARY_PATH=/data/local/tmp /data/local/tmp/minicap -i');
  expect(JSON.parse(info.stdout)).toMatchObject({ width: 720, height: 1600, rotation: 0 });
  expect((await moto('shell', 'LD_LIBRARY_PATH=/data/local/tmp /data/local/tmp/minicap -t')).stdout).toBe('OK\n');
  const still = jpeg.decode(await execOut(deviceOf('moto'), 'LD_LIBRARY_PATH=/data/local/tmp /data/local/tmp/minicap -P 720x1600@360x800/0 -s'));
  expect([still.width, still.height]).toEqual([360, 800]);
});

it('minicap.apk through app_process serves a device whose SDK has no native library', async () => {
  const device = deviceOf('pixel');
  const adb = adbOn(world, device.adbSerial);
  await push(device, path.join(MINICAP, 'noarch/minicap.apk'), '/data/local/tmp/minicap.apk');
  const run = startOnDevice(device, 'CLASSPATH=/data/local/tmp/minicap.apk app_process /system/bin io.devicefarmer.minicap.Main -P 1080x2400@540x1200/0');
  await waitFor('minicap.apk to listen', async () => device.sockets.isListening({ kind: 'localabstract', name: 'minicap' }) || undefined, 20_000);
  const socket = await forward(device, 'localabstract:minicap');
  const reader = new Reader(socket);
  const banner = await reader.read(24);
  expect(banner.readUInt32LE(14)).toBe(540);
  const frame = await reader.frame();
  expect([frame.width, frame.height]).toEqual([540, 1200]);
  socket.destroy();
  const missing = await adb('shell', 'CLASSPATH=/data/local/tmp/nothing.apk app_process /system/bin io.devicefarmer.minicap.Main -i');
  expect(missing.stdout + missing.stderr).toContain('ClassNotFoundException');
  run.child.kill();
  await waitFor('minicap.apk to end with its shell', async () => !device.sockets.isListening({ kind: 'localabstract', name: 'minicap' }) || undefined, 20_000);
});

it('minitouch over adb forward: its banner gives the touch range, and a scaled tap opens the app under it', async () => {
  const device = deviceOf('pixel');
  const adb = adbOn(world, device.adbSerial);
  await adb('shell', 'input', 'keyevent', 'KEYCODE_HOME');
  await push(device, path.join(MINITOUCH, 'arm64-v8a/bin/minitouch'), '/data/local/tmp/minitouch');
  const run = startOnDevice(device, '/data/local/tmp/minitouch');
  await waitFor('minitouch to listen', async () => device.sockets.isListening({ kind: 'localabstract', name: 'minitouch' }) || undefined, 20_000);
  const socket = await forward(device, 'localabstract:minitouch');
  let text = '';
  socket.on('data', (d: Buffer) => (text += d.toString()));
  await waitFor('the minitouch banner', async () => /\$ \d+\n/.test(text) || undefined);
  const [, maxX, maxY] = /\^ 10 (\d+) (\d+) 255\n/.exec(text)!.map(Number);
  expect([maxX, maxY]).not.toEqual([1080, 2400]);
  const icon = iconOf(device, 'YouTube');
  const x = Math.round((((icon.bounds[0] + icon.bounds[2]) / 2) * maxX) / device.screen.width);
  const y = Math.round((((icon.bounds[1] + icon.bounds[3]) / 2) * maxY) / device.screen.height);
  // Unscaled pixel coordinates land elsewhere (a client that forgets to scale fails).
  const frame = device.screen.frameNumber;
  socket.write(`d 0 ${(icon.bounds[0] + icon.bounds[2]) / 2} ${(icon.bounds[1] + icon.bounds[3]) / 2} 50\nc\nu 0\nc\n`);
  await waitFor('the unscaled tap', async () => device.screen.frameNumber > frame || undefined);
  expect(device.screen.foregroundPackage()).not.toBe('com.google.android.youtube');
  await adb('shell', 'input', 'keyevent', 'KEYCODE_HOME');
  socket.write(`d 0 ${x} ${y} 50\nc\nw 20\nu 0\nc\n`);
  await waitFor('YouTube in front', async () => device.screen.foregroundPackage() === 'com.google.android.youtube' || undefined);

  // Turned a quarter (natural top on the left), the panel's coordinates stay the natural ones.
  await adb('shell', 'input', 'keyevent', 'KEYCODE_HOME');
  device.screen.rotation = 1;
  try {
    const chrome = iconOf(device, 'Chrome');
    const [dx, dy] = [(chrome.bounds[0] + chrome.bounds[2]) / 2, (chrome.bounds[1] + chrome.bounds[3]) / 2];
    // ROTATION_90: display (x, y) is panel (width - 1 - y, x).
    const [px, py] = [device.screen.width - 1 - dy, dx];
    socket.write(`d 0 ${Math.round((px * maxX) / device.screen.width)} ${Math.round((py * maxY) / device.screen.height)} 50\nc\nu 0\nc\n`);
    await waitFor('Chrome in front', async () => device.screen.foregroundPackage() === 'com.android.chrome' || undefined);
  } finally {
    device.screen.rotation = 0;
  }
  socket.destroy();
  expect((await adb('shell', 'pkill', 'minitouch')).code).toBe(0);
  await waitFor('minitouch to end', async () => run.child.exitCode !== null || undefined, 20_000);
  await adb('shell', 'input', 'keyevent', 'KEYCODE_HOME');
});
