/**
 * The history names who took a device Offline and why: a USB port switched Off or to Charge, a reboot, as
 * against an unplug; the device's readinessReason says which, and the events carry the user.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { startTestLab, waitFor, type TestLab } from '../support/lab';

jest.setTimeout(180_000);

interface WireEvent { id: string; eventType: string; message: string; stringValue?: string; performedByName?: string }
interface WireDevice { id: string; availability: string; readinessReason?: string }

let lab: TestLab;
let operator: { login: string; token: string };
/** What a webhook receiver got: the Events as posted. */
const delivered: WireEvent[] = [];
const receiver = http.createServer((req, res) => {
  let body = '';
  req.setEncoding('utf8');
  req.on('data', (chunk: string) => (body += chunk));
  req.on('end', () => {
    delivered.push(JSON.parse(body) as WireEvent);
    res.writeHead(204).end();
  });
});

beforeAll(async () => {
  // The host notices a detach 300 ms after the port switch, as real USB does: the switch's answer waits for it.
  lab = await startTestLab({ androidCount: 1, usbHub: { detachMs: 300 }, hubConfig: { webhookDelivery: { pollMs: 50 } } });
  operator = await lab.addUser('olga@lab.test', ['Administrator']);
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
  const added = await (await lab.api(lab.admin, '/Webhook?add', {
    method: 'POST', headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ url, eventTypes: ['DeviceAvailability'], secret: 'whsec-0123456789abcdef' }),
  })).json();
  expect(added).toMatchObject({ isSuccess: true });
});

afterAll(async () => {
  receiver.close();
  receiver.closeAllConnections();
  await lab?.stop();
});

const device = async (): Promise<WireDevice> =>
  ((await (await lab.api(lab.admin, `/Device?anyId=${lab.devices[0].serial}`)).json()) as WireDevice[])[0];

async function availabilityEvents(id: string): Promise<WireEvent[]> {
  const history = await (await lab.api(lab.admin, `/Report/History?deviceId=${id}&take=200`)).json() as { events: WireEvent[] };
  return history.events.filter((e) => e.eventType === 'DeviceAvailability');
}

/** Runs `act`, waits until the device is `availability`, and returns the availability events it added. */
async function flip(id: string, availability: string, act: () => Promise<unknown>): Promise<WireEvent[]> {
  const before = new Set((await availabilityEvents(id)).map((e) => e.id));
  await act();
  await waitFor(async () => (await device()).availability === availability, 30_000, `the device ${availability}`);
  await waitFor(async () => (await availabilityEvents(id)).some((e) => !before.has(e.id) && e.message === `Device ${availability}`),
    10_000, `the Device ${availability} event`);
  return (await availabilityEvents(id)).filter((e) => !before.has(e.id));
}

/** Switches the port; a switch that takes the data line away shows the device Offline as soon as it answers. */
const port = (id: string, state: string) => async () => {
  const answer = await (await lab.api(operator, `/Device/UsbPort?update&id=${id}&usbHubPortState=${state}`, { method: 'POST' })).json();
  expect(answer).toEqual({ isSuccess: true });
  if (state !== 'Data') expect((await device()).availability).toBe('Offline');
};

test('port Off, Charge and Data, a reboot and an unplug: each flip says who and why', async () => {
  const { id } = await device();
  const who = 'olga@lab.test';

  expect(await flip(id, 'Offline', port(id, 'Off'))).toEqual([expect.objectContaining({
    message: 'Device Offline', performedByName: who, stringValue: `USB port switched Off by ${who}`,
  })]);
  expect((await device()).readinessReason).toBe(`USB port switched Off by ${who}`);
  // The webhook carries the same Event.
  await waitFor(async () => delivered.some((e) => e.stringValue === `USB port switched Off by ${who}` && e.performedByName === who),
    10_000, 'the webhook delivery naming who switched the port Off');

  expect(await flip(id, 'Online', port(id, 'Data'))).toEqual([expect.objectContaining({
    message: 'Device Online', performedByName: who, stringValue: `USB port switched to Data by ${who}`,
  })]);

  expect(await flip(id, 'Offline', port(id, 'Charge'))).toEqual([expect.objectContaining({
    message: 'Device Offline', performedByName: who, stringValue: `USB port switched to Charge (no data) by ${who}`,
  })]);
  expect((await device()).readinessReason).toBe(`USB port switched to Charge (no data) by ${who}`);
  await flip(id, 'Online', port(id, 'Data'));

  const rebooted = await flip(id, 'Online', async () => {
    expect(await (await lab.api(operator, `/Device?action=reboot&id=${id}`, { method: 'POST' })).json()).toEqual({ isSuccess: true });
    await waitFor(async () => (await device()).availability === 'Offline', 10_000, 'the device rebooting');
  });
  expect(rebooted).toEqual([
    expect.objectContaining({ message: 'Device Online', performedByName: who, stringValue: `Rebooted by ${who}` }),
    expect.objectContaining({ message: 'Device Offline', performedByName: who, stringValue: 'Rebooting' }),
  ]);

  // Nobody's doing: an unplug is anonymous, and the reason says what the gateway saw.
  const unplugged = await flip(id, 'Offline', () => lab.world.unplug(lab.devices[0].serial));
  expect(unplugged).toEqual([expect.objectContaining({ message: 'Device Offline', stringValue: 'Offline' })]);
  expect(unplugged[0].performedByName).toBeUndefined();
  expect((await device()).readinessReason).toBe('Unplugged, or its USB connection was lost: the gateway no longer sees it');
});
