/**
 * `exec:<cmd>` and `abb_exec:<args\0...>` services.
 *
 * Both are raw streams without the shell protocol. The interesting case is
 * the streamed install adb uses: `exec:cmd package 'install' -S <size>` (device
 * advertises `cmd`) or `abb_exec:package\0install\0-S\0<size>\0` (device
 * advertises `abb_exec`). The APK arrives on the stream; the reply is the
 * package manager's text (`Success` / `Failure [...]`).
 */
import type { AdbStream } from '../stream';
import type { DevicePort } from '../device-port';
import { splitShellWords } from '@devicelab/shared';
import { StreamInput, streamGone } from './shell';

export function startExecService(stream: AdbStream, device: DevicePort, command: string): void {
  const words = splitShellWords(command);
  if (words[0] === 'cmd' && words[1] === 'package' && words[2] === 'install' && words.includes('-S')) {
    streamedInstall(stream, device, words.slice(3));
    return;
  }
  // Without the shell protocol adbd hands the command one fd for stdout and stderr.
  const input = new StreamInput();
  stream.on('data', (d: Buffer) => input.push(d));
  stream.on('close', () => input.end());
  device
    .runShell(command, { input, out: (d) => stream.write(d), err: (d) => stream.write(d), gone: streamGone(stream) })
    .then(() => stream.end(), (e: Error) => stream.end(`sh: ${e.message}\n`));
}

export function startAbbExecService(stream: AdbStream, device: DevicePort, args: string[]): void {
  if (args[0] === 'package' && args[1] === 'install' && args.includes('-S')) {
    streamedInstall(stream, device, args.slice(2));
    return;
  }
  // Other binder calls (`abb_exec:package\0list\0packages`) behave like `cmd <service> ...`.
  device
    .runTool('cmd', args)
    .then((r) => stream.end(r.stdout + r.stderr))
    .catch((e: Error) => stream.end(`Exception occurred while executing: ${e.message}\n`));
}

/** Reads exactly `-S <size>` bytes from the stream, then installs them. */
function streamedInstall(stream: AdbStream, device: DevicePort, pmArgs: string[]): void {
  const sIndex = pmArgs.indexOf('-S');
  const size = Number(pmArgs[sIndex + 1]);
  const args = pmArgs.filter((_, i) => i !== sIndex && i !== sIndex + 1);
  if (!Number.isInteger(size) || size < 0) {
    stream.end('Error: APK content must be streamed\n');
    return;
  }
  const chunks: Buffer[] = [];
  let received = 0;
  let started = false;
  const finish = () => {
    if (started) return;
    started = true;
    device
      .installStream(Buffer.concat(chunks, received).subarray(0, size), args)
      .then((r) => stream.end(r.output))
      .catch((e: Error) => stream.end(`Failure [INSTALL_FAILED_INTERNAL_ERROR: ${e.message}]\n`));
  };
  stream.on('data', (d: Buffer) => {
    chunks.push(d);
    received += d.length;
    if (received >= size) finish();
  });
  if (size === 0) finish();
}
