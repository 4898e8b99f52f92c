/**
 * The Android sampling capability: every `sample` tick is ONE shell call that reads /proc/uptime, meminfo,
 * stat, net/dev, the cpufreq policies and (when the service launched an app on the device) `dumpsys gfxinfo`,
 * each behind an `echo @@name` marker, so all values belong to the same device instant. Baselines for loads and
 * rates are kept per device here; the schedule lives in gateway/src/samplers/.
 */
import type { DeviceClient } from '@devicefarmer/adbkit';
import { shellQuote } from '@devicelab/shared';
import { DeviceCommandError, type DeviceSample, type DeviceSampling, type LogFollower, type LogStream } from '../device-driver';
import { followLogcat } from './log-follow';
import { parseCpuFrequencyMhz } from './parsers/cpufreq';
import { parseGfxinfo } from './parsers/gfxinfo';
import { parseMeminfo } from './parsers/meminfo';
import { parseNetDev } from './parsers/net-dev';
import { parseProcStat } from './parsers/proc-stat';
import { batchScript, splitSections } from './parsers/text';
import { parseUptime } from './parsers/uptime';
import { sampleFields, type CounterBaseline } from './sample-fields';
import { runShell } from './shell';

interface AndroidSamplingHost {
  /** The adbkit handle of a Ready device (throws DeviceCommandError otherwise). */
  readyDevice(id: string): DeviceClient;
  /** The package the service launched last on the device, if any (its Graphics fields are sampled). */
  launchedPackage(id: string): string | undefined;
}

/** Every cpufreq policy (one per cluster; the parser keeps the fastest); cpu0 alone where the kernel has none. */
const CPUFREQ = 'cat /sys/devices/system/cpu/cpufreq/policy*/scaling_cur_freq 2>/dev/null || cat /sys/devices/system/cpu/cpu0/cpufreq/scaling_cur_freq 2>/dev/null';

export function sampleScript(packageId: string | undefined): string {
  return batchScript({
    uptime: 'cat /proc/uptime',
    meminfo: 'cat /proc/meminfo',
    stat: 'cat /proc/stat',
    netdev: 'cat /proc/net/dev',
    cpufreq: CPUFREQ,
    ...(packageId ? { gfxinfo: `dumpsys gfxinfo ${shellQuote(packageId)}` } : {}),
  });
}

export class AndroidSampling implements DeviceSampling {
  private readonly baselines = new Map<string, CounterBaseline>();
  private readonly lastLogLines = new Map<string, string>();

  constructor(private readonly host: AndroidSamplingHost, private readonly sampleTimeoutMs = 15_000) {}

  async sample(id: string): Promise<DeviceSample> {
    const device = this.host.readyDevice(id);
    const packageId = this.host.launchedPackage(id);
    const started = Date.now();
    const output = await runShell(device, sampleScript(packageId), this.sampleTimeoutMs);
    const time = (started + Date.now()) / 2;
    const sections = splitSections(output);
    if (!sections.has('meminfo') || !sections.has('stat')) {
      throw new DeviceCommandError(`Device ${id} returned no readable /proc files`, 'SAMPLE_UNREADABLE');
    }
    const { fields, baseline } = sampleFields({
      uptime: parseUptime(sections.get('uptime') ?? ''),
      meminfo: parseMeminfo(sections.get('meminfo') ?? ''),
      stat: parseProcStat(sections.get('stat') ?? ''),
      interfaces: parseNetDev(sections.get('netdev') ?? ''),
      cpuMhz: parseCpuFrequencyMhz(sections.get('cpufreq') ?? ''),
      graphics: packageId ? parseGfxinfo(sections.get('gfxinfo') ?? '', packageId) : {},
    }, this.baselines.get(id));
    this.baselines.set(id, baseline);
    return { time, fields };
  }

  async probe(id: string, timeoutMs: number): Promise<void> {
    const output = await runShell(this.host.readyDevice(id), 'getprop sys.boot_completed', timeoutMs);
    if (output.trim() !== '1') {
      throw new DeviceCommandError(`Device ${id} answered the probe with ${JSON.stringify(output.trim().slice(0, 200))} instead of boot completed`, 'DEVICE_NOT_READY');
    }
  }

  followLog(id: string, follower: LogFollower): LogStream {
    const device = this.host.readyDevice(id);
    return followLogcat(device, {
      line: (text) => {
        this.lastLogLines.set(id, text);
        follower.line(text);
      },
      end: (error) => follower.end(error),
    }, this.lastLogLines.get(id));
  }

  /** The device left the host: its baselines mean nothing any more. */
  forget(id: string): void {
    this.baselines.delete(id);
    this.lastLogLines.delete(id);
  }
}
