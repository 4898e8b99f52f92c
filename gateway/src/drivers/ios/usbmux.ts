/**
 * The usbmuxd client: 16-byte little-endian header (length, version 1 = plist, type 8, tag) then an XML plist.
 * Each request uses a fresh connection (as libusbmuxd does); Listen keeps one open for Attached/Detached pushes;
 * Connect turns the connection into a raw pipe to a port on the device (PortNumber in network byte order).
 */
import * as net from 'node:net';
import { type PlistDict, decodePlistDict, encodePlist } from '@devicelab/shared';

const HEADER = 16;
const MAX_MESSAGE = 16 * 1024 * 1024;
export const USBMUX_HEADER = HEADER;
export const USBMUX_MAX_MESSAGE = MAX_MESSAGE;
export const DEFAULT_USBMUXD_ADDRESS = 'UNIX:/var/run/usbmuxd';

/** `UNIX:/path`, `/path` or `host:port` (libusbmuxd's USBMUXD_SOCKET_ADDRESS forms). */
function usbmuxdEndpoint(address: string): net.NetConnectOpts {
  if (address.startsWith('UNIX:')) return { path: address.slice(5) };
  if (address.startsWith('/')) return { path: address };
  const at = address.lastIndexOf(':');
  return { host: address.slice(0, at) || '127.0.0.1', port: Number(address.slice(at + 1)) };
}

export class UsbmuxError extends Error {
  constructor(message: string, readonly resultNumber?: number) {
    super(message);
    this.name = 'UsbmuxError';
  }
}

function frame(message: PlistDict, tag: number): Buffer {
  return encodeUsbmuxMessage({ ClientVersionString: 'devicelab-gateway', ProgName: 'devicelab-gateway', ...message }, tag);
}

/** One plist-protocol usbmux message (version 1, type 8) with `tag`. */
export function encodeUsbmuxMessage(message: PlistDict, tag: number): Buffer {
  const body = encodePlist(message);
  const header = Buffer.alloc(HEADER);
  header.writeUInt32LE(HEADER + body.length, 0);
  header.writeUInt32LE(1, 4);
  header.writeUInt32LE(8, 8);
  header.writeUInt32LE(tag, 12);
  return Buffer.concat([header, body]);
}

/** Splits the socket's bytes into usbmux messages; stops reading at `stop()` and returns the bytes after it. */
class MessageReader {
  private pending: Buffer = Buffer.alloc(0);
  private stopped = false;
  constructor(private readonly socket: net.Socket, private readonly onMessage: (message: PlistDict) => void) {
    socket.on('data', this.onData);
  }

  private readonly onData = (chunk: Buffer): void => {
    this.pending = this.pending.length ? Buffer.concat([this.pending, chunk]) : chunk;
    // After Connect's answer the bytes are the device service's (it may speak first, as screenshotr does).
    while (!this.stopped && this.pending.length >= HEADER) {
      const length = this.pending.readUInt32LE(0);
      if (length < HEADER || length > MAX_MESSAGE) return void this.socket.destroy(new UsbmuxError(`usbmuxd sent a frame of ${length} bytes`));
      if (this.pending.length < length) return;
      const body = this.pending.subarray(HEADER, length);
      this.pending = this.pending.subarray(length);
      this.onMessage(decodePlistDict(body));
    }
  };

  stop(): Buffer {
    this.stopped = true;
    this.socket.off('data', this.onData);
    return this.pending;
  }
}

export class UsbmuxClient {
  constructor(readonly address: string, private readonly timeoutMs = 10_000) {}

  private open(): Promise<net.Socket> {
    return new Promise((resolve, reject) => {
      const socket = net.connect(usbmuxdEndpoint(this.address));
      socket.setTimeout(this.timeoutMs, () => socket.destroy(new UsbmuxError(`usbmuxd at ${this.address} did not answer in time`)));
      socket.once('connect', () => {
        socket.off('error', reject);
        resolve(socket);
      });
      socket.once('error', reject);
    });
  }

  /** Sends one request and resolves with its answer; the socket is handed back for Connect. */
  private async exchange(message: PlistDict): Promise<{ answer: PlistDict; socket: net.Socket; rest: Buffer }> {
    const socket = await this.open();
    return new Promise((resolve, reject) => {
      socket.once('error', reject);
      socket.once('close', () => reject(new UsbmuxError('usbmuxd closed the connection')));
      const reader = new MessageReader(socket, (answer) => {
        const rest = reader.stop();
        socket.removeAllListeners('error');
        socket.removeAllListeners('close');
        socket.setTimeout(0);
        resolve({ answer, socket, rest });
      });
      socket.write(frame(message, 1));
    });
  }

  async request(message: PlistDict): Promise<PlistDict> {
    const { answer, socket } = await this.exchange(message);
    socket.destroy();
    return answer;
  }

  /** The host's pair record for the device, or undefined when this host is not paired. */
  async readPairRecord(udid: string): Promise<PlistDict | undefined> {
    const answer = await this.request({ MessageType: 'ReadPairRecord', PairRecordID: udid });
    if (!Buffer.isBuffer(answer.PairRecordData)) return undefined;
    return decodePlistDict(answer.PairRecordData);
  }

  /** A raw byte pipe to `port` on the device. */
  async connect(deviceId: number, port: number): Promise<net.Socket> {
    const swapped = ((port & 0xff) << 8) | ((port >> 8) & 0xff);
    const { answer, socket, rest } = await this.exchange({ MessageType: 'Connect', DeviceID: deviceId, PortNumber: swapped });
    if (answer.Number !== 0) {
      socket.destroy();
      throw new UsbmuxError(`usbmuxd could not connect to port ${port} of device ${deviceId} (result ${String(answer.Number)})`, Number(answer.Number));
    }
    if (rest.length) socket.unshift(rest);
    return socket;
  }

  /** Opens a Listen connection; every pushed message goes to `onMessage`, its end to `onClose`. */
  async listen(onMessage: (message: PlistDict) => void, onClose: (err?: Error) => void): Promise<net.Socket> {
    const { answer, socket, rest } = await this.exchange({ MessageType: 'Listen' });
    if (answer.Number !== 0) {
      socket.destroy();
      throw new UsbmuxError(`usbmuxd refused Listen (result ${String(answer.Number)})`);
    }
    const reader = new MessageReader(socket, onMessage);
    socket.once('error', (err) => onClose(err));
    socket.once('close', () => { reader.stop(); onClose(); });
    if (rest.length) socket.emit('data', rest);
    return socket;
  }
}
