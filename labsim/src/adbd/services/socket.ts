/**
 * `tcp:<port>` and `localabstract:<name>`: a raw stream to a socket a program on the device listens on, what
 * `adb forward` and adbkit's openTcp/openLocal open. Bytes pass unchanged both ways; the device side pauses while
 * the host has not taken what was sent (adb allows one unacknowledged write per stream).
 */
import type { Duplex } from 'node:stream';
import type { AdbStream } from '../stream';

/** Bytes queued for the host above which the device-side program's output waits. */
const QUEUED_LIMIT = 256 * 1024;

export function startSocketService(stream: AdbStream, socket: Duplex): void {
  socket.on('data', (data: Buffer) => {
    stream.write(data);
    if (stream.queuedBytes > QUEUED_LIMIT) socket.pause();
  });
  stream.on('drain', () => socket.resume());
  socket.on('error', () => stream.destroy());
  socket.on('end', () => stream.end());
  socket.on('close', () => stream.end());
  stream.on('data', (data: Buffer) => socket.write(data));
  stream.on('close', () => socket.destroy());
}
