/**
 * Lockdown framing (lockdownd, installation_proxy, diagnostics_relay): a 4-byte big-endian length, then a plist.
 * Messages are read in order with `next()`; `upgradeToTls` moves the connection onto TLS on the same socket at a
 * message boundary, as lockdownd asks after StartSession (and services with EnableServiceSSL at once).
 */
import type * as net from 'node:net';
import * as tls from 'node:tls';
import { type PlistDict, decodePlistDict, encodePlist } from '@devicelab/shared';

const MAX_FRAME = 64 * 1024 * 1024;

export interface HostIdentity {
  /** PEM host certificate and key from the pair record. */
  certificate: Buffer;
  privateKey: Buffer;
}

export class PlistConnection {
  private stream: net.Socket | tls.TLSSocket;
  private pending: Buffer = Buffer.alloc(0);
  private readonly messages: PlistDict[] = [];
  private readonly waiters: Array<{ resolve: (m: PlistDict) => void; reject: (e: Error) => void }> = [];
  private failure: Error | undefined;

  constructor(private readonly socket: net.Socket, private readonly timeoutMs: number, private readonly peer: string) {
    this.stream = socket;
    this.attach(socket);
    socket.setTimeout(timeoutMs, () => socket.destroy(new Error(`${peer} did not answer within ${timeoutMs} ms`)));
    socket.on('error', (err) => this.fail(err));
    socket.on('close', () => this.fail(new Error(`${peer} closed the connection`)));
  }

  private attach(stream: net.Socket | tls.TLSSocket): void {
    stream.on('data', (chunk: Buffer) => this.receive(chunk));
  }

  private receive(chunk: Buffer): void {
    this.pending = this.pending.length ? Buffer.concat([this.pending, chunk]) : chunk;
    while (this.pending.length >= 4) {
      const length = this.pending.readUInt32BE(0);
      if (length > MAX_FRAME) return void this.socket.destroy(new Error(`${this.peer} sent a frame of ${length} bytes`));
      if (this.pending.length < 4 + length) return;
      const body = this.pending.subarray(4, 4 + length);
      this.pending = this.pending.subarray(4 + length);
      let message: PlistDict;
      try {
        message = decodePlistDict(body);
      } catch (err) {
        return void this.socket.destroy(err as Error);
      }
      const waiter = this.waiters.shift();
      if (waiter) waiter.resolve(message);
      else this.messages.push(message);
    }
  }

  private fail(err: Error): void {
    this.failure ??= err;
    for (const waiter of this.waiters.splice(0)) waiter.reject(this.failure);
  }

  send(message: PlistDict): void {
    const body = encodePlist(message);
    const header = Buffer.alloc(4);
    header.writeUInt32BE(body.length, 0);
    this.stream.write(Buffer.concat([header, body]));
  }

  /** The next message from the peer. */
  next(): Promise<PlistDict> {
    const queued = this.messages.shift();
    if (queued) return Promise.resolve(queued);
    if (this.failure) return Promise.reject(this.failure);
    return new Promise((resolve, reject) => this.waiters.push({ resolve, reject }));
  }

  async request(message: PlistDict): Promise<PlistDict> {
    this.send(message);
    return this.next();
  }

  /** Continues on TLS over the same socket (the device is the TLS server; it does not check our name). */
  async upgradeToTls(host: HostIdentity): Promise<void> {
    this.socket.removeAllListeners('data');
    const secure = tls.connect({
      socket: this.socket, cert: host.certificate, key: host.privateKey, rejectUnauthorized: false,
      // Device and pair-record certificates are RSA-1024/SHA-1 era: allowed for this link only.
      ciphers: 'DEFAULT:@SECLEVEL=0', minVersion: 'TLSv1',
    });
    await new Promise<void>((resolve, reject) => {
      secure.once('secureConnect', resolve);
      secure.once('error', reject);
    });
    secure.on('error', (err) => this.fail(err));
    this.stream = secure;
    this.attach(secure);
  }

  close(): void {
    this.stream.destroy();
    this.socket.destroy();
  }
}
