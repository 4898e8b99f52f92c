/**
 * The usbmux filtering proxy against labsim's usbmuxd: a client sees and reaches only the
 * retained device, its Connect and refusals are told to the tunnel (they become access events), and its open
 * connections drop when the retain ends, including by a Welcome after the link was down that no longer holds the
 * retain (the gateway's hub link hands Welcome's retentions to `keepOnly`).
 */
import net from 'node:net';
import { defaultIosLab, LabWorld } from '@devicelab/labsim';
import { createLogger, socketEnd } from '@devicelab/shared';
import { UsbmuxClient } from '../../src/drivers/ios/usbmux';
import { UsbmuxAccess } from '../../src/access/usbmux-filter';

jest.setTimeout(60_000);

const LOCKDOWN_PORT = 62078;
let world: LabWorld;
let access: UsbmuxAccess;
let proxy: net.Server;
let proxyAddress: string;
const [retained, other] = defaultIosLab(2);
const told: string[] = [];
let retainId = 'retain-1';

beforeAll(async () => {
  world = new LabWorld();
  await world.start();
  await world.addIosDevice(retained);
  await world.addIosDevice(other);
  access = new UsbmuxAccess(new UsbmuxClient(world.env().USBMUXD_SOCKET_ADDRESS!), createLogger('test', 'silent'));
  // Each TCP connection here is what one hub tunnel is on the gateway: one usbmux client of the retained device.
  proxy = net.createServer((socket) => access.serve(retained.udid, retainId, {
    ...socketEnd(socket),
    connected: (port) => told.push(`connected ${port}`),
    refused: (what) => told.push(`refused ${what}`),
  }));
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
  proxyAddress = `127.0.0.1:${(proxy.address() as net.AddressInfo).port}`;
});

afterAll(async () => {
  proxy?.close();
  await world?.stop();
});

/** A usbmux client connection through the proxy to the retained device's lockdownd; resolves when it closes. */
async function openLockdown(): Promise<{ socket: net.Socket; closed: Promise<void> }> {
  const client = new UsbmuxClient(proxyAddress);
  const list = await client.request({ MessageType: 'ListDevices' });
  const entry = (list.DeviceList as { DeviceID: number }[])[0];
  const socket = await client.connect(entry.DeviceID, LOCKDOWN_PORT);
  const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
  return { socket, closed };
}

function closesWithin(closed: Promise<void>, ms: number): Promise<boolean> {
  return Promise.race([closed.then(() => true), new Promise<boolean>((resolve) => setTimeout(() => resolve(false), ms))]);
}

test('lists and reaches only the retained device; a Connect elsewhere is refused and told', async () => {
  const client = new UsbmuxClient(proxyAddress);
  const list = await client.request({ MessageType: 'ListDevices' });
  const serials = (list.DeviceList as { Properties: { SerialNumber: string } }[]).map((d) => d.Properties.SerialNumber);
  expect(serials).toEqual([retained.udid]);
  const { socket } = await openLockdown();
  expect(told).toContain(`connected ${LOCKDOWN_PORT}`);
  socket.destroy();

  const direct = await new UsbmuxClient(world.env().USBMUXD_SOCKET_ADDRESS!).request({ MessageType: 'ListDevices' });
  const otherId = (direct.DeviceList as { DeviceID: number; Properties: { SerialNumber: string } }[])
    .find((d) => d.Properties.SerialNumber === other.udid)!.DeviceID;
  await expect(client.connect(otherId, LOCKDOWN_PORT)).rejects.toThrow();
  expect(told).toContain(`refused Connect to usbmux device ${otherId}, not the retained device`);
});

test('a Welcome that still holds the retain keeps the connection; one without it drops it within 1 s', async () => {
  const { socket, closed } = await openLockdown();
  access.keepOnly([{ vendorUniqueIdentifier: retained.udid, retainId }]);
  expect(await closesWithin(closed, 500)).toBe(false);
  expect(socket.destroyed).toBe(false);

  // The retain ended while the link was down; the Welcome after it holds only another device's retain.
  access.keepOnly([{ vendorUniqueIdentifier: other.udid, retainId: 'retain-of-other' }]);
  expect(await closesWithin(closed, 1_000)).toBe(true);
});

test('a Welcome with the device retained again by someone else (a new retain) drops the old connection', async () => {
  const { closed } = await openLockdown();
  access.keepOnly([{ vendorUniqueIdentifier: retained.udid, retainId: 'retain-2' }]);
  expect(await closesWithin(closed, 1_000)).toBe(true);
  // Connections of the new retain work.
  retainId = 'retain-2';
  const again = await openLockdown();
  access.retained(retained.udid, 'retain-2');
  expect(await closesWithin(again.closed, 300)).toBe(false);
  access.retained(retained.udid, undefined); // released
  expect(await closesWithin(again.closed, 1_000)).toBe(true);
});
