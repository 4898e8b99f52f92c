/**
 * Install and uninstall over adb: push the APK to /data/local/tmp, `pm install -r`, remove it. Outcomes are
 * decided from the text (shell v1 has no exit code): a line exactly `Success`, or `Failure [CODE: msg]`.
 */
import { randomBytes } from 'node:crypto';
import type { DeviceClient } from '@devicefarmer/adbkit';
import { DeviceCommandError, type InstallOptions, type UninstallOptions } from '../device-driver';
import { parsePmResult } from './parsers/pm-result';
import { shellQuote } from '@devicelab/shared';
import { asCommandError, checkPackageId, runShell } from './shell';

const INSTALL_TIMEOUT_MS = 5 * 60_000;

async function pushFile(device: DeviceClient, localPath: string, remotePath: string): Promise<void> {
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
