/**
 * iOS simulators end to end: REST client -> hub -> gRPC link -> gateway (simulator driver over node-simctl) ->
 * labsim's fake xcrun. Two simulators are Online with their facts; a small simulator .app, zipped, uploads,
 * installs, launches with arguments, is listed and uninstalls; a device IPA offered to a simulator fails before
 * any work with a clear text; reboot is Offline until the simulator is booted again.
 */
import { readFileSync } from 'node:fs';
import { startTestLab, waitFor, type TestLab } from '../support/lab';
import { buildSimulatorApp } from '../../../scripts/jest/simulator-app';
import { fixture } from '../../../scripts/jest/shared-files';

interface WireDevice {
  id: string; name: string; availability: string; operatingSystem: string; vendorUniqueIdentifier: string;
  model?: string; friendlyModel?: string; operatingSystemVersion?: string; formFactor?: string; deviceClass?: string;
  usbHubPortNumber?: number; properties?: { name: string; value: string }[];
  installedApplications?: { id: string; applicationIdentifier: string }[];
}
interface WireApp { id: string; applicationIdentifier: string; version?: string; applicationErrors: string[] }

const BUNDLE_ID = 'org.devicelab.labsimapp';
let lab: TestLab;
let admin: { login: string; token: string };

beforeAll(async () => {
  lab = await startTestLab({ androidCount: 1, simulatorCount: 2 });
  admin = lab.admin;
}, 180_000);

afterAll(() => lab?.stop(), 60_000);

const json = async <T>(pathAndQuery: string, init?: RequestInit): Promise<T> => (await lab.api(admin, pathAndQuery, init)).json() as Promise<T>;
const simulators = (query = '') => json<WireDevice[]>(`/Device?operatingSystem=iOS${query}`);
const simulator = async (id: string, query = ''): Promise<WireDevice> => (await simulators(query)).find((d) => d.id === id)!;
async function upload(bytes: Buffer, fileName: string): Promise<{ isSuccess: boolean; data: WireApp; errorMessage?: string }> {
  const form = new FormData();
  form.append('upload', new Blob([bytes]), fileName);
  return json('/Application?add&wait=true', { method: 'POST', body: form });
}

test('lists two simulators Online, with their device type, runtime and a Simulator property, and no hub port', async () => {
  const listed = await simulators('&properties=true');
  expect(listed).toHaveLength(2);
  for (const device of listed) {
    expect(device).toMatchObject({
      availability: 'Online', operatingSystem: 'iOS', model: 'iPhone15,4', friendlyModel: 'iPhone 15', operatingSystemVersion: '17.5',
      formFactor: 'Phone', deviceClass: 'iPhone Simulator',
    });
    expect(device.usbHubPortNumber ?? 0).toBe(0);
    expect(device.properties).toContainEqual(expect.objectContaining({ name: 'Simulator', value: 'true' }));
  }
});

test('a zipped simulator .app uploads, installs, launches, is listed and uninstalls', async () => {
  const uploaded = await upload(buildSimulatorApp(), 'LabSimApp.zip');
  expect(uploaded).toMatchObject({ isSuccess: true, data: { applicationIdentifier: BUNDLE_ID, version: '1.2' } });
  const app = uploaded.data;
  const [device] = await simulators();

  expect(await json(`/Application?action=install&id=${app.id}&deviceId=${device.id}&wait=true`, { method: 'POST' })).toEqual({ isSuccess: true });
  expect((await simulator(device.id, '&applications=true')).installedApplications?.some((a) => a.id === app.id)).toBe(true);

  const launch = `/Application?action=launch&id=${app.id}&deviceId=${device.id}&wait=true&arguments=${encodeURIComponent('-StartScreen settings')}`;
  expect(await json(launch, { method: 'POST' })).toEqual({ isSuccess: true });
  const log = await json<{ isSuccess: boolean; data: string }>(`/Device/Log?id=${device.id}&lines=50`);
  expect(log.data).toContain('arguments: ["-StartScreen","settings"]');

  expect(await json(`/Application?action=uninstall&id=${app.id}&deviceId=${device.id}`, { method: 'POST' })).toEqual({ isSuccess: true });
  expect((await simulator(device.id, '&applications=true')).installedApplications?.some((a) => a.id === app.id)).toBe(false);
}, 180_000);

test('a device IPA offered to a simulator fails before any work, saying it is a device build', async () => {
  const uploaded = await upload(readFileSync(fixture('app-info-iphone.ipa')), 'app-info-iphone.ipa');
  expect(uploaded.isSuccess).toBe(true);
  const [, device] = await simulators();
  expect(await json(`/Application?action=install&id=${uploaded.data.id}&deviceId=${device.id}&wait=true`, { method: 'POST' })).toEqual({
    isSuccess: false,
    errorMessage: expect.stringContaining('is built for iOS devices (iphoneos) and cannot be installed on an iOS Simulator'),
    errorCode: 'APP_WRONG_PLATFORM',
  });
  expect((await simulator(device.id, '&applications=true')).installedApplications ?? []).toEqual([]);
}, 120_000);

test('reboot shows the simulator Offline until it is booted again', async () => {
  const [device] = await simulators();
  expect(await json(`/Device?action=reboot&id=${device.id}`, { method: 'POST' })).toEqual({ isSuccess: true });
  expect((await simulator(device.id)).availability).toBe('Offline');
  await waitFor(async () => (await simulator(device.id)).availability === 'Online', 90_000, 'the rebooted simulator Online again');
}, 120_000);
