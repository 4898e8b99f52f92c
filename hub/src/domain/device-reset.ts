/**
 * POST /Device?action=reset (spec 4.2): remove every user-installed application, then reboot. Omitted
 * `uninstallAll` / `reboot` take the system-area defaults (hub-settings.ts); explicit values win even when the
 * default is off. Entitlements in the vendor's order (wire-decisions 22): DeviceApplicationManagement when
 * uninstalling is in effect, then DeviceReboot when rebooting is.
 */
import { ApiFailure } from '@devicelab/shared';
import type { AuthenticatedUser } from '../auth/authenticated-user';
import type { GatewayDirectory } from '../gateways/gateway-directory';
import { requireEntitlement } from '../auth/entitlements';
import type { Db } from '../store/database';
import { assertUsableBy, rebootDevice } from './device-actions';
import { resolveDevice } from './device-queries';
import { runDeviceCommand } from './gateway-commands';
import { readHubSettings } from './hub-settings';

export interface ResetOptions { uninstallAll?: boolean; reboot?: boolean }

export interface ResetOutcome {
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
    // The gateway refreshes the package list after every install and uninstall, so the record is current.
    const failures: string[] = [];
    for (const pkg of device.installed_packages.filter((p) => !p.system)) {
      try {
        await runDeviceCommand(gateways, device, {
          action: 'uninstall', uninstall: { applicationIdentifier: pkg.identifier, keepData: false },
        });
        uninstalled.push(pkg.identifier);
      } catch (err) {
        if (!(err instanceof ApiFailure)) throw err;
        failures.push(`${pkg.identifier}: ${err.message}`);
      }
    }
    if (failures.length > 0) {
      throw new ApiFailure(`Reset of device '${device.name}' could not uninstall ${failures.join('; ')}`);
    }
  }
  if (reboot) await rebootDevice(db, gateways, user, device.id);
  return { uninstalled, rebooted: reboot };
}
