/**
 * GET /Gateway with two gateways, each driving its own simulated Cambrionix hub through a pseudo-terminal:
 * both gateways and both hubs appear in one answer, and a port command reaches the gateway that owns the hub.
 */
import path from 'node:path';
import { startGateway, type RunningGateway } from '@devicelab/gateway';
import { LabWorld, SimCambrionixHub } from '@devicelab/labsim';
import { startTestLab, waitFor, type TestLab } from '../support/lab';

let lab: TestLab;
let secondWorld: LabWorld;
let secondHub: SimCambrionixHub;
let secondGateway: RunningGateway;

beforeAll(async () => {
  lab = await startTestLab({ androidCount: 1, usbHub: { serial: 'RACK1HUB' } });
  // The second gateway has no devices of its own, only a 4-port hub on its own adb server.
  secondWorld = new LabWorld({ stateDir: path.join(lab.dataDir, 'labsim-2') });
  await secondWorld.start();
  secondHub = new SimCambrionixHub({ serial: 'RACK2HUB', ports: 4, model: 'PP4S', path: path.join(lab.dataDir, 'ttyRACK2') });
  await secondHub.start();
  secondGateway = await startGateway({
    name: 'rack-2', token: await lab.hub.registerGateway('rack-2'), hubAddress: `127.0.0.1:${lab.hub.linkPort}`,
    cacheDir: path.join(lab.dataDir, 'cache-2'), adbPort: secondWorld.adbServerPort, publicAddress: '10.0.0.2', publicPort: 9002,
    backoff: { initialMs: 100, maxMs: 1000 },
    usbHubs: {
      cambrionix: [{ path: secondHub.path }], uhubctl: [], portMap: [], pollIntervalMs: 500, telemetryIntervalMs: 0,
      batteryCare: false, recovery: false,
    },
  });
}, 90_000);

afterAll(async () => {
  await secondGateway?.stop();
  await secondHub?.stop();
  await secondWorld?.stop();
  await lab?.stop();
}, 60_000);

const gateways = async () => (await (await lab.api(lab.admin, '/Gateway')).json()) as any[];

it('lists both gateways with their hubs in one answer', async () => {
  const { value } = await waitFor(async () => {
    const list = await gateways();
    return list.length === 2 && list.every((g) => g.usbHubList[0]?.isErrored === false) ? list : undefined;
  }, 15_000, 'two gateways with connected hubs');
  expect(value.map((g) => g.name)).toEqual(['lab-gateway', 'rack-2']);
  expect(value[0].usbHubList.map((h: { serialNumber: string }) => h.serialNumber)).toEqual(['RACK1HUB']);
  expect(value[0].usbHubList[0].devices).toHaveLength(8);
  expect(value[1]).toMatchObject({ publicAddress: '10.0.0.2', publicPort: 9002 });
  expect(value[1].usbHubList[0]).toMatchObject({ serialNumber: 'RACK2HUB', model: 'PP4S' });
  expect(value[1].usbHubList[0].devices).toHaveLength(4);
  expect(value[1].usbHubList[0].devices.every((d: { name: string; flags: string }) => d.name === '' && d.flags === 'Detached, Sync')).toBe(true);
});

it('sends a port command to the gateway that owns the hub', async () => {
  const res = await lab.api(lab.admin, '/Gateway/UsbHub?update&id=RACK2HUB&usbHubPort=3&usbHubPortState=Off', { method: 'POST' });
  expect(await res.json()).toEqual({ isSuccess: true });
  expect(secondHub.model.mode(3)).toBe('o');
  expect(lab.usbHub?.model.mode(3)).toBe('s');
  await waitFor(async () => (await gateways())[1].usbHubList[0].devices[2].state === 'Off', 5_000, 'port 3 Off in GET /Gateway');
});
