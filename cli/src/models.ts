/**
 * The parts of the API's models (spec 2.3) that the CLI reads; the hub sends more. Written here, not imported from
 * @devicelab/shared: the CLI installs on its own (Node built-ins, commander, ws, bufferutil).
 */
export interface Device {
  id: string;
  name?: string;
  availability?: 'Online' | 'Offline';
  enabled?: boolean;
  deleted?: boolean;
  retainedById?: string;
  retainedByUserName?: string;
  /** The lease name the holder retained it under (extension, while retained). */
  leaseName?: string;
  retainedByDisplayName?: string;
  model?: string;
  friendlyModel?: string;
  manufacturer?: string;
  operatingSystem?: 'Unknown' | 'iOS' | 'Android';
  operatingSystemVersion?: string;
  serialNumber?: string;
  vendorUniqueIdentifier?: string;
  formFactor?: string;
  batteryPercentCharged?: number;
  usbHubSerialNumber?: string;
  usbHubPortNumber?: number;
}

export interface DeviceAccessTicket {
  authenticator: string;
  gatewayAddress: string;
  gatewayPort: number;
  deviceVendorUniqueIdentifier: string;
  serialNumber: string;
}

export interface Application {
  id: string;
  displayName?: string;
  applicationIdentifier?: string;
  version?: string;
  buildVersion?: string;
  operatingSystem?: string;
  fileName?: string;
  fileByteCount?: number;
  versionCounter?: number;
  createdDate?: string;
}

export interface User {
  id: string;
  email?: string;
  userName?: string;
  firstName?: string;
  lastName?: string;
  isActive?: boolean;
  roles?: string[];
  lastLoginDate?: string;
}
