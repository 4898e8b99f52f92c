/**
 * The adbd side of one client connection to a device's adb endpoint: speaks the adb transport
 * protocol (AOSP `protocol.txt`) to the user's adb server and carries every stream the client opens to the device
 * through this host's adb server (`host:transport:<serial>` + the service), as STF's bridge (adbkit `tcpusb`) does.
 *
 * Our own rather than adbkit's `tcpusb` socket because a push must not be buffered without bound: adbkit
 * acknowledges a client's WRTE as soon as it handed the bytes to the adb server socket, whatever that socket holds
 * (a 1 GB push to a slow USB device would sit in the gateway's memory), re-concatenates a packet's buffer per TCP
 * chunk and sums every outgoing byte in JavaScript. Here a WRTE is acknowledged when its bytes left for the adb
 * server; a client that sends ahead of its OKAYs (the hub tunnel's CLI answers OKAYs early) is not read further
 * until the stream took the previous WRTE, so each stream still holds at most one packet; a device's
 * bytes are read ahead by at most one packet while the previous WRTE awaits its OKAY, a client's payloads pass on
 * as the chunks they came in and a device's are copied once,
 * and no data check is computed for clients at protocol version >= 0x01000001 (adb since 7.0).
 * Who may connect is not decided here: `authenticate` and `offerKey` are the endpoint's.
 */
import { randomBytes } from 'node:crypto';
import type net from 'node:net';
import type { Client } from '@devicefarmer/adbkit';
import {
  A_AUTH, A_CLSE, A_CNXN, A_OKAY, A_OPEN, A_VERSION_SKIP_CHECKSUM, A_WRTE, AUTH_RSAPUBLICKEY, AUTH_SIGNATURE,
  AUTH_TOKEN, AdbPacketReader, ByteQueue, adbPacketHeader, type AdbPacket,
} from '@devicelab/shared';
import type { AccessSocket } from './tunnel-socket';

/** CNXN, AUTH signatures (256 bytes) and public keys (about 720) are small; nothing larger before AUTH. */
const UNAUTHENTICATED_MAX_PAYLOAD = 8 * 1024;
/** A client signs once per key it holds; more rounds than this is not a client looking for its key. */
const MAX_AUTH_ROUNDS = 16;
/**
 * Streams open at once per connection (each is a connection to the adb server, and may hold one packet of up to
 * `maxPayload` bytes): 32 covers an IDE's logcat, shells, sync and JDWP at once while bounding what one retainer
 * can make the gateway hold (32 x 1 MiB).
 */
const MAX_STREAMS = 32;

export interface AdbBridgeOptions {
  adb: Client;
  serial: string;
  /** Largest payload offered to the client (it may ask for less in its CNXN). */
  maxPayload: number;
  /** The CNXN banner, `device::<properties>;`. */
  banner(): Promise<string>;
  /** Whether `signature` (AUTH_SIGNATURE) signs `token` with a key allowed in: opens the connection. */
  authenticate(token: Buffer, signature: Buffer): boolean;
  /** The client ran out of keys and offers this one (adbkey.pub text); `signatures` are what it sent for `token`. */
  offerKey(keyText: string, token: Buffer, signatures: readonly Buffer[]): boolean;
  /** A stream was opened (e.g. `shell:pm install ...`). */
  serviceOpened(service: string): void;
  failed(err: Error): void;
}

export class AdbBridge {
  private readonly reader = new AdbPacketReader(UNAUTHENTICATED_MAX_PAYLOAD, false);
  private readonly token = randomBytes(20);
  private readonly signatures: Buffer[] = [];
  private readonly streams = new Map<number, BridgedStream>();
  private version = A_VERSION_SKIP_CHECKSUM;
  private maxPayload = 4096;
  private authenticated = false;
  /**
   * Packets read and not handled yet: those that came while the CNXN answer was being prepared (`held`), and
   * those behind a WRTE whose stream still writes the previous one (`blocked`: a client that sends ahead of its
   * OKAYs, as `devicelab connect` does). While any wait, the socket is not read: the bridge holds at most one
   * packet per stream beyond the chunk being read, and the client's excess waits in TCP's and the tunnel's buffers.
   */
  private readonly backlog: AdbPacket[] = [];
  private held = false;
  private blocked = false;
  private working = false;
  private nextLocalId = 1;
  private closed = false;

  constructor(private readonly socket: AccessSocket, readonly options: AdbBridgeOptions) {
    socket.setNoDelay(true);
    socket.on('data', (chunk: Buffer) => this.received(chunk));
    socket.on('end', () => this.close());
    socket.on('close', () => this.close());
  }

  get isAuthenticated(): boolean {
    return this.authenticated;
  }

  get payloadLimit(): number {
    return this.maxPayload;
  }

  send(command: number, arg0: number, arg1: number, data?: Buffer): void {
    if (this.closed) return;
    const header = adbPacketHeader(command, arg0, arg1, data, this.version < A_VERSION_SKIP_CHECKSUM);
    if (!data || data.length === 0) {
      this.socket.write(header);
      return;
    }
    this.socket.cork();
    this.socket.write(header);
    this.socket.write(data);
    this.socket.uncork();
  }

  forget(localId: number): void {
    this.streams.delete(localId);
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    for (const stream of [...this.streams.values()]) stream.close(false, true);
    this.streams.clear();
    this.socket.destroy();
  }

  private received(chunk: Buffer): void {
    let packets: AdbPacket[];
    try {
      packets = this.reader.push(chunk);
    } catch (err) {
      this.options.failed(err as Error);
      return this.close();
    }
    for (const packet of packets) this.backlog.push(packet);
    this.work();
  }

  /** A stream took its WRTE, or closed: the packets behind it go on. */
  streamReady(): void {
    this.blocked = false;
    this.work();
  }

  /** Handles the backlog in order until a stream cannot take its WRTE yet; reads no more while packets wait. */
  private work(): void {
    if (this.working) return;
    this.working = true;
    while (this.backlog.length > 0 && !this.closed && !this.held && !this.blocked) {
      const packet = this.backlog.shift()!;
      if (!this.handle(packet)) {
        this.backlog.unshift(packet);
        this.blocked = true;
      }
    }
    this.working = false;
    if (this.closed) return;
    if (this.backlog.length > 0) this.socket.pause();
    else this.socket.resume();
  }

  /** False: the packet's stream still writes its previous WRTE; offer the packet again on `streamReady`. */
  private handle(packet: AdbPacket): boolean {
    if (packet.command === A_CNXN) this.connectRequest(packet);
    else if (packet.command === A_AUTH) this.authPacket(packet);
    else if (!this.authenticated) this.close();
    else {
      const stream = this.streams.get(packet.arg1);
      switch (packet.command) {
        case A_OPEN: this.openStream(packet); break;
        case A_OKAY: stream?.acknowledged(); break;
        case A_WRTE: if (!stream) this.send(A_CLSE, 0, packet.arg0); else return stream.fromClient(packet.pieces ?? [packet.data]);
          break;
        case A_CLSE: stream?.close(false); break;
        default: break; // SYNC, STLS and the unknown are ignored, as adbd does with what it did not offer
      }
    }
    return true;
  }

  private connectRequest(packet: AdbPacket): void {
    if (this.authenticated) return this.close(); // a second CNXN would reset the transport; adb reconnects instead
    this.version = Math.min(packet.arg0, A_VERSION_SKIP_CHECKSUM);
    this.maxPayload = Math.max(4096, Math.min(packet.arg1, this.options.maxPayload));
    this.send(A_AUTH, AUTH_TOKEN, 0, this.token);
  }

  private authPacket(packet: AdbPacket): void {
    if (this.authenticated) return undefined;
    if (packet.arg0 === AUTH_SIGNATURE) {
      if (this.signatures.length >= MAX_AUTH_ROUNDS) return this.close();
      this.signatures.push(packet.data);
      if (this.options.authenticate(this.token, packet.data)) return this.accept();
      return this.send(A_AUTH, AUTH_TOKEN, 0, this.token); // try the next key
    }
    if (packet.arg0 === AUTH_RSAPUBLICKEY && this.signatures.length > 0) {
      const text = packet.data.toString('latin1').replace(/\0+$/, '');
      if (this.options.offerKey(text, this.token, this.signatures)) return this.accept();
    }
    return this.close();
  }

  private accept(): void {
    this.authenticated = true;
    this.held = true;
    this.options.banner().then((banner) => {
      this.reader.maxPayload = this.maxPayload;
      // No NUL at the end, as adbd sends it: adb reads the banner's last feature up to the packet's end.
      this.send(A_CNXN, this.version, this.maxPayload, Buffer.from(banner));
      this.held = false;
      this.work();
    }, (err: Error) => {
      this.options.failed(err);
      this.close();
    });
  }

  private openStream(packet: AdbPacket): void {
    const remoteId = packet.arg0;
    if (this.streams.size >= MAX_STREAMS || packet.data.length < 2) return this.send(A_CLSE, 0, remoteId);
    const service = packet.data.toString('utf8').replace(/\0+$/, '');
    const stream = new BridgedStream(this, this.nextLocalId, remoteId);
    this.nextLocalId = this.nextLocalId >= 0x7fffffff ? 1 : this.nextLocalId + 1;
    this.streams.set(stream.localId, stream);
    this.options.serviceOpened(service);
    void stream.open(service);
  }
}

/** One adb stream: the client's end is (localId, remoteId) on the bridge, the device's a socket to the adb server. */
class BridgedStream {
  private transport: net.Socket | undefined;
  private readonly readAhead = new ByteQueue();
  private awaitingAck = false;
  /** The adb server socket has not taken the client's last WRTE yet (its OKAY waits for 'drain'). */
  private writing = false;
  private deviceEnded = false;
  private closed = false;

  constructor(private readonly bridge: AdbBridge, readonly localId: number, private readonly remoteId: number) {}

  async open(service: string): Promise<void> {
    const { adb, serial } = this.bridge.options;
    let socket: net.Socket;
    try {
      socket = await openService(adb, serial, service);
    } catch {
      if (!this.closed) {
        this.closed = true;
        this.bridge.forget(this.localId);
        this.bridge.send(A_CLSE, 0, this.remoteId); // a failed open: adbd answers CLSE with local id 0
      }
      return;
    }
    if (this.closed) return void socket.destroy();
    this.transport = socket;
    socket.setNoDelay(true);
    socket.setTimeout(0);
    this.bridge.send(A_OKAY, this.localId, this.remoteId);
    socket.on('data', (chunk: Buffer) => this.fromDevice(chunk));
    socket.on('end', () => this.deviceFinished());
    socket.on('close', () => this.deviceFinished());
    socket.on('error', () => this.close(true));
  }

  /**
   * The client's WRTE: acknowledged once the adb server socket took it. False while the previous one is still
   * being written (the client sent ahead of its OKAY): the bridge offers it again once that one drained.
   */
  fromClient(pieces: readonly Buffer[]): boolean {
    if (this.closed) return true;
    if (this.writing) return false;
    const transport = this.transport;
    if (!transport) { // a WRTE before the stream's OKAY: not an adb client
      this.bridge.close();
      return true;
    }
    // The payload as the chunks it came in (one write, no copy into a packet-sized buffer).
    let flowing = true;
    transport.cork();
    for (const piece of pieces) flowing = transport.write(piece);
    transport.uncork();
    if (flowing) {
      this.bridge.send(A_OKAY, this.localId, this.remoteId);
      return true;
    }
    this.writing = true;
    transport.once('drain', () => {
      this.writing = false;
      if (this.closed) return;
      this.bridge.send(A_OKAY, this.localId, this.remoteId);
      this.bridge.streamReady();
    });
    return true;
  }

  acknowledged(): void {
    this.awaitingAck = false;
    this.flush();
  }

  /** `cut`: the whole connection dropped (release, error), so the device side is cut rather than ended. */
  close(notifyClient: boolean, cut = false): void {
    if (this.closed) return;
    this.closed = true;
    this.bridge.forget(this.localId);
    // A WRTE waiting for this stream is now answered with CLSE, and the packets behind it go on.
    if (this.writing) queueMicrotask(() => this.bridge.streamReady());
    if (notifyClient) this.bridge.send(A_CLSE, this.localId, this.remoteId);
    this.readAhead.clear();
    // The client closed: what it wrote still reaches the device (end, not destroy).
    if (this.transport && !notifyClient && !cut) this.transport.end();
    else this.transport?.destroy();
  }

  private fromDevice(chunk: Buffer): void {
    if (this.closed) return;
    this.readAhead.push(chunk);
    if (this.readAhead.length >= this.bridge.payloadLimit) this.transport?.pause();
    this.flush();
  }

  private deviceFinished(): void {
    this.deviceEnded = true;
    this.flush();
  }

  private flush(): void {
    if (this.closed) return;
    if (!this.awaitingAck && this.readAhead.length > 0) {
      this.bridge.send(A_WRTE, this.localId, this.remoteId, this.readAhead.take(Math.min(this.readAhead.length, this.bridge.payloadLimit)));
      this.awaitingAck = true;
      if (this.readAhead.length < this.bridge.payloadLimit) this.transport?.resume();
    }
    if (this.deviceEnded && this.readAhead.length === 0 && !this.awaitingAck) this.close(true);
  }
}

/** A socket to the adb server carrying `service` on the device (`host:transport:<serial>`, then the service). */
async function openService(adb: Client, serial: string, service: string): Promise<net.Socket> {
  const connection = await adb.getDevice(serial).transport();
  try {
    const request = Buffer.from(service, 'utf8');
    connection.write(Buffer.concat([Buffer.from(request.length.toString(16).padStart(4, '0'), 'ascii'), request]));
    const reply = await connection.parser.readAscii(4);
    if (reply !== 'OKAY') throw new Error(`the adb server answered ${reply} to ${service.slice(0, 40)}`);
    return connection.socket;
  } catch (err) {
    connection.socket.destroy();
    throw err;
  }
}
