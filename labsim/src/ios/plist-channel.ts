/**
 * The framing lockdownd and most lockdown services use: a 4-byte big-endian length, then a property list
 * (XML or binary). Requests are handled strictly one after another: a client that sends several requests back to
 * back must get the answers in the same order (appium-ios-device pipelines GetValue calls).
 */
import { EventEmitter } from 'node:events';
import { PlistDict, PlistFormatError, decodePlistDict, encodePlist } from '@devicelab/shared';

/** Anything bytes come from and go to: a socket, a TLS session on it, a service connection. */
export interface ByteLink {
  write(bytes: Buffer): void;
  on(event: 'data', listener: (chunk: Buffer) => void): unknown;
  on(event: 'close', listener: () => void): unknown;
  destroy(): void;
}

/** No lockdown message comes near this; a larger length means a broken or hostile peer. */
const MAX_FRAME = 16 * 1024 * 1024;

type PlistHandler = (message: PlistDict) => Promise<void> | void;

export class PlistChannel extends EventEmitter {
  private pending: Buffer = Buffer.alloc(0);
  private queue: Promise<void> = Promise.resolve();
  private closed = false;

  constructor(private readonly link: ByteLink, private readonly handler: PlistHandler) {
    super();
  }

  /** Feeds bytes from the link (the owner decides where bytes come from, e.g. plain or TLS). */
  receive(chunk: Buffer): void {
    if (this.closed) return;
    this.pending = this.pending.length ? Buffer.concat([this.pending, chunk]) : chunk;
    while (this.pending.length >= 4) {
      const length = this.pending.readUInt32BE(0);
      if (length > MAX_FRAME) return this.fail(new PlistFormatError(`frame of ${length} bytes is too large`));
      if (this.pending.length < 4 + length) break;
      const body = this.pending.subarray(4, 4 + length);
      this.pending = this.pending.subarray(4 + length);
      let message: PlistDict;
      try {
        message = decodePlistDict(body);
      } catch (e) {
        return this.fail(e as Error);
      }
      this.queue = this.queue.then(() => this.handler(message)).catch((e: Error) => this.fail(e));
    }
  }

  send(message: PlistDict): void {
    if (this.closed) return;
    this.link.write(encodeFrame(message));
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.link.destroy();
    this.emit('close');
  }

  private fail(err: Error): void {
    this.emit('protocol-error', err);
    this.close();
  }
}

export function encodeFrame(message: PlistDict): Buffer {
  const body = encodePlist(message);
  const header = Buffer.alloc(4);
  header.writeUInt32BE(body.length, 0);
  return Buffer.concat([header, body]);
}

/** A channel reading straight from its link (services without a TLS switch). */
export function attachPlistChannel(link: ByteLink, handler: PlistHandler): PlistChannel {
  const channel = new PlistChannel(link, handler);
  link.on('data', (chunk) => channel.receive(chunk));
  link.on('close', () => channel.close());
  return channel;
}
