/**
 * iOS devices end to end in a mixed lab: REST client -> hub -> gRPC link -> gateway (Android and iOS drivers) ->
 * simulated usbmuxd/lockdownd, the iOS devices found on the simulated Cambrionix hub by their USB location. Every
 * device endpoint a user has for an iPhone: listing and identifiers, properties and apps, the provisioning checks
 * that refuse an IPA before any byte moves (the fixture's profiles have all expired; a freshly built IPA whose
 * profile lists the iPhone's UDID installs), force, launch's clear failure, logs, metrics, USB port control,
 * reset and reboot, and GET /Service naming the iOS devices.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { buildZip, mobileProvision, xmlPlist } from '../apps/package-builder';
import { startTestLab, waitFor, type TestLab } from '../support/lab';
import { fixture } from '../../../scripts/jest/shared-files';

interface WireDevice {
  id: string; name: string; availability: string; operatingSystem: string; vendorUniqueIdentifier: string;
  model?: string; friendlyModel?: string; operatingSystemVersion?: string; serialNumber?: string;
  usbHubPortNumber?: number; usbHubSerialNumber?: string;
  installedApplications?: { id: string; applicationIdentifier: string }[];
  properties?: { name: string; value: string }[];
}
type Result = { isSuccess: boolean; errorMessage?: string };

/** The first of the 100 ProvisionedDevices of app-info-iphone.ipa's development profile (fixtures README). */
const FIXTURE_PROVISIONED_UDID = '18cf53cddee60c52f9c97b1521e7cbf8342628da';
const FIXTURE_BUNDLE = 'com.icyleaf.AppInfoDemo';
const BUILT_BUNDLE = 'com.devicelab.Provisioned';
const HUB_LOCATION = '1-1.4';
let lab: TestLab;
let admin: { login: string; token: string };

beforeAll(async () => {
  lab = await startTestLab({
    androidCount: 1, iosCount: 2, iosUdids: [FIXTURE_PROVISIONED_UDID], usbHub: { usbLocation: HUB_LOCATION },
    sampling: { sampleIntervalMs: 2_000, healthCheckIntervalMs: 3_000 },
  });
  admin = lab.admin;
}, 120_000);

afterAll(() => lab?.stop(), 60_000);

const json = async <T>(pathAndQuery: string, init?: RequestInit): Promise<T> => (await lab.api(admin, pathAndQuery, init)).json() as Promise<T>;
const post = <T = Result>(pathAndQuery: string) => json<T>(pathAndQuery, { method: 'POST' });
const iosDevice = async (index: number, query = ''): Promise<WireDevice> => {
  const [device] = await json<WireDevice[]>(`/Device?AnyId=${lab.iosDevices[index].udid}${query}`);
  return device;
};
async function pollAsync(id: string): Promise<unknown> {
  const { value } = await waitFor(async () => {
    const body = await json<{ isComplete?: boolean; data?: unknown }>(`/Async?id=${id}`);
    return body.isComplete ? body : undefined;
  }, 30_000, `async job ${id}`);
  return value.data;
}
const upload = async (name: string, bytes: Buffer): Promise<{ id: string; applicationIdentifier: string }> => {
  const form = new FormData();
  form.append('upload', new Blob([bytes]), name);
  const answer = await json<{ isSuccess: boolean; data: { id: string; applicationIdentifier: string } }>('/Application?add&wait=true', { method: 'POST', body: form });
  expect(answer.isSuccess).toBe(true);
  return answer.data;
};
const install = async (appId: string, deviceId: string, force = false) =>
  pollAsync((await post<{ data: { asyncResponseId: string } }>(`/Application?action=install&id=${appId}&deviceId=${deviceId}&force=${force}`)).data.asyncResponseId);

/** An IPA as Xcode exports it for development, its profile valid for a year and listing `udids`. */
function builtIpa(profile: Record<string, unknown>, minimumOs = '15.0'): Buffer {
  return buildZip([
    { name: 'Payload/Provisioned.app/Info.plist', data: xmlPlist({
      CFBundleIdentifier: BUILT_BUNDLE, CFBundleName: 'Provisioned', CFBundleExecutable: 'Provisioned', CFBundleShortVersionString: '1.0',
      CFBundleVersion: '1', MinimumOSVersion: minimumOs, UIDeviceFamily: [1, 2],
    }) },
    { name: 'Payload/Provisioned.app/embedded.mobileprovision', data: mobileProvision({
      Name: 'iOS Team Provisioning Profile: *', TeamIdentifier: ['ABCDE12345'],
      ExpirationDate: new Date(Date.now() + 365 * 86_400_000), ...profile as Record<string, string>,
    }) },
  ]);
}
const staged = (index: number) => readdirSync(path.join(lab.world.iosDevice(lab.iosDevices[index].udid).mediaRoot, 'PublicStaging'));

test('lists the iOS devices with operatingSystem=iOS, by UDID and serial, with lockdown facts and their hub ports by USB location', async () => {
  const listed = await json<WireDevice[]>('/Device?operatingSystem=iOS');
  expect(listed.map((d) => d.vendorUniqueIdentifier).sort()).toEqual(lab.iosDevices.map((s) => s.udid).sort());
  const [spec] = lab.iosDevices;
  expect(await iosDevice(0)).toMatchObject({
    availability: 'Online', operatingSystem: 'iOS', vendorUniqueIdentifier: FIXTURE_PROVISIONED_UDID, serialNumber: spec.serialNumber,
    model: spec.productType, friendlyModel: 'iPhone 13', operatingSystemVersion: spec.productVersion,
    usbHubSerialNumber: 'LABHUB01', usbHubPortNumber: 2,
  });
  expect(await iosDevice(1)).toMatchObject({ operatingSystem: 'iOS', friendlyModel: 'iPad (10th generation)', usbHubPortNumber: 3 });
  const [bySerial] = await json<WireDevice[]>(`/Device?AnyId=${spec.serialNumber}`);
  expect(bySerial.vendorUniqueIdentifier).toBe(spec.udid);
});

test('properties=true is the flattened lockdown tree; allApplications lists the system apps', async () => {
  const device = await iosDevice(0, '&properties=true&allApplications=true');
  expect(device.properties).toEqual(expect.arrayContaining([
    expect.objectContaining({ name: 'UniqueDeviceID', value: FIXTURE_PROVISIONED_UDID }),
    expect.objectContaining({ name: 'ProductVersion', value: lab.iosDevices[0].productVersion }),
  ]));
  expect(device.installedApplications?.map((a) => a.applicationIdentifier)).toEqual(expect.arrayContaining(['com.apple.mobilesafari', 'com.google.chrome.ios']));
});

test('GET /Service lists the iOS devices among the gateway\'s vendor ids; a Linux gateway has no Xcode', async () => {
  const service = await json<{ gatewayInformation: { deviceVendorUniqueIdentifiers: string[]; xcode: unknown[]; buildTool: unknown[] }[] }>('/Service');
  const [gateway] = service.gatewayInformation;
  expect(gateway.deviceVendorUniqueIdentifiers).toEqual(expect.arrayContaining(lab.iosDevices.map((s) => s.udid)));
  expect(gateway.deviceVendorUniqueIdentifiers).toHaveLength(3); // and the Android device
  expect(gateway).toMatchObject({ buildTool: [], xcode: [] });
});

test('the fixture IPA is refused before any byte moves: its profile expired; on a device it does not list, that too', async () => {
  const app = await upload('app-info-iphone.ipa', readFileSync(fixture('app-info-iphone.ipa')));
  const [iphone, ipad] = [await iosDevice(0), await iosDevice(1)];
  const onIphone = await install(app.id, iphone.id) as Result;
  expect(onIphone).toEqual({ isSuccess: false, errorMessage: expect.stringMatching(new RegExp(
    `^Application 'AppInfoDemo' cannot be installed on device '${iphone.name}': its provisioning profile expired on 2017-07-27T09:44:49Z \\(now \\d{4}-`)),
  errorCode: 'APP_NOT_PROVISIONED' });
  expect(onIphone.errorMessage).not.toMatch(/does not provision/);
  const onIpad = await install(app.id, ipad.id, true) as Result;
  expect(onIpad.errorMessage).toContain(`UDID ${lab.iosDevices[1].udid} is not one of the profile's 100 ProvisionedDevices`);
  expect(onIpad.errorMessage).toContain('expired on 2017-07-27T09:44:49Z');
  expect(lab.world.iosDevice(iphone.vendorUniqueIdentifier).apps.get(FIXTURE_BUNDLE)).toBeUndefined();
  expect([...staged(0), ...staged(1)]).toEqual([]);
}, 60_000);

test('an IPA whose fresh profile lists the iPhone installs, is listed, reinstalls (force: a new data container) and uninstalls', async () => {
  const app = await upload('provisioned.ipa', builtIpa({ ProvisionedDevices: ['00008030-000000000000FFFF', FIXTURE_PROVISIONED_UDID.toUpperCase()] }));
  const device = await iosDevice(0);
  const sim = lab.world.iosDevice(device.vendorUniqueIdentifier);
  expect(await install(app.id, device.id)).toEqual({ isSuccess: true });
  expect((await iosDevice(0, '&applications=true')).installedApplications?.map((a) => a.id)).toContain(app.id);
  const container = sim.apps.get(BUILT_BUNDLE)?.attributes.Container;
  expect(await install(app.id, device.id)).toEqual({ isSuccess: true });
  expect(sim.apps.get(BUILT_BUNDLE)?.attributes.Container).toBe(container); // an update keeps the app's data
  expect(await install(app.id, device.id, true)).toEqual({ isSuccess: true });
  expect(sim.apps.get(BUILT_BUNDLE)?.attributes.Container).not.toBe(container); // force removed it first

  const launch = await post<{ data: { asyncResponseId: string } }>(`/Application?action=launch&id=${app.id}&deviceId=${device.id}`);
  expect(await pollAsync(launch.data.asyncResponseId)).toEqual({
    isSuccess: false, errorMessage: expect.stringMatching(/developer services.*CoreDevice tunnel.*Developer Disk Image/),
    errorCode: 'DEVELOPER_SERVICES_UNAVAILABLE',
  });

  expect(await post(`/Application?action=uninstall&id=${app.id}&deviceId=${device.id}`)).toEqual({ isSuccess: true });
  expect((await iosDevice(0, '&applications=true')).installedApplications?.map((a) => a.id)).not.toContain(app.id);
  expect(sim.apps.get(BUILT_BUNDLE)).toBeUndefined();

  expect(await install(app.id, device.id)).toEqual({ isSuccess: true });
  expect(await post(`/Application?action=uninstallBundle&bundleId=${BUILT_BUNDLE}&deviceId=${device.vendorUniqueIdentifier}`)).toEqual({ isSuccess: true });
  expect(sim.apps.get(BUILT_BUNDLE)).toBeUndefined();

  const ipad = await iosDevice(1);
  expect(await install(app.id, ipad.id)).toEqual({ isSuccess: false, errorMessage: `Application 'Provisioned' cannot be installed on device '${ipad.name}': `
    + `its provisioning profile does not provision this device (UDID ${ipad.vendorUniqueIdentifier} is not one of the profile's 2 `
    + 'ProvisionedDevices, and the profile does not provision all devices).', errorCode: 'APP_NOT_PROVISIONED' });
}, 90_000);

test('a profile for all devices still needs the device to run the MinimumOSVersion', async () => {
  const app = await upload('too-new.ipa', builtIpa({ ProvisionsAllDevices: true }, '99.0'));
  const device = await iosDevice(0);
  expect(await install(app.id, device.id)).toEqual({ isSuccess: false, errorMessage: `Application 'Provisioned' cannot be installed on device '${device.name}': `
    + `it needs iOS 99.0 or later (MinimumOSVersion) and the device runs iOS ${lab.iosDevices[0].productVersion}.`, errorCode: 'APP_NOT_PROVISIONED' });
}, 60_000);

test('retains and releases the iOS device', async () => {
  const device = await iosDevice(0);
  const retain = await post<{ isSuccess: boolean; data: { deviceVendorUniqueIdentifier: string } }>(`/Device?action=retain&id=${device.id}`);
  expect(retain).toMatchObject({ isSuccess: true, data: { deviceVendorUniqueIdentifier: device.vendorUniqueIdentifier } });
  expect(await post(`/Device?action=release&id=${device.id}`)).toEqual({ isSuccess: true });
});

test('the device log and the log, sample and health_check metrics come from the iPhone', async () => {
  const udid = lab.iosDevices[0].udid;
  const start = new Date(Date.now() - 1_000).toISOString();
  lab.world.iosFleet.setBattery(udid, { level: 37 }); // the battery model moves 1 % per 2 minutes at most
  const line = lab.world.iosDevice(udid).syslog.log({ process: 'SpringBoard', pid: 61, level: 'Notice', message: 'e2e log marker' });
  await waitFor(async () => (await json<{ data?: string }>(`/Device/Log?id=${udid}&lines=50`)).data?.split('\n').includes(line), 10_000, 'the line in /Device/Log');
  type Series = { columns: string[]; values: unknown[][] };
  const series = (table: string, fields: string, until: (s: Series) => boolean = () => true) => waitFor(async () => {
    const body = await json<{ results?: { series?: Series[] }[]; errorMessage?: string }>(`/Device/Metrics?id=${udid}&table=${table}&start=${start}&fields=${encodeURIComponent(fields)}`);
    // A sample field is known from the first sample that has it; before that the query fails saying so.
    if (!body.results) {
      expect(body.errorMessage).toMatch(/^Unknown field/);
      return undefined;
    }
    const found = body.results[0].series?.[0];
    return found && found.values.length > 0 && until(found) ? found : undefined;
  }, 30_000, `${table} rows`).then((r) => r.value);
  await series('log', 'log', (s) => s.values.some((row) => row[1] === line));
  const sample = await series('sample', 'Battery Level,Disk Used,Used', (s) => s.values.some((row) => row[1] === 37));
  expect(sample.columns).toEqual(['time', 'Battery Level', 'Disk Used', 'Used']);
  const row = sample.values.find((r) => r[1] === 37)!;
  expect(row[2]).toEqual(expect.any(Number));
  expect(row[3]).toBeNull(); // memory needs developer services: absent, not zero
  expect((await series('health_check', 'is_error,elapsed_seconds')).values[0][1]).toBe(false);
}, 60_000);

test('USB port control: Off takes the iPhone Offline, Data brings it back Online with the same Guid', async () => {
  const device = await iosDevice(0);
  expect(await post(`/Device/UsbPort?update&id=${device.vendorUniqueIdentifier}&usbHubPortState=Off`)).toEqual({ isSuccess: true });
  await waitFor(async () => (await iosDevice(0)).availability === 'Offline', 15_000, 'the iPhone Offline');
  expect(lab.world.iosFleet.snapshotOf(device.vendorUniqueIdentifier).attached).toBe(false);
  expect(await post(`/Device/UsbPort?update&id=${device.id}&usbHubPortState=Data`)).toEqual({ isSuccess: true });
  await waitFor(async () => (await iosDevice(0)).availability === 'Online', 20_000, 'the iPhone Online again');
  expect(await iosDevice(0)).toMatchObject({ id: device.id, usbHubPortNumber: 2 });
}, 60_000);

test('reset removes the user apps; reboot shows the iPhone Offline until it is back', async () => {
  const device = await iosDevice(0);
  expect(await post(`/Device?action=reset&id=${device.id}&uninstallAll=true&reboot=false`)).toEqual({ isSuccess: true });
  expect(lab.world.iosFleet.installedApps(device.vendorUniqueIdentifier).map((a) => a.bundleId)).toEqual([]);
  expect((await iosDevice(0, '&allApplications=true')).installedApplications?.map((a) => a.applicationIdentifier)).not.toContain('com.google.chrome.ios');

  expect(await post(`/Device?action=reboot&id=${device.id}`)).toEqual({ isSuccess: true });
  expect((await iosDevice(0)).availability).toBe('Offline');
  await waitFor(async () => (await iosDevice(0)).availability === 'Online', 30_000, 'the rebooted iPhone Online again');
  expect((await iosDevice(0)).id).toBe(device.id);
}, 90_000);
