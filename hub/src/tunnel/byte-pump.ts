/**
 * Joins two byte streams both ways with backpressure (issue 11 part 2), for the device tunnel's two kinds of
 * ends on the hub: the client's WebSocket (binary messages) and the gateway link's Tunnel call (TunnelFrames).
 * When one side will not take more, the other is paused until it drains; nothing buffers without bound. Either
 * side ending ends the other; an error tears both down.
 */
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
    onClosed: (listener) => onFirst(ws, ['close', 'error'], listener),
  };
}

export function tunnelEnd(tunnel: DeviceTunnel): ByteEnd {
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
    onClosed: (listener) => onFirst(tunnel, ['end', 'close', 'error'], listener),
  };
}

/** Calls `listener` once, on whichever of `events` comes first. */
function onFirst(emitter: { on(event: string, listener: () => void): unknown }, events: string[], listener: () => void): void {
  let called = false;
  for (const event of events) {
    emitter.on(event, () => {
      if (called) return;
      called = true;
      listener();
    });
  }
}
