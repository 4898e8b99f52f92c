/**
 * Joins two byte streams both ways with backpressure, for every relayed device connection: the hub's
 * WebSocket <-> gateway link Tunnel call, and on the gateway the Tunnel call <-> the device's adb endpoint or
 * usbmuxd. When one side will not take more, the other is paused until it drains; nothing buffers without bound.
 * Either side ending ends the other.
 */

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

/** What a TCP socket and a gRPC duplex call have in common (Node streams). */
interface DuplexLike<T> {
  write(chunk: T): boolean;
  end(): unknown;
  pause(): unknown;
  resume(): unknown;
  on(event: string, listener: (...args: any[]) => void): unknown;
  once(event: string, listener: (...args: any[]) => void): unknown;
}

/** A byte stream (a TCP socket): `destroy` drops it. */
export function socketEnd(socket: DuplexLike<Buffer> & { destroy(): unknown }): ByteEnd {
  return {
    write: (data) => socket.write(data),
    onData: (listener) => socket.on('data', listener),
    onceDrained: (listener) => socket.once('drain', listener),
    pause: () => socket.pause(),
    resume: () => socket.resume(),
    end: () => socket.end(),
    destroy: () => socket.destroy(),
    onClosed: (listener) => onFirst(socket, ['end', 'close', 'error'], listener),
  };
}

/** A stream of frames carrying bytes in `data` (the link's TunnelFrame): `destroy` cancels the call. */
export function frameStreamEnd(call: DuplexLike<{ data?: Buffer }>, cancel: () => void): ByteEnd {
  return {
    write: (data) => call.write({ data }),
    onData: (listener) => call.on('data', (frame: { data?: Buffer }) => {
      if (frame.data && frame.data.length > 0) listener(frame.data);
    }),
    onceDrained: (listener) => call.once('drain', listener),
    pause: () => call.pause(),
    resume: () => call.resume(),
    end: () => call.end(),
    destroy: cancel,
    onClosed: (listener) => onFirst(call, ['end', 'close', 'error'], listener),
  };
}

/** Calls `listener` once, on whichever of `events` comes first. */
export function onFirst(emitter: { on(event: string, listener: () => void): unknown }, events: string[], listener: () => void): void {
  let called = false;
  for (const event of events) {
    emitter.on(event, () => {
      if (called) return;
      called = true;
      listener();
    });
  }
}
