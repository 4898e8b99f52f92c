/** Reads an Android device's battery now (`dumpsys battery`): battery care and USB telemetry want fresh values. */
import type { DeviceClient } from '@devicefarmer/adbkit';
import type { BatteryReading } from '../device-driver';
import { parseBattery, parseBatteryTemperature } from './parsers/battery';
import { runShell } from './shell';

/** Undefined when the device does not answer or reports no level. */
export async function readAndroidBattery(device: DeviceClient): Promise<BatteryReading | undefined> {
  try {
    const text = await runShell(device, 'dumpsys battery', 10_000);
    const battery = parseBattery(text);
    if (battery.percent < 0) return undefined;
    return { percent: battery.percent, status: battery.status, temperatureC: parseBatteryTemperature(text) };
  } catch {
    return undefined;
  }
}
