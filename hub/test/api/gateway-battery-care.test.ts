/**
 * Battery care on a running lab: the simulated device's battery is driven down and up, and the gateway's
 * policy switches its hub port between Data and Charge at the thresholds, each switch an Event the hub
 * serves in /Report/History.
 */
import { startTestLab, waitFor, type TestLab } from '../support/lab';

let lab: TestLab;
let deviceId: string;
const admin = () => lab.admin;

beforeAll(async () => {
  lab = await startTestLab({
    androidCount: 1,
    usbHub: {
      usbHubs: {
        batteryCare: { lowPercent: 20, highPercent: 80, maxTemperatureC: 40, checkIntervalMs: 250, chargeCheckMs: 1500 },
      },
    },
  });
  const devices = (await (await lab.api(admin(), '/Device')).json()) as Array<{ id: string }>;
  deviceId = devices[0].id;
}, 90_000);
afterAll(() => lab?.stop(), 60_000);

const serial = () => lab.devices[0].serial;
const battery = (level: number) => lab.world.setBattery(serial(), { level });
const portMode = () => lab.usbHub?.model.mode(1);
async function careEvents(): Promise<string[]> {
  const res = await lab.api(admin(), `/Report/History?deviceId=${deviceId}&take=100`);
  const history = (await res.json()) as { events: Array<{ eventType: string; message: string; eventDate: string }> };
  // History is newest first.
  return history.events
    .filter((e) => e.eventType === 'Note' && e.message.startsWith('Battery care'))
    .map((e) => e.message)
    .reverse();
}

it('charges at the low threshold, reads the battery while charging, and stops at the high threshold', async () => {
  await battery(50);
  await new Promise((resolve) => setTimeout(resolve, 1_000));
  expect(portMode()).toBe('s');
  expect(await careEvents()).toEqual([]);

  // Discharged to the low threshold: the port goes to Charge, which takes the device off USB.
  await battery(20);
  await waitFor(async () => portMode() === 'c', 5_000, 'the port on Charge');
  await waitFor(async () => (await careEvents()).length === 1, 5_000, 'the Charge event');
  expect((await careEvents())[0]).toBe('Battery care: port 1 of hub LABHUB01 switched to Charge: battery at 20% (low threshold 20%)');
  expect(lab.world.device(serial()).battery.get().usbPowered).toBe(true);

  // Charging, not there yet: after the charge period the port goes to Data to read it, then back to Charge.
  await battery(60);
  await waitFor(async () => (await careEvents()).length >= 3, 15_000, 'a read and a return to Charge');
  expect((await careEvents()).slice(1, 3)).toEqual([
    'Battery care: port 1 of hub LABHUB01 switched to Data to read the battery after charging',
    'Battery care: port 1 of hub LABHUB01 switched back to Charge: battery at 60% (high threshold 80%)',
  ]);
  expect(portMode()).toBe('c');

  // Charged past the high threshold: the next read leaves the port on Data and the device comes back Online.
  await battery(85);
  await waitFor(async () => (await careEvents()).length >= 5, 15_000, 'charging done');
  expect((await careEvents()).slice(3)).toEqual([
    'Battery care: port 1 of hub LABHUB01 switched to Data to read the battery after charging',
    'Battery care: charging done on port 1 of hub LABHUB01: battery at 85% (high threshold 80%), port stays on Data',
  ]);
  expect(portMode()).toBe('s');
  await waitFor(async () => {
    const [device] = (await (await lab.api(admin(), `/Device?id=${deviceId}`)).json()) as Array<{ availability: string }>;
    return device.availability === 'Online';
  }, 15_000, 'the device Online again');
  await new Promise((resolve) => setTimeout(resolve, 2_000));
  expect(portMode()).toBe('s');
  expect(await careEvents()).toHaveLength(5);
}, 60_000);
