/**
 * App capabilities over adb: install (push + `pm install -r`), uninstall, launch (resolve launcher +
 * `am start`), plus logcat. Every outcome is decided from the command's text (shell v1 has no exit code).
 */
import { randomBytes } from 'node:crypto';
import type { DeviceClient } from '@devicefarmer/adbkit';
import { DeviceCommandError, type InstallOptions, type LaunchOptions, type UninstallOptions } from '../device-driver';
import { parseAmStart } from './parsers/am-start';
import { parsePmResult } from './parsers/pm-result';
import { parseResolvedActivity } from './parsers/resolve-activity';
import { asCommandError, checkPackageId, runShell, shellQuote } from './shell';

const INSTALL_TIMEOUT_MS = 5 * 60_000;

export async function pushFile(device: DeviceClient, localPath: string, remotePath: string): Promise<void> {
  try {
    const transfer = await device.push(localPath, remotePath, 0o644);
    await new Promise<void>((resolve, reject) => {
      transfer.on('end', () => resolve());
      transfer.on('error', reject);
    });
  } catch (err) {
    throw asCommandError(device.serial, err);
  }
}

export async function installApk(device: DeviceClient, apkPath: string, options: InstallOptions = {}): Promise<void> {
  if (options.force) {
    if (!options.packageId) throw new DeviceCommandError('A forced install needs the application identifier');
    // "not installed" is fine here: force only guarantees a clean slate.
    await runShell(device, `pm uninstall ${shellQuote(checkPackageId(options.packageId))}`);
  }
  const remote = `/data/local/tmp/devicelab-${randomBytes(6).toString('hex')}.apk`;
  await pushFile(device, apkPath, remote);
  const output = await runShell(device, `pm install -r ${shellQuote(remote)}; rm -f ${shellQuote(remote)}`, INSTALL_TIMEOUT_MS);
  const result = parsePmResult(output);
  if (!result.ok) throw new DeviceCommandError(result.message, result.code);
}

export async function uninstallPackage(device: DeviceClient, packageId: string, options: UninstallOptions = {}): Promise<void> {
  const flag = options.keepData ? '-k ' : '';
  const output = await runShell(device, `pm uninstall ${flag}${shellQuote(checkPackageId(packageId))}`);
  const result = parsePmResult(output);
  if (!result.ok) throw new DeviceCommandError(result.message, result.code);
}

export async function resolveLauncher(device: DeviceClient, packageId: string): Promise<string> {
  const output = await runShell(device,
    `cmd package resolve-activity --brief -a android.intent.action.MAIN -c android.intent.category.LAUNCHER ${shellQuote(checkPackageId(packageId))}`);
  const component = parseResolvedActivity(output);
  if (!component) throw new DeviceCommandError(`No launchable activity found for ${packageId}`);
  return component;
}

/**
 * `arguments` is appended unquoted: it is am-start extras text (`--es key value ...`) parsed by the device's
 * shell, like the original service. Only the package and component are quoted.
 */
export async function launchPackage(device: DeviceClient, packageId: string, options: LaunchOptions = {}): Promise<string> {
  const component = await resolveLauncher(device, packageId);
  const wait = options.startOnly ? '' : '-W ';
  const extra = options.arguments?.trim() ? ` ${options.arguments.trim()}` : '';
  const output = await runShell(device, `am start ${wait}-n ${shellQuote(component)}${extra}`);
  const result = parseAmStart(output);
  if (!result.ok) throw new DeviceCommandError(result.error ?? `Could not launch ${packageId}`);
  return output;
}

export const MAX_LOG_LINES = 100_000;

export async function readLogcat(device: DeviceClient, maxLines: number): Promise<string> {
  const n = Math.min(MAX_LOG_LINES, Math.max(1, Math.floor(Number.isFinite(maxLines) && maxLines > 0 ? maxLines : 500)));
  return runShell(device, `logcat -d -v threadtime -t ${n}`);
}
