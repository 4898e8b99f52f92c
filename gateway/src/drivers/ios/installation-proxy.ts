/**
 * com.apple.mobile.installation_proxy: Browse (pages until Complete), Install of a package AFC put under
 * PublicStaging (progress until Complete or an Error), Uninstall. One command per connection.
 */
import type { InstalledPackage } from '@devicelab/proto';
import { type FailureCode, type PlistDict, isDict } from '@devicelab/shared';
import { DeviceCommandError } from '../device-driver';
import type { PlistConnection } from './plist-connection';

const BROWSE_ATTRIBUTES = ['CFBundleIdentifier', 'CFBundleShortVersionString', 'CFBundleVersion', 'ApplicationType'];

/** Follows a command to its end; `progress` sees each PercentComplete. */
async function untilComplete(connection: PlistConnection, what: string, onMessage: (message: PlistDict) => void = () => undefined): Promise<void> {
  for (;;) {
    const message = await connection.next();
    if (typeof message.Error === 'string') {
      const description = typeof message.ErrorDescription === 'string' ? `: ${message.ErrorDescription}` : '';
      throw new DeviceCommandError(`${what} failed on the device (${message.Error}${description})`, installdCode(message.Error));
    }
    onMessage(message);
    if (message.Status === 'Complete') return;
  }
}

/** installd's error name as a catalog code: `INSTALLD_` and the name (characters a code cannot hold become `_`). */
function installdCode(name: string): FailureCode {
  return `INSTALLD_${name.replace(/[^A-Za-z0-9_]/g, '_') || 'Unknown'}`;
}

/** Every app on the device, system apps marked. */
export async function browseApps(connection: PlistConnection): Promise<InstalledPackage[]> {
  connection.send({ Command: 'Browse', ClientOptions: { ApplicationType: 'Any', ReturnAttributes: BROWSE_ATTRIBUTES } });
  const packages: InstalledPackage[] = [];
  await untilComplete(connection, 'Listing the installed apps', (message) => {
    if (!Array.isArray(message.CurrentList)) return;
    for (const app of message.CurrentList) {
      if (!isDict(app) || typeof app.CFBundleIdentifier !== 'string') continue;
      packages.push({
        identifier: app.CFBundleIdentifier,
        version: typeof app.CFBundleShortVersionString === 'string' ? app.CFBundleShortVersionString : '',
        buildVersion: typeof app.CFBundleVersion === 'string' ? app.CFBundleVersion : '',
        system: app.ApplicationType === 'System',
      });
    }
  });
  return packages;
}

export async function installPackage(connection: PlistConnection, packagePath: string, onPercent: (percent: number) => void): Promise<void> {
  connection.send({ Command: 'Install', PackagePath: packagePath, ClientOptions: { PackageType: 'Developer' } });
  await untilComplete(connection, 'Installing the app', (message) => {
    if (typeof message.PercentComplete === 'number') onPercent(message.PercentComplete);
  });
}

export async function uninstallApp(connection: PlistConnection, bundleId: string): Promise<void> {
  connection.send({ Command: 'Uninstall', ApplicationIdentifier: bundleId, ClientOptions: {} });
  await untilComplete(connection, `Uninstalling ${bundleId}`);
}
