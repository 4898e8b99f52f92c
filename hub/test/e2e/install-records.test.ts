/**
 * What the hub records of installs through the API: the library record a device lists is the one installed on
 * it, even when several records share its package and version; a failed install is in the history with its
 * reason.
 */
import { readFileSync } from 'node:fs';
import { fixture } from '../../../scripts/jest/shared-files';
import { startTestLab, waitFor, type TestLab } from '../support/lab';

jest.setTimeout(120_000);

interface WireApp { id: string; applicationIdentifier: string; versionCounter: number }
interface WireEvent {
  eventType: string; message: string; isSuccess: boolean; applicationName?: string; stringValue?: string;
  performedByName?: string; deviceId?: string;
}

let lab: TestLab;

beforeAll(async () => {
  lab = await startTestLab({ androidCount: 1 });
});

afterAll(() => lab?.stop());

const post = async (path: string, body?: FormData) =>
  (await lab.api(lab.admin, path, { method: 'POST', body })).json() as Promise<{ isSuccess: boolean; errorMessage?: string; data?: unknown }>;

async function upload(): Promise<WireApp> {
  const form = new FormData();
  form.append('upload', new Blob([readFileSync(fixture('ContactManager.apk'))]), 'ContactManager.apk');
  const answer = await post('/Application?add&wait=true', form);
  expect(answer.isSuccess).toBe(true);
  return answer.data as WireApp;
}

async function installedIds(deviceId: string): Promise<string[]> {
  const [device] = await (await lab.api(lab.admin, `/Device?id=${deviceId}&applications=true`)).json() as
    { installedApplications?: { id: string }[] }[];
  return (device.installedApplications ?? []).map((app) => app.id);
}

async function deviceId(serial: string): Promise<string> {
  const devices = await (await lab.api(lab.admin, '/Device')).json() as { id: string; serialNumber?: string }[];
  return devices.find((d) => d.serialNumber === serial)!.id;
}

test('the device lists the library record that was installed, not a newer upload of the same package and version', async () => {
  const id = await deviceId(lab.devices[0].serial);
  const older = await upload();
  const newer = await upload();
  expect(newer.versionCounter).toBeGreaterThan(older.versionCounter);

  expect(await post(`/Application?action=install&id=${older.id}&deviceId=${id}&wait=true`)).toMatchObject({ isSuccess: true });
  expect(await installedIds(id)).toContain(older.id);
  expect(await installedIds(id)).not.toContain(newer.id);

  // Installing the other record names that one instead.
  expect(await post(`/Application?action=install&id=${newer.id}&deviceId=${id}&wait=true`)).toMatchObject({ isSuccess: true });
  expect(await installedIds(id)).toContain(newer.id);
  expect(await installedIds(id)).not.toContain(older.id);

  // Once the device reports the package gone, the hub forgets which record it was.
  expect(await post(`/Application?action=uninstallbundle&bundleId=${older.applicationIdentifier}&deviceId=${id}`)).toEqual({ isSuccess: true });
  await waitFor(async () => !(await installedIds(id)).includes(newer.id), 15_000, 'the app gone from the device');
  expect(await lab.hub.db.selectFrom('installed_records').selectAll().where('device_id', '=', id).execute()).toEqual([]);
});

test('a failed install is in the history: who, which app, and the device reason', async () => {
  const serial = lab.devices[0].serial;
  const id = await deviceId(serial);
  const app = await upload();
  await lab.world.failNextInstall(serial, 'INSUFFICIENT_STORAGE');
  const answer = await post(`/Application?action=install&id=${app.id}&deviceId=${id}&wait=true`);
  expect(answer.isSuccess).toBe(false);
  expect(answer.errorMessage).toContain('INSTALL_FAILED_INSUFFICIENT_STORAGE');

  const history = await (await lab.api(lab.admin, `/Report/History?deviceId=${id}&take=200`)).json() as { events: WireEvent[] };
  const failed = history.events.filter((e) => e.eventType === 'ApplicationInstall' && !e.isSuccess);
  expect(failed).toEqual([expect.objectContaining({
    message: 'Application Install Failed', applicationName: 'Contact Manager', performedByName: expect.any(String),
    stringValue: expect.stringContaining('INSTALL_FAILED_INSUFFICIENT_STORAGE'),
  })]);
});
