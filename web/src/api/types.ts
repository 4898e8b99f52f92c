/**
 * The REST models the dashboard reads, derived by hand from the hub's own OpenAPI document
 * (`GET /apiv1/openapi.json`, built from hub/src/api/openapi/schemas.ts); only the fields the dashboard uses.
 * web/test/api-types.test.ts checks every field named here against that document, so a rename fails a test.
 */
export type DeviceOperatingSystem = 'Unknown' | 'iOS' | 'Android';
export type DeviceAvailabilityStatus = 'Offline' | 'Online';
export type DeviceBatteryStatus = 'Unknown' | 'Charging' | 'Discharging' | 'NotCharging' | 'Full';
/** Hub extension on Device: only Ready is Online; Rebooting is the hub's own, from a reboot until Ready. */
export type DeviceReadiness = 'Ready' | 'Unauthorized' | 'Offline' | 'Booting' | 'Detached' | 'Rebooting';
export type UsbHubPortState = 'Unknown' | 'Off' | 'Data' | 'Sync' | 'Charge';

export interface Result<T = undefined> {
  isSuccess: boolean;
  errorMessage?: string;
  data?: T;
}

export interface DeviceProperty { name: string; value?: string }

export interface Application {
  id: string;
  displayName: string;
  applicationIdentifier: string;
  version?: string;
  buildVersion?: string;
  operatingSystem: DeviceOperatingSystem;
  fileName: string;
  versionCounter: number;
  iconBlob?: string;
  fileByteCount: number;
  provisionExpirationDate?: string;
  provisionsAllDevices: boolean;
  applicationErrors: string[];
  enabled: boolean;
  createdDate: string;
  notes?: string;
}

export interface Device {
  id: string;
  availability: DeviceAvailabilityStatus;
  retainedById?: string;
  retainedByDisplayName?: string;
  /** Spec fields, set while someone holds a reservation of the device. */
  reservedById?: string;
  reservedByDisplayName?: string;
  readiness?: DeviceReadiness;
  readinessReason?: string;
  enabled: boolean;
  batteryStatus: DeviceBatteryStatus;
  batteryPercentCharged: number;
  lastDisconnectedAt?: string;
  deleted: boolean;
  notes?: string;
  name: string;
  model?: string;
  friendlyModel?: string;
  manufacturer?: string;
  operatingSystem: DeviceOperatingSystem;
  operatingSystemVersion?: string;
  serialNumber?: string;
  vendorUniqueIdentifier: string;
  formFactor: string;
  usbHubSerialNumber?: string;
  usbHubPortNumber?: number;
  properties?: DeviceProperty[];
  installedApplications?: Application[];
}

/** A hub port (UsbHubDevice); empty ports have name "" and milliamps 0. */
export interface UsbHubDevice {
  name: string;
  serialNumber?: string;
  usbHubSerialNumber?: string;
  usbHubPortNumber: number;
  milliamps: number;
  state: UsbHubPortState;
  /** Comma separated UsbHubDeviceFlags names. */
  flags?: string;
}

export interface UsbHub {
  name?: string;
  serialNumber: string;
  model?: string;
  fiveVoltNow?: number;
  fiveVoltMin?: number;
  fiveVoltMax?: number;
  isErrored?: boolean;
  errorMessage?: string;
  devices: UsbHubDevice[];
}

export interface GatewayDescription {
  name: string;
  publicAddress?: string;
  publicPort?: number;
  usbHubList: UsbHub[];
  /** Fleet extension fields of GET /Gateway (and the event stream): disconnected gateways are listed too. */
  isConnected?: boolean;
  lastSeenAt?: string;
  version?: string;
  hubReplica?: string;
}

export interface AsyncStatus<T = unknown> {
  isComplete: boolean;
  data?: T;
  /** Hub extension: percent done while running, once the work reported one (installs). */
  progress?: number;
}

export interface User {
  id: string;
  email?: string;
  firstName?: string;
  lastName?: string;
  isActive: boolean;
  lastLoginDate?: string;
  roles?: string[];
}

export interface Role { id: string; name: string; entitlements?: string[] }

/** GET /apiv1/Session (a dashboard extension, not in the spec). */
export interface SessionUser {
  id: string;
  login: string;
  displayName: string;
  roles: string[];
  entitlements: string[];
}
