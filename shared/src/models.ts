/**
 * API models of spec 2.3 in wire form: camelCase keys, enums as strings, DateTime as `yyyy-mm-ddThh:mm:ssZ`
 * strings, TimeSpan as seconds. Optional keys are omitted when null (wire rule 10, docs/wire-rules.md).
 */
import type { DeviceReadinessState } from './readiness';
import type {
  ApplicationFormFactor, DeviceAvailabilityStatus, DeviceBatteryStatus, DeviceFormFactor, DeviceOperatingSystem,
  EventType, UsbHubPortState,
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
  /** Extension: who uploaded this entry (display name at upload); absent for uploads before the hub recorded it. */
  uploadedByName?: string;
}

/** Extension `GET /Device/AutomationSession`: a device's open automation (WebDriver) session. */
export interface AutomationSession {
  /** The session id: for the session's user and administrators (DeviceReleaseAny) only. */
  sessionId?: string;
  /** Its first 8 characters, as Appium's log names it. */
  sessionSignature: string;
  /** The login of the session's user. */
  userName: string;
  startTime: string;
  lastCommandTime: string;
  /** Seconds without a command before the lab deletes the session; 0: never. */
  newCommandTimeout: number;
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
  /**
   * Extension: the open automation session (WebDriver, `/Appium`) that holds the device's retain, by its signature
   * (the first 8 characters of its id, as Appium's own log names it), and its start. The whole id is told only to
   * the session's user and administrators: a command bearing it needs no other credential.
   */
  automationSessionSignature?: string;
  automationSessionStartTime?: string;
  /** The device's current booking, or else its next one (extension /Reservation). */
  nextReservationStartTime?: string;
  nextReservationEndTime?: string;
  reservedById?: string;
  reservedByDisplayName?: string;
  /** Extension, while retained: when the lease ends unless renewed (a maximum lease length applies). */
  leaseEndTime?: string;
  /** Extension, while retained: when the retain is released unless the device is used before. */
  idleReleaseTime?: string;
  /** Extension, while retained: the lease name the holder gave ('' or absent: none). */
  leaseName?: string;
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
  /** Extension: why the device is or is not usable (`Ready` only when Online); clients of the spec ignore it. */
  readiness: DeviceReadinessState;
  /** Extension: the gateway's words for a readiness other than Ready (e.g. how to authorize USB debugging). */
  readinessReason?: string;
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

export interface BuildToolInformation { path: string; versionString: string; version: string; buildVersion: string }

/**
 * A gateway in HubInformation, with the vendor C# client's names beside the spec's (wire rule 25, docs/wire-rules.md):
 * `deviceConnectNodeId`/`deviceConnectVersion`, `xcode` = buildTool, `appium` = automation (its `patchHash`
 * = pathHash), `appiumConfigurationError` = automationConfigurationError.
 */
export interface DeviceGatewayInformation {
  ServiceNodeId: string;
  ServiceVersion: string;
  deviceConnectNodeId: string;
  deviceConnectVersion: string;
  systemDateTime: string;
  systemDateTimeUtc: string;
  deviceVendorUniqueIdentifiers: string[];
  buildTool: BuildToolInformation[];
  xcode: BuildToolInformation[];
  /** `drivers` (extension): the Appium drivers installed there (`appium driver list --installed`). */
  automation: { path: string; version: string; pathHash: string; drivers?: { name: string; version: string }[] }[];
  appium: { path: string; version: string; patchHash: string }[];
  automationConfigurationError?: string;
  appiumConfigurationError?: string;
}

/** A port of a gateway's USB hub (spec 2.3), empty ports included (name '', milliamps 0). */
export interface UsbHubDevice {
  name: string;
  location: string;
  serialNumber: string;
  usbHubSerialNumber: string;
  usbHubPortNumber: number;
  milliamps: number;
  /** `Sync` in place of `Data` when the hub's dataPortState setting says so. */
  state: UsbHubPortState | 'Sync';
  /** UsbHubDeviceFlags names, comma separated as .NET writes a flags enum ("Attached, Sync"). */
  flags: string;
  /** TimeSpan: total seconds. */
  chargingTime: number;
  chargingProfile: string;
}

export interface UsbHub {
  name: string;
  location: string;
  serialNumber: string;
  description: string;
  model: string;
  firmware: string;
  firmwareDate: string;
  /** TimeSpan: total seconds. */
  uptime: number;
  fiveVoltNow: number;
  fiveVoltMin: number;
  fiveVoltMax: number;
  errorMessage: string;
  isErrored: boolean;
  devices: UsbHubDevice[];
}

/** GET /Gateway: `name` before `usbHubList`, and each hub's `devices` last (wire rule 30, docs/wire-rules.md). */
export interface GatewayDescription {
  name: string;
  publicAddress: string;
  publicPort: number;
  usbHubList: UsbHub[];
}

/** GatewayDescription with the fleet fields (extension): clients that do not know them ignore them. */
export type FleetGatewayDescription = GatewayDescription & {
  isConnected: boolean;
  lastSeenAt?: string;
  version?: string;
  /** The hub replica the gateway's link last landed on (GET /Service lists replicas). */
  hubReplica?: string;
};

/** GET /Service, with the vendor C# client's names beside the spec's (wire rule 25, docs/wire-rules.md). */
export interface HubInformation {
  ServiceNodeId: string;
  ServiceVersion: string;
  deviceConnectNodeId: string;
  deviceConnectVersion: string;
  systemDateTime: string;
  systemDateTimeUtc: string;
  deviceGatewayInformation: DeviceGatewayInformation[];
  gatewayInformation: DeviceGatewayInformation[];
}

/** Event (spec 2.3) with the real wire's spellings beside the spec's (wire rule 16, docs/wire-rules.md). */
export interface Event {
  id: string;
  deviceId?: string;
  deviceName?: string;
  eventType: EventType;
  EventDate: string;
  eventDate: string;
  performedById?: string;
  performedByName?: string;
  intValue: number;
  boolValue: boolean;
  stringValue?: string;
  message: string;
  isSuccess: boolean;
  propertiesId?: string;
  applicationId?: string;
  applicationName?: string;
  userId?: string;
  deviceInuseCount: number;
  deviceOnlineCount: number;
  /** Extension: a DeviceRetained event of a retain made for an automation (WebDriver) session; absent otherwise. */
  isAutomationSession?: true;
}

export interface DeviceUsageSummary {
  id: string;
  deviceId: string;
  deviceName?: string;
  performedById?: string;
  performedByName?: string;
  applicationId?: string;
  applicationName?: string;
  reservedById?: string;
  reservedByName?: string;
  eventType: EventType;
  operatingSystem: DeviceOperatingSystem;
  operatingSystemVersion?: string;
  startDate: string;
  /** Omitted while the period is still open (isDirty). */
  endDate?: string;
  /** TimeSpan: total seconds. */
  duration: number;
  isDirty: boolean;
  /** Extension: the period (or the install or launch during it) of a retain made for an automation (WebDriver) session. */
  isAutomationSession?: true;
}

/** Reports: keys in this order on the wire (count, pageSize, list). */
export interface EventHistory { count: number; pageSize: number; events: Event[] }
export interface DeviceUsageHistory { count: number; pageSize: number; deviceUsage: DeviceUsageSummary[] }
/** One window of `/Report/Availability` (the C# client's ReportDeviceAvailabilityTimeline). */
export interface DeviceAvailabilitySample { date: string; online: number; inUse: number }

/** The all-zero Guid carried by installed applications the service does not manage (spec 4.2). */
export const UNMANAGED_APPLICATION_ID = '00000000-0000-0000-0000-000000000000';

const GUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
/** Accepts the forms .NET's Guid parser takes most often: plain, braced. */
export function parseGuid(text: string): string | undefined {
  const bare = text.trim().replace(/^\{(.*)\}$/, '$1');
  return GUID.test(bare) ? bare.toLowerCase() : undefined;
}

/** Spec UserProperty. */
export interface UserProperty { name: string; value: string }

/** Spec User in wire form: `email` is the login; password and API token are never part of it. */
export interface User {
  id: string;
  email: string;
  isActive: boolean;
  firstName?: string;
  middleName?: string;
  lastName?: string;
  notes?: string;
  organization?: string;
  title?: string;
  location?: string;
  address1?: string;
  address2?: string;
  city?: string;
  region?: string;
  postalCode?: string;
  country?: string;
  homePhone?: string;
  mobilePhone?: string;
  officePhone?: string;
  faxPhone?: string;
  createdDate?: string;
  lastLoginDate?: string;
  roles: string[];
  properties: UserProperty[];
}

/** Extension `GET /Role`: a role and its entitlements (PascalCase wire names). */
export interface Role {
  id: string;
  name: string;
  entitlements: string[];
  isBuiltIn: boolean;
  /** Extension: the longest lease its holders may keep a device (minutes; 0: no maximum); absent: the lab's. */
  maxLeaseMinutes?: number;
}
