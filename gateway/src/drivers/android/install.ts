/**
 * Install and uninstall over adb. Android 7+ (adb feature `cmd`): the streamed install `adb install` uses,
 * `exec:cmd package install -S <size>` with the APK written into the stream (read from the cache file with
 * backpressure: one chunk in flight per device, no copy on the device's disk first). Older devices: push the APK to
 * /data/local/tmp, `pm install -r`, remove it. Progress is the share of the APK's bytes sent. Outcomes are decided from the text: a line exactly `Success`, or
 * `Failure [CODE: msg]`.
 */
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import type { Socket } from 'node:net';
import type { DeviceClient } from '@devicefarmer/adbkit';
import { DeviceCommandError, type InstallOptions, type UninstallOptions } from '../device-driver';
import { parsePmResult } from './parsers/pm-result';
import { shellQuote } from '@devicelab/shared';
import { asCommandError, checkPackageId, runShell, withDeviceSlot } from './shell';

const INSTALL_TIMEOUT_MS = 5 * 60_000;

type OnPercent = (percent: number) => void;

/** Bytes sent of `total` as an install's percent: 99 at most, the install's end is 100. */
const sentPercent = (sent: number, total: number): number => (total > 0 ? Math.min(99, Math.floor((sent * 100) / total)) : 0);

async function pushFile(device: DeviceClient, localPath: string, remotePath: string, onPercent?: OnPercent): Promise<void> {
  try {
    const { size } = await stat(localPath);
    const transfer = await device.push(localPath, remotePath, 0o644);
    await new Promise<void>((resolve, reject) => {
      if (onPercent) transfer.on('progress', (stats: { bytesTransferred: number }) => onPercent(sentPercent(stats.bytesTransferred, size)));
      transfer.on('end', () => resolve());
      transfer.on('error', reject);
    });
  } catch (err) {
    throw asCommandError(device.serial, err);
  }
}

/** `exec:<command>` on the device: the raw stream (no shell protocol), after the adb server said OKAY. */
async function openExec(device: DeviceClient, command: string): Promise<Socket> {
  const transport = await device.transport();
  const request = Buffer.from(command, 'utf8');
  transport.write(Buffer.concat([Buffer.from(request.length.toString(16).padStart(4, '0'), 'ascii'), request]));
  const reply = (await transport.parser.readAscii(4)).toString();
  if (reply !== 'OKAY') {
    const error = reply === 'FAIL' ? await transport.parser.readValue().then((b: Buffer) => b.toString(), () => 'FAIL') : `unexpected ${reply}`;
    transport.end();
    throw new DeviceCommandError(`Device ${device.serial} refused the streamed install: ${error}`, 'DEVICE_UNREACHABLE');
  }
  return transport.parser.raw() as Socket;
}

/** Streams the APK into `cmd package install -S`; resolves with the package manager's answer. */
async function streamedInstall(device: DeviceClient, apkPath: string, onPercent?: OnPercent): Promise<string> {
  const { size } = await stat(apkPath);
  const socket = await openExec(device, `exec:cmd package install -r -S ${size}`);
  const output: Buffer[] = [];
  socket.on('data', (d: Buffer) => output.push(d));
  const ended = once(socket, 'close');
  let timer: NodeJS.Timeout | undefined;
  try {
    const file = createReadStream(apkPath, { highWaterMark: 256 * 1024 });
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new DeviceCommandError(`Device ${device.serial} did not finish the install within ${INSTALL_TIMEOUT_MS / 60_000} min`, 'DEVICE_TIMEOUT')), INSTALL_TIMEOUT_MS);
    });
    const written = (async () => {
      let sent = 0;
      for await (const chunk of file) {
        // Backpressure: the next chunk is read only once the socket took this one.
        if (!socket.write(chunk)) await Promise.race([once(socket, 'drain'), ended]);
        if (socket.destroyed) throw new DeviceCommandError(`Device ${device.serial} closed the install stream early`, 'DEVICE_UNREACHABLE');
        sent += (chunk as Buffer).length;
        onPercent?.(sentPercent(sent, size));
      }
      await ended;
    })();
    await Promise.race([written, timeout]);
    return Buffer.concat(output).toString('utf8');
  } finally {
    if (timer) clearTimeout(timer);
    socket.destroy();
  }
}

export async function installApk(device: DeviceClient, apkPath: string, options: InstallOptions & { streamed?: boolean } = {}): Promise<void> {
  if (options.force) {
    if (!options.packageId) throw new DeviceCommandError('A forced install needs the application identifier');
    // "not installed" is fine here: force only guarantees a clean slate.
    await runShell(device, `pm uninstall ${shellQuote(checkPackageId(options.packageId))}`);
  }
  const output = options.streamed ? await withDeviceSlot(device, () => streamedInstall(device, apkPath, options.onProgress)).catch((err: unknown) => {
    throw asCommandError(device.serial, err);
  }) : await pushAndInstall(device, apkPath, options.onProgress);
  const result = parsePmResult(output);
  if (!result.ok) throw new DeviceCommandError(result.message, result.code);
}

async function pushAndInstall(device: DeviceClient, apkPath: string, onPercent?: OnPercent): Promise<string> {
  const remote = `/data/local/tmp/devicelab-${randomBytes(6).toString('hex')}.apk`;
  await pushFile(device, apkPath, remote, onPercent);
  return runShell(device, `pm install -r ${shellQuote(remote)}; rm -f ${shellQuote(remote)}`, INSTALL_TIMEOUT_MS);
}

export async function uninstallPackage(device: DeviceClient, packageId: string, options: UninstallOptions = {}): Promise<void> {
  const flag = options.keepData ? '-k ' : '';
  const output = await runShell(device, `pm uninstall ${flag}${shellQuote(checkPackageId(packageId))}`);
  const result = parsePmResult(output);
  if (!result.ok) throw new DeviceCommandError(result.message, result.code);
}
