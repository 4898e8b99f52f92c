/**
 * The iOS sampling capability, from what a paired device offers without developer services (the spec's memory,
 * CPU and network fields come from instruments' sysmontap, which needs a mounted developer disk image, so they
 * stay absent): battery level and charging from the com.apple.mobile.battery domain and disk use from
 * com.apple.disk_usage, plus the battery's temperature and voltage from the diagnostics_relay IORegistry
 * (AppleSmartBattery) where the device answers it, all from one lockdown session (each session costs a TLS
 * handshake on both ends, which is what sampling many devices spends most on). The health probe walks the path
 * every command takes: lockdownd reachable, a session with this host's pair record, a service started and
 * answering. The `log` stream is the driver's own syslog_relay stream (one relay connection per device).
 */
import type { PlistDict } from '@devicelab/shared';
import { DeviceCommandError, type DeviceSample, type DeviceSampling, type LogFollower, type LogStream } from '../device-driver';
import { batteryStatusOf } from './facts';
import type { ServiceEndpoint } from './lockdown';
import { type DeviceLink, withLockdown, withPlistService } from './services';

interface IosSamplingHost {
  /** The link of a Ready device (throws DeviceCommandError otherwise). */
  readyLink(id: string): DeviceLink;
  /** Tees the device's followed syslog to `follower` until stopped or the device's stream ends. */
  followSyslog(id: string, follower: LogFollower): LogStream;
}

const DIAGNOSTICS = 'com.apple.mobile.diagnostics_relay';

/** `sample` fields from the battery and disk_usage domains (absent keys give absent fields). */
export function lockdownSampleFields(battery: PlistDict, disk: PlistDict): Record<string, number> {
  const fields: Record<string, number> = {};
  if (typeof battery.BatteryCurrentCapacity === 'number') {
    fields['Battery Level'] = battery.BatteryCurrentCapacity;
    const status = batteryStatusOf(battery);
    fields['Battery Charging'] = status === 'Charging' ? 1 : 0;
    if (typeof battery.ExternalConnected === 'boolean') fields['External Power'] = battery.ExternalConnected ? 1 : 0;
  }
  const total = disk.TotalDataCapacity;
  const free = disk.TotalDataAvailable;
  if (typeof total === 'number') fields['Disk Total'] = total;
  if (typeof free === 'number') fields['Disk Free'] = free;
  if (typeof total === 'number' && typeof free === 'number') fields['Disk Used'] = Math.max(0, total - free);
  return fields;
}

/** Temperature (centi-degrees Celsius) and voltage (mV) of an AppleSmartBattery IORegistry entry. */
export function smartBatteryFields(registry: PlistDict): Record<string, number> {
  const fields: Record<string, number> = {};
  if (typeof registry.Temperature === 'number') fields['Battery Temperature'] = registry.Temperature / 100;
  if (typeof registry.Voltage === 'number') fields['Battery Voltage'] = registry.Voltage / 1000;
  if (typeof registry.CycleCount === 'number') fields['Battery Cycle Count'] = registry.CycleCount;
  return fields;
}

/** The AppleSmartBattery IORegistry entry through a started diagnostics_relay; {} where the device refuses it. */
async function readSmartBattery(link: DeviceLink, relay: ServiceEndpoint): Promise<PlistDict> {
  try {
    return await withPlistService(link, relay, link.timeoutMs, async (connection) => {
      const answer = await connection.request({ Request: 'IORegistry', EntryClass: 'AppleSmartBattery' });
      connection.send({ Request: 'Goodbye' });
      const registry = (answer.Diagnostics as PlistDict | undefined)?.IORegistry;
      return answer.Status === 'Success' && registry && typeof registry === 'object' && !Array.isArray(registry) ? registry as PlistDict : {};
    });
  } catch {
    return {}; // older devices or a relay that refuses: those fields stay absent
  }
}

export class IosSampling implements DeviceSampling {
  constructor(private readonly host: IosSamplingHost) {}

  /** One lockdown session (one TLS handshake, the costly part) reads both domains and starts the relay. */
  async sample(id: string): Promise<DeviceSample> {
    const link = this.host.readyLink(id);
    const started = Date.now();
    const { battery, disk, relay } = await withLockdown(link, async (session) => ({
      battery: await session.getValues('com.apple.mobile.battery'),
      disk: await session.getValues('com.apple.disk_usage'),
      relay: await session.startService(DIAGNOSTICS).catch(() => undefined),
    }));
    const time = (started + Date.now()) / 2;
    const registry = relay ? await readSmartBattery(link, relay) : {};
    return { time, fields: { ...lockdownSampleFields(battery, disk), ...smartBatteryFields(registry) } };
  }

  /** lockdownd answers, accepts this host's pair record, starts a service that then answers. */
  async probe(id: string, timeoutMs: number): Promise<void> {
    const link = { ...this.host.readyLink(id), timeoutMs };
    const step = async <T>(what: string, task: () => Promise<T>): Promise<T> => {
      try {
        return await task();
      } catch (err) {
        throw new DeviceCommandError(`${what}: ${(err as Error).message}`, err instanceof DeviceCommandError ? err.code : 'DEVICE_UNREACHABLE');
      }
    };
    const { version, relay } = await step('lockdownd session failed', () => withLockdown(link, async (session) => ({
      version: await session.getValue('ProductVersion'), relay: await session.startService(DIAGNOSTICS),
    })));
    if (typeof version !== 'string') throw new DeviceCommandError(`Device ${id} answered lockdown without a ProductVersion`, 'LOCKDOWN_ERROR');
    await step(`${DIAGNOSTICS} did not answer`, () => withPlistService(link, relay, timeoutMs, async (connection) => {
      const answer = await connection.request({ Request: 'Goodbye' });
      if (answer.Status !== 'Success') throw new Error(`Goodbye answered ${String(answer.Status)}`);
    }));
  }

  followLog(id: string, follower: LogFollower): LogStream {
    return this.host.followSyslog(id, follower);
  }
}
