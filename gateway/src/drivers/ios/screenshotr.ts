/**
 * The iOS screen without WebDriverAgent: lockdown's `com.apple.mobile.screenshotr` (what `idevicescreenshot`
 * uses), a DeviceLink service of 4-byte big-endian length-prefixed property lists that are arrays. After the
 * version exchange and DLMessageDeviceReady, each ScreenShotRequest is answered with one PNG (iOS 9 and later),
 * so the screen is a still polled as fast as the device answers. It takes no input: the screen is view only.
 */
import type * as net from 'node:net';
import { decodePlistValue, encodePlist, isDict, type Logger, type PlistValue, type ScreenInput } from '@devicelab/shared';
import { DeviceCommandError } from '../device-driver';
import { NO_CONTROLS, type ScreenSink, type ScreenSource } from '../../screen/screen-source';
import { type DeviceLink, openServiceSocket } from './services';

const SERVICE = 'com.apple.mobile.screenshotr';
const MAX_MESSAGE_BYTES = 64 * 1024 * 1024;

/** A DeviceLink connection: whole messages in order, each a decoded property list. */
class DeviceLinkConnection {
  private pending: Buffer = Buffer.alloc(0);
  private readonly queue: PlistValue[] = [];
  private waiter: { resolve(value: PlistValue): void; reject(err: Error): void } | undefined;
  private failure: Error | undefined;

  constructor(private readonly socket: net.Socket, private readonly timeoutMs: number) {
    socket.on('data', (chunk: Buffer) => this.receive(chunk));
    socket.on('error', (err) => this.fail(err));
    socket.on('close', () => this.fail(new Error('screenshotr closed the connection')));
  }

  send(value: PlistValue): void {
    const body = encodePlist(value);
    const header = Buffer.alloc(4);
    header.writeUInt32BE(body.length, 0);
    this.socket.write(Buffer.concat([header, body]));
  }

  next(): Promise<PlistValue> {
    const queued = this.queue.shift();
    if (queued !== undefined) return Promise.resolve(queued);
    if (this.failure) return Promise.reject(this.failure);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiter = undefined;
        reject(new Error(`screenshotr did not answer within ${this.timeoutMs} ms`));
      }, this.timeoutMs);
      this.waiter = {
        resolve: (value) => { clearTimeout(timer); resolve(value); },
        reject: (err) => { clearTimeout(timer); reject(err); },
      };
    });
  }

  close(): void {
    this.socket.destroy();
  }

  private receive(chunk: Buffer): void {
    this.pending = this.pending.length ? Buffer.concat([this.pending, chunk]) : chunk;
    while (this.pending.length >= 4) {
      const length = this.pending.readUInt32BE(0);
      if (length > MAX_MESSAGE_BYTES) return this.fail(new Error(`screenshotr sent a message of ${length} bytes`));
      if (this.pending.length < 4 + length) return;
      let value: PlistValue;
      try {
        value = decodePlistValue(this.pending.subarray(4, 4 + length));
      } catch (err) {
        return this.fail(err as Error);
      }
      this.pending = this.pending.subarray(4 + length);
      const waiter = this.waiter;
      this.waiter = undefined;
      if (waiter) waiter.resolve(value);
      else this.queue.push(value);
    }
  }

  private fail(err: Error): void {
    this.failure ??= err;
    this.socket.destroy();
    const waiter = this.waiter;
    this.waiter = undefined;
    waiter?.reject(this.failure);
  }
}

const kind = (value: PlistValue): string | undefined => (Array.isArray(value) && typeof value[0] === 'string' ? value[0] : undefined);

/** Width and height of a PNG from its IHDR chunk; undefined for anything else. */
export function pngSize(image: Buffer): { width: number; height: number } | undefined {
  if (image.length < 24 || image.readUInt32BE(0) !== 0x89504e47 || image.toString('latin1', 12, 16) !== 'IHDR') return undefined;
  return { width: image.readUInt32BE(16), height: image.readUInt32BE(20) };
}

export interface ScreenshotrOptions {
  /** Shortest time between two requests (the device's own pace when slower). */
  minIntervalMs?: number;
  timeoutMs: number;
  logger: Logger;
}

export class ScreenshotrScreen implements ScreenSource {
  private connection: DeviceLinkConnection | undefined;
  private stopped = false;

  constructor(private readonly link: DeviceLink, private readonly udid: string, private readonly options: ScreenshotrOptions) {}

  async start(sink: ScreenSink): Promise<void> {
    const socket = await openServiceSocket(this.link, SERVICE).catch((err: unknown) => {
      throw new DeviceCommandError(`Device ${this.udid} did not start ${SERVICE} (is the Developer Disk Image mounted?): `
        + `${err instanceof Error ? err.message : String(err)}`, 'SCREEN_UNAVAILABLE');
    });
    const connection = new DeviceLinkConnection(socket as net.Socket, this.options.timeoutMs);
    this.connection = connection;
    const hello = await connection.next();
    if (kind(hello) !== 'DLMessageVersionExchange') throw new DeviceCommandError(`${SERVICE} did not start with a version exchange`, 'SCREEN_UNAVAILABLE');
    connection.send(['DLMessageVersionExchange', 'DLVersionsOk', 400]);
    const ready = await connection.next();
    if (kind(ready) !== 'DLMessageDeviceReady') throw new DeviceCommandError(`${SERVICE} did not become ready`, 'SCREEN_UNAVAILABLE');
    const first = await this.shoot(connection);
    const size = pngSize(first);
    if (!size) throw new DeviceCommandError(`${SERVICE} gave an image that is not a PNG (iOS before 9 sends TIFF)`, 'SCREEN_UNAVAILABLE');
    sink.started({
      width: size.width, height: size.height, rotation: 0, controls: NO_CONTROLS, source: 'screenshotr',
      note: 'View only: this iPhone is shown by screenshots (no WebDriverAgent runs on it), as fast as it gives them.',
    });
    sink.frame(first);
    void this.poll(connection, sink);
  }

  private async shoot(connection: DeviceLinkConnection): Promise<Buffer> {
    connection.send(['DLMessageProcessMessage', { MessageType: 'ScreenShotRequest' }]);
    const reply = await connection.next();
    const body = Array.isArray(reply) ? reply[1] : undefined;
    if (kind(reply) !== 'DLMessageProcessMessage' || !body || !isDict(body) || !Buffer.isBuffer(body.ScreenShotData)) {
      throw new Error(`${SERVICE} answered something other than a screenshot`);
    }
    return body.ScreenShotData;
  }

  private async poll(connection: DeviceLinkConnection, sink: ScreenSink): Promise<void> {
    const minInterval = this.options.minIntervalMs ?? 50;
    while (!this.stopped) {
      const began = Date.now();
      try {
        const image = await this.shoot(connection);
        if (this.stopped) return;
        sink.frame(image);
      } catch (err) {
        if (this.stopped) return;
        this.options.logger.info({ err, device: this.udid }, 'screenshotr ended');
        this.stopped = true;
        connection.close();
        sink.ended(err as Error);
        return;
      }
      const wait = minInterval - (Date.now() - began);
      await new Promise((resolve) => (wait > 0 ? setTimeout(resolve, wait) : setImmediate(resolve)));
    }
  }

  async input(_input: ScreenInput): Promise<void> {
    // View only: nothing here takes input.
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.connection?.close();
  }
}

/** One screenshot (PNG): a screenshotr session for its first picture. */
export async function takeScreenshot(link: DeviceLink, udid: string, options: ScreenshotrOptions): Promise<Buffer> {
  const source = new ScreenshotrScreen(link, udid, options);
  let first: Buffer | undefined;
  try {
    await source.start({ started: () => undefined, frame: (image) => { first ??= image; }, ended: () => undefined });
  } finally {
    await source.stop();
  }
  if (!first) throw new DeviceCommandError(`Device ${udid} gave no screenshot`, 'SCREEN_UNAVAILABLE');
  return first;
}
