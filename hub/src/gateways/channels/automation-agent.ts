/**
 * HTTP to a device's automation server through automation tunnels: an `http.Agent` whose connections are tunnels
 * (OpenTunnel with service `automation`) to the device's Appium server on its gateway, kept alive between requests
 * (a few per device at most; idle ones closed), and the socket-shaped end of one tunnel that the HTTP client reads
 * and writes (backpressure both ways: a full tunnel holds the writer, an unread socket pauses the tunnel).
 */
import http from 'node:http';
import { Duplex } from 'node:stream';
import type { DeviceTunnel } from '../gateway-directory';

/** Tunnels per device at once; more requests wait for a free one. */
export const AUTOMATION_TUNNELS_PER_DEVICE = 8;
/** Idle tunnels kept per device for the next request. */
export const AUTOMATION_IDLE_TUNNELS = 2;
/** An idle tunnel is closed after this long unused: well before Appium's own keep-alive (10 min) closes it under a request. */
export const AUTOMATION_IDLE_MS = 30_000;

export class AutomationAgent extends http.Agent {
  /** Tunnels open or opening. Node's Agent counts a socket only once it exists, so the cap is kept here. */
  private live = 0;
  /** Tunnel openings waiting for one of the live ones to close. */
  private readonly waiting: Array<() => void> = [];

  constructor(private readonly openTunnel: () => Promise<DeviceTunnel>) {
    super({
      keepAlive: true, maxSockets: AUTOMATION_TUNNELS_PER_DEVICE, maxFreeSockets: AUTOMATION_IDLE_TUNNELS,
      maxTotalSockets: AUTOMATION_TUNNELS_PER_DEVICE, timeout: AUTOMATION_IDLE_MS, scheduling: 'lifo',
    });
    // A request waits for a tunnel while an idle one is kept: close the idle one so the waiting one can open.
    this.on('free', (socket: Duplex) => {
      if (this.waiting.length > 0) socket.destroy();
    });
  }

  /** Opens a tunnel (at most AUTOMATION_TUNNELS_PER_DEVICE at once); the request waits for it in the callback. */
  override createConnection(options: http.ClientRequestArgs, callback?: (err: Error | null, socket: Duplex) => void): Duplex {
    const open = () => {
      this.live++;
      this.openTunnel().then((tunnel) => {
        const socket = new TunnelSocket(tunnel);
        socket.once('close', () => this.closed());
        if (options.timeout) socket.setTimeout(options.timeout);
        callback?.(null, socket);
      }, (err: Error) => {
        this.closed();
        callback?.(err, undefined as unknown as Duplex);
      });
    };
    if (this.live < AUTOMATION_TUNNELS_PER_DEVICE) open();
    else this.waiting.push(open);
    return undefined as unknown as Duplex;
  }

  private closed(): void {
    this.live--;
    this.waiting.shift()?.();
  }
}

/**
 * One tunnel as the stream socket an HTTP client expects. What the client writes in one go (a request's head and
 * body, corked by the HTTP client) leaves as one tunnel frame (`_writev`).
 */
export class TunnelSocket extends Duplex {
  timeout = 0;
  private idleTimer?: NodeJS.Timeout;
  /** When bytes last went either way (ms, monotonic): the idle timer looks at it when it fires rather than being reset per chunk. */
  private lastActive = 0;

  constructor(private readonly tunnel: DeviceTunnel) {
    super({ allowHalfOpen: false });
    tunnel.on('data', (frame) => {
      if (!frame.data?.length) return;
      this.touched();
      if (!this.push(frame.data)) tunnel.pause();
    });
    tunnel.on('end', () => this.push(null));
    tunnel.on('error', (err) => this.destroy(err));
    tunnel.on('close', () => this.push(null));
    tunnel.resume(); // paused at its first frame until someone reads
  }

  override _read(): void {
    this.tunnel.resume();
  }

  override _write(chunk: Buffer, _encoding: BufferEncoding, done: (err?: Error | null) => void): void {
    if (chunk.length === 0) return done(); // the HTTP client's end of a body: nothing to carry
    this.touched();
    if (this.tunnel.write({ data: chunk })) done();
    else this.tunnel.once('drain', () => done());
  }

  override _writev(chunks: Array<{ chunk: Buffer; encoding: BufferEncoding }>, done: (err?: Error | null) => void): void {
    this._write(chunks.length === 1 ? chunks[0].chunk : Buffer.concat(chunks.map(({ chunk }) => chunk)), chunks[0].encoding, done);
  }

  override _final(done: (err?: Error | null) => void): void {
    this.tunnel.end();
    done();
  }

  override _destroy(err: Error | null, done: (err?: Error | null) => void): void {
    clearTimeout(this.idleTimer);
    // The hub's end of a Tunnel call is its server side: ending it sends the call's status, which closes it both ways.
    this.tunnel.end();
    done(err);
  }

  /**
   * As net.Socket: 'timeout' after `ms` without bytes either way (0: never); as there, 0 with a listener removes
   * that listener (the HTTP client does so after each request on a kept-alive socket, or listeners would pile up).
   */
  setTimeout(ms: number, listener?: () => void): this {
    this.timeout = ms;
    if (listener) {
      if (ms === 0) this.removeListener('timeout', listener);
      else this.once('timeout', listener);
    }
    clearTimeout(this.idleTimer);
    this.idleTimer = undefined;
    this.touched();
    return this;
  }

  setNoDelay(): this {
    return this;
  }

  setKeepAlive(): this {
    return this;
  }

  ref(): this {
    return this;
  }

  unref(): this {
    return this;
  }

  private touched(): void {
    this.lastActive = performance.now();
    if (this.idleTimer === undefined && this.timeout > 0 && !this.destroyed) this.armIdleTimer(this.timeout);
  }

  /** Fires when nothing went either way for `timeout`; bytes meanwhile put it off by what is left. */
  private armIdleTimer(ms: number): void {
    const timeout = this.timeout;
    this.idleTimer = setTimeout(() => {
      this.idleTimer = undefined;
      if (this.destroyed || this.timeout !== timeout || timeout === 0) return;
      const left = this.lastActive + timeout - performance.now();
      if (left > 1) this.armIdleTimer(left);
      else this.emit('timeout');
    }, ms);
    this.idleTimer.unref();
  }
}
