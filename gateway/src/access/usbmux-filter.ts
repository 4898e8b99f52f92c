/**
 * The retainer's usbmux endpoint for an iOS device (issue 11 part 3): one hub tunnel is one usbmux client
 * connection, answered by a filtering proxy in front of the gateway's usbmuxd. usbmux has no client
 * authentication, so it is served only through the tunnel (authenticated at the hub as the retainer), and it
 * shows only the retained device: ListDevices and Listen answer with that device alone, Connect reaches only its
 * DeviceID, ReadPairRecord only its UDID. After a successful Connect the connection is a raw pipe to the device,
 * as usbmuxd makes it. A release drops every connection of the device.
 */
import type * as net from 'node:net';
import { type PlistDict, type PlistValue, decodePlistDict, isDict } from '@devicelab/shared';
import type { Logger } from '@devicelab/shared';
import {
  USBMUX_HEADER, USBMUX_MAX_MESSAGE, type UsbmuxClient, UsbmuxError, encodeUsbmuxMessage,
} from '../drivers/ios/usbmux';

/** usbmuxd's result numbers. */
const RESULT = { ok: 0, badCommand: 1, badDevice: 2, connectionRefused: 3, badVersion: 6 } as const;

/** The client side of one connection: bytes to the user's tool, and how to end it. */
export interface UsbmuxPeer {
  /** False when the peer will not take more now; `onDrain` then says when it will. */
  write(data: Buffer): boolean;
  onDrain(resume: () => void): void;
  pause(): void;
  resume(): void;
  end(): void;
}

export class UsbmuxAccess {
  private readonly open = new Map<string, Set<() => void>>();

  constructor(private readonly usbmux: UsbmuxClient, private readonly logger: Logger) {}

  /** Serves one client connection for `udid`; returns the sink for the client's bytes and its end. */
  serve(udid: string, peer: UsbmuxPeer): { data(chunk: Buffer): void; end(): void } {
    const connection = new FilteredConnection(udid, this.usbmux, peer, this.logger);
    let set = this.open.get(udid);
    if (!set) this.open.set(udid, set = new Set());
    const close = () => connection.close();
    set.add(close);
    connection.onClose = () => set.delete(close);
    return { data: (chunk) => connection.fromClient(chunk), end: () => connection.clientEnded() };
  }

  /** The retain ended (or changed hands): every open connection to the device drops. */
  drop(udid: string): void {
    for (const close of [...this.open.get(udid) ?? []]) close();
    this.open.delete(udid);
  }
}

function serialOf(entry: PlistValue | undefined): string | undefined {
  if (!isDict(entry) || !isDict(entry.Properties)) return undefined;
  const serial = entry.Properties.SerialNumber;
  return typeof serial === 'string' ? serial : undefined;
}

class FilteredConnection {
  onClose: () => void = () => undefined;
  private pending: Buffer = Buffer.alloc(0);
  /** Set once Connect succeeded (raw pipe) or Listen started: no more requests are read. */
  private upstream: net.Socket | undefined;
  private closed = false;
  /** A Listen connection: the client's further bytes are not requests and go nowhere. */
  private listening = false;
  private busy: Promise<void> = Promise.resolve();
  private readonly deviceIds = new Set<number>();

  constructor(
    private readonly udid: string, private readonly usbmux: UsbmuxClient, private readonly peer: UsbmuxPeer,
    private readonly logger: Logger,
  ) {}

  fromClient(chunk: Buffer): void {
    if (this.closed) return;
    if (this.listening) return;
    if (this.upstream) {
      if (!this.upstream.write(chunk)) {
        this.peer.pause();
        this.upstream.once('drain', () => this.peer.resume());
      }
      return;
    }
    this.pending = this.pending.length ? Buffer.concat([this.pending, chunk]) : chunk;
    while (this.pending.length >= USBMUX_HEADER) {
      const length = this.pending.readUInt32LE(0);
      if (length < USBMUX_HEADER || length > USBMUX_MAX_MESSAGE) return this.close();
      if (this.pending.length < length) return;
      const version = this.pending.readUInt32LE(4);
      const tag = this.pending.readUInt32LE(12);
      const body = this.pending.subarray(USBMUX_HEADER, length);
      this.pending = this.pending.subarray(length);
      if (version !== 1) {
        this.reply({ MessageType: 'Result', Number: RESULT.badVersion }, tag);
        continue;
      }
      let message: PlistDict;
      try {
        message = decodePlistDict(body);
      } catch {
        return this.close();
      }
      // Requests are answered in order; Connect and Listen end the request phase.
      this.busy = this.busy.then(() => this.closed || this.upstream ? undefined : this.handle(message, tag)).catch((err: unknown) => {
        this.logger.debug({ err, device: this.udid }, 'usbmux request through the tunnel failed');
        this.close();
      });
    }
  }

  clientEnded(): void {
    if (this.upstream) this.upstream.end();
    else this.close();
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.upstream?.destroy();
    this.peer.end();
    this.onClose();
  }

  private reply(message: PlistDict, tag: number): void {
    if (!this.closed) this.peer.write(encodeUsbmuxMessage(message, tag));
  }

  private result(number: number, tag: number): void {
    this.reply({ MessageType: 'Result', Number: number }, tag);
  }

  /** The retained device's entries of usbmuxd's list (their DeviceIDs become the ones Connect may reach). */
  private async ownEntries(): Promise<PlistDict[]> {
    const answer = await this.usbmux.request({ MessageType: 'ListDevices' });
    const list = Array.isArray(answer.DeviceList) ? answer.DeviceList : [];
    const own = list.filter((entry): entry is PlistDict => serialOf(entry) === this.udid);
    for (const entry of own) if (typeof entry.DeviceID === 'number') this.deviceIds.add(entry.DeviceID);
    return own;
  }

  private async handle(message: PlistDict, tag: number): Promise<void> {
    switch (message.MessageType) {
      case 'ListDevices':
        return this.reply({ DeviceList: await this.ownEntries() }, tag);
      case 'ReadBUID':
        return this.reply(await this.usbmux.request({ MessageType: 'ReadBUID' }), tag);
      case 'ReadPairRecord':
        if (message.PairRecordID !== this.udid) return this.result(RESULT.badDevice, tag);
        return this.reply(await this.usbmux.request({ MessageType: 'ReadPairRecord', PairRecordID: this.udid }), tag);
      case 'Connect':
        return this.connect(message, tag);
      case 'Listen':
        return this.listen(tag);
      default:
        // SavePairRecord, DeletePairRecord and the rest change the lab host: not the retainer's to do.
        return this.result(RESULT.badCommand, tag);
    }
  }

  private async connect(message: PlistDict, tag: number): Promise<void> {
    const deviceId = Number(message.DeviceID);
    const swapped = Number(message.PortNumber);
    if (!this.deviceIds.has(deviceId)) await this.ownEntries();
    if (!this.deviceIds.has(deviceId) || !Number.isInteger(swapped)) return this.result(RESULT.badDevice, tag);
    const port = ((swapped & 0xff) << 8) | ((swapped >> 8) & 0xff);
    let socket: net.Socket;
    try {
      socket = await this.usbmux.connect(deviceId, port);
    } catch (err) {
      const number = err instanceof UsbmuxError && err.resultNumber !== undefined ? err.resultNumber : RESULT.connectionRefused;
      return this.result(number, tag);
    }
    if (this.closed) return void socket.destroy();
    this.result(RESULT.ok, tag);
    this.pipe(socket);
    const early = this.pending;
    this.pending = Buffer.alloc(0);
    if (early.length) this.fromClient(early);
  }

  private async listen(tag: number): Promise<void> {
    const own = new Set<number>();
    // usbmuxd's first pushes can come with its answer: they follow our Result, not precede it.
    let held: PlistDict[] | undefined = [];
    const forward = (event: PlistDict) => {
      if (held) held.push(event);
      else this.forwardEvent(event, own);
    };
    const socket = await this.usbmux.listen(forward, () => this.close());
    if (this.closed) return void socket.destroy();
    this.upstream = socket;
    this.listening = true;
    this.result(RESULT.ok, tag);
    for (const event of held) this.forwardEvent(event, own);
    held = undefined;
  }

  private forwardEvent(event: PlistDict, own: Set<number>): void {
    if (event.MessageType === 'Attached' && serialOf(event) === this.udid && typeof event.DeviceID === 'number') {
      own.add(event.DeviceID);
      this.deviceIds.add(event.DeviceID);
      this.reply(event, 0);
    } else if (event.MessageType === 'Detached' && own.has(Number(event.DeviceID))) {
      this.reply(event, 0);
    }
  }

  /** After Connect: bytes both ways, with backpressure. */
  private pipe(socket: net.Socket): void {
    this.upstream = socket;
    socket.setTimeout(0);
    socket.on('data', (data: Buffer) => {
      if (!this.peer.write(data)) {
        socket.pause();
        this.peer.onDrain(() => socket.resume());
      }
    });
    socket.on('error', () => this.close());
    socket.on('close', () => this.close());
  }
}
