/**
 * Device facts from lockdown values (device-data.md 2.1-2.3): the value tree, com.apple.mobile.battery and
 * com.apple.disk_usage mapped to DeviceState fields. Properties are the value tree flattened: nested keys joined
 * with `.`, array items as `[i]`; data as base64, dates as ISO 8601 UTC, booleans as `true`/`false`.
 */
import type { DeviceProperty, DeviceState } from '@devicelab/proto';
import { type DeviceBatteryStatus, type PlistDict, type PlistValue, PlistReal, isDict } from '@devicelab/shared';

/** Everything of DeviceState except readiness and packages. */
export type IosFacts = Omit<DeviceState, 'readiness' | 'readinessDetail' | 'packages'>;

/** Marketing names of the models in device-data.md 2.1; other models keep their ProductType. */
const MARKETING_NAMES: Record<string, string> = {
  'iPhone12,8': 'iPhone SE (2nd generation)', 'iPhone14,5': 'iPhone 13', 'iPhone14,2': 'iPhone 13 Pro',
  'iPhone14,6': 'iPhone SE (3rd generation)', 'iPhone15,2': 'iPhone 14 Pro', 'iPhone15,4': 'iPhone 15',
  'iPhone16,1': 'iPhone 15 Pro', 'iPad13,18': 'iPad (10th generation)', 'iPad14,1': 'iPad mini (6th generation)',
};

function flattenValues(value: PlistValue, prefix = '', out: DeviceProperty[] = []): DeviceProperty[] {
  if (Array.isArray(value)) {
    value.forEach((item, i) => flattenValues(item, `${prefix}[${i}]`, out));
  } else if (isDict(value)) {
    for (const [key, item] of Object.entries(value)) flattenValues(item, prefix ? `${prefix}.${key}` : key, out);
  } else {
    out.push({ name: prefix, value: scalarText(value) });
  }
  return out;
}

function scalarText(value: PlistValue): string {
  if (Buffer.isBuffer(value)) return value.toString('base64');
  if (value instanceof Date) return value.toISOString().replace(/\.\d{3}Z$/, 'Z');
  if (value instanceof PlistReal) return String(value.value);
  return String(value);
}

/** Full > Charging > on external power but not charging > Discharging; no battery domain: Unknown. */
export function batteryStatusOf(battery: PlistDict): DeviceBatteryStatus {
  if (battery.HasBattery === false || battery.BatteryCurrentCapacity === undefined) return 'Unknown';
  if (battery.FullyCharged === true) return 'Full';
  if (battery.BatteryIsCharging === true) return 'Charging';
  if (battery.ExternalConnected === true) return 'NotCharging';
  return 'Discharging';
}

export function factsFromLockdown(udid: string, values: PlistDict, battery: PlistDict, disk: PlistDict): IosFacts {
  const text = (key: string): string | undefined => (typeof values[key] === 'string' && values[key] ? String(values[key]) : undefined);
  const productType = text('ProductType');
  const deviceClass = text('DeviceClass');
  const facts: IosFacts = {
    vendorUniqueIdentifier: udid,
    operatingSystem: 'iOS',
    manufacturer: 'Apple',
    serialNumber: text('SerialNumber') ?? udid,
    properties: flattenValues(values),
    formFactor: deviceClass === 'iPad' ? 'Tablet' : deviceClass === 'iPhone' || deviceClass === 'iPod' ? 'Phone' : 'Unknown',
  };
  const set = <K extends keyof IosFacts>(key: K, value: IosFacts[K] | undefined) => {
    if (value !== undefined) facts[key] = value;
  };
  set('model', productType);
  set('friendlyModel', productType ? MARKETING_NAMES[productType] ?? productType : undefined);
  set('productType', productType);
  set('hardwareModel', text('HardwareModel'));
  set('deviceClass', deviceClass);
  set('vendorDeviceName', text('DeviceName'));
  set('operatingSystemVersion', text('ProductVersion'));
  set('operatingSystemBuild', text('BuildVersion'));
  set('macAddress', text('WiFiAddress')?.toUpperCase());
  set('bluetoothAddress', text('BluetoothAddress')?.toUpperCase());
  if (typeof battery.BatteryCurrentCapacity === 'number') facts.batteryPercent = battery.BatteryCurrentCapacity;
  facts.batteryStatus = batteryStatusOf(battery);
  if (typeof disk.TotalDataCapacity === 'number' && typeof disk.TotalDataAvailable === 'number') {
    facts.diskSpace = disk.TotalDataCapacity;
    facts.diskSpaceUsed = Math.max(0, disk.TotalDataCapacity - disk.TotalDataAvailable);
  }
  return facts;
}
