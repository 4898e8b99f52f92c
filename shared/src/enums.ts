/** Enumerations of spec section 2.2, passed on the wire as strings. */

export const DeviceAvailabilityStatus = ['Offline', 'Online'] as const;
export type DeviceAvailabilityStatus = (typeof DeviceAvailabilityStatus)[number];

export const ApplicationFormFactor = ['Universal', 'Phone', 'Tablet'] as const;
export type ApplicationFormFactor = (typeof ApplicationFormFactor)[number];

export const DeviceBatteryStatus = ['Unknown', 'Charging', 'Discharging', 'NotCharging', 'Full'] as const;
export type DeviceBatteryStatus = (typeof DeviceBatteryStatus)[number];

export const EventType = [
  'DeviceAvailability', 'DeviceRetained', 'DeviceEnablement', 'DeviceOperatingSystemChange', 'DeviceDeletion',
  'ApplicationLaunch', 'ApplicationInstall', 'SharedViewOnlySessionCreated', 'UserLogin', 'UserCreated',
  'ServerStarting', 'ServerRestarting', 'Note',
] as const;
export type EventType = (typeof EventType)[number];

export const DeviceOperatingSystem = ['Unknown', 'iOS', 'Android'] as const;
export type DeviceOperatingSystem = (typeof DeviceOperatingSystem)[number];

export const DeviceFormFactor = ['Unknown', 'Phone', 'Tablet'] as const;
export type DeviceFormFactor = (typeof DeviceFormFactor)[number];

export const UsbHubPortState = ['Unknown', 'Off', 'Data', 'Charge'] as const;
export type UsbHubPortState = (typeof UsbHubPortState)[number];

export const UsbHubDeviceFlags = [
  'None', 'Off', 'Sync', 'Biased', 'ChargeIdle', 'ChargeProfiling', 'ChargeCharging', 'ChargeFinished',
  'Attached', 'Detached', 'Theft', 'Errors', 'Rebooted', 'VBusReset',
] as const;
export type UsbHubDeviceFlags = (typeof UsbHubDeviceFlags)[number];

/**
 * Case-insensitive enum lookup (wire rule 3, docs/wire-rules.md). Returns the canonical spelling, or undefined.
 * `aliases` maps lower-case alternative spellings (e.g. `sync` for `Data`, rule 8).
 */
export function parseEnumValue<T extends string>(
  values: readonly T[],
  text: string,
  aliases: Record<string, T> = {},
): T | undefined {
  const lower = text.trim().toLowerCase();
  // Own keys only: `constructor` or `__proto__` must not find Object.prototype's members.
  return values.find((v) => v.toLowerCase() === lower) ?? (Object.hasOwn(aliases, lower) ? aliases[lower] : undefined);
}

export const usbHubPortStateAliases: Record<string, UsbHubPortState> = { sync: 'Data' };

/**
 * How responses name a data-mode port's state (wire rule 26, docs/wire-rules.md): `Data` (the spec) or `Sync` (what the
 * vendor's server sent and its C# client's enum requires). A hub setting chooses.
 */
export const DataPortStateName = ['Data', 'Sync'] as const;
export type DataPortStateName = (typeof DataPortStateName)[number];
