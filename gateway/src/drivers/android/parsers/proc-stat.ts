/**
 * `/proc/stat`: the aggregate `cpu  ` line (USER_HZ ticks: user nice system idle iowait irq softirq steal
 * guest guest_nice) and `btime` (boot time, seconds). guest/guest_nice are already counted in user/nice.
 * Per-core lines are ignored: they vanish while a core is hot-unplugged.
 */
import { lines } from './text';

export interface CpuTimes {
  user: number;
  nice: number;
  system: number;
  idle: number;
  iowait: number;
  irq: number;
  softirq: number;
  steal: number;
}

export interface ProcStat {
  cpu?: CpuTimes;
  /** Boot time in epoch seconds; it changes when the device reboots. */
  bootTime?: number;
}

export function parseProcStat(text: string): ProcStat {
  const stat: ProcStat = {};
  for (const line of lines(text)) {
    const fields = line.trim().split(/\s+/);
    if (fields[0] === 'cpu' && !stat.cpu && fields.length >= 5) {
      const n = fields.slice(1, 9).map((v) => Number(v));
      if (n.slice(0, 4).some((v) => !Number.isFinite(v))) continue;
      const at = (i: number) => (Number.isFinite(n[i]) ? n[i] : 0);
      stat.cpu = {
        user: at(0), nice: at(1), system: at(2), idle: at(3), iowait: at(4), irq: at(5), softirq: at(6), steal: at(7),
      };
    } else if (fields[0] === 'btime' && /^\d+$/.test(fields[1] ?? '')) {
      stat.bootTime = Number(fields[1]);
    }
  }
  return stat;
}
