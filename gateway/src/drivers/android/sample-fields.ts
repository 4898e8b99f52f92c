/**
 * Turns one batched read of an Android device's kernel files into the `sample` fields of spec 2.5, with the
 * names and units of design.md (bytes, per second, percent 0-100, MHz). Loads and rates need the previous read
 * of the same device: the first read after start or reboot yields totals only. A field the device cannot
 * provide is absent, never zero.
 */
import { isCountedInterface, type InterfaceCounters } from './parsers/net-dev';
import type { CpuTimes, ProcStat } from './parsers/proc-stat';

export interface KernelReading {
  /** Seconds since boot (`/proc/uptime`): the time base of rates. */
  uptime?: number;
  meminfo: Map<string, number>;
  stat: ProcStat;
  interfaces: InterfaceCounters[];
  cpuMhz?: number;
  graphics: Record<string, number>;
}

/** What the next read needs of this one. */
export interface CounterBaseline {
  uptime?: number;
  bootTime?: number;
  cpu?: CpuTimes;
  interfaces: Map<string, InterfaceCounters>;
}

/** Spec memory names for /proc/meminfo keys (Android group; spec writes `Active (anon)` with a space). */
const MEMINFO_FIELDS: Array<[string, string]> = [
  ['Buffers', 'Buffers'], ['Cached', 'Cached'],
  ['Active(anon)', 'Active (anon)'], ['Inactive(anon)', 'Inactive (anon)'],
  ['Active(file)', 'Active (file)'], ['Inactive(file)', 'Inactive (file)'],
  ['HighTotal', 'User Total (HighTotal)'], ['HighFree', 'User Free (HighFree)'],
  ['LowTotal', 'Kernel Total (LowTotal)'], ['LowFree', 'Kernel Free (LowFree)'],
  ['AnonPages', 'AnonPages'], ['Mapped', 'Mapped'], ['KernelStack', 'Kernel Stack'], ['PageTables', 'Page Tables'],
  ['CommitLimit', 'Commit Limit'], ['Committed_AS', 'Committed_AS'], ['VmallocTotal', 'Vmalloc Total'],
  ['VmallocUsed', 'Vmalloc Used'], ['VmallocChunk', 'Vmalloc Chunk'],
];

/** Kernels print these as 0 placeholders (VmallocUsed before 5.3, VmallocChunk since 4.x): 0 means "unknown". */
const ZERO_MEANS_MISSING = new Set(['VmallocUsed', 'VmallocChunk']);

export function memoryFields(meminfo: Map<string, number>): Record<string, number> {
  const fields: Record<string, number> = {};
  const total = meminfo.get('MemTotal');
  const free = meminfo.get('MemFree');
  // Android has no wired memory: `Wired` stays absent. Used + Free = MemTotal.
  if (free !== undefined) fields.Free = free;
  if (total !== undefined && free !== undefined) fields.Used = total - free;
  if (meminfo.has('Active')) fields.Active = meminfo.get('Active') as number;
  if (meminfo.has('Inactive')) fields.Inactive = meminfo.get('Inactive') as number;
  for (const [key, name] of MEMINFO_FIELDS) {
    const value = meminfo.get(key);
    if (value === undefined || (value === 0 && ZERO_MEANS_MISSING.has(key))) continue;
    fields[name] = value;
  }
  return fields;
}

const round2 = (v: number) => Math.round(v * 100) / 100;

/** Loads over the interval between two aggregate `cpu` lines (negative deltas clamp to 0: iowait may go back). */
export function cpuLoadFields(previous: CpuTimes, current: CpuTimes): Record<string, number> {
  const d = (k: keyof CpuTimes) => Math.max(0, current[k] - previous[k]);
  const total = d('user') + d('nice') + d('system') + d('idle') + d('iowait') + d('irq') + d('softirq') + d('steal');
  if (total <= 0) return {};
  const pct = (v: number) => round2((v / total) * 100);
  return {
    Load: pct(total - d('idle') - d('iowait')),
    'User Load': pct(d('user') + d('nice')),
    'System Load': pct(d('system')),
    'IO Wait Load': pct(d('iowait')),
    'IRQ Load': pct(d('irq') + d('softirq')),
  };
}

/** Totals over real interfaces and, with a baseline, per-second rates (per interface, counter resets clamp to 0). */
export function networkFields(interfaces: InterfaceCounters[], previous: Map<string, InterfaceCounters> | undefined, seconds: number | undefined): Record<string, number> {
  const counted = interfaces.filter((i) => isCountedInterface(i.name));
  if (counted.length === 0) return {};
  const sum = (k: keyof Omit<InterfaceCounters, 'name'>) => counted.reduce((s, i) => s + i[k], 0);
  const fields: Record<string, number> = {
    'Bytes In': sum('rxBytes'),
    'Bytes Out': sum('txBytes'),
    'Errors In': sum('rxErrors'),
    'Errors Out': sum('txErrors'),
    'Dropped In': sum('rxDropped'),
    'Dropped Out': sum('txDropped'),
  };
  if (previous && seconds !== undefined && seconds > 0) {
    let inBytes = 0;
    let outBytes = 0;
    for (const i of counted) {
      const before = previous.get(i.name);
      // An interface that just came up (mobile data) counts from zero; a torn-down-and-back one restarted.
      inBytes += Math.max(0, i.rxBytes - (before?.rxBytes ?? 0));
      outBytes += Math.max(0, i.txBytes - (before?.txBytes ?? 0));
    }
    fields['Bytes In Per Second'] = round2(inBytes / seconds);
    fields['Bytes Out Per Second'] = round2(outBytes / seconds);
  }
  return fields;
}

/**
 * All `sample` fields of one read, and the baseline for the next. The baseline is dropped (no loads or rates
 * this time) when the device rebooted in between: `btime` changed or uptime went backwards.
 */
export function sampleFields(reading: KernelReading, baseline: CounterBaseline | undefined): { fields: Record<string, number>; baseline: CounterBaseline } {
  const rebooted = baseline !== undefined && (
    (baseline.bootTime !== undefined && reading.stat.bootTime !== undefined && Math.abs(baseline.bootTime - reading.stat.bootTime) > 1) ||
    (baseline.uptime !== undefined && reading.uptime !== undefined && reading.uptime < baseline.uptime));
  const previous = rebooted ? undefined : baseline;
  const seconds = previous?.uptime !== undefined && reading.uptime !== undefined ? reading.uptime - previous.uptime : undefined;
  const fields: Record<string, number> = {
    ...memoryFields(reading.meminfo),
    ...(previous?.cpu && reading.stat.cpu ? cpuLoadFields(previous.cpu, reading.stat.cpu) : {}),
    ...networkFields(reading.interfaces, previous?.interfaces, seconds),
    ...reading.graphics,
  };
  if (reading.cpuMhz !== undefined) fields.Frequency = reading.cpuMhz;
  return {
    fields,
    baseline: {
      uptime: reading.uptime,
      bootTime: reading.stat.bootTime,
      cpu: reading.stat.cpu,
      interfaces: new Map(reading.interfaces.map((i) => [i.name, i])),
    },
  };
}
