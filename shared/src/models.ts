/**
 * API models of spec 2.3 in wire form: camelCase keys, enums as strings, DateTime as `yyyy-mm-ddThh:mm:ssZ`
 * strings, TimeSpan as seconds. Optional keys are omitted when null (wire-decisions rule 10).
 */
import type {
  ApplicationFormFactor, DeviceAvailabilityStatus, DeviceBatteryStatus, DeviceFormFactor, DeviceOperatingSystem,
} from './enums';

export interface DeviceProperty { name: string; value: string; type: 'System' }

export interface Application {
  id: string;
  displayName: string;
  applicationIdentifier: string;
  version?: string;
  buildVersion?: string;
  operatingSystem: DeviceOperatingSystem;
  minimumOperatingSystemVersion?: string;
  applicationBlob?: string;
  originalApplicationBlob?: string;
  fileName: string;
  remotePort: number;
  versionCounter: number;
  iconBlob?: string;
  fileByteCount: number;
  vendorApplicationName?: string;
  provisionExpirationDate?: string;
  provisionsAllDevices: boolean;
  signingCertificateName?: string;
  isSigningCertificatePresentInEmbeddedProvisionProfile: boolean;
  supportedFormFactors: ApplicationFormFactor;
  applicationErrors: string[];
  enabled: boolean;
  createdDate: string;
  appTeamIdentifier?: string;
  agentDylibTeamIdentifier?: string;
  isAgentDylibEmbeddedInApp: boolean;
  notes?: string;
}

export interface Device {
  id: string;
  availability: DeviceAvailabilityStatus;
  retainedById?: string;
  retainedByDisplayName?: string;
  retainedByUserName?: string;
  enabled: boolean;
  batteryStatus: DeviceBatteryStatus;
  batteryPercentCharged: number;
  diskSpace: number;
  diskSpaceUsed: number;
  slotNumber?: number;
  lastInuseAt?: string;
  lastDisconnectedAt?: string;
  lastConnectedAt?: string;
  deleted: boolean;
  notes?: string;
  name: string;
  model?: string;
  operatingSystem: DeviceOperatingSystem;
  operatingSystemVersion?: string;
  operatingSystemBuild?: string;
  macAddress?: string;
  serialNumber?: string;
  manufacturer?: string;
  friendlyModel?: string;
  vendorUniqueIdentifier: string;
  vendorDeviceName?: string;
  deviceClass?: string;
  formFactor: DeviceFormFactor;
  productType?: string;
  isAudioEnabled: boolean;
  hardwareModel?: string;
  usbHubSerialNumber?: string;
  usbHubPortNumber?: number;
  usbLocation?: string;
  bluetoothAddress?: string;
  properties?: DeviceProperty[];
  installedApplications?: Application[];
}

export interface DeviceAccessTicket {
  authenticator: string;
  gatewayAddress: string;
  gatewayPort: number;
  deviceVendorUniqueIdentifier: string;
  serialNumber: string;
}

export interface DeviceGatewayInformation {
  ServiceNodeId: string;
  ServiceVersion: string;
  systemDateTime: string;
  systemDateTimeUtc: string;
  deviceVendorUniqueIdentifiers: string[];
  buildTool: { path: string; versionString: string; version: string; buildVersion: string }[];
  automation: { path: string; version: string; pathHash: string }[];
  automationConfigurationError?: string;
}

export interface HubInformation {
  ServiceNodeId: string;
  ServiceVersion: string;
  systemDateTime: string;
  systemDateTimeUtc: string;
  deviceGatewayInformation: DeviceGatewayInformation[];
}

/** The all-zero Guid carried by installed applications the service does not manage (spec 4.2). */
export const UNMANAGED_APPLICATION_ID = '00000000-0000-0000-0000-000000000000';

const GUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
/** Accepts the forms .NET's Guid parser takes most often: plain, braced. */
export function parseGuid(text: string): string | undefined {
  const bare = text.trim().replace(/^\{(.*)\}$/, '$1');
  return GUID.test(bare) ? bare.toLowerCase() : undefined;
}
