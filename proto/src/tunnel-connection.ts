/**
 * Tunnel connections: the gateway carries each tunnel's bytes (OpenTunnel's answer) on a connection of its own to
 * the hub's link port, TLS when the link is, instead of as gRPC messages on the link. A relayed chunk then costs
 * hub and gateway a socket read and a write, not protobuf and HTTP/2 framing with their copies and the garbage they
 * leave (scripts/bench/README.md, the adb tunnel).
 *
 * The connection starts with TUNNEL_MAGIC and one JSON line, the TunnelHello (at most MAX_TUNNEL_HELLO_BYTES):
 * which gateway (its name and token, as the link's metadata), which tunnel, or why the gateway refuses it. What
 * follows is the tunnel's bytes, both ways. gRPC connections start with HTTP/2's preface: one port serves both.
 */
import { Duplex } from 'node:stream';
import type { TunnelFrame } from './messages';

export const TUNNEL_MAGIC = Buffer.from('DEVICELAB-TUNNEL/1\n', 'latin1');
export const MAX_TUNNEL_HELLO_BYTES = 4096;

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
 * A tunnel connection's bytes as the TunnelFrame stream a gRPC Tunnel call was (`{ data }` both ways), so the ends
 * of a tunnel read and write it as before. Backpressure both ways: an unread frame pauses the socket, a full socket
 * holds the writer. `firstFrame` turns the first frame written (the gateway's `{ tunnelId }` or `{ tunnelId, error }`)
 * into the hello; without it every frame is bytes. Ending ends the socket's writing side; `cancel` drops it.
 */
export class TunnelFrames extends Duplex {
  private named: boolean;

  constructor(private readonly bytes: Duplex, private readonly firstFrame?: (frame: TunnelFrame) => Buffer) {
    super({ objectMode: true, allowHalfOpen: true });
    this.named = firstFrame === undefined;
    bytes.pause();
    bytes.on('data', (data: Buffer) => {
      if (!this.push({ data })) bytes.pause();
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
    let chunk = frame.data;
    if (!this.named) {
      this.named = true;
      chunk = this.firstFrame!(frame);
    }
    if (!chunk || chunk.length === 0) return done();
    if (this.bytes.write(chunk)) done();
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
}
