/**
 * The device record is true when a call returns: what a client reads right after install, uninstall
 * or reset is what the device has, every time, without waiting.
 */
import { readFileSync } from 'node:fs';
import { sql } from 'kysely';
import { fixture } from '../../../scripts/jest/shared-files';
import { startTestLab, type TestLab } from '../support/lab';

interface WireDevice {
  id: string; vendorUniqueIdentifier: string; serialNumber?: string;
  installedApplications?: { id: string; applicationIdentifier: string }[];
}

/** How many times each change is made and read back at once. */
const TRIES = 15;

let lab: TestLab;
let device: WireDevice;
let serial: string;

beforeAll(async () => {
  lab = await startTestLab({ androidCount: 1 });
  serial = lab.devices[0].serial;
  device = (await listed()).find((d) => d.serialNumber === serial)!;
}, 90_000);

afterAll(() => lab?.stop(), 60_000);

async function listed(query = ''): Promise<WireDevice[]> {
  return await (await lab.api(lab.admin, `/Device${query}`)).json() as WireDevice[];
}

async function post(pathAndQuery: string): Promise<{ isSuccess: boolean; errorMessage?: string }> {
  return await (await lab.api(lab.admin, pathAndQuery, { method: 'POST' })).json() as { isSuccess: boolean; errorMessage?: string };
}

/** The identifiers `GET /Device?id=..&allApplications=true` lists for the device right now. */
async function listedApplications(): Promise<string[]> {
  const [read] = await listed(`?id=${device.id}&allApplications=true`);
  return (read.installedApplications ?? []).map((a) => a.applicationIdentifier);
}

async function upload(name: string): Promise<{ id: string; applicationIdentifier: string }> {
  const form = new FormData();
  form.append('upload', new Blob([readFileSync(fixture(name))]), name);
  const reply = await (await lab.api(lab.admin, '/Application?add&wait=true', { method: 'POST', body: form })).json() as
    { isSuccess: boolean; data: { id: string; applicationIdentifier: string } };
  expect(reply.isSuccess).toBe(true);
  return reply.data;
}

test(`install (wait=true), uninstall and uninstallBundle show on the very next read, ${TRIES} times out of ${TRIES}`, async () => {
  const app = await upload('ContactManager.apk');
  let staleAfterInstall = 0;
  let staleAfterUninstall = 0;
  for (let i = 0; i < TRIES; i++) {
    const install = await post(`/Application?action=install&id=${app.id}&deviceId=${device.id}&wait=true`);
    expect(install).toEqual({ isSuccess: true });
    if (!(await listedApplications()).includes(app.applicationIdentifier)) staleAfterInstall++;
    const uninstall = i % 2 === 0
      ? await post(`/Application?action=uninstall&id=${app.id}&deviceId=${device.id}`)
      : await post(`/Application?action=uninstallBundle&bundleId=${app.applicationIdentifier}&deviceId=${device.id}`);
    expect(uninstall).toEqual({ isSuccess: true });
    if ((await listedApplications()).includes(app.applicationIdentifier)) staleAfterUninstall++;
  }
  expect({ staleAfterInstall, staleAfterUninstall }).toEqual({ staleAfterInstall: 0, staleAfterUninstall: 0 });
}, 180_000);

test('reset with uninstallAll removes every user app the device has, including ones installed over adb, despite a stale record', async () => {
  const app = await upload('ContactManager.apk');
  expect(await post(`/Application?action=install&id=${app.id}&deviceId=${device.id}&wait=true`)).toEqual({ isSuccess: true });
  // Installed by the device's holder over adb, behind the hub's back.
  const adb = await lab.world.adbCli.run(['-s', device.vendorUniqueIdentifier, 'install', fixture('ApiDemos-debug.apk')], 60_000);
  expect(adb.stdout).toContain('Success');
  // A record entry for an app that is no longer on the device (removed over adb while the hub was away).
  await lab.hub.db.updateTable('devices')
    .set((eb) => ({ installed_packages: eb.fn('jsonb_insert', [
      'installed_packages', eb.val('{0}'),
      eb.val(JSON.stringify({ identifier: 'com.example.gone', version: '1', buildVersion: '1', system: false })),
    ]) }))
    .where('id', '=', device.id).execute();
  const userApps = (await lab.world.installedPackages(serial, { thirdPartyOnly: true })).map((p) => p.packageName);
  expect(userApps.length).toBeGreaterThanOrEqual(2);

  expect(await post(`/Device?action=reset&id=${device.id}&uninstallAll=true&reboot=false`)).toEqual({ isSuccess: true });
  const listedAfter = await listedApplications();
  for (const identifier of [...userApps, 'com.example.gone']) expect(listedAfter).not.toContain(identifier);
  expect(listedAfter).toContain('com.android.settings');
  expect(await lab.world.installedPackages(serial, { thirdPartyOnly: true })).toEqual([]);
}, 120_000);

test('a reset whose removal truly fails names the package and the device\'s reason', async () => {
  const app = await upload('ContactManager.apk');
  expect(await post(`/Application?action=install&id=${app.id}&deviceId=${device.id}&wait=true`)).toEqual({ isSuccess: true });
  lab.world.device(serial).pm.refuseUninstall(app.applicationIdentifier, 'DELETE_FAILED_DEVICE_POLICY_MANAGER');
  try {
    const reset = await post(`/Device?action=reset&id=${device.id}&uninstallAll=true&reboot=false`);
    expect(reset.isSuccess).toBe(false);
    expect(reset.errorMessage).toContain(app.applicationIdentifier);
    expect(reset.errorMessage).toContain('DELETE_FAILED_DEVICE_POLICY_MANAGER');
    expect(await listedApplications()).toContain(app.applicationIdentifier);
  } finally {
    lab.world.device(serial).pm.refuseUninstall(app.applicationIdentifier, undefined);
  }
}, 120_000);

test('a device failure keeps its code and reads the same on the direct and the async path', async () => {
  const app = await upload('ContactManager.apk');
  await post(`/Application?action=uninstallBundle&bundleId=${app.applicationIdentifier}&deviceId=${device.id}`);
  await lab.world.failNextInstall(serial, 'INSUFFICIENT_STORAGE');
  const direct = await post(`/Application?action=install&id=${app.id}&deviceId=${device.id}&wait=true`);

  await lab.world.failNextInstall(serial, 'INSUFFICIENT_STORAGE');
  const started = await (await lab.api(lab.admin, `/Application?action=install&id=${app.id}&deviceId=${device.id}`,
    { method: 'POST' })).json() as { data: { asyncResponseId: string } };
  let polled: { isComplete: boolean; data?: unknown } = { isComplete: false };
  while (!polled.isComplete) {
    await new Promise((resolve) => setTimeout(resolve, 100));
    polled = await (await lab.api(lab.admin, `/Async?id=${started.data.asyncResponseId}`)).json() as typeof polled;
  }

  expect(direct).toEqual({
    isSuccess: false,
    errorMessage: expect.stringMatching(/^Installing the application on device '.+' failed: .*INSTALL_FAILED_INSUFFICIENT_STORAGE/),
    errorCode: 'INSTALL_FAILED_INSUFFICIENT_STORAGE',
  });
  expect(polled.data).toEqual(direct);
  expect(await listedApplications()).not.toContain(app.applicationIdentifier);
}, 60_000);

/**
 * Makes PostgreSQL refuse the next `refusals` writes of the device's installed packages with SQLSTATE `code`, as a
 * trigger raising it would (40P01: rolled back to break a deadlock); returns how to lift it.
 */
async function refusePackageWrites(code: string, refusals: number): Promise<() => Promise<void>> {
  // A sequence counts the refusals: it is not rolled back with the refused write.
  await sql`CREATE SEQUENCE package_write_refusals`.execute(lab.hub.db);
  await sql.raw(`CREATE FUNCTION refuse_package_write() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      IF nextval('package_write_refusals') <= ${refusals} THEN RAISE EXCEPTION 'refused for the test' USING ERRCODE = '${code}'; END IF;
      RETURN NEW;
    END $$`).execute(lab.hub.db);
  await sql`CREATE TRIGGER refuse_package_write BEFORE UPDATE OF installed_packages ON devices
    FOR EACH ROW WHEN (OLD.installed_packages IS DISTINCT FROM NEW.installed_packages) EXECUTE FUNCTION refuse_package_write()`.execute(lab.hub.db);
  return async () => {
    await sql`DROP TRIGGER refuse_package_write ON devices`.execute(lab.hub.db);
    await sql`DROP FUNCTION refuse_package_write()`.execute(lab.hub.db);
    await sql`DROP SEQUENCE package_write_refusals`.execute(lab.hub.db);
  };
}

test('an install whose new state PostgreSQL rolls back for a deadlock is recorded all the same: the next read shows it', async () => {
  const app = await upload('ContactManager.apk');
  await post(`/Application?action=uninstallBundle&bundleId=${app.applicationIdentifier}&deviceId=${device.id}`);
  const lift = await refusePackageWrites('40P01', 1);
  try {
    expect(await post(`/Application?action=install&id=${app.id}&deviceId=${device.id}&wait=true`)).toEqual({ isSuccess: true });
    expect(await listedApplications()).toContain(app.applicationIdentifier);
  } finally {
    await lift();
  }
}, 60_000);

test('an install whose new state the records do not take fails with RECORD_FAILED, not a success the next read belies', async () => {
  const app = await upload('ContactManager.apk');
  await post(`/Application?action=uninstallBundle&bundleId=${app.applicationIdentifier}&deviceId=${device.id}`);
  const lift = await refusePackageWrites('P0001', 100);
  try {
    const install = await post(`/Application?action=install&id=${app.id}&deviceId=${device.id}&wait=true`);
    expect(install).toEqual({
      isSuccess: false,
      errorMessage: expect.stringMatching(/^Installing the application on device '.+' failed: the device carried it out, but the hub could not record/),
      errorCode: 'RECORD_FAILED',
    });
  } finally {
    await lift();
  }
  // Once the records take writes again, the same install succeeds and reads back.
  expect(await post(`/Application?action=install&id=${app.id}&deviceId=${device.id}&wait=true`)).toEqual({ isSuccess: true });
  expect(await listedApplications()).toContain(app.applicationIdentifier);
}, 60_000);
