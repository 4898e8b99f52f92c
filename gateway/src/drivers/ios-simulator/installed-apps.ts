/** The installed apps of a simulator from `simctl listapps` (old-style plist keyed by bundle id). */
import type { InstalledPackage } from '@devicelab/proto';
import { DeviceCommandError } from '../device-driver';
import { OpenStepFormatError, parseOpenStep, type OpenStepValue } from './openstep-plist';

export function packagesFromListapps(text: string): InstalledPackage[] {
  let root: OpenStepValue;
  try {
    root = parseOpenStep(text);
  } catch (err) {
    if (err instanceof OpenStepFormatError) throw new DeviceCommandError(`simctl listapps printed what the gateway cannot read (${err.message})`, 'DEVICE_UNREACHABLE');
    throw err;
  }
  if (typeof root !== 'object' || Array.isArray(root)) return [];
  const packages: InstalledPackage[] = [];
  for (const [key, value] of Object.entries(root)) {
    if (typeof value !== 'object' || Array.isArray(value)) continue;
    const text = (name: string) => (typeof value[name] === 'string' ? value[name] as string : '');
    packages.push({
      identifier: text('CFBundleIdentifier') || key,
      version: text('CFBundleShortVersionString'),
      buildVersion: text('CFBundleVersion'),
      system: text('ApplicationType') === 'System',
    });
  }
  return packages;
}
