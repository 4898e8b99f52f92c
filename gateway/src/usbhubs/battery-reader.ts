/**
 * Reads a device's battery now (level, status, temperature): battery care and USB telemetry need fresher
 * values than the facts read at connect. Android: `dumpsys battery` through the adb server.
 */
import type { DeviceBatteryStatus } from '@devicelab/shared';
import { type AdbServerOptions, createAdbClient } from '../drivers/android/adb-client';
import { parseBattery, parseBatteryTemperature } from '../drivers/android/parsers/battery';
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

export class AndroidBatteryReader implements BatteryReader {
  private readonly client;

  constructor(options: AdbServerOptions) {
    this.client = createAdbClient(options);
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
