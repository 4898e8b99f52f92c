/**
 * A small iOS app bundle for simulator tests, zipped as the hub takes it: `Name.app/Info.plist` and an
 * executable at the root (or under `Payload/` as an IPA). `platform` iphoneos makes a device build instead.
 */
import { encodePlist } from '@devicelab/shared';
import { buildZip } from './zip-builder';

export interface TestAppBundle {
  bundleId?: string;
  name?: string;
  version?: string;
  build?: string;
  platform?: 'iphonesimulator' | 'iphoneos';
  /** Put the bundle under `Payload/` (an IPA) instead of at the root. */
  ipa?: boolean;
}

export function buildSimulatorApp(options: TestAppBundle = {}): Buffer {
  const name = options.name ?? 'LabSimApp';
  const platform = options.platform ?? 'iphonesimulator';
  const dir = `${options.ipa ? 'Payload/' : ''}${name}.app/`;
  const info = encodePlist({
    CFBundleIdentifier: options.bundleId ?? 'org.devicelab.labsimapp',
    CFBundleName: name,
    CFBundleDisplayName: name,
    CFBundleExecutable: name,
    CFBundleShortVersionString: options.version ?? '1.2',
    CFBundleVersion: options.build ?? '12',
    CFBundlePackageType: 'APPL',
    CFBundleSupportedPlatforms: [platform === 'iphoneos' ? 'iPhoneOS' : 'iPhoneSimulator'],
    DTPlatformName: platform,
    MinimumOSVersion: '17.0',
    UIDeviceFamily: [1, 2],
  });
  return buildZip([
    { name: `${dir}Info.plist`, data: info },
    { name: `${dir}${name}`, data: Buffer.from('\xcf\xfa\xed\xfe simulator executable', 'latin1') },
    { name: `${dir}PkgInfo`, data: 'APPL????' },
  ]);
}
