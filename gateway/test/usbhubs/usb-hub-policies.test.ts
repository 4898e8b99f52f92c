/**
 * The gateway's USB hub side on a simulated lab: a device behind the real adb server, on port 1 of a
 * simulated Cambrionix hub reached through a pseudo-terminal. Checks the port mapping on device states, the
 * usb_hub telemetry rows handed to the metrics sink, and power-cycle recovery of a device stuck unauthorized.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { UsbHubEvent, UsbHubsReport } from '@devicelab/proto';
import { LabWorld, specFromPreset, type SimCambrionixHub } from '@devicelab/labsim';
import { createLogger } from '@devicelab/shared';
import { AndroidDriver } from '../../src/drivers/android/android-driver';
import type { SampledRow } from '../../src/samplers/metrics-sink';
import { BatteryCare } from '../../src/usbhubs/battery-care';
import { parseBatteryTemperature } from '../../src/drivers/android/parsers/battery';
import { withUsbPorts } from '../../src/usbhubs/port-mapped-driver';
import { parsePortMap, PortMap } from '../../src/usbhubs/port-mapping';
import { UsbHubService } from '../../src/usbhubs/usb-hub-service';
import { usbLocationOf } from '../../src/drivers/android/usb-location';
import { createUsbHubs, type UsbHubs } from '../../src/usbhubs/usb-hubs';
import { scanSerialById, usbHubsConfigFromEnv } from '../../src/usbhubs/usb-hubs-config';
import { optionsFromEnv } from '../../src/main';
import { Recorder } from '../support/recorder';

const logger = createLogger('test', 'silent');
let dir: string;
let world: LabWorld;
let sim: SimCambrionixHub;
let hubs: UsbHubs;
let driver: AndroidDriver;
let recorder: Recorder;
const rows: SampledRow[] = [];
const events: UsbHubEvent[] = [];
const reports: UsbHubsReport[] = [];
const spec = specFromPreset('pixel-7', 0);

async function until<T>(probe: () => T | undefined | false | Promise<T | undefined | false>, timeoutMs: number, what: string): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

beforeAll(async () => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'usb-policies-'));
  world = new LabWorld({ stateDir: path.join(dir, 'labsim'), timings: { rebootMs: 500, bootCompleteMs: 300 } });
  await world.start();
  await world.addAndroidDevice(spec);
  sim = await world.addCambrionixHub({ serial: 'POLICYHUB', ports: 4, path: path.join(dir, 'ttyHUB') }, { 1: spec.serial });
  hubs = createUsbHubs({
    cambrionix: [{ path: sim.path }], uhubctl: [], portMap: [{ hubSerialNumber: 'POLICYHUB', port: 1, device: spec.serial }],
    pollIntervalMs: 200, telemetryIntervalMs: 200, batteryCare: false,
    recovery: { afterMs: 600, maxBackoffMs: 60_000, offMs: 300, checkIntervalMs: 200 },
  }, { logger, battery: { read: (id) => driver.readBattery(id) }, metrics: { record: (row) => rows.push(row) } });
  hubs.service.subscribe({ report: (report) => reports.push(report), event: (event) => {
    events.push(event);
    return true;
  } });
  driver = new AndroidDriver({ adbPort: world.adbServerPort, logger });
  recorder = new Recorder();
  await hubs.start();
  await withUsbPorts(driver, hubs.service, { lookup: (id) => driver.usbLocation(id) }).start(recorder);
}, 60_000);

afterAll(async () => {
  await hubs?.stop();
  await driver?.stop();
  await world?.stop();
  rmSync(dir, { recursive: true, force: true });
}, 60_000);

const adbSerial = () => world.device(spec.serial).adbSerial;

it('puts the hub and port on the device state and names the device on its port', async () => {
  const state = await until(() => recorder.latest(adbSerial())?.readiness === 'Ready' && recorder.latest(adbSerial()), 20_000, 'Ready');
  expect(state).toMatchObject({ usbHubSerialNumber: 'POLICYHUB', usbHubPortNumber: 1 });
  // Reports from before the device was Ready may show recovery's power-cycle (this test's recovery starts after
  // 0.6 s, which a loaded machine can take to bring the device up); the first report after it is the one to check.
  const readyAt = reports.length;
  const report = await until(() => reports.slice(readyAt).find((r) => r.hubs[0]?.ports[0]?.deviceSerialNumber === adbSerial()), 5_000, 'a report naming the device');
  expect(report.hubs[0]).toMatchObject({ serialNumber: 'POLICYHUB', kind: 'cambrionix', isErrored: false });
  expect(report.hubs[0].ports[0]).toMatchObject({ portNumber: 1, deviceSerialNumber: adbSerial(), name: 'Pixel 7', state: 'Data' });
  expect(report.hubs[0].ports[1]).toMatchObject({ portNumber: 2, deviceSerialNumber: '', name: '' });
});

it('hands usb_hub rows with the metrics field names to the sink', async () => {
  const row = await until(() => rows.find((r) => r.fields.battery_percentage !== undefined), 10_000, 'a telemetry row with the battery');
  const battery = world.device(spec.serial).battery.get();
  expect(row).toMatchObject({ vendorUniqueIdentifier: adbSerial(), table: 'usb_hub' });
  expect(row.fields).toEqual({
    voltage: expect.any(Number), amperage: 0.43, wattage: expect.any(Number), usb_state: 'Sync',
    charging_profile: '0', charging_seconds: 0, battery_percentage: battery.level, battery_status: 'Charging',
  });
  expect(row.fields.wattage).toBeCloseTo((row.fields.voltage as number) * 0.43, 2);
  // On Charge the device has no data link: the battery fields are absent, never zero.
  rows.length = 0;
  await hubs.service.setPortState({ hubSerialNumber: 'POLICYHUB', portNumber: 1, state: 'Charge' });
  const charging = await until(() => rows.find((r) => r.fields.usb_state === 'Charge'), 5_000, 'a Charge row');
  expect(charging.fields.battery_percentage).toBeUndefined();
  expect(charging.fields.amperage).toBeGreaterThan(0.43);
  await hubs.service.setPortState({ hubSerialNumber: 'POLICYHUB', portNumber: 1, state: 'sync' });
  await until(() => recorder.latest(adbSerial())?.readiness === 'Ready', 20_000, 'Ready again');
});

it('power-cycles a device stuck unauthorized while attached, with an Event each time and growing pauses', async () => {
  events.length = 0;
  sim.commandLog.length = 0;
  await world.setUnauthorized(spec.serial, true);
  const first = await until(() => events.find((e) => e.message.startsWith('Recovery')), 10_000, 'a recovery power-cycle');
  expect(first).toMatchObject({ vendorUniqueIdentifier: adbSerial(), eventType: 'Note', isSuccess: true });
  expect(first.message).toMatch(/^Recovery: port 1 of hub POLICYHUB power-cycled \(attempt 1\): device (Unauthorized|Absent|Offline) while attached$/);
  expect(sim.commandLog).toEqual(expect.arrayContaining(['mode o 1', 'mode s 1']));
  expect(sim.commandLog.indexOf('mode o 1')).toBeLessThan(sim.commandLog.indexOf('mode s 1'));
  const second = await until(() => events.filter((e) => e.message.startsWith('Recovery'))[1], 10_000, 'a second attempt');
  expect(second.message).toMatch(/attempt 2/);
  expect(second.atMs - first.atMs).toBeGreaterThanOrEqual(1_000); // afterMs doubled
  await world.setUnauthorized(spec.serial, false);
  await until(() => recorder.latest(adbSerial())?.readiness === 'Ready', 20_000, 'Ready after authorizing');
}, 40_000);

it('does not charge a battery at or above the temperature limit, and charges it below', async () => {
  events.length = 0;
  await world.setBattery(spec.serial, { level: 10 });
  const reader = { read: (id: string) => driver.readBattery(id) };
  const reading = await reader.read(adbSerial());
  expect(reading).toMatchObject({ percent: 10, temperatureC: 29.8 }); // the simulator reports 29.8 °C on USB power
  const options = { lowPercent: 20, highPercent: 80, checkIntervalMs: 60_000, chargeCheckMs: 60_000 };
  await new BatteryCare(hubs.service, reader, { ...options, maxTemperatureC: 29 }, logger).check();
  expect(sim.model.mode(1)).toBe('s');
  expect(events).toEqual([]);
  await new BatteryCare(hubs.service, reader, { ...options, maxTemperatureC: 40 }, logger).check();
  expect(sim.model.mode(1)).toBe('c');
  expect(events.map((e) => e.message)).toEqual(['Battery care: port 1 of hub POLICYHUB switched to Charge: battery at 10% (low threshold 20%)']);
  expect(events[0].detail).toBe('battery 10%, 29.8 °C');
  await hubs.service.setPortState({ hubSerialNumber: 'POLICYHUB', portNumber: 1, state: 'Data' });
  await world.setBattery(spec.serial, { level: 60 });
  await until(() => recorder.latest(adbSerial())?.readiness === 'Ready', 20_000, 'Ready again');
}, 40_000);

it('keeps events no listener could deliver (hub away), oldest first, until they are taken', () => {
  let hubReachable = false;
  const service = new UsbHubService([], new PortMap([], () => new Map()), logger);
  service.subscribe({ report: () => undefined, event: () => hubReachable });
  service.emitEvent('A', 'first');
  service.emitEvent('B', 'second');
  hubReachable = true;
  service.emitEvent('C', 'delivered');
  expect(service.takePendingEvents().map((e) => [e.vendorUniqueIdentifier, e.message])).toEqual([['A', 'first'], ['B', 'second']]);
  expect(service.takePendingEvents()).toEqual([]);
});

describe('configuration', () => {
  it('reads hubs, port map and policies from the environment', () => {
    const config = usbHubsConfigFromEnv({
      DEVICELAB_CAMBRIONIX: '/dev/ttyUSB0@1-1.4, /dev/ttyUSB1', DEVICELAB_UHUBCTL_HUBS: '2-1',
      DEVICELAB_USB_PORT_MAP: 'HUB1:3=R58M123,HUB1:4=emulator-5554', DEVICELAB_USB_TELEMETRY_SECONDS: '30',
      DEVICELAB_BATTERY_CARE: '1', DEVICELAB_BATTERY_LOW: '30', DEVICELAB_BATTERY_HIGH: '70', DEVICELAB_USB_RECOVERY: '1',
    });
    expect(config).toMatchObject({
      cambrionix: [{ path: '/dev/ttyUSB0', usbLocation: '1-1.4' }, { path: '/dev/ttyUSB1' }], uhubctl: ['2-1'],
      portMap: [{ hubSerialNumber: 'HUB1', port: 3, device: 'R58M123' }, { hubSerialNumber: 'HUB1', port: 4, device: 'emulator-5554' }],
      telemetryIntervalMs: 30_000, batteryCare: { lowPercent: 30, highPercent: 70, maxTemperatureC: 40 }, recovery: { afterMs: 120_000 },
    });
    expect(usbHubsConfigFromEnv({})).toMatchObject({ cambrionix: [], batteryCare: false, recovery: false });
    expect(() => parsePortMap('HUB1:0=x')).toThrow(/Bad USB port map entry 'HUB1:0=x'/);
    expect(() => usbHubsConfigFromEnv({ DEVICELAB_BATTERY_LOW: '90', DEVICELAB_BATTERY_HIGH: '80' })).toThrow(/below/);
    expect(() => usbHubsConfigFromEnv({ DEVICELAB_USB_POLL_MS: 'soon' })).toThrow(/DEVICELAB_USB_POLL_MS/);
  });

  it('gives the gateway daemon USB hubs only when some are configured', () => {
    const base = { DEVICELAB_GATEWAY_NAME: 'a', DEVICELAB_GATEWAY_TOKEN: 't', DEVICELAB_HUB: 'h:1' };
    expect(optionsFromEnv(base).usbHubs).toBeUndefined();
    expect(optionsFromEnv({ ...base, DEVICELAB_UHUBCTL_HUBS: '1-1' }).usbHubs).toMatchObject({ uhubctl: ['1-1'] });
  });

  it('finds Cambrionix hubs among /dev/serial/by-id style names', () => {
    const byId = path.join(dir, 'by-id');
    require('node:fs').mkdirSync(byId);
    for (const name of ['usb-cambrionix_PP8S_8_Port_USB_Charge_Sync_000000-if00-port0', 'usb-FTDI_FT232R_USB_UART_A1-if00-port0']) {
      require('node:fs').writeFileSync(path.join(byId, name), '');
    }
    expect(scanSerialById(byId)).toEqual([path.join(byId, 'usb-cambrionix_PP8S_8_Port_USB_Charge_Sync_000000-if00-port0')]);
    expect(scanSerialById(path.join(dir, 'none'))).toEqual([]);
  });

  it('maps a device by its USB location below the hub, and the configuration wins', () => {
    const map = new PortMap([{ hubSerialNumber: 'HUB1', port: 8, device: 'PINNED' }], () => new Map([['HUB1', '1-1.4']]));
    expect(map.portOf({ vendorUniqueIdentifier: 'A', usbLocation: 'usb:1-1.4.3' })).toEqual({ hubSerialNumber: 'HUB1', port: 3 });
    expect(map.deviceOn('HUB1', 3)).toBe('A');
    expect(map.portOf({ vendorUniqueIdentifier: 'B', usbLocation: '1-1.4.3.2' })).toBeUndefined();
    expect(map.portOf({ vendorUniqueIdentifier: 'C', usbLocation: '1-1.5.3' })).toBeUndefined();
    expect(map.portOf({ vendorUniqueIdentifier: 'x', serialNumber: 'PINNED', usbLocation: '1-1.4.3' })).toEqual({ hubSerialNumber: 'HUB1', port: 8 });
  });

  it('takes the USB location from `adb devices -l`, wherever adbkit put the usb: field', async () => {
    // `28121FDH2000QM  device usb:1-1.4.2 product:panther model:Pixel_7 device:panther transport_id:3`
    expect(usbLocationOf({ id: '28121FDH2000QM', type: 'device', path: 'usb:1-1.4.2', product: 'product:panther' })).toBe('1-1.4.2');
    expect(usbLocationOf({ id: 'x', type: 'device', path: 'product:panther', model: 'usb:2-1' })).toBe('2-1');
    expect(usbLocationOf({ id: '127.0.0.1:5555', type: 'device', path: 'product:sdk', model: 'model:x' })).toBeUndefined();
    // A simulated device is a network device to the real adb server: no USB path.
    await expect(driver.usbLocation(adbSerial())).resolves.toBeUndefined();
    await expect(driver.usbLocation('not-there')).resolves.toBeUndefined();
  });

  it('reads the battery temperature in tenths of a degree', () => {
    expect(parseBatteryTemperature('  level: 50\n  temperature: 298\n')).toBe(29.8);
    expect(parseBatteryTemperature('  level: 50\n')).toBeUndefined();
  });
});
