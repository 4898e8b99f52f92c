/**
 * Reads a device's battery now (level, status, temperature): battery care and USB telemetry need fresher
 * values than the facts read at connect. Android: `dumpsys battery` through the adb server.
 */
import Adb from '@devicefarmer/adbkit';
import type { DeviceBatteryStatus } from '@devicelab/shared';
import { parseBattery } from '../drivers/android/parsers/battery';
import { runShell } from '../drivers/android/shell';

export interface BatteryReading {
  percent: number;
  status: DeviceBatteryStatus;
  /** Degrees Celsius, when the device reports it. */
  temperatureC?: number;
}

export interface BatteryReader {
  /** Undefined when the device cannot be read now (not connected, not answering). */
  read(vendorUniqueIdentifier: string): Promise<BatteryReading | undefined>;
}

/** `temperature: 298` in `dumpsys battery` is tenths of a degree Celsius. */
export function parseBatteryTemperature(text: string): number | undefined {
  const m = /^\s*temperature:\s*(-?\d+)\s*$/m.exec(text);
  return m ? Number(m[1]) / 10 : undefined;
}

export class AndroidBatteryReader implements BatteryReader {
  private readonly client;

  constructor(options: { adbPort?: number; adbBin?: string }) {
    const port = options.adbPort ?? (Number(process.env.ANDROID_ADB_SERVER_PORT) || 5037);
    this.client = Adb.createClient({ port, bin: options.adbBin });
  }

  async read(vendorUniqueIdentifier: string): Promise<BatteryReading | undefined> {
    try {
      const text = await runShell(this.client.getDevice(vendorUniqueIdentifier), 'dumpsys battery', 10_000);
      const battery = parseBattery(text);
      if (battery.percent < 0) return undefined;
      return { percent: battery.percent, status: battery.status, temperatureC: parseBatteryTemperature(text) };
    } catch {
      return undefined;
    }
  }
}
