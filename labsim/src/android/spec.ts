/**
 * Static description of a simulated Android device (what a factory would
 * burn in: identity, build, hardware), plus a catalogue of realistic models.
 */

export type FormFactor = 'phone' | 'tablet';

export interface PreinstalledApp {
  packageName: string;
  versionCode: number;
  versionName: string;
  /** System apps live under /system or /product and are hidden by `pm list packages -3`. */
  system: boolean;
  launcherActivity?: string;
}

export interface AndroidDeviceSpec {
  /** Hardware serial (ro.serialno); the adb serial of a TCP device is 127.0.0.1:<port>. */
  serial: string;
  model: string;
  manufacturer: string;
  brand: string;
  /** Device codename (ro.product.device), e.g. "panther". */
  device: string;
  /** Product name (ro.product.name). */
  product: string;
  hardware: string;
  boardPlatform: string;
  androidVersion: string;
  sdk: number;
  buildId: string;
  buildIncremental: string;
  securityPatch: string;
  /** ro.build.date.utc (seconds). */
  buildDateUtc: number;
  firstApiLevel: number;
  formFactor: FormFactor;
  screen: { width: number; height: number; density: number };
  cpu: { cores: number; abis: string[]; maxFreqKhz: number; socManufacturer: string; socModel: string; egl: string };
  memTotalKb: number;
  battery: { level: number; usbPowered: boolean };
  wifiMac: string;
  bluetoothMac: string;
  /** `settings get global device_name`. */
  deviceName: string;
  timezone: string;
  operator: { name: string; numeric: string } | null;
  /** Extra getprop entries (vendor specific). */
  extraProps?: Record<string, string>;
  /** Third-party apps present before any test installs something. */
  thirdPartyApps?: PreinstalledApp[];
}

type Preset = Omit<AndroidDeviceSpec, 'serial' | 'wifiMac' | 'bluetoothMac'> & { serialPrefix: string; macPrefix: string };

const FIREFOX: PreinstalledApp = {
  packageName: 'org.mozilla.firefox', versionCode: 2016003655, versionName: '121.1.0', system: false,
  launcherActivity: 'org.mozilla.fenix.HomeActivity',
};
const SPOTIFY: PreinstalledApp = {
  packageName: 'com.spotify.music', versionCode: 118813587, versionName: '8.9.2.504', system: false,
  launcherActivity: 'com.spotify.music.MainActivity',
};

export const ANDROID_PRESETS: Record<string, Preset> = {
  'pixel-7': {
    serialPrefix: '28121FDH200', macPrefix: 'f4:60:e2',
    model: 'Pixel 7', manufacturer: 'Google', brand: 'google', device: 'panther', product: 'panther',
    hardware: 'panther', boardPlatform: 'gs201', androidVersion: '14', sdk: 34, buildId: 'UQ1A.240205.004',
    buildIncremental: '11269751', securityPatch: '2024-02-05', buildDateUtc: 1702578735, firstApiLevel: 33,
    formFactor: 'phone', screen: { width: 1080, height: 2400, density: 420 },
    cpu: { cores: 8, abis: ['arm64-v8a'], maxFreqKhz: 2850000, socManufacturer: 'Google', socModel: 'GS201', egl: 'mali' },
    memTotalKb: 7645196, battery: { level: 78, usbPowered: true }, deviceName: 'Pixel 7',
    timezone: 'America/New_York', operator: { name: 'T-Mobile', numeric: '310260' },
    extraProps: { 'ro.com.google.gmsversion': '14_202312', 'ro.bootloader': 'cloudripper-1.0-11055807' },
    thirdPartyApps: [FIREFOX],
  },
  'galaxy-s23': {
    serialPrefix: 'R5CW31XYZ', macPrefix: 'a8:34:6a',
    model: 'SM-S911B', manufacturer: 'samsung', brand: 'samsung', device: 'dm1q', product: 'dm1qxeea',
    hardware: 'qcom', boardPlatform: 'kalama', androidVersion: '14', sdk: 34, buildId: 'UP1A.231005.007',
    buildIncremental: 'S911BXXU3BWK5', securityPatch: '2023-12-01', buildDateUtc: 1700550220, firstApiLevel: 33,
    formFactor: 'phone', screen: { width: 1080, height: 2340, density: 480 },
    cpu: { cores: 8, abis: ['arm64-v8a', 'armeabi-v7a', 'armeabi'], maxFreqKhz: 3360000, socManufacturer: 'Qualcomm', socModel: 'SM8550', egl: 'adreno' },
    memTotalKb: 7486544, battery: { level: 64, usbPowered: true }, deviceName: 'Galaxy S23',
    timezone: 'Europe/Berlin', operator: { name: 'Telekom.de', numeric: '26201' },
    extraProps: { 'ril.serialnumber': 'RZCW31ABCDE', 'ro.bootloader': 'S911BXXU3BWK5', 'ro.build.PDA': 'S911BXXU3BWK5' },
    thirdPartyApps: [SPOTIFY],
  },
  'pixel-tablet': {
    serialPrefix: '33091JEHN0', macPrefix: '3c:28:6d',
    model: 'Pixel Tablet', manufacturer: 'Google', brand: 'google', device: 'tangorpro', product: 'tangorpro',
    hardware: 'tangorpro', boardPlatform: 'gs201', androidVersion: '14', sdk: 34, buildId: 'UQ1A.240205.002',
    buildIncremental: '11224170', securityPatch: '2024-02-05', buildDateUtc: 1702323920, firstApiLevel: 33,
    formFactor: 'tablet', screen: { width: 2560, height: 1600, density: 320 },
    cpu: { cores: 8, abis: ['arm64-v8a'], maxFreqKhz: 2850000, socManufacturer: 'Google', socModel: 'GS201', egl: 'mali' },
    memTotalKb: 7645196, battery: { level: 100, usbPowered: true }, deviceName: 'Pixel Tablet',
    timezone: 'America/Los_Angeles', operator: null,
    extraProps: { 'ro.com.google.gmsversion': '14_202312' },
    thirdPartyApps: [],
  },
  'moto-g9-play': {
    serialPrefix: 'ZY22BX4', macPrefix: 'e8:91:20',
    model: 'moto g(9) play', manufacturer: 'motorola', brand: 'motorola', device: 'guamp', product: 'guamp_retail',
    hardware: 'qcom', boardPlatform: 'bengal', androidVersion: '11', sdk: 30, buildId: 'RPXS31.Q2-58-17-4-3',
    buildIncremental: 'e0b1d9', securityPatch: '2022-08-01', buildDateUtc: 1661247131, firstApiLevel: 29,
    formFactor: 'phone', screen: { width: 720, height: 1600, density: 280 },
    cpu: { cores: 8, abis: ['arm64-v8a', 'armeabi-v7a', 'armeabi'], maxFreqKhz: 2000000, socManufacturer: 'Qualcomm', socModel: 'SM6115', egl: 'adreno' },
    memTotalKb: 3760260, battery: { level: 41, usbPowered: true }, deviceName: 'moto g(9) play',
    timezone: 'America/Sao_Paulo', operator: { name: 'Claro BR', numeric: '72405' },
    thirdPartyApps: [SPOTIFY],
  },
  'nokia-7.1': {
    serialPrefix: 'PL2GAR18', macPrefix: '00:0a:f5',
    model: 'Nokia 7.1', manufacturer: 'HMD Global', brand: 'Nokia', device: 'CTL_sprout', product: 'Crystal_00WW',
    hardware: 'qcom', boardPlatform: 'sdm660', androidVersion: '9', sdk: 28, buildId: '00WW_3_39C',
    buildIncremental: '00WW_3_39C', securityPatch: '2019-12-01', buildDateUtc: 1574412371, firstApiLevel: 27,
    formFactor: 'phone', screen: { width: 1080, height: 2280, density: 400 },
    cpu: { cores: 8, abis: ['arm64-v8a', 'armeabi-v7a', 'armeabi'], maxFreqKhz: 1843200, socManufacturer: 'Qualcomm', socModel: 'SDM636', egl: 'adreno' },
    memTotalKb: 3755560, battery: { level: 92, usbPowered: true }, deviceName: 'Nokia 7.1',
    timezone: 'Europe/Helsinki', operator: { name: 'Elisa', numeric: '24405' },
    thirdPartyApps: [],
  },
  // A 32-bit (armeabi-v7a) Android 7 phone: HIGHMEM kernel (HighTotal/LowTotal in /proc/meminfo), OpenGL HWUI.
  'galaxy-j5': {
    serialPrefix: '3300B1C2', macPrefix: '5c:2e:59',
    model: 'SM-J530F', manufacturer: 'samsung', brand: 'samsung', device: 'j5y17lte', product: 'j5y17ltexx',
    hardware: 'samsungexynos7870', boardPlatform: 'exynos5', androidVersion: '7.0', sdk: 24, buildId: 'NRD90M',
    buildIncremental: 'J530FXXU1AQG3', securityPatch: '2017-07-01', buildDateUtc: 1499322000, firstApiLevel: 24,
    formFactor: 'phone', screen: { width: 720, height: 1280, density: 320 },
    cpu: { cores: 8, abis: ['armeabi-v7a', 'armeabi'], maxFreqKhz: 1586000, socManufacturer: 'Samsung', socModel: 'Exynos 7870', egl: 'mali' },
    memTotalKb: 1857124, battery: { level: 55, usbPowered: true }, deviceName: 'Galaxy J5',
    timezone: 'Europe/Madrid', operator: { name: 'Movistar', numeric: '21407' },
    thirdPartyApps: [SPOTIFY],
  },
};

/** Order used by defaultAndroidLab: the most common lab devices first. */
export const DEFAULT_PRESET_ORDER = ['pixel-7', 'galaxy-s23', 'pixel-tablet', 'moto-g9-play', 'nokia-7.1'];

/** Builds a concrete spec from a preset; `index` makes serial and MACs unique per copy. */
export function specFromPreset(presetName: string, index: number, overrides: Partial<AndroidDeviceSpec> = {}): AndroidDeviceSpec {
  const preset = ANDROID_PRESETS[presetName];
  if (!preset) throw new Error(`unknown Android preset ${JSON.stringify(presetName)} (known: ${Object.keys(ANDROID_PRESETS).join(', ')})`);
  const { serialPrefix, macPrefix, ...rest } = preset;
  const serialDigits = 14 - serialPrefix.length;
  const n = (index * 7919 + presetName.length * 31) % 10 ** Math.max(1, serialDigits);
  const hex = (v: number) => (v & 0xff).toString(16).padStart(2, '0');
  const tail = `${hex(index * 37 + 17)}:${hex(index * 11 + 0x5a)}:${hex(index + presetName.length)}`;
  return {
    ...rest,
    serial: serialPrefix + String(n).padStart(serialDigits, '0'),
    wifiMac: `${macPrefix}:${tail}`,
    bluetoothMac: `${macPrefix}:${tail}`.toUpperCase().replace(/(..)$/, (b) => hex(parseInt(b, 16) + 1).toUpperCase()),
    ...overrides,
  };
}

/** N distinct realistic devices, cycling through the catalogue. */
export function defaultAndroidLab(count: number): AndroidDeviceSpec[] {
  return Array.from({ length: count }, (_, i) => specFromPreset(DEFAULT_PRESET_ORDER[i % DEFAULT_PRESET_ORDER.length], i));
}
