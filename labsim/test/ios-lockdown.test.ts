/**
 * lockdownd as Debian's tools see it: public values without pairing, `idevicepair pair` (Pair, then the host's
 * binary pair record saved in usbmuxd), `idevicepair validate`, and the full value tree and the battery and disk
 * domains through a TLS session on the lockdown socket (StartSession, StopSession).
 */
import { LabWorld, iosSpecFromPreset } from '../src';
import { decodePlistDict } from '@devicelab/shared';
import { idevice } from './ios-helpers';

let world: LabWorld;
let run: ReturnType<typeof idevice>;
const spec = iosSpecFromPreset('iphone-13', 2);

beforeAll(async () => {
  world = new LabWorld();
  await world.start();
  await world.addIosDevice(spec);
  run = idevice(world);
}, 60_000);

afterAll(async () => {
  await world?.stop();
}, 60_000);

/** `Key: value` lines of ideviceinfo's text output. */
const values = (text: string): Record<string, string> =>
  Object.fromEntries(text.split('\n').map((l) => /^(\w+): (.*)$/.exec(l)).filter((m): m is RegExpExecArray => !!m).map((m) => [m[1], m[2]]));

it('answers public values without a pairing; no session while the trust dialog is up', async () => {
  world.iosFleet.setTrustPolicy(spec.udid, 'prompt');
  const simple = await run('ideviceinfo', '-s');
  expect(simple.code).toBe(0);
  expect(values(simple.stdout)).toEqual(expect.objectContaining({
    UniqueDeviceID: spec.udid, ProductType: 'iPhone14,5', ProductVersion: '17.2.1', BuildVersion: '21C66', DeviceClass: 'iPhone',
    HardwareModel: 'D17AP', DeviceName: spec.deviceName,
  }));
  expect(values(simple.stdout).SerialNumber).toBeUndefined();
  // libimobiledevice pairs on its own when it has no pair record; the dialog makes that fail.
  const full = await run('ideviceinfo', '-k', 'SerialNumber');
  expect(full.code).not.toBe(0);
  expect(full.stderr).toContain('Could not connect to lockdownd');
  const pair = await run('idevicepair', 'pair');
  expect(pair.code).not.toBe(0);
  expect(pair.stdout + pair.stderr).toContain('Please accept the trust dialog');
  expect(world.iosFleet.usbmuxd.pairRecord(spec.udid)).toBeUndefined();
});

it('pairs with idevicepair once trusted and validates the pairing', async () => {
  world.iosFleet.setTrustPolicy(spec.udid, 'trust');
  const pair = await run('idevicepair', 'pair');
  expect(pair).toEqual(expect.objectContaining({ code: 0, stdout: `SUCCESS: Paired with device ${spec.udid}\n` }));
  // The host keeps its pair record in usbmuxd as a binary plist.
  const record = world.iosFleet.usbmuxd.pairRecord(spec.udid);
  expect(record?.subarray(0, 8).toString('latin1')).toBe('bplist00');
  expect(Object.keys(decodePlistDict(record!))).toEqual(expect.arrayContaining(['HostID', 'SystemBUID', 'DeviceCertificate', 'HostPrivateKey', 'EscrowBag']));
  expect(decodePlistDict(record!).SystemBUID).toBe(world.iosFleet.usbmuxd.buid);
  const validate = await run('idevicepair', 'validate');
  expect(validate).toEqual(expect.objectContaining({ code: 0, stdout: `SUCCESS: Validated pairing with device ${spec.udid}\n` }));
});

it('gives the whole value tree and single keys in a TLS session', async () => {
  const info = await run('ideviceinfo');
  expect(info.code).toBe(0);
  expect(values(info.stdout)).toEqual(expect.objectContaining({
    SerialNumber: spec.serialNumber, WiFiAddress: spec.wifiAddress, BluetoothAddress: spec.bluetoothAddress, UniqueDeviceID: spec.udid,
    ProductVersion: '17.2.1', HostAttached: 'true', TrustedHostAttached: 'true', TimeZone: 'America/New_York', ActivationState: 'Activated',
  }));
  expect(await run('ideviceinfo', '-k', 'SerialNumber')).toEqual(expect.objectContaining({ code: 0, stdout: `${spec.serialNumber}\n` }));
  // A real, as the device sends it (New York: EST or EDT); an <integer> would print as a huge unsigned number.
  expect((await run('ideviceinfo', '-k', 'TimeZoneOffsetFromUTC')).stdout).toMatch(/^-1[48]000\.000000\n$/);
});

it('answers the battery domain from the world state', async () => {
  await world.setBattery(spec.udid, { level: 37, usbPowered: false });
  const battery = await run('ideviceinfo', '-q', 'com.apple.mobile.battery');
  expect(battery.code).toBe(0);
  expect(values(battery.stdout)).toEqual({
    BatteryCurrentCapacity: '37', BatteryIsCharging: 'false', ExternalChargeCapable: 'true', ExternalConnected: 'false', FullyCharged: 'false',
    GasGaugeCapability: 'true', HasBattery: 'true',
  });
  await world.setBattery(spec.udid, { level: 100, usbPowered: true });
  expect(values((await run('ideviceinfo', '-q', 'com.apple.mobile.battery')).stdout)).toEqual(expect.objectContaining({
    BatteryCurrentCapacity: '100', BatteryIsCharging: 'false', ExternalConnected: 'true', FullyCharged: 'true',
  }));
});

it('answers the disk usage domain with its invariant', async () => {
  const disk = values((await run('ideviceinfo', '-q', 'com.apple.disk_usage')).stdout);
  expect(Number(disk.TotalDataCapacity)).toBe(spec.disk.totalDataCapacity);
  expect(Number(disk.AmountDataAvailable)).toBe(Number(disk.TotalDataAvailable) - Number(disk.AmountDataReserved));
  expect(Number(disk.TotalDataAvailable)).toBeLessThan(Number(disk.TotalDataCapacity));
});

it('forgets the host at idevicepair unpair: its pair record is gone and a denied dialog refuses a new one', async () => {
  expect((await run('idevicepair', 'unpair')).code).toBe(0);
  expect(world.iosFleet.usbmuxd.pairRecord(spec.udid)).toBeUndefined();
  world.iosFleet.setTrustPolicy(spec.udid, 'deny');
  const validate = await run('idevicepair', 'validate');
  expect(validate.code).not.toBe(0);
  expect((await run('ideviceinfo', '-k', 'SerialNumber')).code).not.toBe(0);
  world.iosFleet.setTrustPolicy(spec.udid, 'trust');
});
