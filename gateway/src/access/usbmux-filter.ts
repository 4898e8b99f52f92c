/**
 * The retainer's usbmux endpoint for an iOS device: one hub tunnel is one usbmux client
 * connection, answered by a filtering proxy in front of the gateway's usbmuxd. usbmux has no client
 * authentication, so it is served only through the tunnel (authenticated at the hub as the retainer), and it
 * shows only the retained device: ListDevices and Listen answer with that device alone, Connect reaches only its
 * DeviceID, ReadPairRecord only its UDID. After a successful Connect the connection is a raw pipe to the device,
 * as usbmuxd makes it. A release drops every connection of the device, and so does a Welcome (the hub's whole
 * retention set after the link was down) in which the device is no longer retained under the same retain.
 */
import type * as net from 'node:net';
import {
  type ByteEnd, type Logger, type PlistDict, type PlistValue, decodePlistDict, isDict, pumpBytes, socketEnd,
} from '@devicelab/shared';
import type { DeviceAccessEvent } from '@devicelab/proto';
import { UsbmuxSessions, type UsbmuxClientIdentity } from './usbmux-sessions';
import {
  USBMUX_HEADER, USBMUX_MAX_MESSAGE, type UsbmuxClient, UsbmuxError, encodeUsbmuxMessage,
} from '../drivers/ios/usbmux';

/** usbmuxd's result numbers. */
const RESULT = { ok: 0, badCommand: 1, badDevice: 2, connectionRefused: 3, badVersion: 6 } as const;

/** The client side of one connection (the hub tunnel): bytes to and from the user's tool. */
export interface UsbmuxPeer extends ByteEnd {
  /** The client reached a service of the device (usbmux Connect to `port`, e.g. 62078 lockdownd). */
  connected?(port: number): void;
  /** The client asked for another device than the retained one (its Connect or pair record was refused). */
  refused?(what: string): void;
  /** Bytes came from the device's service for this client: its holder uses it (idle release). */
  used?(): void;
}

/** One device's open connections and the retain they were opened under. */
interface OpenConnections {
  retainId: string;
  closers: Set<() => void>;
}

/** lockdownd's port: every other port a client reaches is a service lockdownd started for it. */
const LOCKDOWN_PORT = 62078;

/** How long the device's services stay quiet before its apps are read again (as the adb endpoint waits). */
const SERVICES_SETTLE_MS = 500;

export interface UsbmuxAccessOptions {
  /** Each client session's record (usbmux-sessions.ts): becomes a Note event on the device at the hub. */
  report?(event: DeviceAccessEvent): void;
  /**
   * A client's connection to a device service (installation_proxy, AFC, ...) ended and none followed for a
   * while: the apps may have changed. lockdownd's session is TLS, so which service it was is not visible here.
   */
  servicesUsed?(udid: string): void;
  /** Bytes moved between a client and the device (the caller coalesces). */
  used?(udid: string): void;
}

export class UsbmuxAccess {
  private readonly open = new Map<string, OpenConnections>();
  private readonly settling = new Map<string, NodeJS.Timeout>();

  private readonly sessions: UsbmuxSessions;

  constructor(private readonly usbmux: UsbmuxClient, private readonly logger: Logger, private readonly options: UsbmuxAccessOptions = {}) {
    this.sessions = new UsbmuxSessions((event) => options.report?.(event));
  }

  /** Serves one client connection for `udid` under the retain `retainId`; `client` is who the hub says it is. */
  serve(udid: string, retainId: string, peer: UsbmuxPeer, client?: UsbmuxClientIdentity): void {
    const current = this.open.get(udid);
    if (current && current.retainId !== retainId) this.drop(udid);
    const connection = new FilteredConnection(udid, this.usbmux, {
      ...peer,
      connected: (port) => {
        peer.connected?.(port);
        const service = port !== LOCKDOWN_PORT;
        const sessionClosed = client ? this.sessions.opened(udid, retainId, client, service) : () => undefined;
        connection.onDeviceClosed = () => {
          sessionClosed();
          if (service) this.serviceClosed(udid);
        };
      },
      used: () => this.options.used?.(udid),
    }, this.logger);
    let entry = this.open.get(udid);
    if (!entry) this.open.set(udid, entry = { retainId, closers: new Set() });
    const { closers } = entry;
    const close = () => connection.close();
    closers.add(close);
    connection.onClose = () => closers.delete(close);
  }

  /** The device's retain is now `retainId` ('' or undefined: released): connections of another retain drop. */
  retained(udid: string, retainId: string | undefined): void {
    const current = this.open.get(udid);
    if (current && current.retainId !== retainId) this.drop(udid);
  }

  /** Welcome: the hub's whole retention set; connections of devices not retained under the same retain drop. */
  keepOnly(retentions: readonly { vendorUniqueIdentifier: string; retainId: string }[]): void {
    const retains = new Map(retentions.filter((r) => r.retainId).map((r) => [r.vendorUniqueIdentifier, r.retainId]));
    for (const udid of [...this.open.keys()]) this.retained(udid, retains.get(udid));
  }

  private serviceClosed(udid: string): void {
    clearTimeout(this.settling.get(udid));
    this.settling.set(udid, setTimeout(() => {
      this.settling.delete(udid);
      this.options.servicesUsed?.(udid);
    }, SERVICES_SETTLE_MS).unref());
  }

  private drop(udid: string): void {
    this.sessions.endAll(udid);
    for (const close of [...this.open.get(udid)?.closers ?? []]) close();
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
  /** Set once the connection reached the device (lockdownd or a service). */
  onDeviceClosed: () => void = () => undefined;
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
  ) {
    peer.onData((chunk) => this.fromClient(chunk));
    peer.onClosed(() => {
      if (!this.upstream || this.listening) this.close(); // after Connect the pump ends the device side
    });
    peer.resume();
  }

  /** The request phase; after Connect the pump carries the client's bytes, after Listen they go nowhere. */
  private fromClient(chunk: Buffer): void {
    if (this.closed || this.upstream) return;
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

  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.upstream?.destroy();
    this.peer.end();
    this.onClose();
    this.onDeviceClosed();
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
        if (message.PairRecordID !== this.udid) {
          this.peer.refused?.(`the pair record of ${String(message.PairRecordID).slice(0, 64)}, not the retained device`);
          return this.result(RESULT.badDevice, tag);
        }
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
    if (!this.deviceIds.has(deviceId) || !Number.isInteger(swapped)) {
      this.peer.refused?.(`Connect to usbmux device ${deviceId}, not the retained device`);
      return this.result(RESULT.badDevice, tag);
    }
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
    this.peer.connected?.(port);
    this.upstream = socket;
    socket.setTimeout(0);
    // Bytes the client sent right behind its Connect belong to the device already.
    if (this.pending.length) socket.write(this.pending);
    this.pending = Buffer.alloc(0);
    socket.on('close', () => this.close());
    // Only a Connect to the retained device gets here (the client's ticket opened the tunnel).
    socket.on('data', () => this.peer.used?.());
    pumpBytes(this.peer, socketEnd(socket));
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
}
