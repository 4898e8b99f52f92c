/**
 * iOS metrics and USB location against the labsim usbmuxd and lockdownd: `sample` reads the battery and disk
 * domains and the battery's IORegistry entry (no developer services, so no memory/CPU/network fields), the
 * health probe passes on a paired device and names the failing step on one that forgot this host, the `log`
 * stream carries syslog_relay lines, and the USB location comes from usbmuxd's LocationID through sysfs.
 */
import { iosSpecFromPreset, type LabWorld } from '@devicelab/labsim';
import type { IosDriver } from '../../src/drivers/ios/ios-driver';
import { startIosLab, type IosLab } from '../support/ios-lab';

const spec = iosSpecFromPreset('ipad-10', 7);
let lab: IosLab;
let world: LabWorld;
let driver: IosDriver;

beforeAll(async () => {
  lab = await startIosLab(spec, { usbPath: '3-1.4.6', pair: true });
  ({ world, driver } = lab);
}, 60_000);

afterAll(() => lab?.stop(), 60_000);

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
