/**
 * A simulated iPhone's screen through Debian's idevicescreenshot (lockdown StartService of
 * com.apple.mobile.screenshotr, DeviceLink version exchange, ScreenShotRequest): a PNG of the home screen, and the
 * tool's own advice when no Developer Disk Image is mounted.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { PNG } from 'pngjs';
import { LabWorld, iosSpecFromPreset } from '../src';
import { idevice } from './ios-helpers';

let world: LabWorld;
let run: ReturnType<typeof idevice>;
let dir: string;
const spec = iosSpecFromPreset('iphone-13', 5);

beforeAll(async () => {
  world = new LabWorld();
  await world.start();
  await world.addIosDevice(spec);
  run = idevice(world);
  await world.iosFleet.pairWithIdevicepair(spec.udid);
  dir = mkdtempSync(path.join(tmpdir(), 'screenshot-'));
}, 60_000);

afterAll(async () => {
  await world?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
}, 60_000);

it('idevicescreenshot saves a PNG of the home screen at the model resolution', async () => {
  const file = path.join(dir, 'home.png');
  // The status bar's clock may turn a minute while the tool runs: the picture is the one before or the one after.
  const before = world.iosDevice(spec.udid).screen.png();
  const result = await run('idevicescreenshot', '-u', spec.udid, file);
  expect(result.code).toBe(0);
  expect(result.stdout).toContain(`Screenshot saved to ${file}`);
  const png = PNG.sync.read(readFileSync(file));
  expect([png.width, png.height]).toEqual([1170, 2532]);
  const saved = readFileSync(file);
  expect(saved.equals(before) || saved.equals(world.iosDevice(spec.udid).screen.png())).toBe(true);
  // An app tile is drawn over the wallpaper: more than one colour in the grid's first row.
  const colours = new Set<string>();
  for (let x = 0; x < png.width; x += 30) {
    const i = (300 * png.width + x) * 4;
    colours.add(png.data.subarray(i, i + 3).toString('hex'));
  }
  expect(colours.size).toBeGreaterThan(2);
});

it('without a mounted Developer Disk Image, screenshotr is not offered and the tool says so', async () => {
  const device = world.iosDevice(spec.udid);
  device.developerImageMounted = false;
  try {
    const result = await run('idevicescreenshot', '-u', spec.udid, path.join(dir, 'none.png'));
    expect(result.code).not.toBe(0);
    expect(result.stdout + result.stderr).toMatch(/Developer disk image/i);
  } finally {
    device.developerImageMounted = true;
  }
});
