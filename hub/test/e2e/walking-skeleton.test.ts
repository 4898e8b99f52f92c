/**
 * The walking skeleton's acceptance, end to end: REST client -> hub -> gRPC link -> gateway -> real adb
 * server -> simulated devices speaking adbd, with records in real PostgreSQL.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { startTestLab, waitFor, type TestLab } from '../support/lab';
import { fixture } from '../../../scripts/jest/shared-files';


interface WireDevice {
  id: string; name: string; availability: string; model?: string; manufacturer?: string; serialNumber?: string;
  operatingSystem: string; operatingSystemVersion?: string; vendorUniqueIdentifier: string;
  installedApplications?: { id: string; applicationIdentifier: string }[];
  lastConnectedAt?: string; lastDisconnectedAt?: string;
}

let lab: TestLab;
let admin: { login: string; token: string };

beforeAll(async () => {
  lab = await startTestLab({ androidCount: 2 });
  admin = lab.admin;
}, 90_000);

afterAll(() => lab?.stop(), 60_000);

async function listDevices(query = ''): Promise<WireDevice[]> {
  const res = await lab.api(admin, `/Device${query}`);
  expect(res.status).toBe(200);
  return (await res.json()) as WireDevice[];
}

async function deviceBySerial(serial: string, query = ''): Promise<WireDevice> {
  const found = (await listDevices(query)).find((d) => d.serialNumber === serial);
  if (!found) throw new Error(`device ${serial} not listed`);
  return found;
}

async function pollAsync(id: string): Promise<unknown> {
  const { value } = await waitFor(async () => {
    const body = await (await lab.api(admin, `/Async?id=${id}`)).json() as { isComplete?: boolean; data?: unknown };
    return body.isComplete ? body : undefined;
  }, 30_000, `async job ${id}`);
  return value.data;
}

test('lists the simulated devices Online with the facts read from their getprop', async () => {
  for (const spec of lab.devices) {
    const device = await deviceBySerial(spec.serial);
    expect(device).toMatchObject({
      availability: 'Online', operatingSystem: 'Android', model: spec.model, manufacturer: spec.manufacturer,
      serialNumber: spec.serial, operatingSystemVersion: spec.androidVersion,
    });
    expect(device.id).toMatch(/^[0-9a-f-]{36}$/);
  }
});

test('properties=true lists the getprop values; allApplications=true lists unmanaged packages with the zero Guid', async () => {
  const spec = lab.devices[0];
  const { id } = await deviceBySerial(spec.serial);
  const res = await lab.api(admin, `/Device?id=${id}&properties=true&allApplications=true`);
  const [device] = await res.json() as (WireDevice & { properties: { name: string; value: string; type: string }[] })[];
  expect(device.properties).toEqual(expect.arrayContaining([
    { name: 'ro.product.model', value: spec.model, type: 'System' },
    { name: 'ro.serialno', value: spec.serial, type: 'System' },
  ]));
  expect(device.properties.length).toBeGreaterThan(50);
  const packages = device.installedApplications!;
  expect(packages.length).toBeGreaterThan(5);
  expect(packages.every((p) => p.id === '00000000-0000-0000-0000-000000000000')).toBe(true);
  expect(packages.map((p) => p.applicationIdentifier)).toContain('com.android.settings');
  // Without the flags neither list is there.
  const [plain] = await (await lab.api(admin, `/Device?id=${id}`)).json() as Record<string, unknown>[];
  expect(plain).not.toHaveProperty('properties');
  expect(plain).not.toHaveProperty('installedApplications');
});

test('a real APK uploads, installs through the async API, launches and uninstalls', async () => {
  const spec = lab.devices[0];
  const form = new FormData();
  form.append('upload', new Blob([readFileSync(fixture('ContactManager.apk'))]), 'ContactManager.apk');
  const upload = await (await lab.api(admin, '/Application?add', { method: 'POST', body: form })).json() as
    { isSuccess: boolean; data: { asyncResponseId: string } };
  expect(upload.isSuccess).toBe(true);
  const app = await pollAsync(upload.data.asyncResponseId) as { id: string; applicationIdentifier: string };
  expect(app.applicationIdentifier).toBe('com.example.android.contactmanager');

  const device = await deviceBySerial(spec.serial);
  const install = await (await lab.api(admin, `/Application?action=install&id=${app.id}&deviceId=${device.id}`,
    { method: 'POST' })).json() as { data: { asyncResponseId: string } };
  expect(await pollAsync(install.data.asyncResponseId)).toEqual({ isSuccess: true });

  await waitFor(async () => (await deviceBySerial(spec.serial, '?applications=true')).installedApplications
    ?.some((a) => a.id === app.id), 10_000, 'the app in installedApplications');
  expect((await lab.world.installedPackages(spec.serial)).map((p) => p.packageName))
    .toContain('com.example.android.contactmanager');

  const launch = await (await lab.api(admin,
    `/Application?action=launch&id=${app.id}&deviceId=${spec.serial}&arguments=--es+greeting+hello`,
    { method: 'POST' })).json() as { data: { asyncResponseId: string } };
  expect(await pollAsync(launch.data.asyncResponseId)).toEqual({ isSuccess: true });
  const starts = await lab.world.amStartLog(spec.serial);
  expect(JSON.stringify(starts)).toContain('com.example.android.contactmanager/com.example.android.contactmanager.ContactManager');
  expect(JSON.stringify(starts)).toContain('greeting');

  const events = await lab.hub.db.selectFrom('events').select(['event_type', 'message', 'application_id'])
    .where('device_id', '=', device.id).where('event_type', 'like', 'Application%').orderBy('event_date').execute();
  expect(events).toEqual([
    { event_type: 'ApplicationInstall', message: 'Application Installed', application_id: app.id },
    { event_type: 'ApplicationLaunch', message: 'Application Launched', application_id: app.id },
  ]);

  const uninstall = await (await lab.api(admin, `/Application?action=uninstall&id=${app.id}&deviceId=${device.id}`,
    { method: 'POST' })).json();
  expect(uninstall).toEqual({ isSuccess: true });
  await waitFor(async () => !(await deviceBySerial(spec.serial, '?applications=true')).installedApplications
    ?.some((a) => a.id === app.id), 10_000, 'the app gone from installedApplications');
  expect((await lab.world.installedPackages(spec.serial)).map((p) => p.packageName))
    .not.toContain('com.example.android.contactmanager');
}, 90_000);

test('a device retained by one user cannot be released by another', async () => {
  const alice = await lab.addUser('alice@lab.test', ['Tester']);
  const bob = await lab.addUser('bob@lab.test', ['Tester']);
  const device = await deviceBySerial(lab.devices[1].serial);
  const retain = await (await lab.api(alice, `/Device?action=retain&id=${device.id}`, { method: 'POST' })).json() as
    { isSuccess: boolean; data: { authenticator: string; deviceVendorUniqueIdentifier: string } };
  expect(retain.isSuccess).toBe(true);
  expect(retain.data.deviceVendorUniqueIdentifier).toBe(device.vendorUniqueIdentifier);

  const byBob = await (await lab.api(bob, `/Device?action=release&id=${device.id}`, { method: 'POST' })).json();
  expect(byBob).toEqual({ isSuccess: false, errorMessage: `Device '${device.name}' is in use by 'alice@lab.test'.`, errorCode: 'DEVICE_IN_USE' });
  const byAlice = await (await lab.api(alice, `/Device?action=release&id=${device.id}`, { method: 'POST' })).json();
  expect(byAlice).toEqual({ isSuccess: true });
});

test('reboot shows the device Offline until the simulated boot completes', async () => {
  const spec = lab.devices[1];
  const device = await deviceBySerial(spec.serial);
  // When the simulated device finishes its boot (sys.boot_completed=1), as this process's clock sees it.
  const simulated = lab.world.device(spec.serial);
  let bootCompletedAt: number | undefined;
  const onPower = (power: string) => { if (power === 'booted') bootCompletedAt = Date.now(); };
  simulated.on('state', onPower);
  try {
    const reboot = await (await lab.api(admin, `/Device?action=reboot&id=${device.id}`, { method: 'POST' })).json();
    expect(reboot).toEqual({ isSuccess: true });
    expect((await deviceBySerial(spec.serial)).availability).toBe('Offline');
    let onlineSeenAt = 0;
    const { elapsedMs } = await waitFor(async () => {
      const online = (await deviceBySerial(spec.serial)).availability === 'Online';
      if (online) onlineSeenAt = Date.now();
      return online;
    }, 30_000, 'the rebooted device Online again');
    // The simulator takes 1.5 s to reboot and 1 s more to complete its boot.
    expect(elapsedMs).toBeGreaterThanOrEqual(2_000);
    // Online only once the boot had completed, not when adbd came back while still booting.
    expect(bootCompletedAt).toBeDefined();
    expect(onlineSeenAt).toBeGreaterThanOrEqual(bootCompletedAt!);
    expect((await deviceBySerial(spec.serial)).id).toBe(device.id);
  } finally {
    simulated.off('state', onPower);
  }
}, 60_000);

test('a killed gateway takes its devices Offline within 5 s; restarted, the same devices come back', async () => {
  const before = await listDevices();
  await lab.stopGateway();
  const { elapsedMs } = await waitFor(async () => (await listDevices()).every((d) => d.availability === 'Offline'),
    10_000, 'every device Offline');
  expect(elapsedMs).toBeLessThan(5_000);

  await lab.restartGateway();
  await waitFor(async () => (await listDevices()).every((d) => d.availability === 'Online'), 20_000, 'devices Online');
  const after = await listDevices();
  expect(after.map((d) => d.id).sort()).toEqual(before.map((d) => d.id).sort());
}, 60_000);

test('unplugging a device (adb disconnect) takes it Offline; plugged again it keeps its Guid', async () => {
  const spec = lab.devices[0];
  const before = await deviceBySerial(spec.serial);
  // Wire dates carry whole seconds.
  const second = (d: Date) => Math.floor(d.getTime() / 1000) * 1000;
  const unpluggedAt = second(new Date());
  await lab.world.unplug(spec.serial);
  await waitFor(async () => (await deviceBySerial(spec.serial)).availability === 'Offline', 10_000, 'Offline');
  const offline = await deviceBySerial(spec.serial);
  expect(Date.parse(offline.lastDisconnectedAt!)).toBeGreaterThanOrEqual(unpluggedAt);
  expect(Date.parse(offline.lastConnectedAt!)).toBeLessThanOrEqual(Date.parse(offline.lastDisconnectedAt!));
  const pluggedAt = second(new Date());
  await lab.world.plug(spec.serial);
  await waitFor(async () => (await deviceBySerial(spec.serial)).availability === 'Online', 20_000, 'Online');
  const back = await deviceBySerial(spec.serial);
  expect(back.id).toBe(before.id);
  expect(Date.parse(back.lastConnectedAt!)).toBeGreaterThanOrEqual(pluggedAt);
  expect(back.lastDisconnectedAt).toBe(offline.lastDisconnectedAt);
}, 60_000);
