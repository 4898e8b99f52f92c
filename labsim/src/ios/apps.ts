/**
 * installd's view of the device: the installed apps with the attributes installation_proxy returns (the app's
 * Info.plist keys plus installd's own: ApplicationType, Path, Container, SignerIdentity ...).
 */
import { randomUUID } from 'node:crypto';
import type { IpaInfo } from './ipa';
import type { PlistDict, PlistValue } from '@devicelab/shared';
import type { IosPreinstalledApp } from './spec';

export type ApplicationType = 'User' | 'System';

export interface IosInstalledApp {
  bundleId: string;
  type: ApplicationType;
  /** Bytes on the data volume (the package size for user apps). */
  sizeBytes: number;
  attributes: PlistDict;
}

export class IosAppRegistry {
  private readonly apps = new Map<string, IosInstalledApp>();

  constructor(preinstalled: IosPreinstalledApp[]) {
    for (const app of preinstalled) {
      const folder = `${app.executable}.app`;
      const attributes: PlistDict = {
        CFBundleIdentifier: app.bundleId,
        CFBundleShortVersionString: app.version,
        CFBundleVersion: app.buildVersion,
        CFBundleDisplayName: app.displayName,
        CFBundleName: app.displayName,
        CFBundleExecutable: app.executable,
        CFBundlePackageType: 'APPL',
        MinimumOSVersion: '15.0',
        UIDeviceFamily: [1, 2],
      };
      this.put(app.bundleId, app.system ? 'System' : 'User', folder, attributes, app.system ? 0 : 187_000_000);
    }
  }

  list(type: ApplicationType | 'Any'): IosInstalledApp[] {
    return [...this.apps.values()].filter((a) => type === 'Any' || a.type === type);
  }

  get(bundleId: string): IosInstalledApp | undefined {
    return this.apps.get(bundleId);
  }

  /** Installs or updates a user app from an uploaded package; an update keeps the app's data container. */
  install(ipa: IpaInfo, packageBytes: number): IosInstalledApp {
    const container = this.apps.get(ipa.bundleId)?.attributes.Container;
    const app = this.put(ipa.bundleId, 'User', ipa.appFolder, ipa.infoPlist, packageBytes);
    if (typeof container === 'string') app.attributes.Container = container;
    return app;
  }

  /** Removes a user app; system apps cannot be removed (false). */
  uninstall(bundleId: string): boolean {
    const app = this.apps.get(bundleId);
    if (!app || app.type === 'System') return false;
    return this.apps.delete(bundleId);
  }

  userBytes(): number {
    let total = 0;
    for (const app of this.apps.values()) if (app.type === 'User') total += app.sizeBytes;
    return total;
  }

  private put(bundleId: string, type: ApplicationType, folder: string, info: PlistDict, sizeBytes: number): IosInstalledApp {
    const path = type === 'System' ? `/Applications/${folder}` : `/private/var/containers/Bundle/Application/${randomUUID().toUpperCase()}/${folder}`;
    const attributes: PlistDict = {
      ...info,
      ApplicationType: type,
      Path: path,
      IsAppClip: false,
      SignerIdentity: type === 'System' ? 'Apple iPhone OS Application Signing' : 'Apple Development: Lab Developer (7Q2X4J6K3M)',
    };
    if (type === 'User') attributes.Container = `/private/var/mobile/Containers/Data/Application/${randomUUID().toUpperCase()}`;
    const app: IosInstalledApp = { bundleId, type, sizeBytes, attributes };
    this.apps.set(bundleId, app);
    return app;
  }
}

/** The attributes a client asked for (ReturnAttributes), or all of them. */
export function selectAttributes(app: IosInstalledApp, wanted: PlistValue | undefined): PlistDict {
  if (!Array.isArray(wanted)) return app.attributes;
  const out: PlistDict = {};
  for (const key of wanted) if (typeof key === 'string' && app.attributes[key] !== undefined) out[key] = app.attributes[key];
  return out;
}
