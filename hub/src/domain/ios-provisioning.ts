/**
 * Whether an uploaded IPA can go on an iOS device, decided from the metadata read at upload before any byte moves
 * (a device would refuse it after the upload anyway, with a vaguer ApplicationVerificationFailed): the profile
 * must provision the device's UDID (or all devices), must not have expired, and the app's MinimumOSVersion must
 * not be above the device's iOS version. Every reason that applies is named, with the UDID, dates and versions.
 */
import { ApiFailure } from '@devicelab/shared';
import type { ApplicationRow, DeviceRow } from '../store/schema';

type ProvisionedApp = Pick<ApplicationRow, 'operating_system' | 'display_name' | 'provision_expiration_date'
  | 'provisions_all_devices' | 'provisioned_devices' | 'minimum_os_version'>;
type TargetDevice = Pick<DeviceRow, 'name' | 'vendor_unique_identifier' | 'operating_system_version'>;

const isoSeconds = (date: Date): string => date.toISOString().replace(/\.\d{3}Z$/, 'Z');

/** `17.2.1` -> [17, 2, 1]; undefined when the text is not a dotted number. */
function versionParts(text: string | null | undefined): number[] | undefined {
  if (!text || !/^\d+(\.\d+)*$/.test(text.trim())) return undefined;
  return text.trim().split('.').map(Number);
}

/** Negative when a < b (missing parts count as 0: `17` = `17.0`). */
export function compareVersions(a: number[], b: number[]): number {
  for (let i = 0; i < Math.max(a.length, b.length); i++) {
    const d = (a[i] ?? 0) - (b[i] ?? 0);
    if (d !== 0) return d;
  }
  return 0;
}

/** The reasons the app cannot be installed on the device; empty when it can (or it is not an iOS app). */
export function provisioningProblems(app: ProvisionedApp, device: TargetDevice, now: Date): string[] {
  if (app.operating_system !== 'iOS') return [];
  const problems: string[] = [];
  const udid = device.vendor_unique_identifier;
  const listed = app.provisioned_devices;
  if (listed && !app.provisions_all_devices && !listed.some((id) => id.toLowerCase() === udid.toLowerCase())) {
    problems.push(`its provisioning profile does not provision this device (UDID ${udid} is not one of the profile's `
      + `${listed.length} ProvisionedDevices, and the profile does not provision all devices)`);
  }
  const expires = app.provision_expiration_date;
  if (expires && expires.getTime() < now.getTime()) {
    problems.push(`its provisioning profile expired on ${isoSeconds(expires)} (now ${isoSeconds(now)})`);
  }
  const minimum = versionParts(app.minimum_os_version);
  const running = versionParts(device.operating_system_version);
  if (minimum && running && compareVersions(minimum, running) > 0) {
    problems.push(`it needs iOS ${app.minimum_os_version} or later (MinimumOSVersion) and the device runs iOS ${device.operating_system_version}`);
  }
  return problems;
}

/** Throws the failure the install answers with when the app cannot go on the device. */
export function assertInstallable(app: ProvisionedApp, device: TargetDevice, now: Date = new Date()): void {
  const problems = provisioningProblems(app, device, now);
  if (problems.length === 0) return;
  throw new ApiFailure(`Application '${app.display_name}' cannot be installed on device '${device.name}': ${problems.join('; ')}.`, 'APP_NOT_PROVISIONED');
}
