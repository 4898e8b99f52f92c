/**
 * A usbmuxd at its socket contract (unix socket, optionally TCP), as libusbmuxd and appium-ios-device speak it:
 * 16-byte little-endian header (length, version 1, message 8 = plist, tag), then an XML plist. Handles
 * ListDevices, Listen (Attached/Detached/Paired pushed with tag 0), ReadBUID, Read/Save/DeletePairRecord and Connect,
 * after which the socket carries raw bytes to the device port. Connect's PortNumber is in network byte order.
 */
import { randomUUID } from 'node:crypto';
import * as fs from 'node:fs';
import * as net from 'node:net';
import { PlistDict, PlistValue, decodePlistDict, encodePlist } from '@devicelab/shared';

/** What usbmuxd needs from a device it lists. */
export interface UsbmuxTarget {
  readonly udid: string;
  /** The USB product id (0x12a8 for iPhones, 0x12ab for iPads). */
  readonly productId: number;
  /** Linux usbmuxd: (bus << 16) | address. */
  readonly locationId: number;
  /** What takes a connection to this device port, or undefined when nothing listens there. */
  portHandler(port: number): ((socket: net.Socket) => void) | undefined;
}

const HEADER = 16;
const PLIST_VERSION = 1;
const PLIST_MESSAGE = 8;
const MAX_MESSAGE = 1024 * 1024;

/** usbmuxd result codes. */
const UsbmuxResult = { OK: 0, BADCOMMAND: 1, BADDEV: 2, CONNREFUSED: 3, BADVERSION: 6 } as const;

interface Client {
  socket: net.Socket;
  listening: boolean;
}

export class UsbmuxServer {
  private readonly servers: net.Server[] = [];
  private readonly clients = new Set<Client>();
  private readonly attached = new Map<number, UsbmuxTarget>();
  private readonly pairRecords = new Map<string, Buffer>();
  private nextDeviceId = 1;
  readonly buid = randomUUID().toUpperCase();

  constructor(readonly socketPath: string) {}

  async start(tcpPort?: number): Promise<void> {
    fs.rmSync(this.socketPath, { force: true });
    await this.listen((s) => s.listen(this.socketPath));
    if (tcpPort !== undefined) await this.listen((s) => s.listen(tcpPort, '127.0.0.1'));
  }

  /** The TCP port, when started with one. */
  get tcpPort(): number | undefined {
    const address = this.servers[1]?.address();
    return address && typeof address === 'object' ? address.port : undefined;
  }

  async stop(): Promise<void> {
    for (const c of this.clients) c.socket.destroy();
    this.clients.clear();
    await Promise.all(this.servers.splice(0).map((s) => new Promise<void>((resolve) => s.close(() => resolve()))));
    fs.rmSync(this.socketPath, { force: true });
  }

  /** The device appeared on the bus: it gets a fresh DeviceID, as each USB enumeration does. */
  attach(target: UsbmuxTarget): number {
    for (const [id, t] of this.attached) if (t === target) return id;
    const id = this.nextDeviceId++;
    this.attached.set(id, target);
    this.broadcast({ MessageType: 'Attached', DeviceID: id, Properties: properties(id, target) });
    return id;
  }

  detach(target: UsbmuxTarget): void {
    for (const [id, t] of this.attached) {
      if (t !== target) continue;
      this.attached.delete(id);
      this.broadcast({ MessageType: 'Detached', DeviceID: id });
    }
  }

  isAttached(target: UsbmuxTarget): boolean {
    return [...this.attached.values()].includes(target);
  }

  /** The pair record the host saved for a device (binary plist bytes), if any. */
  pairRecord(udid: string): Buffer | undefined {
    return this.pairRecords.get(udid);
  }

  private async listen(bind: (s: net.Server) => void): Promise<void> {
    const server = net.createServer((socket) => this.accept(socket));
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.once('listening', () => resolve());
      bind(server);
    });
    this.servers.push(server);
  }

  private accept(socket: net.Socket): void {
    const client: Client = { socket, listening: false };
    this.clients.add(client);
    let pending: Buffer = Buffer.alloc(0);
    const onData = (chunk: Buffer): void => {
      pending = pending.length ? Buffer.concat([pending, chunk]) : chunk;
      while (pending.length >= HEADER) {
        const length = pending.readUInt32LE(0);
        if (length < HEADER || length > MAX_MESSAGE) return void socket.destroy();
        if (pending.length < length) return;
        const version = pending.readUInt32LE(4);
        const type = pending.readUInt32LE(8);
        const tag = pending.readUInt32LE(12);
        const body = pending.subarray(HEADER, length);
        pending = pending.subarray(length);
        if (version !== PLIST_VERSION || type !== PLIST_MESSAGE) {
          this.send(socket, tag, { MessageType: 'Result', Number: UsbmuxResult.BADVERSION });
          continue;
        }
        let message: PlistDict;
        try {
          message = decodePlistDict(body);
        } catch {
          return void socket.destroy();
        }
        if (this.handle(client, tag, message) === 'raw') {
          socket.off('data', onData);
          if (pending.length) socket.unshift(pending);
          return;
        }
      }
    };
    socket.on('data', onData);
    socket.on('error', () => undefined);
    socket.on('close', () => this.clients.delete(client));
  }

  /** Answers one request; 'raw' when the socket now belongs to a device port. */
  private handle(client: Client, tag: number, message: PlistDict): 'raw' | void {
    const { socket } = client;
    const result = (number: number): void => this.send(socket, tag, { MessageType: 'Result', Number: number });
    switch (message.MessageType) {
      case 'ListDevices':
        return this.send(socket, tag, {
          DeviceList: [...this.attached].map(([id, t]) => ({ DeviceID: id, MessageType: 'Attached', Properties: properties(id, t) })),
        });
      case 'Listen':
        result(UsbmuxResult.OK);
        client.listening = true;
        for (const [id, t] of this.attached) this.send(socket, 0, { MessageType: 'Attached', DeviceID: id, Properties: properties(id, t) });
        return;
      case 'ReadBUID':
        return this.send(socket, tag, { BUID: this.buid });
      case 'ReadPairRecord': {
        const record = this.pairRecords.get(String(message.PairRecordID));
        if (!record) return result(UsbmuxResult.BADDEV);
        return this.send(socket, tag, { PairRecordData: record });
      }
      case 'SavePairRecord': {
        const data = message.PairRecordData;
        if (typeof message.PairRecordID !== 'string' || !Buffer.isBuffer(data)) return result(UsbmuxResult.BADCOMMAND);
        this.pairRecords.set(message.PairRecordID, data);
        result(UsbmuxResult.OK);
        // Listeners learn that the device is now paired with this host.
        for (const [id, t] of this.attached) if (t.udid === message.PairRecordID) this.broadcast({ MessageType: 'Paired', DeviceID: id });
        return;
      }
      case 'DeletePairRecord':
        this.pairRecords.delete(String(message.PairRecordID));
        return result(UsbmuxResult.OK);
      case 'Connect': {
        const target = this.attached.get(Number(message.DeviceID));
        if (!target) return result(UsbmuxResult.BADDEV);
        const accept = target.portHandler(ntohs(Number(message.PortNumber)));
        if (!accept) return result(UsbmuxResult.CONNREFUSED);
        // Answer first: the host reads the Result, then the device's bytes follow raw.
        result(UsbmuxResult.OK);
        this.clients.delete(client);
        accept(socket);
        return 'raw';
      }
      default:
        return result(UsbmuxResult.BADCOMMAND);
    }
  }

  private broadcast(message: PlistDict): void {
    for (const c of this.clients) if (c.listening) this.send(c.socket, 0, message);
  }

  private send(socket: net.Socket, tag: number, message: Record<string, PlistValue>): void {
    if (socket.destroyed) return;
    const body = encodePlist(message);
    const header = Buffer.alloc(HEADER);
    header.writeUInt32LE(HEADER + body.length, 0);
    header.writeUInt32LE(PLIST_VERSION, 4);
    header.writeUInt32LE(PLIST_MESSAGE, 8);
    header.writeUInt32LE(tag, 12);
    socket.write(Buffer.concat([header, body]));
  }
}

function properties(id: number, target: UsbmuxTarget): PlistDict {
  return {
    ConnectionSpeed: 480000000,
    ConnectionType: 'USB',
    DeviceID: id,
    LocationID: target.locationId,
    ProductID: target.productId,
    SerialNumber: target.udid,
  };
}

function ntohs(port: number): number {
  return ((port & 0xff) << 8) | ((port >> 8) & 0xff);
}
