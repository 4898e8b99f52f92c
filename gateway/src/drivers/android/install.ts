/**
 * Install and uninstall over adb. Android 7+ (adb feature `cmd`): the streamed install `adb install` uses,
 * `exec:cmd package install -S <size>` with the APK written into the stream (read from the cache file with
 * backpressure: at most 1 MiB in flight per device, no copy on the device's disk first). Older devices: push the APK to
 * /data/local/tmp, `pm install -r`, remove it. Progress is the share of the APK's bytes sent. Outcomes are decided from the text: a line exactly `Success`, or
 * `Failure [CODE: msg]`.
 */
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import type { Socket } from 'node:net';
import type { DeviceClient } from '@devicefarmer/adbkit';
import { DeviceCommandError, type ArrivingApp, type InstallOptions, type UninstallOptions } from '../device-driver';
import { parsePmResult } from './parsers/pm-result';
import { shellQuote } from '@devicelab/shared';
import { asCommandError, checkPackageId, runShell, withDeviceSlot } from './shell';

const INSTALL_TIMEOUT_MS = 5 * 60_000;
/** Largest DATA packet of the adb sync protocol. */
const SYNC_DATA_MAX = 64 * 1024;
/** What a streamed install writes at once. */
const STREAM_PIECE_BYTES = 256 * 1024;
/**
 * Bytes queued in one device's socket before the writer waits for it to drain: a bound on the gateway's memory per
 * install, large enough that 64 KiB sync packets do not wait for a drain each.
 */
const IN_FLIGHT_BYTES = 1024 * 1024;

type OnPercent = (percent: number) => void;

/** Bytes sent of `total` as an install's percent: 99 at most, the install's end is 100. */
const sentPercent = (sent: number, total: number): number => (total > 0 ? Math.min(99, Math.floor((sent * 100) / total)) : 0);

/** `<service>` on the device (`exec:...`, `sync:`): the raw stream, after the adb server said OKAY. */
async function openService(device: DeviceClient, service: string): Promise<Socket> {
  const transport = await device.transport();
  const request = Buffer.from(service, 'utf8');
  transport.write(Buffer.concat([Buffer.from(request.length.toString(16).padStart(4, '0'), 'ascii'), request]));
  const reply = (await transport.parser.readAscii(4)).toString();
  if (reply !== 'OKAY') {
    const error = reply === 'FAIL' ? await transport.parser.readValue().then((b: Buffer) => b.toString(), () => 'FAIL') : `unexpected ${reply}`;
    transport.end();
    throw new DeviceCommandError(`Device ${device.serial} refused ${service.split(' ')[0]}: ${error}`, 'DEVICE_UNREACHABLE');
  }
  return transport.parser.raw() as Socket;
}

/**
 * Writes the binary into the socket in pieces of `pieceBytes` (each framed by `frame`), with backpressure (at most
 * IN_FLIGHT_BYTES and one read piece in memory per device), then `finish`; a binary still arriving is written as its
 * bytes come, and when its download fails the socket is destroyed before its declared size (the install fails); `done(output so
 * far)` says when the device's answer is complete (else its close). Resolves with everything the device sent;
 * bounded by INSTALL_TIMEOUT_MS.
 */
async function streamFile(
  device: DeviceClient, socket: Socket, app: ArrivingApp, pieceBytes: number, frame: (chunk: Buffer) => Buffer,
  finish: Buffer | undefined, done: (output: Buffer) => boolean, onPercent?: OnPercent,
): Promise<Buffer> {
  const { size } = app;
  const output: Buffer[] = [];
  let answered: () => void = () => undefined;
  const answer = new Promise<void>((resolve) => { answered = resolve; });
  socket.on('data', (d: Buffer) => {
    output.push(d);
    if (done(Buffer.concat(output))) answered();
  });
  const ended = once(socket, 'close');
  let timer: NodeJS.Timeout | undefined;
  try {
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new DeviceCommandError(`Device ${device.serial} did not finish the install within ${INSTALL_TIMEOUT_MS / 60_000} min`, 'DEVICE_TIMEOUT')), INSTALL_TIMEOUT_MS);
    });
    const written = (async () => {
      let sent = 0;
      for await (const chunk of app.read(pieceBytes)) {
        for (let at = 0; at < chunk.length; at += pieceBytes) {
          // Up to IN_FLIGHT_BYTES queued per device, then wait until the socket took it all.
          const taken = socket.write(frame(chunk.subarray(at, at + pieceBytes)));
          if (!taken && socket.writableLength >= IN_FLIGHT_BYTES) await Promise.race([once(socket, 'drain'), ended]);
          if (socket.destroyed) throw new DeviceCommandError(`Device ${device.serial} closed the install stream early`, 'DEVICE_UNREACHABLE');
        }
        sent += chunk.length;
        onPercent?.(sentPercent(sent, size));
      }
      if (finish) socket.write(finish);
      await Promise.race([answer, ended]);
    })();
    await Promise.race([written, timeout]);
    return Buffer.concat(output);
  } finally {
    if (timer) clearTimeout(timer);
    socket.destroy();
  }
}

/** Streams the APK into `cmd package install -S`; resolves with the package manager's answer. */
async function streamedInstall(device: DeviceClient, apk: ArrivingApp, flags: string, onPercent?: OnPercent): Promise<string> {
  const socket = await openService(device, `exec:cmd package install ${flags} -S ${apk.size}`);
  // The answer is complete when the device closes the stream.
  return (await streamFile(device, socket, apk, STREAM_PIECE_BYTES, (chunk) => chunk, undefined, () => false, onPercent)).toString('utf8');
}

/** A finished file as a binary that has arrived. */
export async function arrived(file: string): Promise<ArrivingApp> {
  const { size } = await stat(file);
  return { size, read: (pieceBytes) => createReadStream(file, { highWaterMark: pieceBytes }), complete: Promise.resolve(file) };
}

const syncHeader = (id: string, value: number): Buffer => {
  const header = Buffer.alloc(8);
  header.write(id, 0, 'ascii');
  header.writeUInt32LE(value, 4);
  return header;
};

/**
 * `adb push` over the sync protocol (SEND, DATA packets, DONE; then OKAY or FAIL), written here rather than
 * adbkit's push, which starts another writer at every `readable` of the file while one waits for `drain` and so
 * buffers the whole file in the gateway.
 */
async function pushFile(device: DeviceClient, localPath: string, remotePath: string, onPercent?: OnPercent): Promise<void> {
  const socket = await openService(device, 'sync:');
  const target = Buffer.from(`${remotePath},${0o644}`, 'utf8');
  socket.write(Buffer.concat([syncHeader('SEND', target.length), target]));
  const complete = (reply: Buffer) => reply.length >= 8 && (reply.toString('ascii', 0, 4) !== 'FAIL' || reply.length >= 8 + reply.readUInt32LE(4));
  const reply = await streamFile(device, socket, await arrived(localPath), SYNC_DATA_MAX, (chunk) => Buffer.concat([syncHeader('DATA', chunk.length), chunk]),
    syncHeader('DONE', Math.floor(Date.now() / 1000)), complete, onPercent);
  const id = reply.toString('ascii', 0, 4);
  if (id === 'OKAY') return;
  const reason = id === 'FAIL' ? reply.toString('utf8', 8, 8 + reply.readUInt32LE(4)) : `unexpected answer ${JSON.stringify(id)}`;
  throw new DeviceCommandError(`Device ${device.serial} refused the file: ${reason}`, 'DEVICE_UNREACHABLE');
}

/**
 * Installs the APK: streamed (Android 7+), following the binary as it arrives; otherwise pushed once it is complete.
 */
export async function installApk(device: DeviceClient, apk: ArrivingApp, options: InstallOptions & { streamed?: boolean } = {}): Promise<void> {
  if (options.force) {
    if (!options.packageId) throw new DeviceCommandError('A forced install needs the application identifier', 'INVALID_COMMAND');
    // A failed download must change nothing: the old app goes only once the new binary is here and verified.
    await apk.complete;
    // "not installed" is fine here: force only guarantees a clean slate.
    await runShell(device, `pm uninstall ${shellQuote(checkPackageId(options.packageId))}`);
  }
  // -g (Android 6+): every runtime permission the app asks for is granted at install, for native automation.
  const flags = options.forAutomation ? '-r -g' : '-r';
  const output = options.streamed
    ? await withDeviceSlot(device, () => streamedInstall(device, apk, flags, options.onProgress))
      .catch((err: unknown) => { throw asCommandError(device.serial, err); })
    : await pushAndInstall(device, await apk.complete, flags, options.onProgress);
  const result = parsePmResult(output);
  if (!result.ok) throw new DeviceCommandError(result.message, result.code);
}

async function pushAndInstall(device: DeviceClient, apkPath: string, flags: string, onPercent?: OnPercent): Promise<string> {
  const remote = `/data/local/tmp/devicelab-${randomBytes(6).toString('hex')}.apk`;
  await withDeviceSlot(device, () => pushFile(device, apkPath, remote, onPercent)).catch((err: unknown) => {
    throw asCommandError(device.serial, err);
  });
  return runShell(device, `pm install ${flags} ${shellQuote(remote)}; rm -f ${shellQuote(remote)}`, INSTALL_TIMEOUT_MS);
}

export async function uninstallPackage(device: DeviceClient, packageId: string, options: UninstallOptions = {}): Promise<void> {
  const flag = options.keepData ? '-k ' : '';
  const output = await runShell(device, `pm uninstall ${flag}${shellQuote(checkPackageId(packageId))}`);
  const result = parsePmResult(output);
  if (!result.ok) throw new DeviceCommandError(result.message, result.code);
}
