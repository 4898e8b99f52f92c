/**
 * The device types and runtimes the fake Xcode has installed, in the shapes `xcrun simctl list -j` prints on
 * Xcode 15.4 / 16 (keys as CoreSimulator writes them; the bundle paths are Xcode's, not files on this host).
 */
export interface DeviceTypeEntry {
  name: string;
  identifier: string;
  productFamily: 'iPhone' | 'iPad';
  modelIdentifier: string;
  minRuntimeVersionString: string;
}

export interface RuntimeEntry {
  name: string;
  identifier: string;
  version: string;
  buildversion: string;
}

const XCODE_DEVELOPER = '/Applications/Xcode.app/Contents/Developer';

export const DEVICE_TYPES: DeviceTypeEntry[] = [
  { name: 'iPhone 15', identifier: 'com.apple.CoreSimulator.SimDeviceType.iPhone-15', productFamily: 'iPhone', modelIdentifier: 'iPhone15,4', minRuntimeVersionString: '17.0.0' },
  { name: 'iPhone 15 Pro', identifier: 'com.apple.CoreSimulator.SimDeviceType.iPhone-15-Pro', productFamily: 'iPhone', modelIdentifier: 'iPhone16,1', minRuntimeVersionString: '17.0.0' },
  { name: 'iPhone 16', identifier: 'com.apple.CoreSimulator.SimDeviceType.iPhone-16', productFamily: 'iPhone', modelIdentifier: 'iPhone17,3', minRuntimeVersionString: '18.0.0' },
  { name: 'iPad Pro (11-inch) (4th generation)', identifier: 'com.apple.CoreSimulator.SimDeviceType.iPad-Pro-11-inch-4th-generation-8GB', productFamily: 'iPad', modelIdentifier: 'iPad14,3', minRuntimeVersionString: '16.1.0' },
  { name: 'iPad Pro (11-inch)', identifier: 'com.apple.CoreSimulator.SimDeviceType.iPad-Pro--11-inch-', productFamily: 'iPad', modelIdentifier: 'iPad8,1', minRuntimeVersionString: '12.1.0' },
  { name: 'iPad (10th generation)', identifier: 'com.apple.CoreSimulator.SimDeviceType.iPad-10th-generation', productFamily: 'iPad', modelIdentifier: 'iPad13,18', minRuntimeVersionString: '16.0.0' },
];

export const RUNTIMES: RuntimeEntry[] = [
  { name: 'iOS 17.5', identifier: 'com.apple.CoreSimulator.SimRuntime.iOS-17-5', version: '17.5', buildversion: '21F79' },
  { name: 'iOS 18.0', identifier: 'com.apple.CoreSimulator.SimRuntime.iOS-18-0', version: '18.0', buildversion: '22A3351' },
];

/** Apps every simulator runtime has (ApplicationType System). */
export const SYSTEM_APPS: Array<{ id: string; name: string; executable: string }> = [
  { id: 'com.apple.mobilesafari', name: 'Safari', executable: 'MobileSafari' },
  { id: 'com.apple.Preferences', name: 'Settings', executable: 'Preferences' },
  { id: 'com.apple.MobileSMS', name: 'Messages', executable: 'MobileSMS' },
  { id: 'com.apple.Maps', name: 'Maps', executable: 'Maps' },
];

export function deviceTypeJson(type: DeviceTypeEntry): Record<string, unknown> {
  const [major, minor, patch] = type.minRuntimeVersionString.split('.').map(Number);
  return {
    productFamily: type.productFamily,
    bundlePath: `${XCODE_DEVELOPER}/Platforms/iPhoneOS.platform/Library/Developer/CoreSimulator/Profiles/DeviceTypes/${type.name}.simdevicetype`,
    maxRuntimeVersion: 4294967295,
    maxRuntimeVersionString: '65535.255.255',
    identifier: type.identifier,
    modelIdentifier: type.modelIdentifier,
    minRuntimeVersionString: type.minRuntimeVersionString,
    minRuntimeVersion: (major << 16) + (minor << 8) + patch,
    name: type.name,
  };
}

export function runtimeJson(runtime: RuntimeEntry): Record<string, unknown> {
  const volume = `/Library/Developer/CoreSimulator/Volumes/iOS_${runtime.buildversion}`;
  const bundlePath = `${volume}/Library/Developer/CoreSimulator/Profiles/Runtimes/${runtime.name}.simruntime`;
  return {
    bundlePath,
    buildversion: runtime.buildversion,
    platform: 'iOS',
    runtimeRoot: `${bundlePath}/Contents/Resources/RuntimeRoot`,
    identifier: runtime.identifier,
    version: runtime.version,
    isInternal: false,
    isAvailable: true,
    name: runtime.name,
    supportedDeviceTypes: DEVICE_TYPES.filter((t) => compareVersions(t.minRuntimeVersionString, runtime.version) <= 0)
      .map((t) => ({ bundlePath: deviceTypeJson(t).bundlePath, name: t.name, identifier: t.identifier, productFamily: t.productFamily })),
  };
}

function compareVersions(a: string, b: string): number {
  const pa = a.split('.').map(Number);
  const pb = b.split('.').map(Number);
  for (let i = 0; i < 3; i++) {
    const d = (pa[i] ?? 0) - (pb[i] ?? 0);
    if (d !== 0) return d;
  }
  return 0;
}
