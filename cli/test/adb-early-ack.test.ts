/**
 * The tunnel's early OKAYs (adb-early-ack.ts) on adb packet streams cut at every byte: one OKAY per client WRTE
 * in all, early ones only within the window and only between packets, the device's swallowed in their place;
 * anything that is not adb without delayed_ack passes unchanged. (Real adb through the tunnel:
 * hub/test/e2e/device-access-transfer.test.ts.)
 */
import { A_CLSE, A_CNXN, A_OKAY, A_WRTE, AdbPacketScanner, emptyPacket, type AdbHeader } from '../src/adb-packet-scanner';
import { earlyAckRelay } from '../src/adb-early-ack';

function packet(command: number, arg0: number, arg1: number, payload = Buffer.alloc(0)): Buffer {
  const header = emptyPacket(command, arg0, arg1);
  header.writeUInt32LE(payload.length, 12);
  return Buffer.concat([header, payload]);
}

const CLIENT = 7; // the client's local id of the stream
const DEVICE = 3; // the device's
const wrte = (size: number, fill = 1) => packet(A_WRTE, CLIENT, DEVICE, Buffer.alloc(size, fill));
const deviceOkay = () => packet(A_OKAY, DEVICE, CLIENT);

/** A relay whose two outputs are collected; `feed` writes in pieces of `step` bytes. */
function harness(window = 4) {
  const relay = earlyAckRelay(window);
  const toClient: Buffer[] = [];
  const toDevice: Buffer[] = [];
  relay.toClient.on('data', (chunk: Buffer) => toClient.push(chunk));
  relay.toDevice.on('data', (chunk: Buffer) => toDevice.push(chunk));
  const feed = async (stream: NodeJS.WritableStream, bytes: Buffer, step: number) => {
    for (let i = 0; i < bytes.length; i += step) stream.write(bytes.subarray(i, i + step));
    await new Promise((resolve) => setImmediate(resolve));
  };
  return {
    fromClient: (bytes: Buffer, step = bytes.length) => feed(relay.toDevice, bytes, step),
    fromDevice: (bytes: Buffer, step = bytes.length) => feed(relay.toClient, bytes, step),
    /** What the client received, as packets. */
    clientPackets: () => headers(Buffer.concat(toClient)),
    clientBytes: () => Buffer.concat(toClient),
    deviceBytes: () => Buffer.concat(toDevice),
  };
}

function headers(bytes: Buffer): AdbHeader[] {
  const found: AdbHeader[] = [];
  new AdbPacketScanner().scan(bytes, () => true, (header) => found.push(header));
  return found;
}

const okays = (list: AdbHeader[]) => list.filter((h) => h.command === A_OKAY && h.arg0 === DEVICE && h.arg1 === CLIENT).length;

for (const step of [1, 7, 1 << 20]) {
  test(`WRTEs are answered early up to the window, the rest by the device's OKAYs (pieces of ${step} bytes)`, async () => {
    const h = harness(4);
    const writes = Buffer.concat([wrte(1000), wrte(1000), wrte(1000), wrte(1000), wrte(1000)]);
    await h.fromClient(writes, step);
    expect(h.deviceBytes().equals(writes)).toBe(true); // passed on unchanged
    expect(okays(h.clientPackets())).toBe(4); // the fifth waits for the device
    await h.fromDevice(deviceOkay(), step);
    expect(okays(h.clientPackets())).toBe(5); // the device's first OKAY answers the fifth
    await h.fromDevice(Buffer.concat([deviceOkay(), deviceOkay(), deviceOkay(), deviceOkay()]), step);
    expect(okays(h.clientPackets())).toBe(5); // the rest were answered early: swallowed
    // The window is free again.
    await h.fromClient(wrte(10), step);
    expect(okays(h.clientPackets())).toBe(6);
  });
}

test('an early OKAY goes between packets: never inside a device packet the client is receiving', async () => {
  const h = harness(4);
  const deviceData = packet(A_WRTE, DEVICE, CLIENT, Buffer.alloc(100, 9));
  await h.fromDevice(deviceData.subarray(0, 60)); // half of the device's WRTE
  await h.fromClient(wrte(10));
  expect(h.clientBytes().equals(deviceData.subarray(0, 60))).toBe(true); // the OKAY waits
  await h.fromDevice(deviceData.subarray(60));
  expect(h.clientBytes().equals(Buffer.concat([deviceData, packet(A_OKAY, DEVICE, CLIENT)]))).toBe(true);
});

test('after a CLSE the stream is forgotten: the device\'s later OKAYs pass', async () => {
  const h = harness(4);
  await h.fromClient(Buffer.concat([wrte(10), wrte(10)]));
  expect(okays(h.clientPackets())).toBe(2);
  await h.fromDevice(packet(A_CLSE, DEVICE, CLIENT));
  await h.fromDevice(deviceOkay());
  expect(okays(h.clientPackets())).toBe(3); // passed as it came (the client ignores an OKAY of a closed stream)
  expect(h.clientPackets().map((p) => p.command)).toEqual([A_OKAY, A_OKAY, A_CLSE, A_OKAY]);
});

test('a delayed_ack peer (OKAYs carrying a window) and bytes that are not adb pass unchanged', async () => {
  const delayed = harness(4);
  const connect = packet(A_CNXN, 0x01000001, 1 << 20, Buffer.from('device::features=delayed_ack'));
  const windowOkay = packet(A_OKAY, DEVICE, CLIENT, Buffer.alloc(4, 1));
  await delayed.fromDevice(Buffer.concat([connect, windowOkay]));
  await delayed.fromClient(Buffer.concat([wrte(10), wrte(10)]));
  await delayed.fromDevice(deviceOkay());
  expect(delayed.clientBytes().equals(Buffer.concat([connect, windowOkay, deviceOkay()]))).toBe(true);

  const usbmux = harness(4);
  const plist = Buffer.from('<?xml version="1.0"?><plist><dict><key>MessageType</key></dict></plist>'.repeat(3));
  await usbmux.fromClient(plist, 5);
  await usbmux.fromDevice(plist, 5);
  expect(usbmux.deviceBytes().equals(plist)).toBe(true);
  expect(usbmux.clientBytes().equals(plist)).toBe(true);
});
