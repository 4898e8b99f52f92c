/**
 * Fleet visibility: GET /Gateway lists every registered gateway, connected or not, with when it was last seen,
 * its version and the hub replica it landed on; a gateway that went away keeps its last known USB hubs, errored.
 * GET /Service lists the hub replicas. A whole lab, as an operator would look at it.
 */
import { startTestLab, waitFor, type TestLab } from '../support/lab';

let lab: TestLab;
beforeAll(async () => {
  lab = await startTestLab({ androidCount: 2, usbHub: {} });
}, 90_000);
afterAll(() => lab?.stop(), 60_000);

interface WireGateway {
  name: string; isConnected: boolean; lastSeenAt?: string; version?: string; hubReplica?: string;
  usbHubList: { serialNumber: string; isErrored: boolean; devices: unknown[] }[];
}
const gateways = async (): Promise<WireGateway[]> => (await lab.api(lab.admin, '/Gateway')).json() as Promise<WireGateway[]>;

it('lists connected and registered-but-never-connected gateways; /Service names the replica', async () => {
  await lab.hub.registerGateway('spare-gateway');
  const service = await (await lab.api(lab.admin, '/Service')).json() as { hubReplicas: { id: string; startedAt: string; version: string }[] };
  expect(service.hubReplicas).toHaveLength(1);
  expect(service.hubReplicas[0].startedAt).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
  const list = await gateways();
  expect(list.map((g) => [g.name, g.isConnected])).toEqual([['lab-gateway', true], ['spare-gateway', false]]);
  const [lab1, spare] = list;
  expect(lab1.hubReplica).toBe(service.hubReplicas[0].id);
  expect(lab1.version).toBeTruthy();
  expect(lab1.lastSeenAt).toMatch(/Z$/);
  expect(lab1.usbHubList.map((h) => [h.serialNumber, h.isErrored])).toEqual([['LABHUB01', false]]);
  expect(spare.usbHubList).toEqual([]);
  expect(spare.lastSeenAt).toBeUndefined();
});

it('a disconnected gateway keeps its last known hubs, errored, until it is back', async () => {
  await lab.stopGateway();
  const { value: away } = await waitFor(async () => (await gateways()).find((g) => g.name === 'lab-gateway' && !g.isConnected
    && g.usbHubList.length > 0), 10_000, 'lab-gateway listed as disconnected, with its hub');
  expect(away.usbHubList.map((h) => [h.serialNumber, h.isErrored, h.devices.length])).toEqual([['LABHUB01', true, 8]]);
  expect(away.version).toBeTruthy();

  await lab.restartGateway();
  const { value: back } = await waitFor(async () => (await gateways()).find((g) => g.name === 'lab-gateway' && g.isConnected
    && g.usbHubList.length === 1 && !g.usbHubList[0].isErrored), 20_000, 'lab-gateway back with its hub');
  expect(back.usbHubList[0].serialNumber).toBe('LABHUB01');
});
