/**
 * What lockdownd's GetValue answers: the global domain (all values, or the public subset before a session),
 * and the domains the driver reads (battery, disk usage). Values follow device-data.md section 2.1-2.3.
 */
import { PlistReal, type PlistDict } from '@devicelab/shared';
import type { IosDeviceSpec } from './spec';

export interface IosBatteryState {
  level: number;
  charging: boolean;
  externalConnected: boolean;
}

interface IosLiveFacts {
  battery: IosBatteryState;
  /** Bytes the installed apps take on the data volume. */
  appBytes: number;
  devicePublicKey: Buffer;
  hostAttached: boolean;
  trustedHostAttached: boolean;
}

/** Keys a device answers without a session (an untrusted host still sees these). */
const PUBLIC_KEYS = [
  'BasebandCertId', 'BasebandKeyHashInformation', 'BasebandSerialNumber', 'BasebandVersion', 'BoardId', 'BuildVersion',
  'CPUArchitecture', 'ChipID', 'DeviceClass', 'DeviceColor', 'DeviceName', 'DieID', 'HardwareModel', 'HasSiDP',
  'PartitionType', 'ProductName', 'ProductType', 'ProductVersion', 'ProductionSOC', 'ProtocolVersion', 'SupportedDeviceFamilies',
  'TelephonyCapability', 'UniqueChipID', 'UniqueDeviceID', 'WiFiAddress', 'DevicePublicKey', 'ActivationState',
];

export function globalDomain(spec: IosDeviceSpec, live: IosLiveFacts, now = Date.now()): PlistDict {
  const offsetSeconds = timezoneOffsetSeconds(spec.timezone, now);
  const values: PlistDict = {
    ActivationState: 'Activated',
    ActivationStateAcknowledged: true,
    BluetoothAddress: spec.bluetoothAddress,
    BoardId: spec.deviceClass === 'iPad' ? 10 : 14,
    BrickState: false,
    BuildVersion: spec.buildVersion,
    CPUArchitecture: 'arm64e',
    ChipID: spec.chipId,
    DeviceClass: spec.deviceClass,
    DeviceColor: '1',
    DeviceName: spec.deviceName,
    DevicePublicKey: live.devicePublicKey,
    DieID: 2146917420853792,
    EthernetAddress: spec.ethernetAddress,
    FirmwareVersion: 'iBoot-10151.60.31',
    FusingStatus: 3,
    HardwareModel: spec.hardwareModel,
    HardwarePlatform: spec.hardwarePlatform,
    HasSiDP: true,
    HostAttached: live.hostAttached,
    HumanReadableProductVersionString: spec.productVersion,
    ModelNumber: spec.modelNumber,
    PairRecordProtectionClass: 4,
    PartitionType: 'GUID_partition_scheme',
    PasswordProtected: true,
    ProductName: 'iPhone OS',
    ProductType: spec.productType,
    ProductVersion: spec.productVersion,
    ProductionSOC: true,
    ProtocolVersion: '2',
    RegionInfo: 'LL/A',
    SerialNumber: spec.serialNumber,
    SoftwareBehavior: Buffer.alloc(16),
    SoftwareBundleVersion: '',
    SupportedDeviceFamilies: spec.deviceClass === 'iPad' ? [1, 2] : [1],
    TelephonyCapability: spec.telephony,
    TimeIntervalSince1970: new PlistReal(now / 1000),
    TimeZone: spec.timezone,
    TimeZoneOffsetFromUTC: new PlistReal(offsetSeconds),
    TrustedHostAttached: live.trustedHostAttached,
    UniqueChipID: 2146917420853792,
    UniqueDeviceID: spec.udid,
    UseRaptorCerts: true,
    Uses24HourClock: false,
    WiFiAddress: spec.wifiAddress,
    WirelessBoardSerialNumber: `C8Q${spec.serialNumber.slice(0, 7)}K`,
  };
  if (spec.telephony) {
    Object.assign(values, {
      BasebandCertId: 524245983,
      BasebandKeyHashInformation: { AKeyStatus: 2, SKeyHash: Buffer.from('bbffed702c2f690fb563db78d08e327a', 'hex'), SKeyStatus: 0 },
      BasebandSerialNumber: Buffer.from('130f0baa', 'hex'),
      BasebandStatus: 'BBInfoAvailable',
      BasebandVersion: '3.20.02',
      InternationalMobileEquipmentIdentity: '353912110456783',
      MobileSubscriberCountryCode: '310',
      MobileSubscriberNetworkCode: '260',
      SIMStatus: 'kCTSIMSupportSIMStatusReady',
    });
  }
  return values;
}

export function publicValues(all: PlistDict): PlistDict {
  const out: PlistDict = {};
  for (const key of PUBLIC_KEYS) if (all[key] !== undefined) out[key] = all[key];
  return out;
}

export function batteryDomain(battery: IosBatteryState): PlistDict {
  return {
    BatteryCurrentCapacity: battery.level,
    BatteryIsCharging: battery.charging,
    ExternalChargeCapable: true,
    ExternalConnected: battery.externalConnected,
    FullyCharged: battery.externalConnected && battery.level >= 100,
    GasGaugeCapability: true,
    HasBattery: true,
  };
}

const RESERVED_BYTES = 209_715_200;

/** Invariant kept: AmountDataAvailable = TotalDataAvailable - AmountDataReserved. */
export function diskUsageDomain(spec: IosDeviceSpec, appBytes: number): PlistDict {
  const available = Math.max(RESERVED_BYTES, spec.disk.totalDataAvailable - appBytes);
  return {
    AmountDataAvailable: available - RESERVED_BYTES,
    AmountDataReserved: RESERVED_BYTES,
    CalculateDiskUsage: 'OkilyDokily',
    TotalDataAvailable: available,
    TotalDataCapacity: spec.disk.totalDataCapacity,
    TotalDiskCapacity: spec.disk.totalDiskCapacity,
    TotalSystemAvailable: 335_544_320,
    TotalSystemCapacity: spec.disk.totalDiskCapacity - spec.disk.totalDataCapacity - 335_544_320,
  };
}

function timezoneOffsetSeconds(timeZone: string, now: number): number {
  const parts = new Intl.DateTimeFormat('en-US', { timeZone, timeZoneName: 'longOffset' }).formatToParts(new Date(now));
  const name = parts.find((p) => p.type === 'timeZoneName')?.value ?? 'GMT';
  const m = /GMT([+-])(\d\d):(\d\d)/.exec(name);
  if (!m) return 0;
  return (m[1] === '-' ? -1 : 1) * (Number(m[2]) * 3600 + Number(m[3]) * 60);
}
