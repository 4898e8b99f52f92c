/**
 * A hub tunnel as the byte stream a device's adb endpoint serves (adb-access-endpoints.ts): the link's Tunnel call
 * read and written as a Duplex, handed to the endpoint in process. It stands for the loopback TCP connection the
 * tunnel used to open to the endpoint's port, which cost every pushed byte a kernel round trip (a socket write, a
 * read into a fresh buffer) on the gateway.
 *
 * Backpressure both ways as a socket: a tunnel frame pushed past the readable buffer pauses the call (the HTTP/2
 * window then holds the hub), and a write completes once the call took it. The call's end ends the readable side;
 * destroying the stream (the bridge closed, a release) ends the call, so the hub closes the client's WebSocket.
 */
import { Duplex } from 'node:stream';
import type { TunnelCall } from './hub-tunnel';

/** What the adb endpoint and its bridge use of a connection: a net.Socket, or a hub tunnel. */
export interface AccessSocket extends Duplex {
  readonly bytesRead: number;
  /** Who is on the far end, as access events name them: `address:port`, or the hub's client. */
  readonly remoteAddress?: string;
  readonly remotePort?: number;
  /** A hub tunnel's client, as the hub named it (set only on tunnels). */
  readonly tunnelPeer?: string;
  setNoDelay(noDelay?: boolean): unknown;
}

/**
 * Tunnel bytes read ahead of the bridge (one adb packet of the largest size offered): past it the call is paused.
 * The default 16 KiB paused and resumed the call at every frame.
 */
const READ_AHEAD_BYTES = 1024 * 1024;

export class TunnelSocket extends Duplex implements AccessSocket {
  bytesRead = 0;

  constructor(private readonly call: TunnelCall, readonly tunnelPeer: string) {
    super({ allowHalfOpen: true, readableHighWaterMark: READ_AHEAD_BYTES });
    call.pause();
    call.on('data', (frame: { data?: Buffer }) => {
      const data = frame.data;
      if (!data || data.length === 0) return;
      this.bytesRead += data.length;
      if (!this.push(data)) call.pause();
    });
    // The hub finished sending (its client closed): what was read still reaches the bridge, which then closes.
    call.on('end', () => this.push(null));
    call.on('close', () => this.push(null));
    call.on('error', () => this.destroy());
  }

  setNoDelay(): this {
    return this;
  }

  override _read(): void {
    this.call.resume();
  }

  override _write(chunk: Buffer, _encoding: BufferEncoding, done: (err?: Error | null) => void): void {
    if (this.call.write({ data: chunk })) done();
    else this.call.once('drain', () => done());
  }

  override _final(done: (err?: Error | null) => void): void {
    this.endCall();
    done();
  }

  override _destroy(err: Error | null, done: (err?: Error | null) => void): void {
    this.endCall();
    done(err);
  }

  private endCall(): void {
    if (!this.call.writableEnded) this.call.end();
  }
}
