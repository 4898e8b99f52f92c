/**
 * TypeScript shapes of the messages in `devicelab_link.proto` as @grpc/proto-loader delivers them
 * (camelCase fields, int64 as number, `body`/`action` naming the populated oneof member).
 */

export interface Hello { gatewayName: string; gatewayVersion: string; nonce: Buffer; publicAddress: string; publicPort: number }
/** Fields 3-5 travel from the hub; a reader on an older hub sees them empty. */
export interface Retention {
  vendorUniqueIdentifier: string; retainId: string; userId?: string; userLogin?: string; adbKeys?: AdbPublicKey[];
}
export interface AdbPublicKey { key: Buffer; fingerprint: string; comment: string }
export interface DeviceAccessEvent {
  vendorUniqueIdentifier: string; accepted: boolean; message: string; remoteAddress: string; fingerprint: string;
  userLogin: string; atMs: number;
}
export interface OpenTunnel {
  tunnelId: string; vendorUniqueIdentifier: string; remoteAddress: string; userLogin: string; authenticator?: string;
  /** '' (or absent): the access endpoint; 'automation': the device's automation server; 'screen': its screen stream. */
  service?: string;
  /** 'screen' only: the viewer may watch, not control (the gateway drops its input). */
  viewOnly?: boolean;
  /** 'screen' only: the retain the viewer's right stands on ('' for a device nobody retains). */
  retainId?: string;
}
export interface AccessEndpoint { vendorUniqueIdentifier: string; retainId: string; port: number }
/** Gateway -> hub when a client connects to an adb endpoint; hub -> gateway behind the Retentions sent before it. */
export interface AccessSync { id: number }
export interface TunnelFrame { tunnelId?: string; data?: Buffer; error?: string }
export interface Welcome { hubProof: Buffer; heartbeatIntervalMs: number; ticketPublicKey?: Buffer; retentions?: Retention[] }
export interface Heartbeat { sentAtMs: number }
export interface DeviceProperty { name: string; value: string }
export interface InstalledPackage { identifier: string; version: string; buildVersion: string; system: boolean }

export interface DeviceState {
  vendorUniqueIdentifier: string;
  operatingSystem: string;
  readiness: string;
  readinessDetail?: string;
  serialNumber?: string;
  model?: string;
  manufacturer?: string;
  friendlyModel?: string;
  operatingSystemVersion?: string;
  operatingSystemBuild?: string;
  productType?: string;
  hardwareModel?: string;
  deviceClass?: string;
  formFactor?: string;
  vendorDeviceName?: string;
  macAddress?: string;
  bluetoothAddress?: string;
  usbLocation?: string;
  usbHubSerialNumber?: string;
  usbHubPortNumber?: number;
  batteryPercent?: number;
  batteryStatus?: string;
  diskSpace?: number;
  diskSpaceUsed?: number;
  properties?: DeviceProperty[];
  packages?: InstalledPackage[];
}

/** `forAutomation`: the API's nativeAutomation (absent from an older hub). */
interface InstallApp { blobSha256: string; applicationIdentifier: string; force: boolean; forAutomation?: boolean }
interface UninstallApp { applicationIdentifier: string; keepData: boolean }
interface LaunchApp { applicationIdentifier: string; arguments: string; startOnly: boolean }
export interface ReadLog { maxLines: number }
type ReadPackages = Record<string, never>;
/** Empty filters: every line kept. */
export interface ReadAutomationLog { sessionId: string; requestId: string }

export type CommandAction =
  | { action: 'install'; install: InstallApp }
  | { action: 'uninstall'; uninstall: UninstallApp }
  | { action: 'launch'; launch: LaunchApp }
  | { action: 'reboot'; reboot: Record<string, never> }
  | { action: 'readLog'; readLog: ReadLog }
  | { action: 'readPackages'; readPackages: ReadPackages }
  | { action: 'readAutomationLog'; readAutomationLog: ReadAutomationLog }
  | { action: 'setUsbPortState'; setUsbPortState: SetUsbPortState }
  | { action: 'rebootUsbHub'; rebootUsbHub: RebootUsbHub };

export type Command = { commandId: string; vendorUniqueIdentifier: string; deadlineMs: number } & CommandAction;

/** `device`: the device's state after an install, uninstall or readPackages (null otherwise, as proto-loader gives it). */
export interface CommandResult {
  commandId: string; ok: boolean; errorMessage: string; text: string; errorCode: string; device?: DeviceState | null;
}

/** How far a running command is: percent 0..99, rising; its CommandResult ends it. */
export interface CommandProgress { commandId: string; percent: number }

export type GatewayMessage =
  | { body: 'hello'; hello: Hello }
  | { body: 'heartbeat'; heartbeat: Heartbeat }
  | { body: 'snapshot'; snapshot: { devices: DeviceState[] } }
  | { body: 'deviceUpdate'; deviceUpdate: DeviceState }
  | { body: 'deviceRemoved'; deviceRemoved: { vendorUniqueIdentifier: string } }
  | { body: 'commandResult'; commandResult: CommandResult }
  | { body: 'commandProgress'; commandProgress: CommandProgress }
  | { body: 'usbHubs'; usbHubs: UsbHubsReport }
  | { body: 'usbHubEvent'; usbHubEvent: UsbHubEvent }
  | { body: 'metrics'; metrics: MetricsBatch }
  | { body: 'accessEvent'; accessEvent: DeviceAccessEvent }
  | { body: 'accessEndpoint'; accessEndpoint: AccessEndpoint }
  | { body: 'accessSync'; accessSync: AccessSync }
  | { body: 'deviceUse'; deviceUse: { vendorUniqueIdentifier: string } }
  | { body: 'automationReport'; automationReport: AutomationReport };

export type HubMessage =
  | { body: 'welcome'; welcome: Welcome }
  | { body: 'heartbeat'; heartbeat: Heartbeat }
  | { body: 'command'; command: Command }
  | { body: 'retention'; retention: Retention }
  | { body: 'inventoryRequest'; inventoryRequest: Record<string, never> }
  | { body: 'metricsAck'; metricsAck: MetricsAck }
  | { body: 'metricsSettings'; metricsSettings: MetricsSettings }
  | { body: 'openTunnel'; openTunnel: OpenTunnel }
  | { body: 'accessSync'; accessSync: AccessSync };

/** The gateway's automation servers: what is installed and what is wrong with it ('' when nothing). */
export interface AutomationDriver { name: string; version: string; automationName: string }
export interface AutomationReport {
  path: string; version: string; pathHash: string; drivers: AutomationDriver[]; configurationError: string;
}

/** USB hubs of a gateway. */
interface UsbHubPortReport {
  portNumber: number; name: string; location: string; deviceSerialNumber: string; milliamps: number;
  state: string; flags: string[]; chargingSeconds: number; chargingProfile: string;
}
export interface UsbHubReport {
  serialNumber: string; name: string; location: string; description: string; model: string; firmware: string;
  firmwareDate: string; uptimeSeconds: number; fiveVoltNow: number; fiveVoltMin: number; fiveVoltMax: number;
  errorMessage: string; isErrored: boolean; ports: UsbHubPortReport[]; kind: string;
}
export interface UsbHubsReport { hubs: UsbHubReport[] }
export interface UsbHubEvent {
  vendorUniqueIdentifier: string; eventType: string; message: string; detail: string; isSuccess: boolean; atMs: number;
}
export interface SetUsbPortState { hubSerialNumber: string; portNumber: number; state: string }
export interface RebootUsbHub { hubSerialNumber: string }

/** Metrics tables of spec 2.5. */
export type MetricTable = 'usb_hub' | 'log' | 'health_check' | 'sample';
/** One field of a metric row; `value` names the populated member (proto-loader `oneofs: true`). */
export type MetricValue =
  | { field: string; value: 'number'; number: number }
  | { field: string; value: 'text'; text: string }
  | { field: string; value: 'flag'; flag: boolean };
export interface MetricRow { vendorUniqueIdentifier: string; table: MetricTable; timeUs: number; values: MetricValue[] }
/** `epoch`: random per gateway process; (epoch, sequence) names a batch, resent unchanged after a reconnect. */
export interface MetricsBatch { sequence: number; rows: MetricRow[]; droppedRows: number; epoch: string }
export interface MetricsAck { sequence: number }
export interface MetricsSettings { disabledVendorUniqueIdentifiers: string[] }

export interface BlobRequest { sha256: string }
export interface BlobChunk { data: Buffer; totalSize: number }

/** Metadata keys of the gateway's credentials on every call. */
export const GATEWAY_NAME_METADATA = 'x-devicelab-gateway';
export const AUTHORIZATION_METADATA = 'authorization';
