/**
 * The client's end of a device tunnel on the hub: its WebSocket (binary messages), for `pumpBytes` from
 * `@devicelab/shared` against the gateway link's Tunnel call (`frameStreamEnd`).
 */
import type WebSocket from 'ws';
import { type ByteEnd, onFirst } from '@devicelab/shared';

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
