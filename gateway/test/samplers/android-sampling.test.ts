/**
 * The Android sampling capability through the REAL adb server against labsim devices of three Android eras
 * (this file's own LabWorld): what a user would check is that the fields are there, in the right units,
 * consistent with each other, moving like real counters, and that Graphics appear once the service launched
 * an app.
 */
import { LabWorld, specFromPreset, type DeviceSnapshot } from '@devicelab/labsim';
import { AndroidDriver } from '../../src/drivers/android/android-driver';
import { DeviceCommandError } from '../../src/drivers/device-driver';
import { startDriverLab, type DriverLab } from '../support/driver-lab';
import type { Recorder } from '../support/recorder';

const KB = 1024;
const FIREFOX = 'org.mozilla.firefox';
const SPOTIFY = 'com.spotify.music';
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('Android sampling over adb + labsim', () => {
  let world: LabWorld;
  let driver: AndroidDriver;
  let recorder: Recorder;
  let lab: DriverLab;
  const pixel = specFromPreset('pixel-7', 0);
  const moto = specFromPreset('moto-g9-play', 1);
  // A 32-bit Android 7 phone: OpenGL HWUI pipeline (gfxinfo cache table), HIGHMEM kernel.
  const nougat = specFromPreset('galaxy-j5', 2);
  let p: DeviceSnapshot;
  let m: DeviceSnapshot;
  let n: DeviceSnapshot;

  beforeAll(async () => {
    lab = await startDriverLab();
    ({ world, driver, recorder } = lab);
    [p, m, n] = await Promise.all([world.addAndroidDevice(pixel), world.addAndroidDevice(moto), world.addAndroidDevice(nougat)]);
    await Promise.all([p, m, n].map((d) => recorder.waitReadiness(d.adbSerial, 'Ready')));
  });

  afterAll(() => lab?.stop());

  it('reads memory, network totals and CPU frequency in one call; loads and rates from the second read on', async () => {
    const first = await driver.sampling.sample(p.adbSerial);
    const f = first.fields;
    expect(Math.abs(first.time - Date.now())).toBeLessThan(5_000);
    expect(f.Used + f.Free).toBe(pixel.memTotalKb * KB);
    expect(f.Active).toBe(f['Active (anon)'] + f['Active (file)']);
    expect(f.Inactive).toBe(f['Inactive (anon)'] + f['Inactive (file)']);
    expect(f['Commit Limit']).toBeGreaterThan(pixel.memTotalKb * KB / 2);
    expect(f['Bytes In']).toBeGreaterThan(0);
    expect(f['Dropped In']).toBeGreaterThanOrEqual(0);
    // The fastest cluster, in MHz: above the LITTLE cores' ceiling at times, never above the SoC maximum.
    expect(f.Frequency).toBeGreaterThanOrEqual(300);
    expect(f.Frequency).toBeLessThanOrEqual(pixel.cpu.maxFreqKhz / 1000);
    expect(f).not.toHaveProperty('Load');
    expect(f).not.toHaveProperty('Wired');
    expect(f).not.toHaveProperty(['User Total (HighTotal)']);
    expect(f).not.toHaveProperty(['Total frames rendered']);

    await sleep(1_200);
    const second = (await driver.sampling.sample(p.adbSerial)).fields;
    for (const load of ['Load', 'User Load', 'System Load', 'IO Wait Load', 'IRQ Load']) {
      expect(second[load]).toBeGreaterThanOrEqual(0);
      expect(second[load]).toBeLessThanOrEqual(100);
    }
    expect(second.Load).toBeGreaterThan(0);
    expect(second['User Load'] + second['System Load'] + second['IRQ Load']).toBeLessThanOrEqual(second.Load + 0.05);
    expect(second['Bytes In']).toBeGreaterThan(f['Bytes In']);
    expect(second['Bytes In Per Second']).toBeGreaterThan(1_000);
    expect(second['Bytes Out Per Second']).toBeGreaterThan(0);
  });

  it('adds the Graphics fields of the app the service launched, with counters that grow', async () => {
    const before = (await driver.sampling.sample(m.adbSerial)).fields;
    expect(before).not.toHaveProperty(['Total frames rendered']);
    await driver.launch(m.adbSerial, SPOTIFY);
    await sleep(1_500);
    const g1 = (await driver.sampling.sample(m.adbSerial)).fields;
    await sleep(1_200);
    const g2 = (await driver.sampling.sample(m.adbSerial)).fields;
    expect(g1['Total frames rendered']).toBeGreaterThan(0);
    expect(g2['Total frames rendered']).toBeGreaterThan(g1['Total frames rendered']);
    expect(g2['Janky frames (count)']).toBeLessThanOrEqual(g2['Total frames rendered']);
    expect(g2['Janky frames (percent)']).toBeCloseTo((g2['Janky frames (count)'] / g2['Total frames rendered']) * 100, 1);
    expect(g2['90th percentile']).toBeLessThanOrEqual(g2['95th percentile']);
    expect(g2['95th percentile']).toBeLessThanOrEqual(g2['99th percentile']);
    expect(g2['Total graphics memory']).toBeGreaterThan(0);
    expect(g2).not.toHaveProperty(['TextureCache Current']); // Skia pipeline (Android 11)
    // Memory, CPU and network still come in the same read.
    expect(g2.Load).toBeGreaterThan(0);
  });

  it('reports the HIGHMEM split of a 32-bit kernel, and no Vmalloc field a 64-bit kernel leaves at 0', async () => {
    const f = (await driver.sampling.sample(n.adbSerial)).fields;
    expect(f['User Total (HighTotal)'] + f['Kernel Total (LowTotal)']).toBe(nougat.memTotalKb * KB);
    expect(f['User Free (HighFree)'] + f['Kernel Free (LowFree)']).toBe(f.Free);
    expect(f['Vmalloc Chunk']).toBeGreaterThan(0);
    const pixelFields = (await driver.sampling.sample(p.adbSerial)).fields;
    expect(pixelFields).not.toHaveProperty(['Vmalloc Chunk']);
    expect(pixelFields).not.toHaveProperty(['Kernel Total (LowTotal)']);
  });

  it('reads the OpenGL cache table on Android 7', async () => {
    await driver.launch(n.adbSerial, SPOTIFY);
    await sleep(1_000);
    const g = (await driver.sampling.sample(n.adbSerial)).fields;
    expect(g['TextureCache Current']).toBeGreaterThan(0);
    expect(g['TextureCache Total']).toBe(75497472);
    expect(g['FontRenderer 0 A8 Current']).toBe(1048576);
    expect(g['Total graphics memory']).toBeGreaterThan(0);
    expect(g).not.toHaveProperty(['50th percentile']); // added in Android 8
    expect(g).not.toHaveProperty(['Number Frame deadline missed']); // added in Android 9
  });

  it('stops reporting Graphics when the launched app has no process (after a reboot)', async () => {
    await driver.launch(p.adbSerial, FIREFOX);
    await sleep(500);
    expect((await driver.sampling.sample(p.adbSerial)).fields['Total frames rendered']).toBeGreaterThan(0);
    const from = recorder.events.length;
    await world.reboot(pixel.serial);
    await recorder.waitReadiness(p.adbSerial, 'Ready', 20_000, from);
    const after = (await driver.sampling.sample(p.adbSerial)).fields;
    expect(after).not.toHaveProperty(['Total frames rendered']);
    // A reboot restarts the counters: no load or rate against the old boot's numbers.
    expect(after).not.toHaveProperty('Load');
    expect(after.Free).toBeGreaterThan(0);
  });

  it('probes a Ready device and fails clearly for one that is gone', async () => {
    await expect(driver.sampling.probe(m.adbSerial, 5_000)).resolves.toBeUndefined();
    await expect(driver.sampling.probe('127.0.0.1:1', 5_000)).rejects.toThrow(DeviceCommandError);
  });

  it('follows the device log: lines the device logs arrive as they are logged', async () => {
    const lines: string[] = [];
    let ended = false;
    const stream = driver.sampling.followLog(n.adbSerial, { line: (l) => lines.push(l), end: () => (ended = true) });
    await sleep(1_000);
    const marker = `metrics-log-test ${Date.now()}`;
    world.device(nougat.serial).logcat.log('W', 'DeviceLabTest', marker, 4242, 4243);
    const deadline = Date.now() + 5_000;
    while (!lines.some((l) => l.includes(marker)) && Date.now() < deadline) await sleep(50);
    const line = lines.find((l) => l.includes(marker));
    expect(line).toMatch(/^\d\d-\d\d \d\d:\d\d:\d\d\.\d{3}\s+4242\s+4243 W DeviceLabTest: metrics-log-test/);
    // Only recent lines: the boot lines of the ring buffer are not replayed, nor are separators.
    expect(lines.some((l) => l.includes('Booting Linux'))).toBe(false);
    expect(lines.some((l) => l.startsWith('---------'))).toBe(false);
    stream.stop();
    await sleep(300);
    expect(ended).toBe(false); // stop() is not an end
  });
});
