/**
 * Static description of a simulated iPhone or iPad (what lockdownd reports about the hardware and the installed
 * iOS), plus a catalogue of realistic models (device-data.md section 2.1).
 */
import { createHash } from 'node:crypto';

export type IosDeviceClass = 'iPhone' | 'iPad';

export interface IosPreinstalledApp {
  bundleId: string;
  /** CFBundleShortVersionString. */
  version: string;
  /** CFBundleVersion (the build number). */
  buildVersion: string;
  displayName: string;
  /** Executable name inside the .app. */
  executable: string;
  /** System apps live in /Applications and are left out of Browse with ApplicationType User. */
  system: boolean;
}

export interface IosDeviceSpec {
  /** UniqueDeviceID: `0000XXXX-XXXXXXXXXXXXXXXX` from A12 on (the first part is the ChipID in hex). */
  udid: string;
  deviceName: string;
  deviceClass: IosDeviceClass;
  /** e.g. iPhone14,5. */
  productType: string;
  /** e.g. D17AP. */
  hardwareModel: string;
  /** e.g. t8110. */
  hardwarePlatform: string;
  chipId: number;
  /** e.g. MLPF3. */
  modelNumber: string;
  productVersion: string;
  buildVersion: string;
  serialNumber: string;
  wifiAddress: string;
  bluetoothAddress: string;
  ethernetAddress: string;
  timezone: string;
  /** Whether the device has a cellular modem (Wi-Fi iPads have no telephony keys). */
  telephony: boolean;
  /** Battery level at power-on (the device starts on USB power). */
  battery: { level: number };
  /** Bytes: the user volume's size and what is free on it. */
  disk: { totalDiskCapacity: number; totalDataCapacity: number; totalDataAvailable: number };
  apps: IosPreinstalledApp[];
}

type Preset = Omit<IosDeviceSpec, 'udid' | 'serialNumber' | 'wifiAddress' | 'bluetoothAddress' | 'ethernetAddress' | 'deviceName'> & {
  macPrefix: string;
  namePrefix: string;
};

const GB = 1_000_000_000;

const SYSTEM_APPS: IosPreinstalledApp[] = [
  { bundleId: 'com.apple.mobilesafari', version: '17.2', buildVersion: '8617.2.4.10.8', displayName: 'Safari', executable: 'MobileSafari', system: true },
  { bundleId: 'com.apple.Preferences', version: '1.0', buildVersion: '1', displayName: 'Settings', executable: 'Preferences', system: true },
  { bundleId: 'com.apple.mobileslideshow', version: '1.0', buildVersion: '1.0', displayName: 'Photos', executable: 'MobileSlideShow', system: true },
  { bundleId: 'com.apple.camera', version: '1.0', buildVersion: '1', displayName: 'Camera', executable: 'Camera', system: true },
];

const CHROME: IosPreinstalledApp = {
  bundleId: 'com.google.chrome.ios', version: '120.0.6099.119', buildVersion: '120.6099.119', displayName: 'Chrome', executable: 'Chrome', system: false,
};

export const IOS_PRESETS: Record<string, Preset> = {
  'iphone-13': {
    deviceClass: 'iPhone', productType: 'iPhone14,5', hardwareModel: 'D17AP', hardwarePlatform: 't8110', chipId: 0x8110, modelNumber: 'MLPF3',
    productVersion: '17.2.1', buildVersion: '21C66', timezone: 'America/New_York', telephony: true,
    battery: { level: 72 },
    disk: { totalDiskCapacity: 128 * GB, totalDataCapacity: 113_379_455_488, totalDataAvailable: 20_478_181_376 },
    apps: [...SYSTEM_APPS, CHROME], macPrefix: '8c:86:dd', namePrefix: 'Lab iPhone',
  },
  'ipad-10': {
    deviceClass: 'iPad', productType: 'iPad13,18', hardwareModel: 'J271AP', hardwarePlatform: 't8101', chipId: 0x8101, modelNumber: 'MPQ03',
    productVersion: '16.6.1', buildVersion: '20G81', timezone: 'Europe/Berlin', telephony: false,
    battery: { level: 64 },
    disk: { totalDiskCapacity: 64 * GB, totalDataCapacity: 49_821_212_672, totalDataAvailable: 31_203_368_960 },
    apps: SYSTEM_APPS, macPrefix: 'f4:d4:88', namePrefix: 'Lab iPad',
  },
  'iphone-15-pro': {
    deviceClass: 'iPhone', productType: 'iPhone16,1', hardwareModel: 'D83AP', hardwarePlatform: 't8130', chipId: 0x8130, modelNumber: 'MTUV3',
    productVersion: '17.4.1', buildVersion: '21E236', timezone: 'America/Los_Angeles', telephony: true,
    battery: { level: 88 },
    disk: { totalDiskCapacity: 256 * GB, totalDataCapacity: 241_273_774_080, totalDataAvailable: 180_244_217_856 },
    apps: SYSTEM_APPS, macPrefix: 'bc:d0:74', namePrefix: 'Lab iPhone',
  },
  'iphone-se-2': {
    deviceClass: 'iPhone', productType: 'iPhone12,8', hardwareModel: 'D79AP', hardwarePlatform: 't8030', chipId: 0x8030, modelNumber: 'MX9R2',
    productVersion: '16.7.5', buildVersion: '20H307', timezone: 'Europe/London', telephony: true,
    battery: { level: 41 },
    disk: { totalDiskCapacity: 64 * GB, totalDataCapacity: 51_214_630_912, totalDataAvailable: 9_817_391_104 },
    apps: [...SYSTEM_APPS, CHROME], macPrefix: '3c:22:fb', namePrefix: 'Lab iPhone',
  },
};

export const DEFAULT_IOS_PRESET_ORDER = ['iphone-13', 'ipad-10', 'iphone-15-pro', 'iphone-se-2'];

const SERIAL_ALPHABET = 'ABCDEFGHJKLMNPQRSTUVWXYZ0123456789';

/** A deterministic device of the preset: the same index gives the same UDID, serial and addresses. */
export function iosSpecFromPreset(presetName: string, index: number, overrides: Partial<IosDeviceSpec> = {}): IosDeviceSpec {
  const preset = IOS_PRESETS[presetName];
  if (!preset) throw new Error(`unknown iOS preset ${JSON.stringify(presetName)} (known: ${Object.keys(IOS_PRESETS).join(', ')})`);
  const { macPrefix, namePrefix, ...rest } = preset;
  // Stable per (preset, index): a hash gives the random-looking parts real devices have.
  const digest = createHash('sha256').update(`${presetName}#${index}`).digest();
  let cursor = 0;
  const next = (): number => digest[cursor++ % digest.length];
  const hex16 = digest.subarray(0, 8).toString('hex').toUpperCase();
  cursor = 8;
  const serial = Array.from({ length: 10 }, () => SERIAL_ALPHABET[next() % SERIAL_ALPHABET.length]).join('');
  const base = ((next() << 8) | next()) & 0xfffc;
  const mac = (offset: number): string => {
    const v = base + offset;
    return `${macPrefix}:${(index & 0xff).toString(16).padStart(2, '0')}:${((v >> 8) & 0xff).toString(16).padStart(2, '0')}:${(v & 0xff).toString(16).padStart(2, '0')}`;
  };
  return {
    ...rest,
    apps: rest.apps.map((a) => ({ ...a })),
    battery: { ...rest.battery },
    disk: { ...rest.disk },
    udid: `0000${rest.chipId.toString(16).toUpperCase().padStart(4, '0')}-${hex16}`,
    deviceName: `${namePrefix} ${String(index + 1).padStart(2, '0')}`,
    serialNumber: serial,
    wifiAddress: mac(0),
    bluetoothAddress: mac(1),
    ethernetAddress: mac(2),
    ...overrides,
  };
}

export function defaultIosLab(count: number): IosDeviceSpec[] {
  return Array.from({ length: count }, (_, i) => iosSpecFromPreset(DEFAULT_IOS_PRESET_ORDER[i % DEFAULT_IOS_PRESET_ORDER.length], i));
}
