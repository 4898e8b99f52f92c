/**
 * The iOS driver against the labsim usbmuxd and lockdownd: an unpaired device is Unauthorized until the host pairs
 * (idevicepair, as an operator would), then Ready with its lockdown facts; the fixture IPA installs through AFC and
 * installation_proxy and is listed, uninstalls, reboot is Offline until the device is back, the log comes from
 * syslog_relay, launch fails saying what the host needs, and unplugging removes the device.
 */
import { iosSpecFromPreset, type LabWorld } from '@devicelab/labsim';
import type { IosDriver } from '../../src/drivers/ios/ios-driver';
import { fixture } from '../../../scripts/jest/shared-files';
import { startIosLab, type IosLab } from '../support/ios-lab';
import type { Recorder } from '../support/recorder';

const IPA = fixture('app-info-iphone.ipa');
const BUNDLE_ID = 'com.icyleaf.AppInfoDemo';
const spec = iosSpecFromPreset('iphone-13', 5);
let lab: IosLab;
let world: LabWorld;
let driver: IosDriver;
let recorder: Recorder;

beforeAll(async () => {
  lab = await startIosLab(spec);
  ({ world, driver, recorder } = lab);
}, 60_000);

afterAll(() => lab?.stop(), 60_000);

const ready = () => recorder.waitFor((e) => e.type === 'changed' && e.state.vendorUniqueIdentifier === spec.udid && e.state.readiness === 'Ready', 20_000, recorder.events.length);

it('reports an unpaired device as Unauthorized, and Ready with its lockdown facts once the host pairs', async () => {
  await recorder.waitFor((e) => e.type === 'changed' && e.state.readiness === 'Unauthorized');
  expect(recorder.latest(spec.udid)?.readinessDetail).toMatch(/Trust This Computer/);
  await world.iosFleet.pairWithIdevicepair(spec.udid);
  await recorder.waitFor((e) => e.type === 'changed' && e.state.vendorUniqueIdentifier === spec.udid && e.state.readiness === 'Ready', 20_000);
  const state = recorder.latest(spec.udid)!;
  const disk = world.iosDevice(spec.udid).lockdownValue('com.apple.disk_usage', undefined, true) as Record<string, number>;
  expect(state).toMatchObject({
    operatingSystem: 'iOS', manufacturer: 'Apple', productType: 'iPhone14,5', model: 'iPhone14,5', friendlyModel: 'iPhone 13',
    hardwareModel: 'D17AP', operatingSystemVersion: '17.2.1', operatingSystemBuild: '21C66', deviceClass: 'iPhone', formFactor: 'Phone',
    vendorDeviceName: spec.deviceName, serialNumber: spec.serialNumber, batteryPercent: 72,
    diskSpace: 113_379_455_488, diskSpaceUsed: 113_379_455_488 - disk.TotalDataAvailable,
  });
  expect(state.macAddress).toMatch(/^8C:86:DD(:[0-9A-F]{2}){3}$/);
  expect(state.properties).toEqual(expect.arrayContaining([
    { name: 'UniqueDeviceID', value: spec.udid }, { name: 'ProductVersion', value: '17.2.1' },
  ]));
  expect(state.properties?.some((p) => /^SupportedDeviceFamilies\[0\]$/.test(p.name))).toBe(true);
  expect(state.packages).toEqual(expect.arrayContaining([
    { identifier: 'com.apple.mobilesafari', version: '17.2', buildVersion: '8617.2.4.10.8', system: true },
    { identifier: 'com.google.chrome.ios', version: '120.0.6099.119', buildVersion: '120.6099.119', system: false },
  ]));
}, 40_000);

it('installs the fixture IPA, lists it, and uninstalls it', async () => {
  const installed = await driver.install(spec.udid, IPA);
  expect(installed.packages?.find((p) => p.identifier === BUNDLE_ID)).toMatchObject({ version: '1.2.3', system: false });
  const removed = await driver.uninstall(spec.udid, BUNDLE_ID);
  expect(removed.packages?.map((p) => p.identifier)).not.toContain(BUNDLE_ID);
}, 60_000);

it('fails an install the device refuses with its own code', async () => {
  world.iosFleet.failNextInstall(spec.udid, 'ApplicationVerificationFailed');
  await expect(driver.install(spec.udid, IPA)).rejects.toMatchObject({
    code: 'INSTALLD_ApplicationVerificationFailed', message: expect.stringContaining('(ApplicationVerificationFailed'),
  });
}, 60_000);

it('keeps the device log from syslog_relay', async () => {
  const line = world.iosDevice(spec.udid).syslog.log({ process: 'SpringBoard', pid: 61, level: 'Notice', message: 'driver test marker' });
  const deadline = Date.now() + 5_000;
  while (!(await driver.readLog(spec.udid, 50)).split('\n').includes(line) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
  expect((await driver.readLog(spec.udid, 50)).split('\n')).toContain(line);
});

it('fails launch saying which developer services the host needs', async () => {
  await expect(driver.launch(spec.udid)).rejects.toMatchObject({ code: 'DEVELOPER_SERVICES_UNAVAILABLE', message: expect.stringMatching(/CoreDevice tunnel.*Developer Disk Image/) });
});

it('is Offline while rebooting and Ready again after', async () => {
  const from = recorder.events.length;
  await driver.reboot(spec.udid);
  expect(recorder.latest(spec.udid)).toMatchObject({ readiness: 'Offline', readinessDetail: 'Rebooting' });
  await recorder.waitFor((e) => e.type === 'changed' && e.state.vendorUniqueIdentifier === spec.udid && e.state.readiness === 'Ready', 20_000, from);
  expect(recorder.events.slice(from).some((e) => e.type === 'removed')).toBe(false);
}, 40_000);

it('removes an unplugged device and brings it back Ready when plugged in again', async () => {
  const from = recorder.events.length;
  await world.unplug(spec.udid);
  await recorder.waitFor((e) => e.type === 'removed' && e.id === spec.udid, 10_000, from);
  expect(driver.snapshot()).toEqual([]);
  await world.plug(spec.udid);
  await ready();
  expect(driver.snapshot()).toMatchObject([{ vendorUniqueIdentifier: spec.udid, readiness: 'Ready' }]);
}, 40_000);

it('takes its devices away when usbmuxd goes, and back Ready once usbmuxd is there again', async () => {
  const from = recorder.events.length;
  await world.iosFleet.usbmuxd.stop();
  await recorder.waitFor((e) => e.type === 'removed' && e.id === spec.udid, 10_000, from);
  await world.iosFleet.usbmuxd.start();
  await ready();
}, 40_000);
