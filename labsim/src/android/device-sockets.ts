/**
 * The sockets programs on a simulated device listen on: TCP ports of the device's own loopback and abstract UNIX
 * socket names (`minicap`, `minitouch`). adbd's `tcp:<port>` and `localabstract:<name>` streams, which `adb
 * forward` and adbkit's openTcp/openLocal open, connect to them; simulated on-device servers (a UiAutomator2
 * server, minicap, minitouch) listen on them. A device port is a name in this table, never a socket of the host:
 * nothing here can reach the host's network.
 */
import { Duplex } from 'node:stream';

export type DeviceSocketAddress = { kind: 'tcp'; port: number } | { kind: 'localabstract'; name: string };

/** A connection's two ends: what the connecting side holds and what the listening program is handed. */
export type DeviceSocketHandler = (socket: Duplex) => void;

/**
 * The address an adbd service names, as adbd's socket_spec reads it: `tcp:<port>` (a host part, if any, must be
 * the device's own loopback) and `localabstract:<name>`; undefined for anything else.
 */
export function parseSocketSpec(service: string): DeviceSocketAddress | undefined {
  const tcp = /^tcp:(\d{1,5})(?::(localhost|127\.0\.0\.1))?$/.exec(service);
  if (tcp) {
    const port = Number(tcp[1]);
    return port >= 1 && port <= 65_535 ? { kind: 'tcp', port } : undefined;
  }
  const abstract = /^localabstract:([^\0/]{1,107})$/.exec(service);
  return abstract ? { kind: 'localabstract', name: abstract[1] } : undefined;
}

const keyOf = (address: DeviceSocketAddress): string =>
  (address.kind === 'tcp' ? `tcp:${address.port}` : `localabstract:${address.name}`);

export class DeviceSockets {
  private readonly listeners = new Map<string, DeviceSocketHandler>();
  private readonly open = new Set<Duplex>();

  /** Starts listening; fails as bind(2) does (EADDRINUSE) when another program has the address. */
  listen(address: DeviceSocketAddress, onConnection: DeviceSocketHandler): { close(): void } {
    const key = keyOf(address);
    if (this.listeners.has(key)) throw Object.assign(new Error(`${key}: Address already in use`), { code: 'EADDRINUSE' });
    this.listeners.set(key, onConnection);
    return { close: () => { if (this.listeners.get(key) === onConnection) this.listeners.delete(key); } };
  }

  isListening(address: DeviceSocketAddress): boolean {
    return this.listeners.has(keyOf(address));
  }

  /** The connecting end of a new connection, or undefined when nothing listens there (ECONNREFUSED). */
  connect(address: DeviceSocketAddress): Duplex | undefined {
    const onConnection = this.listeners.get(keyOf(address));
    if (!onConnection) return undefined;
    const [client, server] = socketPair();
    for (const end of [client, server]) {
      this.open.add(end);
      end.once('close', () => this.open.delete(end));
    }
    onConnection(server);
    return client;
  }

  /** The device went down (reboot, unplug, stop): every listener and connection is gone. */
  closeAll(): void {
    this.listeners.clear();
    for (const socket of [...this.open]) socket.destroy();
  }
}

/** Two connected in-memory stream ends with backpressure: a write waits until the peer's reader takes it. */
export function socketPair(): [Duplex, Duplex] {
  const a = new PairEnd();
  const b = new PairEnd();
  a.peer = b;
  b.peer = a;
  return [a, b];
}

class PairEnd extends Duplex {
  peer!: PairEnd;
  /** The peer's write waiting for this end's reader to want more. */
  private blockedWrite: (() => void) | undefined;

  override _write(chunk: Buffer, _encoding: BufferEncoding, done: (error?: Error | null) => void): void {
    if (this.peer.destroyed) {
      done(Object.assign(new Error('write EPIPE'), { code: 'EPIPE' }));
      return;
    }
    if (this.peer.push(chunk)) done();
    else this.peer.blockedWrite = done;
  }

  override _read(): void {
    const release = this.blockedWrite;
    this.blockedWrite = undefined;
    release?.();
  }

  override _final(done: (error?: Error | null) => void): void {
    if (!this.peer.destroyed) this.peer.push(null);
    done();
  }

  override _destroy(error: Error | null, done: (error?: Error | null) => void): void {
    // A socket closed on one side is a reset on the other: its reader ends, its writer fails.
    const peer = this.peer;
    this.blockedWrite?.();
    this.blockedWrite = undefined;
    if (!peer.destroyed) {
      peer.push(null);
      setImmediate(() => peer.destroy());
    }
    done(error);
  }
}
