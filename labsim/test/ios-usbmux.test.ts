/**
 * The simulated usbmuxd as Debian's tools and a Listen client see it: `idevice_id -l` lists what is plugged in,
 * plug/unplug push Attached/Detached (a new DeviceID each time, as USB re-enumeration gives), and a Cambrionix port
 * turned Off takes the iPhone off the bus and away from USB power, Sync brings it back.
 */
import path from 'node:path';
import { LabWorld, iosSpecFromPreset } from '../src';
import { CliSession } from '../../gateway/src/usbhubs/cambrionix/cli-session';
import { waitFor } from './helpers';
import { UsbmuxListener, idevice } from './ios-helpers';

let world: LabWorld;
let run: ReturnType<typeof idevice>;
const iphone = iosSpecFromPreset('iphone-13', 0);
const ipad = iosSpecFromPreset('ipad-10', 1);

beforeAll(async () => {
  world = new LabWorld();
  await world.start();
  await world.addIosDevice(iphone);
  await world.addIosDevice(ipad, { plug: false });
  run = idevice(world);
}, 60_000);

afterAll(async () => {
  await world?.stop();
}, 60_000);

const listed = async (): Promise<string[]> => (await run('idevice_id', '-l')).stdout.split('\n').filter(Boolean);

it('lists the plugged-in devices with idevice_id -l and the world env', async () => {
  expect(world.env().USBMUXD_SOCKET_ADDRESS).toBe(`UNIX:${world.iosFleet.usbmuxd.socketPath}`);
  expect(await listed()).toEqual([iphone.udid]);
  expect(iphone.udid).toMatch(/^00008110-[0-9A-F]{16}$/);
});

it('pushes Attached and Detached to a Listen client on plug and unplug', async () => {
  const listener = await UsbmuxListener.open(world);
  try {
    await waitFor('the Listen result and the current device', async () => listener.events(iphone.udid).length === 1);
    expect(listener.messages[0]).toEqual({ tag: 1, message: { MessageType: 'Result', Number: 0 } });
    await world.plug(ipad.udid);
    await waitFor('iPad attached', async () => listener.events(ipad.udid).includes('Attached'));
    const attached = listener.messages.find((m) => m.message.MessageType === 'Attached' && (m.message.Properties as { SerialNumber: string }).SerialNumber === ipad.udid);
    expect(attached?.tag).toBe(0);
    expect(attached?.message.Properties).toEqual(expect.objectContaining({ ConnectionType: 'USB', ProductID: 0x12ab, SerialNumber: ipad.udid }));
    expect(new Set(await listed())).toEqual(new Set([iphone.udid, ipad.udid]));
    await world.unplug(ipad.udid);
    await waitFor('iPad detached', async () => listener.events(ipad.udid).join() === 'Attached,Detached');
    expect(await listed()).toEqual([iphone.udid]);
    await world.plug(ipad.udid);
    await waitFor('iPad attached again', async () => listener.events(ipad.udid).join() === 'Attached,Detached,Attached');
    const ids = listener.messages.filter((m) => m.message.MessageType === 'Attached' && (m.message.Properties as { SerialNumber: string }).SerialNumber === ipad.udid)
      .map((m) => m.message.DeviceID);
    expect(ids[0]).not.toBe(ids[1]);
  } finally {
    listener.close();
  }
});

it('tells Listen clients when a host saved a pair record', async () => {
  const listener = await UsbmuxListener.open(world);
  try {
    await waitFor('the current device', async () => listener.events(iphone.udid).length === 1);
    const deviceId = listener.messages.find((m) => m.message.MessageType === 'Attached' && (m.message.Properties as { SerialNumber: string }).SerialNumber === iphone.udid)
      ?.message.DeviceID;
    await world.iosFleet.pairWithIdevicepair(iphone.udid);
    await waitFor('Paired', async () => listener.messages.some((m) => m.message.MessageType === 'Paired'));
    expect(listener.messages.filter((m) => m.message.MessageType === 'Paired')).toEqual([{ tag: 0, message: { MessageType: 'Paired', DeviceID: deviceId } }]);
  } finally {
    listener.close();
  }
});

it('follows the Cambrionix port: Off detaches and cuts USB power, Sync attaches again', async () => {
  const hub = await world.addCambrionixHub({ serial: 'IOSHUB', ports: 4, path: path.join(world.iosFleet.usbmuxd.socketPath, '..', 'ttyIOSHUB') },
    { 2: iphone.udid });
  const cli = await CliSession.open({ path: hub.path });
  try {
    await cli.command('mode o 2');
    await waitFor('iPhone off the bus', async () => !(await listed()).includes(iphone.udid));
    expect(world.iosDevices().find((d) => d.udid === iphone.udid)?.battery.externalConnected).toBe(false);
    expect((await cli.command('state 2'))[0]).toBe(' 2, 0000, D O, 0, 0, x, 0.00');
    await cli.command('mode s 2');
    await waitFor('iPhone back on the bus', async () => (await listed()).includes(iphone.udid));
    expect(world.iosDevices().find((d) => d.udid === iphone.udid)?.battery.externalConnected).toBe(true);
  } finally {
    await cli.close();
  }
}, 30_000);
