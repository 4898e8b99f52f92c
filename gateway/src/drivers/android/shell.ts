/**
 * Running shell commands through adbkit (shell v1: no exit code, stdout+stderr merged; decide from text).
 */
import Adb from '@devicefarmer/adbkit';
import type { DeviceClient } from '@devicefarmer/adbkit';
import { DeviceCommandError } from '../device-driver';


const PACKAGE_ID = /^[A-Za-z0-9_]+(\.[A-Za-z0-9_]+)*$/;

/** Rejects text that cannot be an Android package name (it is still quoted wherever it is used). */
export function checkPackageId(packageId: string): string {
  if (!PACKAGE_ID.test(packageId)) throw new DeviceCommandError(`Invalid application identifier: ${packageId}`);
  return packageId;
}

/** Runs `command` and returns its output with `\r` removed. */
export async function runShell(device: DeviceClient, command: string, timeoutMs = 60_000): Promise<string> {
  let timer: NodeJS.Timeout | undefined;
  let stream: Awaited<ReturnType<DeviceClient['shell']>> | undefined;
  try {
    const run = (async () => {
      stream = await device.shell(command);
      const buffer = await Adb.util.readAll(stream);
      return buffer.toString('utf8').replace(/\r/g, '');
    })();
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        stream?.destroy();
        reject(new DeviceCommandError(`Device ${device.serial} did not answer within ${Math.round(timeoutMs / 1000)} s`, 'DEVICE_TIMEOUT'));
      }, timeoutMs);
    });
    return await Promise.race([run, timeout]);
  } catch (err) {
    throw asCommandError(device.serial, err);
  } finally {
    if (timer) clearTimeout(timer);
  }
}

/** Wraps adb-level failures (device gone, server down) into a user-facing DeviceCommandError. */
export function asCommandError(serial: string, err: unknown): DeviceCommandError {
  if (err instanceof DeviceCommandError) return err;
  const message = err instanceof Error ? err.message : String(err);
  return new DeviceCommandError(`Device ${serial} is not reachable through adb: ${message}`, 'DEVICE_UNREACHABLE');
}
