/**
 * What a port mode does to the simulated device behind it, as on real hardware: Off cuts power and data
 * (the device leaves adb, its battery discharges), Charge keeps power but no data (leaves adb, charges),
 * Sync / Biased carry data and power (the device is back on adb, charging).
 */
import type { PortMode } from './hub-model';

interface PortEffects {
  /** The device's USB data link: true plugs it into adb, false unplugs it. */
  setDataLink(deviceSerial: string, connected: boolean): void;
  setUsbPower(deviceSerial: string, powered: boolean): void;
}

export function applyPortMode(effects: PortEffects, deviceSerial: string, mode: PortMode): void {
  effects.setUsbPower(deviceSerial, mode !== 'o');
  effects.setDataLink(deviceSerial, mode === 's' || mode === 'b');
}
