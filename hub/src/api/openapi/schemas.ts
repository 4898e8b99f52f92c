/** JSON Schemas (OpenAPI 3.1 = JSON Schema 2020-12) of the spec's models (section 2.3), keyed by model name. */
import { DeviceReadinessState } from '@devicelab/shared';

type Schema = Record<string, unknown>;

const str = { type: 'string' };
const bool = { type: 'boolean' };
const int32 = { type: 'integer', format: 'int32' };
const int64 = { type: 'integer', format: 'int64' };
const double = { type: 'number', format: 'double' };
const guid = { type: 'string', format: 'uuid' };
const dateTime = { type: 'string', format: 'date-time', description: 'UTC, yyyy-mm-ddThh:mm:ssZ' };
const timeSpan = { type: 'number', description: 'TimeSpan: total seconds' };
const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
const arrayOf = (items: Schema) => ({ type: 'array', items });
const enumOf = (...values: string[]) => ({ type: 'string', enum: values });
const object = (properties: Record<string, Schema>, description?: string): Schema =>
  ({ type: 'object', ...(description ? { description } : {}), properties });

export const SCHEMAS: Record<string, Schema> = {
  DeviceAvailabilityStatus: enumOf('Offline', 'Online'),
  ApplicationFormFactor: enumOf('Universal', 'Phone', 'Tablet'),
  DeviceBatteryStatus: enumOf('Unknown', 'Charging', 'Discharging', 'NotCharging', 'Full'),
  EventType: enumOf('DeviceAvailability', 'DeviceRetained', 'DeviceEnablement', 'DeviceOperatingSystemChange',
    'DeviceDeletion', 'ApplicationLaunch', 'ApplicationInstall', 'SharedViewOnlySessionCreated', 'UserLogin',
    'UserCreated', 'ServerStarting', 'ServerRestarting', 'Note'),
  DeviceOperatingSystem: enumOf('Unknown', 'iOS', 'Android'),
  DeviceFormFactor: enumOf('Unknown', 'Phone', 'Tablet'),
  DevicePropertyType: enumOf('System'),
  DeviceReadiness: enumOf(...DeviceReadinessState),
  UsbHubPortState: { ...enumOf('Unknown', 'Off', 'Data', 'Sync', 'Charge'),
    description: 'Requests also accept Sync for Data. Responses write Data, or Sync when the dataPortState setting says so.' },
  Application: object({
    id: guid, displayName: str, applicationIdentifier: str, version: str, buildVersion: str,
    operatingSystem: ref('DeviceOperatingSystem'), minimumOperatingSystemVersion: str, applicationBlob: str,
    originalApplicationBlob: str, fileName: str, remotePort: int32, versionCounter: int32, iconBlob: str,
    fileByteCount: int64, vendorApplicationName: str, provisionExpirationDate: dateTime, provisionsAllDevices: bool,
    signingCertificateName: str, isSigningCertificatePresentInEmbeddedProvisionProfile: bool,
    supportedFormFactors: ref('ApplicationFormFactor'), applicationErrors: arrayOf(str), enabled: bool,
    createdDate: dateTime, appTeamIdentifier: str, agentDylibTeamIdentifier: str, isAgentDylibEmbeddedInApp: bool,
    notes: str, uploadedByName: { ...str, description: 'Extension: who uploaded this entry (display name at upload).' },
  }),
  AutomationSession: object({
    sessionId: { ...str, description: 'The session id: only for the session\'s user and administrators (DeviceReleaseAny).' }, sessionSignature: str,
    userName: str, startTime: dateTime, lastCommandTime: dateTime,
    newCommandTimeout: { ...int32, description: 'Seconds without a command before the lab deletes the session; 0: never.' },
  }),
  DeviceProperty: object({ name: str, value: str, type: ref('DevicePropertyType') }),
  Device: object({
    id: guid, name: str, availability: ref('DeviceAvailabilityStatus'), retainedById: guid,
    retainedByDisplayName: str, retainedByUserName: str, enabled: bool, batteryStatus: ref('DeviceBatteryStatus'),
    batteryPercentCharged: int32, diskSpace: int64, diskSpaceUsed: int64, slotNumber: int32,
    nextReservationStartTime: dateTime, nextReservationEndTime: dateTime, reservedById: guid,
    reservedByDisplayName: str,
    automationSessionSignature: { ...str, description: 'Extension: the open automation session (WebDriver, /Appium) that retains the device, by the first 8 characters of its id (the whole id, which commands accept as their credential, only in GET /Device/AutomationSession for its user and administrators).' },
    automationSessionStartTime: { ...dateTime, description: 'Extension: when that automation session was created.' },
    leaseEndTime: { ...dateTime, description: 'Extension, while retained: when the lease ends unless renewed (action=renew).' },
    idleReleaseTime: { ...dateTime, description: 'Extension, while retained: when the retain is released unless the device is used before.' },
    leaseName: { ...str, description: 'Extension, while retained: the lease name given at retain.' },
    lastInuseAt: dateTime, lastDisconnectedAt: dateTime, lastConnectedAt: dateTime,
    deleted: bool, notes: str, model: str, operatingSystem: ref('DeviceOperatingSystem'), operatingSystemVersion: str,
    operatingSystemBuild: str, macAddress: str, serialNumber: str, manufacturer: str, friendlyModel: str,
    vendorUniqueIdentifier: str, vendorDeviceName: str, deviceClass: str, formFactor: ref('DeviceFormFactor'),
    productType: str, isAudioEnabled: bool, hardwareModel: str, usbHubSerialNumber: str, usbHubPortNumber: int32,
    usbLocation: str, bluetoothAddress: str,
    readiness: { ...ref('DeviceReadiness'), description: 'Extension: why the device is or is not usable; only Ready is Online.' },
    readinessReason: { ...str, description: 'Extension: the gateway\'s explanation of a readiness other than Ready.' },
    properties: { ...arrayOf(ref('DeviceProperty')), description: 'Only with properties=true.' },
    installedApplications: { ...arrayOf(ref('Application')), description: 'Only with applications=true or allApplications=true.' },
  }, 'Keys whose value is null are omitted.'),
  UserProperty: object({ name: str, value: str }),
  User: object({
    id: guid, email: str, isActive: bool, firstName: str, middleName: str, lastName: str, notes: str,
    organization: str, title: str, location: str, address1: str, address2: str, city: str, region: str,
    postalCode: str, country: str, homePhone: str, mobilePhone: str, officePhone: str, faxPhone: str,
    createdDate: dateTime, lastLoginDate: dateTime, roles: arrayOf(str), properties: arrayOf(ref('UserProperty')),
  }),
  Event: object({
    id: str, deviceId: guid, deviceName: str, eventType: ref('EventType'), EventDate: dateTime, eventDate: dateTime,
    performedById: guid, performedByName: str, intValue: int32, boolValue: bool, stringValue: str, message: str,
    isSuccess: bool, propertiesId: guid, applicationId: guid, applicationName: str, userId: guid,
    deviceInuseCount: int32, deviceOnlineCount: int32,
    isAutomationSession: { ...bool, enum: [true], description: 'Extension: present (true) on the DeviceRetained event of a retain made for an automation (WebDriver) session.' },
  }),
  DeviceUsageSummary: object({
    id: guid, deviceId: guid, deviceName: str, performedById: guid, performedByName: str, applicationId: guid,
    applicationName: str, reservedById: guid, reservedByName: str, eventType: ref('EventType'),
    operatingSystem: ref('DeviceOperatingSystem'), operatingSystemVersion: str, startDate: dateTime,
    endDate: dateTime, duration: timeSpan, isDirty: bool,
    isAutomationSession: { ...bool, enum: [true], description: 'Extension: present (true) for the period of a retain made for an automation (WebDriver) session, and the installs and launches during it.' },
  }),
  EventHistory: object({ count: int32, pageSize: int32, events: arrayOf(ref('Event')) }),
  DeviceUsageHistory: object({ count: int32, pageSize: int32, deviceUsage: arrayOf(ref('DeviceUsageSummary')) }),
  AvailabilityPoint: object({ date: dateTime, online: int32, inUse: int32 }),
  DeviceAccessTicket: object({
    authenticator: { ...str, description: 'Ed25519-signed; the device\'s gateway verifies it while the retain lasts.' },
    gatewayAddress: str, gatewayPort: int32, deviceVendorUniqueIdentifier: str, serialNumber: str,
  }),
  AdbKey: object({
    fingerprint: { ...str, description: 'MD5 of the key, colon-separated hex (as adbkit and STF show it).' },
    comment: str, addedAt: dateTime, key: { ...str, description: 'The key as adbkey.pub holds it, without the comment.' },
  }),
  AsyncResponse: object({ asyncResponseId: guid }),
  AsyncStatus: object({ isComplete: bool, data: { description: 'The operation\'s result; only when isComplete.' },
    progress: { ...int32, description: 'Extension: percent done while running (installs), once the gateway reported one.' } }),
  BuildToolInformation: object({ path: str, versionString: str, version: str, buildVersion: str }),
  AutomationInformation: object({
    path: str, version: str, pathHash: str,
    drivers: { ...arrayOf(object({ name: str, version: str })), description: 'Extension: the Appium drivers installed there.' },
  }, 'The gateway\'s Appium installation: path = its APPIUM_HOME, version = Appium\'s, pathHash tells installations apart.'),
  DeviceGatewayInformation: object({
    ServiceNodeId: str, ServiceVersion: str, deviceConnectNodeId: str, deviceConnectVersion: str,
    systemDateTime: dateTime, systemDateTimeUtc: dateTime,
    deviceVendorUniqueIdentifiers: arrayOf(str), buildTool: arrayOf(ref('BuildToolInformation')),
    xcode: arrayOf(ref('BuildToolInformation')), automation: arrayOf(ref('AutomationInformation')),
    appium: arrayOf(object({ path: str, version: str, patchHash: str })),
    automationConfigurationError: str, appiumConfigurationError: str,
  }, 'The vendor C# client\'s names beside the spec\'s: deviceConnectNodeId/Version = ServiceNodeId/Version, '
    + 'xcode = buildTool, appium = automation, appiumConfigurationError = automationConfigurationError.'),
  HubInformation: object({
    ServiceNodeId: str, ServiceVersion: str, deviceConnectNodeId: str, deviceConnectVersion: str,
    systemDateTime: dateTime, systemDateTimeUtc: dateTime,
    deviceGatewayInformation: arrayOf(ref('DeviceGatewayInformation')),
    hubReplicas: arrayOf(object({ id: str, hostname: str, version: str, startedAt: dateTime },
      'A hub process serving this lab (extension); its id changes with every start.')),
    gatewayInformation: arrayOf(ref('DeviceGatewayInformation')),
  }, 'deviceConnectNodeId/Version and gatewayInformation repeat ServiceNodeId/Version and deviceGatewayInformation '
    + 'under the vendor C# client\'s names.'),
  UsbHubDevice: object({
    name: str, location: str, serialNumber: str, usbHubSerialNumber: str, usbHubPortNumber: int32, milliamps: int32,
    state: ref('UsbHubPortState'),
    flags: { type: 'string', description: 'UsbHubDeviceFlags names, comma separated (None, Off, Sync, Biased, ChargeIdle, ChargeProfiling, ChargeCharging, ChargeFinished, Attached, Detached, Theft, Errors, Rebooted, VBusReset)' },
    chargingTime: timeSpan, chargingProfile: str,
  }, 'A hub port; empty ports have name "" and milliamps 0.'),
  UsbHub: object({
    name: str, location: str, serialNumber: str, description: str, model: str, firmware: str, firmwareDate: str,
    uptime: timeSpan, fiveVoltNow: double, fiveVoltMin: double, fiveVoltMax: double, errorMessage: str, isErrored: bool,
    devices: arrayOf(ref('UsbHubDevice')),
  }),
  GatewayDescription: object({
    name: str, publicAddress: str, publicPort: int32, usbHubList: arrayOf(ref('UsbHub')),
    isConnected: bool, lastSeenAt: dateTime, version: str, hubReplica: str,
  }, 'Every registered gateway. Extension fields isConnected, lastSeenAt, version, hubReplica (the replica its link '
    + 'last landed on); a disconnected gateway lists the USB hubs it last reported, isErrored.'),
  Role: object({ id: guid, name: str, entitlements: arrayOf(str), isBuiltIn: bool,
    maxLeaseMinutes: { ...int32, description: 'Extension: the longest lease its holders may keep (minutes; 0: none); absent: the lab\'s leaseMaxMinutes. A user gets the most generous of their roles.' } }),
  Webhook: object({ id: guid, url: str, eventTypes: arrayOf(str), hasSecret: bool, createdAt: dateTime },
    'A webhook endpoint (extension); eventTypes [] receives every event. The secret is write-only.'),
  Reservation: object({
    id: guid, deviceId: guid, deviceName: str, reservedById: guid, reservedByDisplayName: str, start: dateTime,
    end: dateTime, note: str, createdAt: dateTime, createdById: guid, seriesId: guid,
  }, 'A booking of a device (extension): during it only its booker may retain the device, and GET /Device/Available '
    + 'leaves the device out for everyone else.'),
  ScreenShare: object({ id: guid, userLogin: str, token: str, createdAt: dateTime },
    'A view-only share of a device\'s live screen (extension): for a user (userLogin), or a link (token, shown only when made).'),
  ScreenViewer: object({ login: str, displayName: str, remoteAddress: str, viewOnly: bool, shareId: guid, since: dateTime },
    'Someone watching a device\'s live screen now (extension).'),
  Waiter: object({
    id: guid, place: int32, userId: guid, userName: str, filter: str,
    purpose: { type: 'string', enum: ['retain', 'automation'] }, leaseName: str, since: dateTime, deadline: dateTime,
    replicaId: str,
  }, 'A request waiting for a device (extension): `filter` as written, or `id=<Guid>` for one device; `place` 1 is next.'),
  WebhookDelivery: object({
    id: int64, eventId: guid, eventType: str, deviceId: guid,
    status: { type: 'string', enum: ['pending', 'delivered', 'failed'] }, attempts: int32, lastStatusCode: int32,
    lastError: str, createdAt: dateTime, nextAttemptAt: dateTime, deliveredAt: dateTime,
  }, 'One Event for one webhook: pending (retried with exponential backoff), delivered (2xx) or failed (given up).'),
  InstallResult: {
    type: 'object', required: ['isSuccess'], properties: {
      isSuccess: bool, errorMessage: str, errorCode: str,
      nativeAutomation: {
        type: 'string',
        description: 'Extension, with nativeAutomation=true: what preparing for native automation did on the device\'s '
          + 'platform (Android: runtime permissions granted at install; iOS: nothing to prepare).',
      },
    },
    description: 'The ResultModel of an install; with nativeAutomation=true a success also says what that did.',
  },
  ResultModel: {
    type: 'object', required: ['isSuccess'], properties: {
      isSuccess: bool, errorMessage: str,
      errorCode: { type: 'string', description: 'Extension: the failure\'s code when it has one (README "Failure codes").' },
      errorParameter: {
        type: 'string',
        description: 'Extension: the request parameter at fault, as the client spelled it (with INVALID_PARAMETER, '
          + 'UNKNOWN_PARAMETER).',
      },
    },
    description: 'Success: exactly {"isSuccess":true}. Failure (HTTP 200): {"isSuccess":false,"errorMessage":"…"}, '
      + 'with "errorCode" when the failure has a code and "errorParameter" when a request parameter is at fault.',
  },
};

/** `Result<T>`: `{"isSuccess":true,"data":T}` or a failure ResultModel. */
export function resultOf(data: Schema): Schema {
  return { oneOf: [{ type: 'object', required: ['isSuccess', 'data'], properties: { isSuccess: { const: true }, data } },
    ref('ResultModel')] };
}

export { arrayOf, ref };
