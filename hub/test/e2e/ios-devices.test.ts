/**
 * iOS devices end to end in a mixed lab: REST client -> hub -> gRPC link -> gateway (Android and iOS drivers) ->
 * simulated usbmuxd/lockdownd, with the devices on a simulated Cambrionix hub. The iPhone is listed with its
 * lockdown facts, a real IPA uploads, installs, shows in installedApplications and uninstalls, retain/release
 * work, launch fails naming what the gateway host needs, and reboot is Offline until the device is back.
 */
import { readFileSync } from 'node:fs';
import { startTestLab, waitFor, type TestLab } from '../support/lab';
import { fixture } from '../../../scripts/jest/shared-files';

interface WireDevice {
  id: string; name: string; availability: string; operatingSystem: string; vendorUniqueIdentifier: string;
  model?: string; friendlyModel?: string; operatingSystemVersion?: string; serialNumber?: string; usbHubPortNumber?: number;
  installedApplications?: { id: string; applicationIdentifier: string }[];
}

const BUNDLE_ID = 'com.icyleaf.AppInfoDemo';
let lab: TestLab;
let admin: { login: string; token: string };

beforeAll(async () => {
  lab = await startTestLab({ androidCount: 1, iosCount: 1, usbHub: {} });
  admin = lab.admin;
}, 120_000);

afterAll(() => lab?.stop(), 60_000);

const json = async <T>(pathAndQuery: string, init?: RequestInit): Promise<T> => (await lab.api(admin, pathAndQuery, init)).json() as Promise<T>;
const iphone = async (query = ''): Promise<WireDevice> => {
  const [device] = await json<WireDevice[]>(`/Device?operatingSystem=iOS${query}`);
  return device;
};
async function pollAsync(id: string): Promise<unknown> {
  const { value } = await waitFor(async () => {
    const body = await json<{ isComplete?: boolean; data?: unknown }>(`/Async?id=${id}`);
    return body.isComplete ? body : undefined;
  }, 30_000, `async job ${id}`);
  return value.data;
}

test('lists the iOS device with operatingSystem=iOS, its lockdown facts and its hub port', async () => {
  const spec = lab.iosDevices[0];
  const listed = await json<WireDevice[]>('/Device?operatingSystem=iOS');
  expect(listed).toHaveLength(1);
  expect(listed[0]).toMatchObject({
    availability: 'Online', operatingSystem: 'iOS', vendorUniqueIdentifier: spec.udid, serialNumber: spec.serialNumber,
    model: spec.productType, friendlyModel: 'iPhone 13', operatingSystemVersion: spec.productVersion, usbHubPortNumber: 2,
  });
});

test('a real IPA uploads, installs, is listed in installedApplications and uninstalls', async () => {
  const form = new FormData();
  form.append('upload', new Blob([readFileSync(fixture('app-info-iphone.ipa'))]), 'app-info-iphone.ipa');
  const upload = await json<{ isSuccess: boolean; data: { id: string; applicationIdentifier: string } }>(
    '/Application?add&wait=true', { method: 'POST', body: form });
  expect(upload).toMatchObject({ isSuccess: true, data: { applicationIdentifier: BUNDLE_ID } });
  const app = upload.data;
  const device = await iphone();
  const install = await json<{ data: { asyncResponseId: string } }>(`/Application?action=install&id=${app.id}&deviceId=${device.id}`, { method: 'POST' });
  expect(await pollAsync(install.data.asyncResponseId)).toEqual({ isSuccess: true });
  await waitFor(async () => (await iphone('&applications=true')).installedApplications?.some((a) => a.id === app.id), 10_000, 'the app listed');
  expect(lab.world.iosDevice(device.vendorUniqueIdentifier).apps.get(BUNDLE_ID)).toBeDefined();

  const launch = await json<{ data: { asyncResponseId: string } }>(`/Application?action=launch&id=${app.id}&deviceId=${device.id}`, { method: 'POST' });
  expect(await pollAsync(launch.data.asyncResponseId)).toEqual({
    isSuccess: false, errorMessage: expect.stringMatching(/developer services.*CoreDevice tunnel.*Developer Disk Image/),
  });

  expect(await json(`/Application?action=uninstall&id=${app.id}&deviceId=${device.id}`, { method: 'POST' })).toEqual({ isSuccess: true });
  await waitFor(async () => !(await iphone('&applications=true')).installedApplications?.some((a) => a.id === app.id), 10_000, 'the app gone');
  expect(lab.world.iosDevice(device.vendorUniqueIdentifier).apps.get(BUNDLE_ID)).toBeUndefined();
}, 90_000);

test('retains and releases the iOS device', async () => {
  const device = await iphone();
  const retain = await json<{ isSuccess: boolean; data: { deviceVendorUniqueIdentifier: string } }>(`/Device?action=retain&id=${device.id}`, { method: 'POST' });
  expect(retain).toMatchObject({ isSuccess: true, data: { deviceVendorUniqueIdentifier: device.vendorUniqueIdentifier } });
  expect(await json(`/Device?action=release&id=${device.id}`, { method: 'POST' })).toEqual({ isSuccess: true });
});

test('reboot shows the iOS device Offline until it is back', async () => {
  const device = await iphone();
  expect(await json(`/Device?action=reboot&id=${device.id}`, { method: 'POST' })).toEqual({ isSuccess: true });
  expect((await iphone()).availability).toBe('Offline');
  await waitFor(async () => (await iphone()).availability === 'Online', 30_000, 'the rebooted iPhone Online again');
  expect((await iphone()).id).toBe(device.id);
}, 60_000);
