/**
 * Tunnel connections: the gateway carries each tunnel's bytes (OpenTunnel's answer) on a connection of its own to
 * the hub's link port, TLS when the link is, instead of as gRPC messages on the link. A relayed chunk then costs
 * hub and gateway a socket read and a write, not protobuf and HTTP/2 framing with their copies and the garbage they
 * leave (scripts/bench/README.md, the adb tunnel).
 *
 * The connection starts with TUNNEL_MAGIC and one JSON line, the TunnelHello (at most MAX_TUNNEL_HELLO_BYTES):
 * which gateway (its name and token, as the link's metadata), which tunnel, or why the gateway refuses it. What
 * follows is the tunnel's bytes, both ways; for the services in MESSAGE_TUNNEL_SERVICES (whose ends exchange whole
 * messages: screen frames and controls), each message behind its length (4 bytes, big-endian). gRPC connections
 * start with HTTP/2's preface: one port serves both.
 */
import { Duplex } from 'node:stream';
import type { TunnelFrame } from './messages';

export const TUNNEL_MAGIC = Buffer.from('DEVICELAB-TUNNEL/1\n', 'latin1');
export const MAX_TUNNEL_HELLO_BYTES = 4096;
/** OpenTunnel services whose tunnel carries messages, not a byte stream. */
export const MESSAGE_TUNNEL_SERVICES: ReadonlySet<string> = new Set(['screen', 'screen-still']);
/** A longer message is a broken or hostile peer: the connection is dropped. */
const MAX_TUNNEL_MESSAGE_BYTES = 64 * 1024 * 1024;

export interface TunnelHello {
  gateway: string;
  token: string;
  tunnelId: string;
  /** Instead of bytes: why the gateway refuses the tunnel. */
  error?: string;
}

/** The magic and the hello line, as the gateway sends them. */
export function encodeTunnelHello(hello: TunnelHello): Buffer {
  return Buffer.from(`${JSON.stringify(hello)}\n`, 'utf8');
}

/** The hello line (without its newline), or undefined when it is not one. */
export function parseTunnelHello(line: string): TunnelHello | undefined {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    return undefined;
  }
  if (typeof value !== 'object' || value === null) return undefined;
  const { gateway, token, tunnelId, error } = value as Record<string, unknown>;
  if (typeof gateway !== 'string' || typeof token !== 'string' || typeof tunnelId !== 'string') return undefined;
  if (error !== undefined && typeof error !== 'string') return undefined;
  return { gateway, token, tunnelId, ...(error === undefined ? {} : { error }) };
}

/**
 * A tunnel connection as the TunnelFrame stream a gRPC Tunnel call was (`{ data }` both ways), so the ends of a
 * tunnel read and write it as before: a frame per chunk read, or per message with `messages`. Backpressure both
 * ways: an unread frame pauses the socket, a full socket holds the writer. `firstFrame` turns the first frame
 * written (the gateway's `{ tunnelId }` or `{ tunnelId, error }`) into the hello. Ending ends the socket's writing
 * side; `cancel` drops it.
 */
export class TunnelFrames extends Duplex {
  private named: boolean;
  private readonly firstFrame?: (frame: TunnelFrame) => Buffer;
  private readonly messages: boolean;
  /** With `messages`: read bytes not yet a whole message. */
  private partial: Buffer = Buffer.alloc(0);

  constructor(private readonly bytes: Duplex, options: { messages?: boolean; firstFrame?: (frame: TunnelFrame) => Buffer } = {}) {
    super({ objectMode: true, allowHalfOpen: true });
    this.messages = options.messages ?? false;
    this.firstFrame = options.firstFrame;
    this.named = options.firstFrame === undefined;
    bytes.pause();
    bytes.on('data', (data: Buffer) => {
      if (!(this.messages ? this.pushMessages(data) : this.push({ data }))) bytes.pause();
    });
    let ended = false;
    bytes.on('end', () => {
      ended = true;
      this.push(null);
    });
    // Closed without its end (reset, destroyed): the frames go too. After its end, what was read is still read.
    bytes.on('close', () => {
      if (!ended) this.destroy();
    });
    bytes.on('error', (err) => this.destroy(err));
  }

  cancel(): void {
    this.destroy();
  }

  override _read(): void {
    this.bytes.resume();
  }

  override _write(frame: TunnelFrame, _encoding: BufferEncoding, done: (err?: Error | null) => void): void {
    let written = true;
    if (!this.named) {
      this.named = true;
      written = this.bytes.write(this.firstFrame!(frame));
    } else if (frame.data && (frame.data.length > 0 || this.messages)) {
      if (this.messages) {
        const length = Buffer.alloc(4);
        length.writeUInt32BE(frame.data.length);
        this.bytes.cork();
        this.bytes.write(length);
        written = this.bytes.write(frame.data);
        this.bytes.uncork();
      } else {
        written = this.bytes.write(frame.data);
      }
    }
    if (written) done();
    else this.bytes.once('drain', () => done());
  }

  override _final(done: (err?: Error | null) => void): void {
    this.bytes.end();
    done();
  }

  override _destroy(err: Error | null, done: (err?: Error | null) => void): void {
    this.bytes.destroy();
    done(err);
  }

  /** Pushes the whole messages `data` completes; false once the reader wants no more for now. */
  private pushMessages(data: Buffer): boolean {
    let buffer = this.partial.length > 0 ? Buffer.concat([this.partial, data]) : data;
    let more = true;
    while (buffer.length >= 4) {
      const length = buffer.readUInt32BE(0);
      if (length > MAX_TUNNEL_MESSAGE_BYTES) {
        this.destroy(new Error(`tunnel message of ${length} bytes`));
        return false;
      }
      if (buffer.length < 4 + length) break;
      more = this.push({ data: buffer.subarray(4, 4 + length) });
      buffer = buffer.subarray(4 + length);
    }
    this.partial = buffer;
    return more;
  }
}
