/**
 * Generated kernel files (/proc, /sys) for a simulated device.
 *
 * Every counter is a closed-form, monotonically increasing function of the
 * uptime, so two reads always show plausible growth, the per-core jiffies
 * add up to ~100 per second per core, and a reboot (new boot time) restarts
 * everything near zero (device-data.md section 4).
 */
import type { AndroidDeviceSpec } from './spec';

/** USER_HZ on Android. */
const HZ = 100;

/** Integral of a load curve: base*t plus a bounded wave; derivative stays > 0. */
function wavy(t: number, base: number, amplitude: number, period: number): number {
  return base * t + amplitude * period * (1 - Math.cos(t / period));
}

export class ProcModel {
  constructor(private readonly spec: AndroidDeviceSpec, private readonly bootAtMs: number) {}

  uptimeSeconds(now = Date.now()): number {
    // The kernel starts a couple of seconds before our "power on" instant is observable.
    return Math.max(0, (now - this.bootAtMs) / 1000) + 2.5;
  }

  /** Per-core [user, nice, system, idle, iowait, irq, softirq, steal, guest, guest_nice] in jiffies. */
  cpuTimes(now = Date.now()): number[][] {
    const t = this.uptimeSeconds(now);
    return Array.from({ length: this.spec.cpu.cores }, (_, i) => {
      // LITTLE cores (low index) do more background work than big ones.
      const weight = 1.25 - (i / Math.max(1, this.spec.cpu.cores - 1)) * 0.5;
      const busy = wavy(t, 0.1 * weight, 0.06, 37 + i * 3) * HZ;
      const user = Math.floor(busy * 0.56);
      const nice = Math.floor(busy * 0.03);
      const system = Math.floor(busy * 0.28);
      const iowait = Math.floor(busy * 0.04);
      const irq = Math.floor(busy * 0.05);
      const softirq = Math.floor(busy * 0.02);
      const idle = Math.floor(t * HZ) - user - nice - system - iowait - irq - softirq;
      return [user, nice, system, idle, iowait, irq, softirq, 0, 0, 0];
    });
  }

  stat(now = Date.now()): string {
    const cores = this.cpuTimes(now);
    const total = cores[0].map((_, col) => cores.reduce((s, c) => s + c[col], 0));
    const t = this.uptimeSeconds(now);
    const lines = [`cpu  ${total.join(' ')}`, ...cores.map((c, i) => `cpu${i} ${c.join(' ')}`)];
    const intr = Math.floor(wavy(t, 2100, 300, 29));
    const softirq = Math.floor(wavy(t, 800, 100, 31));
    lines.push(
      `intr ${intr} 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0`,
      `ctxt ${Math.floor(wavy(t, 3400, 500, 23))}`,
      `btime ${Math.floor(this.bootAtMs / 1000)}`,
      `processes ${Math.floor(900 + wavy(t, 2.1, 0.5, 41))}`,
      `procs_running ${1 + Math.floor((Math.sin(t / 7) + 1) * 1.5)}`,
      'procs_blocked 0',
      `softirq ${softirq} ${Math.floor(softirq * 0.01)} ${Math.floor(softirq * 0.3)} ${Math.floor(softirq * 0.02)} ${Math.floor(softirq * 0.1)} 0 0 ${Math.floor(softirq * 0.17)} ${Math.floor(softirq * 0.2)} 0 ${Math.floor(softirq * 0.2)}`,
    );
    return lines.join('\n') + '\n';
  }

  uptime(now = Date.now()): string {
    const idle = this.cpuTimes(now).reduce((s, c) => s + c[3], 0) / HZ;
    return `${this.uptimeSeconds(now).toFixed(2)} ${idle.toFixed(2)}\n`;
  }

  meminfo(now = Date.now()): string {
    const total = this.spec.memTotalKb;
    const t = this.uptimeSeconds(now);
    const k = (f: number) => Math.round(total * f);
    // Free memory breathes a little; everything else is derived so the invariants hold.
    const memFree = k(0.03 + 0.008 * Math.sin(t / 53));
    const activeAnon = k(0.128 + 0.01 * Math.sin(t / 71));
    const inactiveAnon = k(0.144);
    const activeFile = k(0.186);
    const inactiveFile = k(0.179 - 0.008 * Math.sin(t / 53));
    const cached = k(0.378);
    const swapTotal = total > 6_000_000 ? 4194300 : 2097148;
    const slab = k(0.0775);
    const sReclaimable = k(0.0213);
    // 32-bit ARM kernels have HIGHMEM (HighTotal + LowTotal = MemTotal), a 240 MB vmalloc area with a real
    // VmallocChunk, and none of the arm64-only keys.
    const highmem = !this.spec.cpu.abis[0].includes('64');
    const highTotal = Math.round(total * 0.635);
    const highFree = Math.round(memFree * 0.35);
    const rows: Array<[string, number]> = [
      ['MemTotal', total],
      ['MemFree', memFree],
      ['MemAvailable', memFree + Math.round(cached * 0.7) + sReclaimable],
      ['Buffers', k(0.0008)],
      ['Cached', cached],
      ['SwapCached', k(0.0053)],
      ['Active', activeAnon + activeFile],
      ['Inactive', inactiveAnon + inactiveFile],
      ['Active(anon)', activeAnon],
      ['Inactive(anon)', inactiveAnon],
      ['Active(file)', activeFile],
      ['Inactive(file)', inactiveFile],
      ['Unevictable', k(0.024)],
      ['Mlocked', k(0.0239)],
      ...(highmem ? [['HighTotal', highTotal], ['HighFree', highFree], ['LowTotal', total - highTotal], ['LowFree', memFree - highFree]] as Array<[string, number]> : []),
      ['SwapTotal', swapTotal],
      ['SwapFree', Math.round(swapTotal * 0.64)],
      ['Dirty', 412],
      ['Writeback', 0],
      ['AnonPages', activeAnon + inactiveAnon - k(0.0014)],
      ['Mapped', k(0.1539)],
      ['Shmem', k(0.0021)],
      ['KReclaimable', k(0.0434)],
      ['Slab', slab],
      ['SReclaimable', sReclaimable],
      ['SUnreclaim', slab - sReclaimable],
      ['KernelStack', k(0.0104)],
      ['ShadowCallStack', k(0.0026)],
      ['PageTables', k(0.0197)],
      ['NFS_Unstable', 0],
      ['Bounce', 0],
      ['WritebackTmp', 0],
      ['CommitLimit', swapTotal + Math.floor(total / 2)],
      ['Committed_AS', k(20.79)],
      ['VmallocTotal', 263061440],
      ['VmallocUsed', k(0.0298)],
      ['VmallocChunk', 0],
      ['Percpu', 10240],
      ['AnonHugePages', 0],
      ['ShmemHugePages', 0],
      ['ShmemPmdMapped', 0],
      ['FileHugePages', 0],
      ['FilePmdMapped', 0],
      ['CmaTotal', 204800],
      ['CmaFree', 2892],
    ];
    // Kernel format: "<name>:" padded to 16 columns, value right-aligned in 8, " kB".
    const arm64Only = new Set(['KReclaimable', 'ShadowCallStack', 'Percpu', 'AnonHugePages', 'ShmemHugePages', 'ShmemPmdMapped', 'FileHugePages', 'FilePmdMapped', 'CmaTotal', 'CmaFree']);
    const shown = highmem
      ? rows.filter(([name]) => !arm64Only.has(name)).map(([name, v]): [string, number] =>
        name === 'VmallocTotal' ? [name, 245760] : name === 'VmallocChunk' ? [name, 97284] : [name, v])
      : rows;
    return shown.map(([name, v]) => `${(name + ':').padEnd(16)}${String(v).padStart(8)} kB`).join('\n') + '\n';
  }

  netDev(now = Date.now()): string {
    const t = this.uptimeSeconds(now);
    const iface = (name: string, rxRate: number, txRate: number) => {
      const rx = Math.floor(wavy(t, rxRate, rxRate * 0.6, 19));
      const tx = Math.floor(wavy(t, txRate, txRate * 0.6, 23));
      return { name, rx, rxp: Math.floor(rx / 1310), tx, txp: Math.floor(tx / 300), rxDrop: Math.floor(rx / 8_000_000) };
    };
    const rows = [iface('lo', 180, 180), { name: 'dummy0', rx: 0, rxp: 0, tx: 1400, txp: 20, rxDrop: 0 }, iface('wlan0', 14_000, 2_600)];
    if (this.spec.operator) rows.push(iface('rmnet_data0', 900, 150));
    rows.push({ name: 'p2p0', rx: 0, rxp: 0, tx: 0, txp: 0, rxDrop: 0 });
    const header =
      'Inter-|   Receive                                                |  Transmit\n' +
      ' face |bytes    packets errs drop fifo frame compressed multicast|bytes    packets errs drop fifo colls carrier compressed\n';
    const line = (r: (typeof rows)[number]) => {
      const tx = r.name === 'lo' ? r.rx : r.tx;
      const txp = r.name === 'lo' ? r.rxp : r.txp;
      const n = (v: number, w: number) => String(v).padStart(w);
      return `${r.name.padStart(6)}:${n(r.rx, 8)} ${n(r.rxp, 7)} ${n(0, 4)} ${n(r.rxDrop, 4)} ${n(0, 4)} ${n(0, 5)} ${n(0, 10)} ${n(0, 9)} ${n(tx, 8)} ${n(txp, 7)} ${n(0, 4)} ${n(0, 4)} ${n(0, 4)} ${n(0, 5)} ${n(0, 7)} ${n(0, 10)}`;
    };
    return header + rows.map(line).join('\n') + '\n';
  }

  /** scaling_cur_freq of cpu0 (a LITTLE core on big.LITTLE SoCs) in kHz. */
  cpuFreqKhz(now = Date.now()): number {
    const steps = [300000, 574000, 738000, 930000, 1098000, 1197000, 1328000, 1401000, 1598000, 1704000, 1803000];
    const t = this.uptimeSeconds(now);
    const cap = Math.min(this.spec.cpu.maxFreqKhz, 1803000);
    const usable = steps.filter((s) => s <= cap);
    return usable[Math.floor(((Math.sin(t / 5) + 1) / 2) * (usable.length - 1))];
  }

  /**
   * `cpufreq/policyN/scaling_cur_freq` per cluster (N = first core of the cluster), in kHz: LITTLE cores as
   * cpu0, a mid cluster up to ~80 % and the big cluster up to the SoC's maximum, each on its own rhythm.
   */
  cpuFreqPolicies(now = Date.now()): Array<{ policy: number; khz: number }> {
    const cores = this.spec.cpu.cores;
    const little = { policy: 0, khz: this.cpuFreqKhz(now) };
    if (cores < 4) return [little];
    const t = this.uptimeSeconds(now);
    const max = this.spec.cpu.maxFreqKhz;
    const step = (top: number, phase: number) => Math.round((top * (0.3 + 0.7 * ((Math.sin(t / phase) + 1) / 2))) / 1000) * 1000;
    const big = cores >= 8
      ? [{ policy: cores / 2, khz: step(max * 0.8, 7) }, { policy: cores - 1, khz: step(max, 3) }]
      : [{ policy: cores / 2, khz: step(max, 3) }];
    return [little, ...big];
  }

  loadavg(now = Date.now()): string {
    const t = this.uptimeSeconds(now);
    const l = (p: number) => (2.5 + Math.sin(t / p) * 1.2).toFixed(2);
    return `${l(60)} ${l(300)} ${l(900)} 2/2301 ${Math.floor(900 + wavy(t, 2.1, 0.5, 41))}\n`;
  }
}
