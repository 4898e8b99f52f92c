/**
 * iOS metrics and USB location against the labsim usbmuxd and lockdownd: `sample` reads the battery and disk
 * domains and the battery's IORegistry entry (no developer services, so no memory/CPU/network fields), the
 * health probe passes on a paired device and names the failing step on one that forgot this host, the `log`
 * stream carries syslog_relay lines, and the USB location comes from usbmuxd's LocationID through sysfs.
 */
import { LabWorld, iosSpecFromPreset } from '@devicelab/labsim';
import { createLogger } from '@devicelab/shared';
import { IosDriver } from '../../src/drivers/ios/ios-driver';
import { Recorder } from '../support/recorder';

const spec = iosSpecFromPreset('ipad-10', 7);
let world: LabWorld;
let driver: IosDriver;
let recorder: Recorder;

beforeAll(async () => {
  world = new LabWorld({ timings: { rebootMs: 800, bootCompleteMs: 300 } });
  await world.start();
  await world.addIosDevice(spec, { usbPath: '3-1.4.6' });
  await world.iosFleet.pairWithIdevicepair(spec.udid);
  recorder = new Recorder();
  driver = new IosDriver({
    usbmuxdAddress: world.env().USBMUXD_SOCKET_ADDRESS, usbSysfsDir: world.iosFleet.usbSysfsDir,
    logger: createLogger('test', process.env.GW_TEST_LOG ?? 'silent'),
  });
  await driver.start(recorder);
  await recorder.waitFor((e) => e.type === 'changed' && e.state.vendorUniqueIdentifier === spec.udid && e.state.readiness === 'Ready', 20_000);
}, 60_000);

afterAll(async () => {
  await driver?.stop();
  await world?.stop();
}, 60_000);

it('samples battery and disk as the device reports them, and leaves the developer-services fields absent', async () => {
  world.iosFleet.setBattery(spec.udid, { level: 57, externalConnected: true });
  const disk = world.iosDevice(spec.udid).lockdownValue('com.apple.disk_usage', undefined, true) as Record<string, number>;
  const { time, fields } = await driver.sampling.sample(spec.udid);
  expect(Math.abs(time - Date.now())).toBeLessThan(5_000);
  expect(fields).toEqual({
    'Battery Level': 57, 'Battery Charging': 1, 'External Power': 1,
    'Disk Total': disk.TotalDataCapacity, 'Disk Free': disk.TotalDataAvailable, 'Disk Used': disk.TotalDataCapacity - disk.TotalDataAvailable,
    'Battery Temperature': 29.5, 'Battery Voltage': 4.012, 'Battery Cycle Count': 214,
  });
  world.iosFleet.setBattery(spec.udid, { externalConnected: false });
  expect((await driver.sampling.sample(spec.udid)).fields).toMatchObject({ 'Battery Charging': 0, 'External Power': 0 });
}, 30_000);

it('follows the device log as a stream of syslog_relay lines', async () => {
  const lines: string[] = [];
  const stream = driver.sampling.followLog(spec.udid, { line: (text) => lines.push(text), end: () => undefined });
  const line = world.iosDevice(spec.udid).syslog.log({ process: 'SpringBoard', pid: 61, level: 'Notice', message: 'metrics stream marker' });
  const deadline = Date.now() + 5_000;
  while (!lines.includes(line) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
  expect(lines).toContain(line);
  stream.stop();
  const after = world.iosDevice(spec.udid).syslog.log({ process: 'SpringBoard', pid: 61, level: 'Notice', message: 'after stop' });
  await new Promise((r) => setTimeout(r, 300));
  expect(lines).not.toContain(after);
}, 20_000);

it('finds the USB port path of the LocationID usbmuxd reports', async () => {
  expect(await driver.usbLocation(spec.udid)).toBe('3-1.4.6');
  expect(await driver.usbLocation('not-a-device')).toBeUndefined();
});

it('probes lockdown, the pairing and a service; a device that forgot this host fails naming the session', async () => {
  await expect(driver.sampling.probe(spec.udid, 5_000)).resolves.toBeUndefined();
  world.iosDevice(spec.udid).resetTrust();
  await expect(driver.sampling.probe(spec.udid, 5_000)).rejects.toMatchObject({
    code: 'DEVICE_NOT_PAIRED', message: expect.stringMatching(/^lockdownd session failed: .*InvalidHostID.*pair the device again/),
  });
}, 30_000);
