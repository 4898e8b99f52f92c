/**
 * POST /Device?action=reset (spec 4.2): remove every user-installed application the device has (asked at the time of
 * the reset), then reboot; it succeeds only when the record, read from the device, shows none left. Omitted
 * `uninstallAll` / `reboot` take the system-area defaults (hub-settings.ts); explicit values win even when the
 * default is off. Entitlements in the vendor's order (wire rule 22, docs/wire-rules.md): DeviceApplicationManagement
 * when uninstalling is in effect, then DeviceReboot when rebooting is.
 */
import { ApiFailure } from '@devicelab/shared';
import type { AuthenticatedUser } from '../auth/authenticated-user';
import type { GatewayDirectory } from '../gateways/gateway-directory';
import { requireEntitlement } from '../auth/entitlements';
import type { Db } from '../store/database';
import { assertUsableBy, rebootDevice } from './device-actions';
import { resolveDevice } from './device-queries';
import { CommandFailure, runDeviceCommand } from './gateway-commands';
import { readHubSettings } from './hub-settings';

interface ResetOptions { uninstallAll?: boolean; reboot?: boolean }

interface ResetOutcome {
  /** Package identifiers removed from the device. */
  uninstalled: string[];
  rebooted: boolean;
}

export async function resetDevice(
  db: Db, gateways: GatewayDirectory, user: AuthenticatedUser, identifier: string, options: ResetOptions = {},
): Promise<ResetOutcome> {
  const defaults = await readHubSettings(db);
  const uninstallAll = options.uninstallAll ?? defaults.resetUninstallAll;
  const reboot = options.reboot ?? defaults.resetReboot;
  if (uninstallAll) requireEntitlement(user, 'DeviceApplicationManagement');
  if (reboot) requireEntitlement(user, 'DeviceReboot');

  const device = await resolveDevice(db, identifier);
  assertUsableBy(device, user);
  const uninstalled: string[] = [];
  if (uninstallAll) {
    // Ask the device what it has now: apps installed over adb behind the hub's back are in no record.
    await runDeviceCommand(gateways, device, { action: 'readPackages', readPackages: {} });
    const reasons = new Map<string, string>();
    for (const identifier of await userApplications(db, device.id)) {
      try {
        await runDeviceCommand(gateways, device, {
          action: 'uninstall', uninstall: { applicationIdentifier: identifier, keepData: false },
        });
        uninstalled.push(identifier);
      } catch (err) {
        if (!(err instanceof CommandFailure)) throw err;
        reasons.set(identifier, err.reason);
      }
    }
    // A removal that failed because the app was already gone is no failure: ask the device again and judge by
    // what is left (every successful removal already recorded the device's state).
    if (reasons.size > 0) await runDeviceCommand(gateways, device, { action: 'readPackages', readPackages: {} });
    const left = await userApplications(db, device.id);
    if (left.length > 0) {
      const why = left.map((identifier) => `${identifier} (${reasons.get(identifier) ?? 'installed while the reset ran'})`);
      throw new ApiFailure(`Reset of device '${device.name}' could not uninstall ${why.join('; ')}. Remove them on the device, then reset again.`);
    }
  }
  if (reboot) await rebootDevice(db, gateways, user, device.id);
  return { uninstalled, rebooted: reboot };
}

/** The user-installed (not system) applications the device's record lists. */
async function userApplications(db: Db, deviceId: string): Promise<string[]> {
  const { installed_packages: packages } = await db.selectFrom('devices').select('installed_packages')
    .where('id', '=', deviceId).executeTakeFirstOrThrow();
  return packages.filter((p) => !p.system).map((p) => p.identifier);
}
