/**
 * A usbmux client's port forward, as iproxy or go-ios forward WebDriverAgent's 8100 to the host: a local TCP port
 * whose every connection is a usbmuxd Connect to the device port (the device looked up by UDID with ListDevices).
 * For tests and benchmarks that play the host side.
 */
import * as net from 'node:net';
import { PlistDict, decodePlistDict, encodePlist } from '@devicelab/shared';

/** One usbmux message: the 16-byte little-endian header (length, version 1, plist type 8, tag), then its plist. */
export function usbmuxFrame(message: PlistDict, tag: number): Buffer {
  const body = encodePlist(message);
  const header = Buffer.alloc(16);
  header.writeUInt32LE(16 + body.length, 0);
  header.writeUInt32LE(1, 4);
  header.writeUInt32LE(8, 8);
  header.writeUInt32LE(tag, 12);
  return Buffer.concat([header, body]);
}

/** One usbmux request on a fresh connection; resolves with the answer and the socket (raw after a Connect). */
function request(socketPath: string, message: PlistDict): Promise<{ answer: PlistDict; socket: net.Socket }> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(socketPath);
    let pending = Buffer.alloc(0);
    const onData = (chunk: Buffer) => {
      pending = Buffer.concat([pending, chunk]);
      if (pending.length < 16 || pending.length < pending.readUInt32LE(0)) return;
      const length = pending.readUInt32LE(0);
      socket.off('data', onData);
      const rest = pending.subarray(length);
      if (rest.length) socket.unshift(rest);
      resolve({ answer: decodePlistDict(pending.subarray(16, length)), socket });
    };
    socket.on('data', onData);
    socket.once('error', reject);
    socket.once('connect', () => socket.write(usbmuxFrame(message, 1)));
  });
}

export async function forwardUsbmuxPort(socketPath: string, udid: string, devicePort: number): Promise<{ port: number; close(): Promise<void> }> {
  const open = new Set<net.Socket>();
  const server = net.createServer(async (client) => {
    open.add(client);
    client.on('close', () => open.delete(client));
    client.pause();
    try {
      const { answer: list, socket: listing } = await request(socketPath, { MessageType: 'ListDevices' });
      listing.destroy();
      const entry = (list.DeviceList as PlistDict[]).find((d) => (d.Properties as PlistDict).SerialNumber === udid);
      if (!entry) throw new Error(`${udid} is not attached`);
      const portBE = ((devicePort & 0xff) << 8) | (devicePort >> 8);
      const { answer, socket } = await request(socketPath, { MessageType: 'Connect', DeviceID: entry.DeviceID as number, PortNumber: portBE });
      if (answer.Number !== 0) throw new Error(`usbmux Connect refused (${String(answer.Number)})`);
      open.add(socket);
      socket.on('close', () => open.delete(socket));
      socket.on('error', () => client.destroy());
      client.on('error', () => socket.destroy());
      socket.pipe(client);
      client.pipe(socket);
      client.resume();
    } catch {
      client.destroy();
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as net.AddressInfo).port,
    close: async () => {
      for (const s of open) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
