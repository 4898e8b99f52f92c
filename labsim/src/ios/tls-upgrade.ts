/**
 * TLS on the same socket, as lockdownd does it: after StartSession (or at a service connection with
 * EnableServiceSSL) the device becomes the TLS server on the connection the host already has open, and after
 * StopSession the connection returns to plaintext. The device certificate is the one the host made at Pair time
 * (signed by the host's root, carrying the device's public key); libimobiledevice's certificates need
 * SECLEVEL=0 on current OpenSSL.
 */
import { EventEmitter } from 'node:events';
import type * as net from 'node:net';
import { Duplex } from 'node:stream';
import * as tls from 'node:tls';

export interface DeviceTlsIdentity {
  /** PEM certificate the host issued to the device. */
  certificate: Buffer | string;
  /** The device's private key (PEM). */
  privateKey: string;
}

export function deviceSecureContext(identity: DeviceTlsIdentity): tls.SecureContext {
  return tls.createSecureContext({
    cert: identity.certificate,
    key: identity.privateKey,
    ciphers: 'DEFAULT:@SECLEVEL=0',
    minVersion: 'TLSv1',
  });
}

const TLS_RECORD_TYPES = new Set([0x14, 0x15, 0x16, 0x17]);

/**
 * A socket whose payload bytes are plaintext or TLS, switchable at message boundaries. Emits 'data' with
 * plaintext payload and 'close' once.
 */
export class SwitchableTransport extends EventEmitter {
  private session: tls.TLSSocket | null = null;
  private wire: Duplex | null = null;
  /** After leaving TLS: TLS records (the host's close_notify) that still arrive are skipped. */
  private skipTlsRecords = false;
  private skipPending: Buffer = Buffer.alloc(0);
  private closed = false;

  constructor(private readonly socket: net.Socket) {
    super();
    socket.on('data', (chunk: Buffer) => this.fromSocket(chunk));
    socket.on('close', () => this.finish());
    socket.on('error', () => this.finish());
  }

  write(bytes: Buffer): void {
    if (this.closed) return;
    if (this.session) this.session.write(bytes);
    else this.socket.write(bytes);
  }

  /** The host's next bytes are a ClientHello. Call right after the plaintext answer that announced TLS. */
  startTls(context: tls.SecureContext): void {
    const socket = this.socket;
    const wire = new Duplex({
      read() {},
      write(chunk: Buffer, _enc, done) {
        if (socket.destroyed) return done();
        socket.write(chunk, () => done());
      },
    });
    const session = new tls.TLSSocket(wire, { isServer: true, secureContext: context });
    session.on('data', (chunk: Buffer) => this.emit('data', chunk));
    session.on('error', (err) => {
      this.emit('tls-error', err);
      this.destroy();
    });
    this.wire = wire;
    this.session = session;
    this.skipTlsRecords = false;
  }

  /** Leaves TLS once `bytes` (the last encrypted answer) are on the wire; later bytes are plaintext again. */
  stopTlsAfter(bytes: Buffer): Promise<void> {
    const session = this.session;
    if (!session) {
      this.write(bytes);
      return Promise.resolve();
    }
    return new Promise((resolve) => {
      session.write(bytes, () => {
        this.session = null;
        this.wire = null;
        this.skipTlsRecords = true;
        // The session object is dropped without a close_notify of ours: the host reads plaintext next.
        session.removeAllListeners('data');
        resolve();
      });
    });
  }

  destroy(): void {
    this.socket.destroy();
    this.finish();
  }

  private fromSocket(chunk: Buffer): void {
    if (this.wire) {
      this.wire.push(chunk);
      return;
    }
    if (this.skipTlsRecords) {
      chunk = this.dropTlsRecords(chunk);
      if (!chunk.length) return;
    }
    this.emit('data', chunk);
  }

  /** Skips whole TLS records at the front (a late close_notify); the first plaintext byte ends skipping. */
  private dropTlsRecords(chunk: Buffer): Buffer {
    let data = this.skipPending.length ? Buffer.concat([this.skipPending, chunk]) : chunk;
    this.skipPending = Buffer.alloc(0);
    while (data.length) {
      if (!TLS_RECORD_TYPES.has(data[0]) || (data.length > 1 && data[1] !== 0x03)) {
        this.skipTlsRecords = false;
        return data;
      }
      if (data.length < 5) break;
      const end = 5 + data.readUInt16BE(3);
      if (data.length < end) break;
      data = data.subarray(end);
    }
    this.skipPending = data;
    return Buffer.alloc(0);
  }

  private finish(): void {
    if (this.closed) return;
    this.closed = true;
    this.session?.destroy();
    this.emit('close');
  }
}
