/**
 * Launch over adb: resolve the launcher activity (`cmd package resolve-activity --brief`), then `am start -W -n`.
 * Success is decided from the text (`Error:` lines fail).
 */
import type { DeviceClient } from '@devicefarmer/adbkit';
import { DeviceCommandError, type LaunchOptions } from '../device-driver';
import { parseAmStart } from './parsers/am-start';
import { parseResolvedActivity } from './parsers/resolve-activity';
import { shellQuote, splitShellWords } from '@devicelab/shared';
import { checkPackageId, runShell } from './shell';

async function resolveLauncher(device: DeviceClient, packageId: string): Promise<string> {
  const output = await runShell(device,
    `cmd package resolve-activity --brief -a android.intent.action.MAIN -c android.intent.category.LAUNCHER ${shellQuote(checkPackageId(packageId))}`);
  const component = parseResolvedActivity(output);
  if (!component) throw new DeviceCommandError(`No launchable activity found for ${packageId}`, 'APP_NOT_LAUNCHABLE');
  return component;
}

/**
 * `arguments` is am-start options text (`--es key "a value" --ez flag true`). It is split into words the way a
 * shell would and every word is quoted, so quoting in the text works as users expect while `;`, `$(...)` and
 * redirections stay literal arguments of `am` instead of running on the device.
 */
export async function launchPackage(device: DeviceClient, packageId: string, options: LaunchOptions = {}): Promise<string> {
  const component = await resolveLauncher(device, packageId);
  const wait = options.startOnly ? '' : '-W ';
  const extra = splitShellWords(options.arguments ?? '').map((word) => ` ${shellQuote(word)}`).join('');
  const output = await runShell(device, `am start ${wait}-n ${shellQuote(component)}${extra}`);
  const result = parseAmStart(output);
  if (!result.ok) throw new DeviceCommandError(result.error ?? `Could not launch ${packageId}`, 'APP_NOT_LAUNCHABLE');
  return output;
}
