/**
 * What the gateway samples, read through the real adb CLI: /proc counters and cpufreq move like a real
 * device's, `dumpsys gfxinfo` follows the Android era and the app's process, `logcat` without -d streams.
 */
import { spawn } from 'node:child_process';
import { LabWorld, specFromPreset } from '../src';
import { adbOn, startWorld, waitFor } from './helpers';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const cpuLine = (stat: string) => stat.split('\n')[0].split(/\s+/).slice(1).map(Number);
const wlanRx = (netDev: string) => Number(netDev.split('\n').find((l) => l.trim().startsWith('wlan0:'))!.split(':')[1].trim().split(/\s+/)[0]);

describe('metrics sources of a simulated device', () => {
  let world: LabWorld;
  let pixel: ReturnType<typeof adbOn>;
  let nougat: ReturnType<typeof adbOn>;
  let pixelSerial: string;
  let nougatSerial: string;

  beforeAll(async () => {
    world = await startWorld();
    const [p, n] = await Promise.all([
      world.addAndroidDevice(specFromPreset('pixel-7', 0)),
      world.addAndroidDevice(specFromPreset('galaxy-j5', 1)),
    ]);
    pixelSerial = p.adbSerial;
    nougatSerial = n.adbSerial;
    pixel = adbOn(world, pixelSerial);
    nougat = adbOn(world, nougatSerial);
  });
  afterAll(() => world?.stop());

  test('/proc/stat, /proc/net/dev and /proc/uptime only grow; jiffies add up to ~100/s per core', async () => {
    const read = async () => (await pixel('shell', 'cat /proc/uptime; echo @@; cat /proc/stat; echo @@; cat /proc/net/dev')).stdout.split('@@\n');
    const [u0, s0, n0] = await read();
    await sleep(1_500);
    const [u1, s1, n1] = await read();
    const dt = Number(u1.split(' ')[0]) - Number(u0.split(' ')[0]);
    expect(dt).toBeGreaterThan(1);
    const c0 = cpuLine(s0);
    const c1 = cpuLine(s1);
    c1.forEach((v, i) => expect(v).toBeGreaterThanOrEqual(c0[i]));
    const jiffies = c1.slice(0, 8).reduce((a, b) => a + b, 0) - c0.slice(0, 8).reduce((a, b) => a + b, 0);
    expect(jiffies / dt).toBeGreaterThan(8 * 100 * 0.9);
    expect(jiffies / dt).toBeLessThan(8 * 100 * 1.1);
    expect(wlanRx(n1)).toBeGreaterThan(wlanRx(n0));
  });

  test('/proc/meminfo keeps its invariants; HighTotal/LowTotal only on the 32-bit kernel', async () => {
    const parse = (text: string) => new Map(text.trim().split('\n').map((l) => {
      const m = /^([^:]+):\s+(\d+) kB$/.exec(l)!;
      return [m[1], Number(m[2])] as const;
    }));
    const arm64 = parse((await pixel('shell', 'cat /proc/meminfo')).stdout);
    const arm32 = parse((await nougat('shell', 'cat /proc/meminfo')).stdout);
    for (const mem of [arm64, arm32]) {
      expect(mem.get('Active')).toBe(mem.get('Active(anon)')! + mem.get('Active(file)')!);
      expect(mem.get('Inactive')).toBe(mem.get('Inactive(anon)')! + mem.get('Inactive(file)')!);
      expect(mem.get('MemFree')!).toBeLessThan(mem.get('MemAvailable')!);
      expect(mem.get('MemAvailable')!).toBeLessThan(mem.get('MemTotal')!);
      expect(mem.get('CommitLimit')).toBe(mem.get('SwapTotal')! + Math.floor(mem.get('MemTotal')! / 2));
    }
    expect(arm32.get('HighTotal')! + arm32.get('LowTotal')!).toBe(arm32.get('MemTotal'));
    expect(arm32.get('HighFree')! + arm32.get('LowFree')!).toBe(arm32.get('MemFree'));
    expect(arm32.has('ShadowCallStack')).toBe(false);
    expect(arm64.has('HighTotal')).toBe(false);
    expect(arm64.get('VmallocChunk')).toBe(0);
  });

  test('cpufreq: one policy per cluster in kHz, the big cluster up to the SoC maximum', async () => {
    const r = await pixel('shell', 'ls /sys/devices/system/cpu/cpufreq; cat /sys/devices/system/cpu/cpufreq/policy*/scaling_cur_freq');
    const [p0, p4, p7, ...freqs] = r.stdout.trim().split('\n');
    expect([p0, p4, p7]).toEqual(['policy0', 'policy4', 'policy7']);
    expect(freqs).toHaveLength(3);
    for (const f of freqs.map(Number)) {
      expect(f % 1000).toBe(0);
      expect(f).toBeGreaterThan(0);
      expect(f).toBeLessThanOrEqual(2850000);
    }
  });

  test('dumpsys gfxinfo: only the header without a process; the era format with growing counters after a launch', async () => {
    const none = (await pixel('shell', 'dumpsys gfxinfo org.mozilla.firefox')).stdout;
    expect(none).toMatch(/^Applications Graphics Acceleration Info:\nUptime: \d+ Realtime: \d+\n\n$/);
    await pixel('shell', 'am start -W -n org.mozilla.firefox/org.mozilla.fenix.HomeActivity');
    await sleep(1_000);
    const first = (await pixel('shell', 'dumpsys gfxinfo org.mozilla.firefox')).stdout;
    await sleep(1_000);
    const second = (await pixel('shell', 'dumpsys gfxinfo org.mozilla.firefox')).stdout;
    const frames = (t: string) => Number(/^Total frames rendered: (\d+)$/m.exec(t)?.[1]);
    expect(first).toMatch(/^\*\* Graphics info for pid \d+ \[org\.mozilla\.firefox\] \*\*$/m);
    expect(first).toMatch(/^Janky frames \(legacy\): \d+ \([\d.]+%\)$/m); // Android 12+
    expect(first).toContain('Total GPU memory usage:');
    expect(first).not.toContain('TextureCache');
    expect(frames(second)).toBeGreaterThan(frames(first));
    const janky = /^Janky frames: (\d+) \(([\d.]+)%\)$/m.exec(second)!;
    expect(Number(janky[2])).toBeCloseTo((Number(janky[1]) / frames(second)) * 100, 2);
    const [p50, p90, p95, p99] = ['50th', '90th', '95th', '99th'].map((p) => Number(new RegExp(`^${p} percentile: (\\d+)ms$`, 'm').exec(second)?.[1]));
    expect(p50).toBeLessThanOrEqual(p90);
    expect(p90).toBeLessThanOrEqual(p95);
    expect(p95).toBeLessThanOrEqual(p99);
    // `reset` restarts the counters.
    await pixel('shell', 'dumpsys gfxinfo org.mozilla.firefox reset');
    const afterReset = (await pixel('shell', 'dumpsys gfxinfo org.mozilla.firefox')).stdout;
    expect(frames(afterReset)).toBeLessThan(frames(second));
    await pixel('shell', 'am force-stop org.mozilla.firefox');
    expect((await pixel('shell', 'dumpsys gfxinfo org.mozilla.firefox')).stdout).not.toContain('Graphics info for pid');
  });

  test('dumpsys gfxinfo on Android 7: OpenGL cache table and total memory on the next line', async () => {
    await nougat('shell', 'am start -n com.spotify.music/com.spotify.music.MainActivity');
    const out = (await nougat('shell', 'dumpsys gfxinfo com.spotify.music')).stdout;
    expect(out).toMatch(/^Caches:\nCurrent memory usage \/ total memory usage \(bytes\):\n  TextureCache\s+\d+ \/ 75497472$/m);
    expect(out).toMatch(/^Total memory usage:\n  \d+ bytes, [\d.]+ MB$/m);
    expect(out).not.toContain('50th percentile');
    expect(out).not.toContain('legacy');
  });

  test('logcat without -d keeps streaming lines as the device logs them; -T N starts at the last N lines', async () => {
    const child = spawn('adb', ['-P', String(world.adbServerPort), '-s', nougatSerial, 'shell', 'logcat -v threadtime -T 1'], { env: { ...process.env, ...world.env() } });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    try {
      await waitFor('the first line', async () => out.includes('\n'), 5_000, 50);
      const marker = `streamed-${Date.now()}`;
      const sentAt = Date.now();
      world.device(nougatSerial).logcat.log('I', 'StreamTest', marker);
      await waitFor('the logged line', async () => out.includes(marker), 5_000, 20);
      // Pushed when logged, not on a poll cycle.
      expect(Date.now() - sentAt).toBeLessThan(400);
      const lines = out.trim().split('\n');
      expect(lines[0]).toBe('--------- beginning of main');
      expect(lines.filter((l) => l.includes('Booting Linux'))).toHaveLength(0);
    } finally {
      child.kill();
    }
  });
});
