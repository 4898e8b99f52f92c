import { LabWorld, specFromPreset } from '../src';
import { adbOn, startWorld, waitFor } from './helpers';

/** Parses the aggregate `cpu  ...` line of /proc/stat. */
function cpuLine(stat: string): number[] {
  const m = /^cpu  (.*)$/m.exec(stat);
  if (!m) throw new Error('no aggregate cpu line');
  return m[1].trim().split(/\s+/).map(Number);
}

function meminfo(text: string): Record<string, number> {
  const out: Record<string, number> = {};
  for (const line of text.trim().split('\n')) {
    const m = /^([^:]+):\s+(\d+)(?:\s+kB)?$/.exec(line);
    if (!m) throw new Error(`unparseable meminfo line ${JSON.stringify(line)}`);
    out[m[1]] = Number(m[2]);
  }
  return out;
}

function wlanRx(netDev: string): number {
  const line = netDev.split('\n').find((l) => l.trim().startsWith('wlan0:'));
  if (!line) throw new Error('no wlan0');
  return Number(line.slice(line.indexOf(':') + 1).trim().split(/\s+/)[0]);
}

describe('device lifecycle: kernel counters, reboot, unauthorized, plug/unplug, drops', () => {
  let world: LabWorld;

  beforeAll(async () => {
    world = await startWorld({ timings: { rebootMs: 1200, bootCompleteMs: 1500 } });
  });
  afterAll(() => world?.stop());

  test('/proc/meminfo is consistent and /proc/stat, /proc/net/dev grow between reads', async () => {
    const d = await world.addAndroidDevice(specFromPreset('moto-g9-play', 0));
    const adb = adbOn(world, d.adbSerial);
    const mem = meminfo((await adb('shell', 'cat /proc/meminfo')).stdout);
    expect(mem.MemTotal).toBe(3760260);
    expect(mem.MemFree).toBeLessThan(mem.MemAvailable);
    expect(mem.MemAvailable).toBeLessThan(mem.MemTotal);
    expect(mem.Active).toBe(mem['Active(anon)'] + mem['Active(file)']);
    expect(mem.Inactive).toBe(mem['Inactive(anon)'] + mem['Inactive(file)']);
    expect(mem.CommitLimit).toBe(mem.SwapTotal + Math.floor(mem.MemTotal / 2));
    expect(mem.HighTotal).toBeUndefined(); // arm64 kernels have no HIGHMEM

    const read = async () => {
      const r = await adb('shell', 'cat /proc/uptime /proc/stat /proc/net/dev');
      return { uptime: Number(r.stdout.split(' ')[0]), cpu: cpuLine(r.stdout), rx: wlanRx(r.stdout) };
    };
    const a = await read();
    await new Promise((r) => setTimeout(r, 1100));
    const b = await read();
    const dt = b.uptime - a.uptime;
    expect(dt).toBeGreaterThan(0.9);
    const delta = b.cpu.map((v, i) => v - a.cpu[i]);
    for (const v of delta) expect(v).toBeGreaterThanOrEqual(0);
    const total = delta.slice(0, 8).reduce((s, v) => s + v, 0);
    // 8 cores * 100 jiffies/s * dt, within rounding.
    expect(Math.abs(total - 8 * 100 * dt)).toBeLessThan(8 * 100 * 0.1 + 16);
    expect(delta[0]).toBeGreaterThan(0); // some user time
    expect(b.rx).toBeGreaterThan(a.rx);
    const freq = Number((await adb('shell', 'cat /sys/devices/system/cpu/cpu0/cpufreq/scaling_cur_freq')).stdout);
    expect(freq).toBeGreaterThanOrEqual(300000);
    expect(freq).toBeLessThanOrEqual(2000000);
  });

  test('reboot: offline, back online with boot_completed 0 then 1, counters restart', async () => {
    const d = await world.addAndroidDevice(specFromPreset('pixel-7', 3));
    const adb = adbOn(world, d.adbSerial);
    await new Promise((r) => setTimeout(r, 3000)); // let the device accumulate uptime
    const uptimeBefore = Number((await adb('shell', 'cat /proc/uptime')).stdout.split(' ')[0]);
    const btimeBefore = /^btime (\d+)$/m.exec((await adb('shell', 'cat /proc/stat')).stdout)![1];
    const r = await adb('reboot');
    expect(r.code).toBe(0);
    await world.waitForState(d.serial, ['offline', 'absent'], 5000);
    // adbd comes back before boot completes: getprop shows an empty value first.
    const early = await waitFor('adb transport back', async () => {
      const g = await adb('shell', 'getprop sys.boot_completed');
      return g.code === 0 ? g : undefined;
    }, 15000, 100);
    expect(early.stdout).toBe('\n');
    await waitFor('boot_completed=1', async () => (await adb('shell', 'getprop sys.boot_completed')).stdout === '1\n', 10000);
    const uptimeAfter = Number((await adb('shell', 'cat /proc/uptime')).stdout.split(' ')[0]);
    expect(uptimeAfter).toBeLessThan(uptimeBefore);
    const btimeAfter = /^btime (\d+)$/m.exec((await adb('shell', 'cat /proc/stat')).stdout)![1];
    expect(Number(btimeAfter)).toBeGreaterThan(Number(btimeBefore));
  });

  test('unauthorized device shows as unauthorized; authorizing brings it online', async () => {
    const d = await world.addAndroidDevice(specFromPreset('galaxy-s23', 4), { auth: 'reject', plug: false });
    expect(await world.plug(d.serial)).toBe('unauthorized');
    const r = await adbOn(world, d.adbSerial)('shell', 'echo hi');
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain('unauthorized');
    expect(await world.setUnauthorized(d.serial, false)).toBe('device');
    expect((await adbOn(world, d.adbSerial)('shell', 'getprop ro.product.model')).stdout).toBe('SM-S911B\n');
  });

  test('unplug removes the device from adb; plug brings it back', async () => {
    const d = await world.addAndroidDevice(specFromPreset('pixel-tablet', 5));
    expect(await world.adbState(d.serial)).toBe('device');
    await world.unplug(d.serial);
    expect(await world.adbState(d.serial)).toBe('absent');
    expect(world.devices().find((x) => x.serial === d.serial)?.plugged).toBe(false);
    expect(await world.plug(d.serial)).toBe('device');
    const adb = adbOn(world, d.adbSerial);
    expect((await adb('shell', 'getprop ro.build.characteristics')).stdout).toBe('tablet,nosdcard\n');
    expect((await adb('shell', 'wm size')).stdout).toBe('Physical size: 2560x1600\n');
  });

  test('a connection dropped mid-stream fails the command; the device recovers', async () => {
    const d = await world.addAndroidDevice(specFromPreset('pixel-7', 6));
    const adb = adbOn(world, d.adbSerial);
    await world.dropConnection(d.serial, { afterBytes: 1000 });
    // adb reconnects on its own; the armed fault kills that new transport after 1000 bytes of output.
    await world.waitForState(d.serial, ['device'], 10000);
    const r = await adb('shell', 'head -c 200000 /dev/zero | tr "\\0" x');
    expect(r.stdout.length).toBeLessThan(200000);
    await world.plug(d.serial);
    const ok = await waitFor('recovered shell', async () => {
      const g = await adb('shell', 'echo back');
      return g.stdout === 'back\n' ? g : undefined;
    }, 15000);
    expect(ok.code).toBe(0);
  });
});
