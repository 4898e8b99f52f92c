/** Install, uninstall and launch of an uploaded application on a device (spec 4.1). */
import { sql } from 'kysely';
import { ApiFailure } from '@devicelab/shared';
import type { AuthenticatedUser } from '../auth/authenticated-user';
import type { GatewayDirectory } from '../gateways/gateway-directory';
import { requireEntitlement } from '../auth/entitlements';
import { withTx, type Db, type Tx } from '../store/database';
import type { ApplicationRow } from '../store/schema';
import { assertPlatformFits } from './app-platform';
import { assertUsableBy } from './device-actions';
import { resolveDevice, type DeviceWithRetainer } from './device-queries';
import { recordEvent } from './events';
import { assertInstallable } from './ios-provisioning';
import { CommandFailure, runDeviceCommand } from './gateway-commands';

export const applicationNotFound = (id: string): string => `Application '${id}' not found.`;
export const applicationDisabled = (name: string): string =>
  `Application '${name}' is disabled: enable it in the library before installing it.`;

async function target(
  db: Db, user: AuthenticatedUser, applicationId: string, deviceIdentifier: string,
): Promise<{ app: ApplicationRow; device: DeviceWithRetainer }> {
  const app = await db.selectFrom('applications').selectAll().where('id', '=', applicationId).executeTakeFirst();
  if (!app) throw new ApiFailure(applicationNotFound(applicationId));
  const device = await resolveDevice(db, deviceIdentifier);
  assertUsableBy(device, user);
  if (app.operating_system !== device.operating_system) {
    throw new ApiFailure('Application operating system does not match the device.');
  }
  return { app, device };
}

export interface InstallOptions {
  force?: boolean;
  /** Installed prepared for native automation: what that did on the device's platform comes back as text. */
  nativeAutomation?: boolean;
  /** Hears the percent the gateway reports while the binary goes onto the device. */
  onProgress?: (percent: number) => void;
}

export async function installApplication(
  db: Db, gateways: GatewayDirectory, user: AuthenticatedUser, applicationId: string, deviceIdentifier: string,
  options: InstallOptions = {},
): Promise<{ nativeAutomation?: string }> {
  requireEntitlement(user, 'DeviceApplicationManagement');
  const { app, device } = await target(db, user, applicationId, deviceIdentifier);
  // A disabled application stays in the library (and on devices that have it) but goes on no further device.
  if (!app.enabled) throw new ApiFailure(applicationDisabled(app.display_name));
  assertPlatformFits(app, device);
  assertInstallable(app, device);
  const installEvent = {
    eventType: 'ApplicationInstall', boolValue: true, deviceId: device.id, deviceName: device.name,
    performedById: user.id, performedByName: user.displayName, applicationId: app.id, applicationName: app.display_name,
  } as const;
  let result;
  try {
    result = await runDeviceCommand(gateways, device, {
      action: 'install',
      install: {
        blobSha256: app.blob_sha256, applicationIdentifier: app.application_identifier, force: options.force ?? false,
        forAutomation: options.nativeAutomation ?? false,
      },
    }, options.onProgress);
  } catch (err) {
    // A refused install is part of the device's history too: who tried which app, and the device's reason.
    if (err instanceof CommandFailure) {
      await withTx(db, (trx) => recordEvent(trx, {
        ...installEvent, message: 'Application Install Failed', isSuccess: false, stringValue: err.reason.slice(0, 1000),
      }));
    }
    throw err;
  }
  await withTx(db, async (trx) => {
    await recordInstalledRecord(trx, device.id, app);
    await recordEvent(trx, { ...installEvent, message: 'Application Installed', stringValue: app.version });
  });
  // The gateway's word on what "prepared for native automation" did on this platform.
  return options.nativeAutomation ? { nativeAutomation: result.text || 'The gateway reported nothing to prepare.' } : {};
}

/**
 * Remembers that `app` is the library record now installed on the device under its package name, so the device
 * lists it rather than another record of the same package and version; the device's lists are re-stamped, as
 * they show it.
 */
async function recordInstalledRecord(trx: Tx, deviceId: string, app: ApplicationRow): Promise<void> {
  await trx.insertInto('installed_records')
    .values({ device_id: deviceId, application_identifier: app.application_identifier, application_id: app.id })
    .onConflict((oc) => oc.columns(['device_id', 'application_identifier'])
      .doUpdateSet({ application_id: app.id }))
    .execute();
  await trx.updateTable('devices').set({ list_change: sql`nextval('list_changes')` }).where('id', '=', deviceId).execute();
}

/** `removeData` omitted ⇒ true (the primary form of the spec). */
export async function uninstallApplication(
  db: Db, gateways: GatewayDirectory, user: AuthenticatedUser, applicationId: string, deviceIdentifier: string,
  options: { removeData?: boolean } = {},
): Promise<void> {
  requireEntitlement(user, 'DeviceApplicationManagement');
  const { app, device } = await target(db, user, applicationId, deviceIdentifier);
  await uninstallFromDevice(db, gateways, user, device, app.application_identifier, app, options.removeData);
}

/**
 * uninstallBundle: removes a package by its bundle id / package name, whether or not it was uploaded here. The
 * event names the uploaded Application of that identifier when there is one (latest upload).
 */
export async function uninstallBundle(
  db: Db, gateways: GatewayDirectory, user: AuthenticatedUser, bundleId: string, deviceIdentifier: string,
  options: { removeData?: boolean } = {},
): Promise<void> {
  requireEntitlement(user, 'DeviceApplicationManagement');
  const device = await resolveDevice(db, deviceIdentifier);
  assertUsableBy(device, user);
  const app = await db.selectFrom('applications').selectAll()
    .where('application_identifier', '=', bundleId).where('operating_system', '=', device.operating_system)
    .orderBy('version_counter', 'desc').orderBy('created_at', 'desc').executeTakeFirst();
  await uninstallFromDevice(db, gateways, user, device, bundleId, app, options.removeData);
}

async function uninstallFromDevice(
  db: Db, gateways: GatewayDirectory, user: AuthenticatedUser, device: DeviceWithRetainer, identifier: string,
  app: ApplicationRow | undefined, removeData: boolean | undefined,
): Promise<void> {
  await runDeviceCommand(gateways, device, {
    action: 'uninstall',
    uninstall: { applicationIdentifier: identifier, keepData: removeData === false },
  });
  // The change happened on the device, not in the records: the event gets a transaction of its own.
  await withTx(db, (trx) => recordEvent(trx, {
    eventType: 'ApplicationInstall', message: 'Application Uninstalled', boolValue: false,
    deviceId: device.id, deviceName: device.name, performedById: user.id, performedByName: user.displayName,
    applicationId: app?.id ?? null, applicationName: app?.display_name ?? identifier,
    stringValue: app?.version ?? null,
  }));
}

export interface LaunchOptions { arguments?: string; startOnly?: boolean }

export async function launchApplication(
  db: Db, gateways: GatewayDirectory, user: AuthenticatedUser, applicationId: string, deviceIdentifier: string,
  options: LaunchOptions = {},
): Promise<void> {
  requireEntitlement(user, 'DeviceConnect');
  const { app, device } = await target(db, user, applicationId, deviceIdentifier);
  await runDeviceCommand(gateways, device, {
    action: 'launch',
    launch: {
      // The gateway resolves the launcher activity on the device itself.
      applicationIdentifier: app.application_identifier,
      arguments: options.arguments ?? '',
      startOnly: options.startOnly ?? false,
    },
  });
  await withTx(db, (trx) => recordEvent(trx, {
    eventType: 'ApplicationLaunch', message: 'Application Launched', deviceId: device.id, deviceName: device.name,
    performedById: user.id, performedByName: user.displayName, applicationId: app.id,
    applicationName: app.display_name, stringValue: options.arguments ?? null,
  }));
}
