/**
 * A helper program run on an Android device for the screen (minicap, minitouch): pushed to /data/local/tmp with
 * mode 0755, started in its own long-lived shell stream (outside the shell admission slots, which are for short
 * commands), reached through the host's adb server on its abstract socket, and killed by pid when done.
 */
import type { DeviceClient } from '@devicefarmer/adbkit';
import type { Duplex } from 'node:stream';
import { DeviceCommandError } from '../../device-driver';
import { runShell } from '../shell';

export const AGENT_DIR = '/data/local/tmp';

/** Pushes a host file to the device; resolves once the transfer ended. */
export async function pushFile(device: DeviceClient, localPath: string, remotePath: string, mode = 0o755): Promise<void> {
  const transfer = await device.push(localPath, remotePath, mode);
  await new Promise<void>((resolve, reject) => {
    transfer.once('end', () => resolve());
    transfer.once('error', (err: Error) => reject(err));
  });
}

/** Starts `command` in a shell stream kept open while the program runs; its output is kept (bounded) for errors. */
export async function startAgent(device: DeviceClient, command: string): Promise<{ stream: Duplex; output(): string }> {
  const stream: Duplex = await device.shell(command);
  let output = '';
  stream.on('data', (chunk: Buffer) => {
    if (output.length < 4096) output += chunk.toString('utf8');
  });
  stream.on('error', () => undefined);
  return { stream, output: () => output.trim() };
}

/**
 * Connects to `localabstract:<name>` until `ready` accepts what the program sends first, or `deadlineMs` passes. A
 * program still starting has no socket yet: adb then closes the connection at once, and it is tried again.
 */
export async function connectAgent<T>(
  device: DeviceClient, name: string, deadlineMs: number, ready: (socket: Duplex) => Promise<T>, stillRunning: () => boolean,
): Promise<{ socket: Duplex; greeting: T }> {
  const until = Date.now() + deadlineMs;
  let lastError = '';
  while (Date.now() < until) {
    if (!stillRunning()) break;
    try {
      const socket: Duplex = await device.openLocal(`localabstract:${name}`);
      try {
        const greeting = await ready(socket);
        return { socket, greeting };
      } catch (err) {
        socket.destroy();
        lastError = err instanceof Error ? err.message : String(err);
      }
    } catch (err) {
      lastError = err instanceof Error ? err.message : String(err);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new DeviceCommandError(`${name} on device ${device.serial} did not answer${lastError ? ` (${lastError})` : ''}`, 'DEVICE_TIMEOUT');
}

/** Reads from `socket` until `complete` finds what it needs in the bytes so far; rejects when it closes first. */
export function readGreeting<T>(socket: Duplex, complete: (bytes: Buffer) => T | undefined, timeoutMs: number): Promise<{ value: T; rest: Buffer }> {
  return new Promise((resolve, reject) => {
    let bytes = Buffer.alloc(0);
    const done = (err?: Error, value?: T) => {
      clearTimeout(timer);
      socket.off('data', onData);
      socket.off('close', onClose);
      socket.off('end', onClose);
      if (err) reject(err);
      else resolve({ value: value as T, rest: bytes });
    };
    const onData = (chunk: Buffer) => {
      bytes = Buffer.concat([bytes, chunk]);
      const value = complete(bytes);
      if (value !== undefined) {
        socket.pause();
        done(undefined, value);
      }
    };
    const onClose = () => done(new Error('the socket closed before its greeting'));
    const timer = setTimeout(() => done(new Error('no greeting in time')), timeoutMs);
    socket.on('data', onData);
    socket.once('close', onClose);
    socket.once('end', onClose);
  });
}

/** Kills the program by pid (best effort: it may be gone already). */
export async function killAgent(device: DeviceClient, pid: number | undefined): Promise<void> {
  if (!pid || !Number.isInteger(pid) || pid <= 0) return;
  await runShell(device, `kill ${pid}`, 5_000).catch(() => undefined);
}
