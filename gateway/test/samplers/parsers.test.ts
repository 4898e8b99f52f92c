/** The sampling parsers and field mapping on the real outputs of device-data.md (sections 1.2-1.8). */
import { parseCpuFrequencyMhz } from '../../src/drivers/android/parsers/cpufreq';
import { parseGfxinfo } from '../../src/drivers/android/parsers/gfxinfo';
import { parseMeminfo } from '../../src/drivers/android/parsers/meminfo';
import { parseNetDev } from '../../src/drivers/android/parsers/net-dev';
import { parseProcStat } from '../../src/drivers/android/parsers/proc-stat';
import { parseUptime } from '../../src/drivers/android/parsers/uptime';
import { cpuLoadFields, memoryFields, networkFields, sampleFields, type KernelReading } from '../../src/drivers/android/sample-fields';
import { sampleScript } from '../../src/drivers/android/sampling';
import { splitSections } from '../../src/drivers/android/parsers/text';
import * as S from './kernel-samples';

const KB = 1024;
const crlf = (text: string) => text.replace(/\n/g, '\r\n');
const [T0, T1] = S.PROC_STAT_T0_T1.split('\n').slice(0, 2).map((l) => l.replace(/^t\d: /, ''));

describe('/proc/meminfo', () => {
  it('maps the arm64 sample to the spec names in bytes, without 32-bit keys or 0 placeholders', () => {
    const fields = memoryFields(parseMeminfo(crlf(S.MEMINFO_ARM64)));
    expect(fields).toMatchObject({
      Free: 231848 * KB,
      Used: (7645196 - 231848) * KB,
      Active: 2404160 * KB,
      Inactive: 2473824 * KB,
      Buffers: 6264 * KB,
      Cached: 2894012 * KB,
      'Active (anon)': 981440 * KB,
      'Inactive (anon)': 1102368 * KB,
      'Active (file)': 1422720 * KB,
      'Inactive (file)': 1371456 * KB,
      AnonPages: 2221676 * KB,
      Mapped: 1176324 * KB,
      'Kernel Stack': 79808 * KB,
      'Page Tables': 150236 * KB,
      'Commit Limit': 8016896 * KB,
      Committed_AS: 158932560 * KB,
      'Vmalloc Total': 263061440 * KB,
      'Vmalloc Used': 227712 * KB,
    });
    // VmallocChunk prints 0 on >= 4.x kernels; HighTotal & co. exist only on 32-bit HIGHMEM kernels; no wired memory.
    for (const absent of ['Vmalloc Chunk', 'User Total (HighTotal)', 'User Free (HighFree)', 'Kernel Total (LowTotal)', 'Kernel Free (LowFree)', 'Wired']) {
      expect(fields).not.toHaveProperty([absent]);
    }
  });

  it('reports the HIGHMEM split of a 32-bit kernel', () => {
    const fields = memoryFields(parseMeminfo(S.MEMINFO_ARM32));
    expect(fields).toMatchObject({
      'User Total (HighTotal)': 1179648 * KB,
      'User Free (HighFree)': 31204 * KB,
      'Kernel Total (LowTotal)': 677476 * KB,
      'Kernel Free (LowFree)': 57216 * KB,
      'Vmalloc Chunk': 97284 * KB,
    });
    expect(fields['User Total (HighTotal)'] + fields['Kernel Total (LowTotal)']).toBe(1857124 * KB);
  });

  it('keeps unit-less keys as plain numbers and ignores garbage lines', () => {
    const values = parseMeminfo('HugePages_Total:       0\nnot a line\nMemFree:   10 kB\nMemFree:   99 kB\n');
    expect(values.get('HugePages_Total')).toBe(0);
    expect(values.get('MemFree')).toBe(10 * KB);
    expect(values.size).toBe(2);
  });
});

describe('/proc/stat', () => {
  it('reads the aggregate cpu line and btime, not the per-core lines', () => {
    const stat = parseProcStat(crlf(S.PROC_STAT));
    expect(stat.cpu).toEqual({ user: 4705320, nice: 233091, system: 2380562, idle: 61293817, iowait: 85321, irq: 411263, softirq: 93651, steal: 0 });
    expect(stat.bootTime).toBe(1710153725);
  });

  it('computes the loads of the device-data example (two samples 2 s apart)', () => {
    const loads = cpuLoadFields(parseProcStat(T0).cpu!, parseProcStat(T1).cpu!);
    expect(loads).toEqual({ Load: 46.14, 'User Load': 27.22, 'System Load': 14.94, 'IO Wait Load': 0.57, 'IRQ Load': 3.99 });
  });

  it('clamps a backwards iowait to 0 and gives nothing for an empty interval', () => {
    const before = parseProcStat(T0).cpu!;
    const loads = cpuLoadFields(before, { ...parseProcStat(T1).cpu!, iowait: before.iowait - 50 });
    expect(loads['IO Wait Load']).toBe(0);
    expect(loads.Load).toBeGreaterThan(0);
    expect(cpuLoadFields(before, before)).toEqual({});
  });
});

describe('/proc/net/dev', () => {
  it('sums real interfaces (not lo or dummy0) into totals with errors and drops', () => {
    const interfaces = parseNetDev(crlf(S.NET_DEV));
    expect(interfaces.map((i) => i.name)).toEqual(['lo', 'dummy0', 'wlan0', 'rmnet_data0', 'p2p0']);
    expect(networkFields(interfaces, undefined, undefined)).toEqual({
      'Bytes In': 98765432 + 20480311, 'Bytes Out': 12345678 + 3311022,
      'Errors In': 0, 'Errors Out': 0, 'Dropped In': 12, 'Dropped Out': 0,
    });
  });

  it('parses a number glued to the colon (old kernels)', () => {
    const [wlan] = parseNetDev('wlan0:98765432   74321    3   12    0     0          0         0 12345678   41210    1    2    0     0       0          0\n');
    expect(wlan).toMatchObject({ name: 'wlan0', rxBytes: 98765432, rxErrors: 3, rxDropped: 12, txBytes: 12345678, txErrors: 1, txDropped: 2 });
  });

  it('turns byte deltas into per-second rates, clamping an interface whose counters restarted', () => {
    const before = new Map(parseNetDev(S.NET_DEV).map((i) => [i.name, i]));
    const after = parseNetDev(S.NET_DEV).map((i) => {
      if (i.name === 'wlan0') return { ...i, rxBytes: i.rxBytes + 30_000, txBytes: i.txBytes + 5_000 };
      if (i.name === 'rmnet_data0') return { ...i, rxBytes: 100, txBytes: 10 }; // torn down and back up
      return i;
    });
    const fields = networkFields(after, before, 2);
    expect(fields['Bytes In Per Second']).toBe(15_000);
    expect(fields['Bytes Out Per Second']).toBe(2_500);
  });
});

describe('cpufreq and uptime', () => {
  it('takes the fastest cluster in MHz and ignores unreadable files', () => {
    expect(parseCpuFrequencyMhz('1803000\n2348000\n2850000\n')).toBe(2850);
    expect(parseCpuFrequencyMhz('cat: /sys/devices/system/cpu/cpufreq/policy6/scaling_cur_freq: Permission denied\n1803000\r\n')).toBe(1803);
    expect(parseCpuFrequencyMhz('')).toBeUndefined();
    expect(parseUptime('27522.17 190003.43\n')).toBe(27522.17);
    expect(parseUptime('garbage')).toBeUndefined();
  });
});

describe('dumpsys gfxinfo', () => {
  it('Android 7 (OpenGL): stats, the cache table as <name> Current/Total, and total memory from the next line', () => {
    const fields = parseGfxinfo(S.GFXINFO_ANDROID_7, 'com.example.shop');
    expect(fields).toEqual({
      'Total frames rendered': 2546, 'Janky frames (count)': 203, 'Janky frames (percent)': 7.97,
      '90th percentile': 14, '95th percentile': 20, '99th percentile': 53,
      'Number Missed Vsync': 42, 'Number High input latency': 0, 'Number Slow UI thread': 82,
      'Number Slow bitmap uploads': 13, 'Number Slow issue draw commands': 108,
      'TextureCache Current': 1636784, 'TextureCache Total': 75497472,
      'LayerCache Current': 0, 'LayerCache Total': 50331648,
      'RenderBufferCache Current': 0, 'RenderBufferCache Total': 8388608,
      'GradientCache Current': 0, 'GradientCache Total': 1048576,
      'PathCache Current': 0, 'PathCache Total': 33554432,
      'TessellationCache Current': 0, 'TessellationCache Total': 1048576,
      'TextDropShadowCache Current': 0, 'TextDropShadowCache Total': 6291456,
      'PatchCache Current': 8448, 'PatchCache Total': 131072,
      'FontRenderer 0 A8 Current': 1048576, 'FontRenderer 0 A8 Total': 1048576,
      'FontRenderer 0 RGBA Current': 0, 'FontRenderer 0 RGBA Total': 0,
      'FontRenderer 0 total Current': 1048576, 'FontRenderer 0 total Total': 1048576,
      'FboCache Current': 0, 'FboCache Total': 0,
      'Total graphics memory': 2693808,
    });
  });

  it('Android 10 (Skia): no cache table, gpu percentiles do not leak into the frame percentiles', () => {
    const fields = parseGfxinfo(S.GFXINFO_ANDROID_10, 'com.example.shop');
    expect(fields).toMatchObject({
      'Total frames rendered': 3878, 'Janky frames (count)': 169, 'Janky frames (percent)': 4.36,
      '50th percentile': 17, '90th percentile': 18, '95th percentile': 19, '99th percentile': 30,
      'Number Frame deadline missed': 169, 'Total graphics memory': 8782272,
    });
    expect(Object.keys(fields).filter((k) => / (Current|Total)$/.test(k))).toEqual([]);
  });

  it('Android 14: the non-legacy janky line and the process-wide block only', () => {
    const fields = parseGfxinfo(crlf(S.GFXINFO_ANDROID_14), 'com.example.shop');
    expect(fields).toMatchObject({
      'Total frames rendered': 51, 'Janky frames (count)': 9, 'Janky frames (percent)': 17.65,
      '50th percentile': 7, '90th percentile': 48, '95th percentile': 109, '99th percentile': 300,
      'Number Frame deadline missed': 9, 'Total graphics memory': 34570008,
    });
    expect(Object.keys(fields).some((k) => k.includes('legacy') || k.includes('gpu'))).toBe(false);
  });

  it('reads the block of the package itself in a multi-process dump, and nothing for another package', () => {
    const remote = S.GFXINFO_ANDROID_14.replace('[com.example.shop]', '[com.example.shop:remote]').replace('Total frames rendered: 51', 'Total frames rendered: 7');
    const both = remote + S.GFXINFO_ANDROID_14.split('\n').slice(3).join('\n');
    expect(parseGfxinfo(both, 'com.example.shop')['Total frames rendered']).toBe(51);
    expect(parseGfxinfo(S.GFXINFO_ANDROID_14, 'com.other.app')).toEqual({});
    expect(parseGfxinfo('Applications Graphics Acceleration Info:\nUptime: 1 Realtime: 1\n', 'com.example.shop')).toEqual({});
  });
});

describe('sample fields of one batched read', () => {
  const reading = (stat: string, uptime: number, wlanRx = 0): KernelReading => ({
    uptime,
    meminfo: parseMeminfo(S.MEMINFO_ARM64),
    stat: parseProcStat(`${stat}\nbtime 1710153725\n`),
    interfaces: parseNetDev(S.NET_DEV).map((i) => (i.name === 'wlan0' ? { ...i, rxBytes: i.rxBytes + wlanRx } : i)),
    cpuMhz: 2850,
    graphics: {},
  });

  it('gives totals first, then loads and rates against the previous read', () => {
    const first = sampleFields(reading(T0, 100), undefined);
    expect(first.fields).toMatchObject({ Frequency: 2850, 'Bytes In': 98765432 + 20480311, Free: 231848 * KB });
    expect(first.fields).not.toHaveProperty('Load');
    expect(first.fields).not.toHaveProperty(['Bytes In Per Second']);
    const second = sampleFields(reading(T1, 102, 4_000), first.baseline);
    expect(second.fields).toMatchObject({ Load: 46.14, 'IRQ Load': 3.99, 'Bytes In Per Second': 2_000, 'Bytes Out Per Second': 0 });
  });

  it('starts over after a reboot (boot time changed, uptime went back)', () => {
    const first = sampleFields(reading(T1, 5000), undefined);
    const rebooted = reading(T0, 12);
    rebooted.stat.bootTime = 1710159999;
    const after = sampleFields(rebooted, first.baseline);
    expect(after.fields).not.toHaveProperty('Load');
    expect(after.fields).not.toHaveProperty(['Bytes In Per Second']);
  });
});

describe('the batched sample script', () => {
  it('reads everything in one shell line, quoting the package, and splits back by section', () => {
    const script = sampleScript("com.example.shop'; reboot; '");
    expect(script).toContain("dumpsys gfxinfo 'com.example.shop'\\''; reboot; '\\'''");
    expect(script.split('echo @@')).toHaveLength(7);
    expect(sampleScript(undefined)).not.toContain('gfxinfo');
    const sections = splitSections('@@uptime\n1.00 2.00\n@@meminfo\nMemFree: 1 kB\n');
    expect(sections.get('uptime')).toBe('1.00 2.00');
  });
});
