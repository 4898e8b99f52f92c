/**
 * USB hubs through the API on a running lab: hub, gateway, two simulated Android devices on a simulated
 * 8-port Cambrionix hub that the gateway drives through a real pseudo-terminal. Port switches reach the
 * simulated hardware, which unplugs or plugs the device behind the port exactly as a real hub would.
 */
import pino from 'pino';
import { startTestLab, waitFor, type TestLab } from '../support/lab';

let lab: TestLab;
const admin = () => lab.admin;
const errors: unknown[] = [];
const logger = pino({ level: 'error', hooks: { logMethod(args, method) { errors.push(args[0]); method.apply(this, args); } } },
  { write: () => undefined });

beforeAll(async () => {
  lab = await startTestLab({ androidCount: 2, logger, usbHub: { usbHubs: { telemetryIntervalMs: 500 } } });
  await waitFor(async () => (await gatewaysNow())[0]?.usbHubList?.[0]?.isErrored === false, 10_000, 'the hub in GET /Gateway');
}, 90_000);
afterAll(() => lab?.stop(), 60_000);
afterEach(() => expect(errors).toEqual([]));

interface Json { [key: string]: any }

async function call(pathAndQuery: string, method = 'GET', credentials = admin()): Promise<Json> {
  const res = await lab.api(credentials, pathAndQuery, { method });
  expect(res.status).toBe(200);
  return res.json() as Promise<Json>;
}
const gatewaysNow = async () => (await call('/Gateway')) as Json[];
const devicesNow = async () => (await call('/Device')) as Json[];
const deviceBySerial = async (serial: string) => (await devicesNow()).find((d) => d.serialNumber === serial) as Json;
const availability = async (serial: string) => (await deviceBySerial(serial))?.availability;

describe('GET /Gateway', () => {
  it('lists the gateway with its hub, every port, and the devices on their ports', async () => {
    const [gateway] = await gatewaysNow();
    expect(Object.keys(gateway)).toEqual(['name', 'publicAddress', 'publicPort', 'usbHubList',
      'isConnected', 'lastSeenAt', 'version', 'hubReplica']); // the last four: fleet extension
    expect(gateway).toMatchObject({ name: 'lab-gateway', publicAddress: '127.0.0.1', publicPort: 9000 });
    const [hub] = gateway.usbHubList;
    expect(Object.keys(hub).pop()).toBe('devices');
    expect(hub).toMatchObject({
      serialNumber: 'LABHUB01', model: 'PP8S', firmware: '1.68', firmwareDate: 'Feb 14 2017 17:30:26',
      description: 'cambrionix PP8S 8 Port USB Charge+Sync', isErrored: false, location: lab.usbHub?.path,
    });
    expect(hub.fiveVoltNow).toBeGreaterThan(4.5);
    expect(hub.fiveVoltMin).toBeLessThanOrEqual(hub.fiveVoltNow);
    expect(hub.fiveVoltMax).toBeGreaterThanOrEqual(hub.fiveVoltNow);
    expect(typeof hub.uptime).toBe('number');
    expect(hub.devices).toHaveLength(8);
    const first = await deviceBySerial(lab.devices[0].serial);
    expect(hub.devices[0]).toEqual({
      name: first.name, location: '', serialNumber: first.serialNumber, usbHubSerialNumber: 'LABHUB01', usbHubPortNumber: 1,
      milliamps: 430, state: 'Data', flags: 'Attached, Sync', chargingTime: 0, chargingProfile: '0',
    });
    expect(hub.devices[5]).toMatchObject({ name: '', serialNumber: '', usbHubPortNumber: 6, milliamps: 0, flags: 'Detached, Sync' });
  });

  it("writes a data port's state as Sync when the dataPortState setting says so (the C# client's enum)", async () => {
    const settings = async (body: string) => (await lab.api(admin(), '/Settings?update', {
      method: 'POST', body, headers: { 'content-type': 'application/json' } })).json();
    const portStates = async () => (await gatewaysNow())[0].usbHubList[0].devices.slice(0, 3).map((d: Json) => d.state);
    expect(await call('/Settings')).toMatchObject({ isSuccess: true, data: { dataPortState: 'Data' } });
    expect(await settings('{"dataPortState":"sync"}')).toEqual({ isSuccess: true });
    try {
      expect(await call('/Settings')).toMatchObject({ data: { dataPortState: 'Sync' } });
      // Ports 1-2 carry devices in Data mode; port 3 is empty and in Data mode too. Flags keep their own names.
      expect(await portStates()).toEqual(['Sync', 'Sync', 'Sync']);
      expect((await gatewaysNow())[0].usbHubList[0].devices[0].flags).toBe('Attached, Sync');
      expect(await settings('{"dataPortState":"Charge"}'))
        .toEqual({ isSuccess: false, errorMessage: "Setting 'dataPortState' needs a value of Data or Sync." });
    } finally {
      expect(await settings('{"dataPortState":"Data"}')).toEqual({ isSuccess: true });
    }
    expect(await portStates()).toEqual(['Data', 'Data', 'Data']);
  });

  it('puts the hub and port on each device record', async () => {
    for (const [i, spec] of lab.devices.entries()) {
      expect(await deviceBySerial(spec.serial)).toMatchObject({ usbHubSerialNumber: 'LABHUB01', usbHubPortNumber: i + 1 });
    }
  });

  it('needs View gateways; the POSTs need Manage USB hubs, checked before anything else', async () => {
    await lab.hub.db.insertInto('roles').values({ name: 'Viewer', entitlements: ['DeviceList', 'SystemViewGateways'] }).execute();
    const viewer = await lab.addUser('viewer@example.com', ['Viewer']);
    await lab.hub.db.insertInto('roles').values({ name: 'ListOnly', entitlements: ['DeviceList'] }).execute();
    const lister = await lab.addUser('lister@example.com', ['ListOnly']);
    expect(await call('/Gateway', 'GET', viewer)).toHaveLength(1);
    const missing = { isSuccess: false, errorMessage: 'User does not have required entitlement: SystemManageUsbHubs', errorCode: 'ENTITLEMENT_REQUIRED' };
    expect(await call('/Device/UsbPort?update&id=no-such-device&usbHubPortState=Off', 'POST', viewer)).toEqual(missing);
    expect(await call('/Gateway/UsbHub?update&id=LABHUB01&usbHubPort=1&usbHubPortState=Off', 'POST', viewer)).toEqual(missing);
    expect(await call('/Gateway/UsbHub?action=reboot&id=LABHUB01', 'POST', viewer)).toEqual(missing);
    expect(await call('/Gateway', 'GET', lister))
      .toEqual({ isSuccess: false, errorMessage: 'User does not have required entitlement: SystemViewGateways', errorCode: 'ENTITLEMENT_REQUIRED' });
    expect(lab.usbHub?.model.mode(1)).toBe('s');
  });

  it('answers bad input with a clear failure and changes nothing', async () => {
    const log = lab.usbHub?.commandLog ?? [];
    const before = log.filter((line) => line.startsWith('mode')).length;
    const id = (await deviceBySerial(lab.devices[0].serial)).id;
    expect(await call(`/Device/UsbPort?update&id=${id}&usbHubPortState=Sideways`, 'POST'))
      .toEqual({ isSuccess: false, errorMessage: 'Unknown value. Expected values are: Off, Data, Sync, Charge.' });
    expect(await call(`/Device/UsbPort?update&id=${id}`, 'POST'))
      .toEqual({ isSuccess: false, errorMessage: "Parameter 'usbHubPortState' is required." });
    expect(await call('/Device/UsbPort?update&id=no-such-device&usbHubPortState=Off', 'POST'))
      .toEqual({ isSuccess: false, errorMessage: "Device 'no-such-device' not found.", errorCode: 'DEVICE_NOT_FOUND' });
    expect(await call('/Gateway/UsbHub?update&id=NOHUB&usbHubPort=1&usbHubPortState=Off', 'POST'))
      .toEqual({ isSuccess: false, errorMessage: "USB hub 'NOHUB' not found." });
    expect(await call('/Gateway/UsbHub?update&id=LABHUB01&usbHubPort=12&usbHubPortState=Off', 'POST'))
      .toEqual({ isSuccess: false, errorMessage: "Switching the USB port on USB hub 'LABHUB01' failed: Hub LABHUB01 has no port 12 (ports 1..8)", errorCode: 'USB_HUB_ERROR' });
    expect(await call('/Gateway/UsbHub?update&id=LABHUB01&usbHubPort=x&usbHubPortState=Off', 'POST'))
      .toMatchObject({ isSuccess: false });
    expect(await call('/Gateway/UsbHub?action=explode&id=LABHUB01', 'POST'))
      .toEqual({ isSuccess: false, errorMessage: "Unknown action 'explode'." });
    expect(log.filter((line) => line.startsWith('mode')).length).toBe(before);
    expect(await availability(lab.devices[0].serial)).toBe('Online');
  });
});

describe('telemetry', () => {
  it('stores usb_hub rows per device port that /Device/Metrics serves', async () => {
    const device = await deviceBySerial(lab.devices[0].serial);
    const query = `/Device/Metrics?id=${device.id}&table=usb_hub&limit=5&orderBy=time+desc`;
    const { value } = await waitFor(async () => {
      const res = await lab.api(admin(), query);
      const body = (await res.json()) as Json;
      const series = body.results?.[0]?.series?.[0];
      return series?.values?.length > 0 ? series : undefined;
    }, 15_000, 'usb_hub rows at the hub');
    const row = Object.fromEntries((value.columns as string[]).map((column, i) => [column, value.values[0][i]]));
    expect(row).toMatchObject({ usb_state: 'Sync', amperage: 0.43, charging_profile: '0', charging_seconds: 0 });
    expect(row.voltage).toBeGreaterThan(4.5);
    expect(row.wattage).toBeCloseTo(row.voltage * 0.43, 2);
  }, 30_000);
});

describe('switching ports', () => {
  it('Off takes the device Offline within 5 s; Data (sent as `sync`) brings it back Online with the same Guid', async () => {
    const before = await deviceBySerial(lab.devices[0].serial);
    expect(await call(`/Device/UsbPort?update&id=${before.id}&usbHubPortState=Off`, 'POST')).toEqual({ isSuccess: true });
    const off = await waitFor(async () => (await availability(lab.devices[0].serial)) === 'Offline', 5_000, 'Offline');
    expect(off.elapsedMs).toBeLessThan(5_000);
    expect(lab.usbHub?.model.mode(1)).toBe('o');
    expect(await availability(lab.devices[1].serial)).toBe('Online');
    const port = (await gatewaysNow())[0].usbHubList[0].devices[0];
    // Off USB the gateway no longer sees the device; the port still names it as the hub's records do.
    expect(port).toMatchObject({ state: 'Off', flags: 'Detached, Off', milliamps: 0, name: before.name, serialNumber: before.serialNumber });

    expect(await call(`/Device/UsbPort?update&id=${before.serialNumber}&usbHubPortState=sync`, 'POST')).toEqual({ isSuccess: true });
    await waitFor(async () => (await availability(lab.devices[0].serial)) === 'Online', 15_000, 'Online again');
    expect((await deviceBySerial(lab.devices[0].serial)).id).toBe(before.id);
  }, 30_000);

  it('Charge through /Gateway/UsbHub takes the device off USB while the hub shows it charging', async () => {
    expect(await call('/Gateway/UsbHub?update&id=LABHUB01&usbHubPort=2&usbHubPortState=charge', 'POST')).toEqual({ isSuccess: true });
    await waitFor(async () => (await availability(lab.devices[1].serial)) === 'Offline', 5_000, 'Offline while charging');
    await waitFor(async () => (await gatewaysNow())[0].usbHubList[0].devices[1].state === 'Charge', 5_000, 'Charge in /Gateway');
    const port = (await gatewaysNow())[0].usbHubList[0].devices[1];
    expect(port.flags).toMatch(/^Attached, Charge(Charging|Finished)$/);
    expect(port.milliamps).toBeGreaterThan(0);
    expect(lab.world.device(lab.devices[1].serial).battery.get().usbPowered).toBe(true);
    expect(await call('/Gateway/UsbHub?update&id=LABHUB01&usbHubPort=2&usbHubPortState=Data', 'POST')).toEqual({ isSuccess: true });
    await waitFor(async () => (await availability(lab.devices[1].serial)) === 'Online', 15_000, 'Online after Charge');
  }, 30_000);

  it('id=* switches every port: all Offline, then all Online with their Guids', async () => {
    const ids = (await devicesNow()).map((d) => d.id).sort();
    expect(await call('/Device/UsbPort?update&id=*&usbHubPortState=Off', 'POST')).toEqual({ isSuccess: true });
    await waitFor(async () => (await devicesNow()).every((d) => d.availability === 'Offline'), 5_000, 'all Offline');
    expect(await call('/Device/UsbPort', 'POST')).toMatchObject({ isSuccess: false });
    const body = new URLSearchParams({ update: '', id: '*', usbHubPortState: 'Data' });
    const res = await lab.api(admin(), '/Device/UsbPort', {
      method: 'POST', body: body.toString(), headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    expect(await res.json()).toEqual({ isSuccess: true });
    await waitFor(async () => (await devicesNow()).every((d) => d.availability === 'Online'), 15_000, 'all Online');
    expect((await devicesNow()).map((d) => d.id).sort()).toEqual(ids);
  }, 40_000);

  it('a hub reboot reconnects by itself and keeps the port modes the gateway set', async () => {
    expect(await call('/Gateway/UsbHub?update&id=LABHUB01&usbHubPort=2&usbHubPortState=Off', 'POST')).toEqual({ isSuccess: true });
    await waitFor(async () => (await availability(lab.devices[1].serial)) === 'Offline', 5_000, 'port 2 Offline');
    expect(await call('/Gateway/UsbHub?action=Reboot&id=LABHUB01', 'POST')).toEqual({ isSuccess: true });
    await waitFor(async () => (await gatewaysNow())[0].usbHubList[0].isErrored === true, 5_000, 'the hub away while rebooting');
    const back = await waitFor(async () => {
      const hub = (await gatewaysNow())[0].usbHubList[0];
      return hub.isErrored === false && hub.devices[1].state === 'Off' ? hub : undefined;
    }, 15_000, 'the hub back with port 2 still Off');
    expect(back.value.uptime).toBeLessThan(15);
    expect(back.value.devices.some((d: Json) => /Rebooted/.test(d.flags))).toBe(false);
    expect(await availability(lab.devices[0].serial)).toBe('Online');
    expect(await call('/Gateway/UsbHub?update&id=LABHUB01&usbHubPort=2&usbHubPortState=Data', 'POST')).toEqual({ isSuccess: true });
    await waitFor(async () => (await availability(lab.devices[1].serial)) === 'Online', 15_000, 'port 2 Online again');
  }, 40_000);
});
