/**
 * One gateway, two platforms: the registry over the real Android driver (adb server) and the iOS driver (usbmuxd)
 * of one labsim world. Snapshots merge, each command goes to the driver that reported the device, the app cache
 * file type and the battery reading follow the device's platform.
 */
import { LabWorld, iosSpecFromPreset, specFromPreset } from '@devicelab/labsim';
import { createLogger } from '@devicelab/shared';
import { AndroidDriver } from '../../src/drivers/android/android-driver';
import { IosDriver } from '../../src/drivers/ios/ios-driver';
import { SimulatorDriver } from '../../src/drivers/ios-simulator/simulator-driver';
import { DriverRegistry } from '../../src/drivers/registry';
import { Recorder } from '../support/recorder';

const logger = createLogger('test', process.env.GW_TEST_LOG ?? 'silent');
const iphone = iosSpecFromPreset('iphone-15-pro', 7);
let world: LabWorld;
let registry: DriverRegistry;
let androidId: string;
const savedHome = process.env.HOME;

beforeAll(async () => {
  world = new LabWorld({ timings: { rebootMs: 800, bootCompleteMs: 300 } });
  await world.start();
  process.env.HOME = world.env().HOME;
  androidId = (await world.addAndroidDevice(specFromPreset('pixel-7', 8))).adbSerial;
  await world.addIosDevice(iphone);
  await world.iosFleet.pairWithIdevicepair(iphone.udid);
  registry = new DriverRegistry([
    new AndroidDriver({ adbPort: world.adbServerPort, bootPollMs: 150, logger }),
    new IosDriver({ usbmuxdAddress: world.env().USBMUXD_SOCKET_ADDRESS, logger }),
  ]);
  const recorder = new Recorder();
  await registry.start(recorder);
  await recorder.waitFor(() => registry.snapshot().filter((s) => s.readiness === 'Ready').length === 2, 30_000);
}, 60_000);

afterAll(async () => {
  await registry?.stop();
  await world?.stop();
  process.env.HOME = savedHome;
}, 60_000);

it('merges the snapshots of both platforms', () => {
  const byId = new Map(registry.snapshot().map((s) => [s.vendorUniqueIdentifier, s.operatingSystem]));
  expect(byId).toEqual(new Map([[androidId, 'Android'], [iphone.udid, 'iOS']]));
});

it('sends each command to the driver that owns the device', async () => {
  expect((await registry.readPackages(iphone.udid)).packages?.map((p) => p.identifier)).toContain('com.apple.mobilesafari');
  expect((await registry.readPackages(androidId)).operatingSystem).toBe('Android');
  await expect(registry.launch(iphone.udid, 'com.apple.mobilesafari')).rejects.toMatchObject({ code: 'DEVELOPER_SERVICES_UNAVAILABLE' });
  await expect(registry.readPackages('not-here')).rejects.toMatchObject({ code: 'DEVICE_NOT_CONNECTED' });
});

it('keeps each platform\'s app file type and reads each platform\'s battery', async () => {
  expect(registry.appFileExtension(androidId)).toBe('.apk');
  expect(registry.appFileExtension(iphone.udid)).toBe('.ipa');
  expect(await registry.battery.read(iphone.udid)).toMatchObject({ percent: 88 });
  expect((await registry.battery.read(androidId))?.percent).toEqual(expect.any(Number));
  expect(await registry.battery.read('not-here')).toBeUndefined();
});

it('holds one driver per platform', () => {
  const a = new AndroidDriver({ adbPort: world.adbServerPort, logger });
  const b = new AndroidDriver({ adbPort: world.adbServerPort, logger });
  expect(() => new DriverRegistry([a, b])).toThrow(/one driver per platform/);
});

it('holds the iOS device driver and the iOS simulator driver side by side (one operating system, two kinds)', () => {
  const devices = new IosDriver({ usbmuxdAddress: 'UNIX:/nonexistent/usbmuxd', logger });
  const simulators = new SimulatorDriver({ xcrun: '/nonexistent/xcrun', offers: [], logger });
  expect(new DriverRegistry([devices, simulators]).drivers).toHaveLength(2);
  expect(() => new DriverRegistry([simulators, new SimulatorDriver({ xcrun: '/nonexistent/xcrun', offers: [], logger })]))
    .toThrow(/Two drivers for iOS Simulator/);
});
