/**
 * Running shell commands through adbkit (shell v1: no exit code, stdout+stderr merged; decide from text).
 */
import Adb from '@devicefarmer/adbkit';
import type { Client, DeviceClient } from '@devicefarmer/adbkit';
import type { Duplex } from 'node:stream';
import type { Admission } from '../admission';
import { DeviceCommandError } from '../device-driver';
import { splitSections } from './parsers/text';


const PACKAGE_ID = /^[A-Za-z0-9_]+(\.[A-Za-z0-9_]+)*$/;

/** Rejects text that cannot be an Android package name (it is still quoted wherever it is used). */
export function checkPackageId(packageId: string): string {
  if (!PACKAGE_ID.test(packageId)) throw new DeviceCommandError(`Invalid application identifier: ${packageId}`, 'INVALID_COMMAND');
  return packageId;
}

/** The admission control of each adb client (one per gateway driver); commands of other clients run unbounded. */
const admissions = new WeakMap<Client, Admission>();

/** Bounds the concurrent shell commands run through `client` (see admission.ts). */
export function limitDeviceWork(client: Client, admission: Admission): void {
  admissions.set(client, admission);
}

/** Runs `work` for the device in an admission slot of its client (see `limitDeviceWork`). */
export function withDeviceSlot<T>(device: DeviceClient, work: () => Promise<T>): Promise<T> {
  const admission = admissions.get(device.client);
  return admission ? admission.run(device.serial, work) : work();
}

/**
 * Runs `command` and returns its output with `\r` removed. The timeout counts from when the command got its
 * admission slot. A command that times out is cancelled even while its stream is still opening (the stream is
 * destroyed as soon as it exists), and it keeps its slot until then, so timed-out commands cannot pile up.
 */
export async function runShell(device: DeviceClient, command: string, timeoutMs = 60_000): Promise<string> {
  const admission = admissions.get(device.client);
  const release = admission ? await admission.acquire(device.serial) : () => undefined;
  let timer: NodeJS.Timeout | undefined;
  let timedOut = false;
  let stream: Duplex | undefined;
  try {
    const run = (async () => {
      const opened: Duplex = await device.shell(command);
      stream = opened;
      if (timedOut) {
        opened.destroy();
        return '';
      }
      opened.once('close', release);
      const buffer = await Adb.util.readAll(opened);
      return buffer.toString('utf8').replace(/\r/g, '');
    })();
    // Opening failed or the command ended: the slot is free (a destroyed stream frees it through 'close').
    run.then(release, release);
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        timedOut = true;
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

/**
 * Runs a batch script (`batchScript`, whose last section is `end`) and splits its output. Output without `end` was
 * cut short: adb ends a shell stream without an error when the device goes away (unplugged, unauthorized)
 * mid-command, and half a package list must not pass for the whole one.
 */
export async function runBatch(device: DeviceClient, script: string, what: string, timeoutMs?: number): Promise<Map<string, string>> {
  const sections = splitSections(await runShell(device, script, timeoutMs));
  if (!sections.has('end')) throw new DeviceCommandError(`Device ${device.serial} stopped answering while its ${what} were read`, 'DEVICE_UNREACHABLE');
  return sections;
}

/** Wraps adb-level failures (device gone, server down) into a user-facing DeviceCommandError. */
export function asCommandError(serial: string, err: unknown): DeviceCommandError {
  if (err instanceof DeviceCommandError) return err;
  const message = err instanceof Error ? err.message : String(err);
  return new DeviceCommandError(`Device ${serial} is not reachable through adb: ${message}`, 'DEVICE_UNREACHABLE');
}
