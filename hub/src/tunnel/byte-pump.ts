/**
 * Joins two byte streams both ways with backpressure (issue 11 part 2), for the device tunnel's three kinds of
 * ends: a TCP socket (the CLI's local port), a WebSocket (binary messages) and the gateway link's Tunnel call
 * (TunnelFrames). When one side will not take more, the other is paused until it drains; nothing buffers
 * without bound. Either side ending ends the other; an error tears both down.
 */
import type net from 'node:net';
import type WebSocket from 'ws';
import type { DeviceTunnel } from '../gateways/gateway-directory';

export interface ByteEnd {
  /** False: stop writing until `onceDrained` fires. */
  write(data: Buffer): boolean;
  onData(listener: (data: Buffer) => void): void;
  onceDrained(listener: () => void): void;
  pause(): void;
  resume(): void;
  /** Finished sending (clean close). */
  end(): void;
  destroy(): void;
  /** The far side finished or failed; called once. */
  onClosed(listener: () => void): void;
}

export function pumpBytes(a: ByteEnd, b: ByteEnd): void {
  const forward = (from: ByteEnd, to: ByteEnd) => from.onData((data) => {
    if (!to.write(data)) {
      from.pause();
      to.onceDrained(() => from.resume());
    }
  });
  forward(a, b);
  forward(b, a);
  a.onClosed(() => b.end());
  b.onClosed(() => a.end());
  a.resume();
  b.resume();
}

/** WebSocket sends that have not reached the socket beyond this pause the source. */
const WS_HIGH_WATER_BYTES = 1024 * 1024;

export function webSocketEnd(ws: WebSocket): ByteEnd {
  let drainWaiters: (() => void)[] = [];
  const flushed = () => {
    if (ws.bufferedAmount >= WS_HIGH_WATER_BYTES / 4 || drainWaiters.length === 0) return;
    const waiters = drainWaiters;
    drainWaiters = [];
    for (const waiter of waiters) waiter();
  };
  let closed = false;
  return {
    write(data) {
      if (ws.readyState !== ws.OPEN) return true;
      ws.send(data, { binary: true }, flushed);
      return ws.bufferedAmount < WS_HIGH_WATER_BYTES;
    },
    onData: (listener) => ws.on('message', (data: Buffer | ArrayBuffer | Buffer[], isBinary: boolean) => {
      if (!isBinary) return; // the protocol is binary only; text frames are ignored
      listener(Array.isArray(data) ? Buffer.concat(data) : Buffer.isBuffer(data) ? data : Buffer.from(data));
    }),
    onceDrained: (listener) => {
      drainWaiters.push(listener);
      flushed();
    },
    pause: () => ws.pause(),
    resume: () => ws.resume(),
    end: () => {
      if (ws.readyState === ws.OPEN || ws.readyState === ws.CONNECTING) ws.close(1000);
      setTimeout(() => ws.terminate(), 1_000).unref();
    },
    destroy: () => ws.terminate(),
    onClosed: (listener) => {
      const once = () => {
        if (closed) return;
        closed = true;
        listener();
      };
      ws.on('close', once);
      ws.on('error', once);
    },
  };
}

export function socketEnd(socket: net.Socket): ByteEnd {
  let closed = false;
  return {
    write: (data) => socket.write(data),
    onData: (listener) => socket.on('data', listener),
    onceDrained: (listener) => socket.once('drain', listener),
    pause: () => socket.pause(),
    resume: () => socket.resume(),
    end: () => socket.end(),
    destroy: () => socket.destroy(),
    onClosed: (listener) => {
      const once = () => {
        if (closed) return;
        closed = true;
        listener();
      };
      socket.on('end', once);
      socket.on('close', once);
      socket.on('error', once);
    },
  };
}

export function tunnelEnd(tunnel: DeviceTunnel): ByteEnd {
  let closed = false;
  return {
    write: (data) => tunnel.write({ data }),
    onData: (listener) => tunnel.on('data', (frame) => {
      if (frame.data && frame.data.length > 0) listener(frame.data);
    }),
    onceDrained: (listener) => tunnel.once('drain', listener),
    pause: () => tunnel.pause(),
    resume: () => tunnel.resume(),
    end: () => tunnel.end(),
    destroy: () => tunnel.cancel(),
    onClosed: (listener) => {
      const once = () => {
        if (closed) return;
        closed = true;
        listener();
      };
      tunnel.on('end', once);
      tunnel.on('close', once);
      tunnel.on('error', once);
    },
  };
}
