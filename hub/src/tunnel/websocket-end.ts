/**
 * The client's end of a device tunnel on the hub: its WebSocket (binary messages), for `pumpBytes` from
 * `@devicelab/shared` against the gateway link's Tunnel call (`frameStreamEnd`).
 */
import type WebSocket from 'ws';
import { type ByteEnd, onFirst } from '@devicelab/shared';

/** WebSocket sends that have not reached the socket beyond this pause the source. */
const WS_HIGH_WATER_BYTES = 1024 * 1024;

/** A client that has not answered the hub's close frame by then is cut. */
const CLOSE_GRACE_MS = 250;

export function webSocketEnd(ws: WebSocket): ByteEnd {
  let drainWaiters: (() => void)[] = [];
  /** The device's side ended: what the client still sends goes nowhere. */
  let ending = false;
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
      if (!isBinary || ending) return; // the protocol is binary only; text frames are ignored
      listener(Array.isArray(data) ? Buffer.concat(data) : Buffer.isBuffer(data) ? data : Buffer.from(data));
    }),
    onceDrained: (listener) => {
      drainWaiters.push(listener);
      flushed();
    },
    pause: () => ws.pause(),
    resume: () => ws.resume(),
    end: () => {
      ending = true;
      if (ws.readyState === ws.OPEN || ws.readyState === ws.CONNECTING) ws.close(1000);
      // Read again (it may be paused by the backpressure of the side that ended): the client's close frame comes
      // behind what it was still sending, such as the rest of a push; a device connection dropped at release
      // must drop at the client within 1 s.
      ws.resume();
      setTimeout(() => ws.terminate(), CLOSE_GRACE_MS).unref();
    },
    destroy: () => ws.terminate(),
    onClosed: (listener) => onFirst(ws, ['close', 'error'], listener),
  };
}
