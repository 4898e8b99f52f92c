import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { hubConfigFromEnv } from '../../src/config';
import { startHub, type RunningHub } from '../../src/server';
import { startTestLab, type TestLab } from '../support/lab';
import { createTestDatabase, type TestDatabase } from '../support/test-database';
import { fixture } from '../../../scripts/jest/shared-files';
import type { FailureCode } from '@devicelab/shared';

/** /Application update, delete, filters and uninstallBundle over HTTP, on a whole lab (real gateway, labsim). */
let lab: TestLab;
let admin: { login: string; token: string };
let tester: { login: string; token: string };
beforeAll(async () => {
  lab = await startTestLab({ androidCount: 1 });
  admin = lab.admin;
  await lab.hub.db.insertInto('roles').values({ name: 'Viewer', entitlements: ['ApplicationList', 'DeviceList'] }).execute();
  tester = await lab.addUser('viewer@example.com', ['Viewer']);
}, 60_000);
afterAll(() => lab.stop(), 60_000);

async function call(method: string, p: string, init: { body?: string | FormData; json?: boolean; form?: boolean;
  as?: { login: string; token: string } } = {}) {
  const headers: Record<string, string> = {};
  if (init.json) headers['content-type'] = 'application/json; charset=utf-8';
  if (init.form) headers['content-type'] = 'application/x-www-form-urlencoded';
  const res = await lab.api(init.as ?? admin, p, { method, body: init.body, headers });
  expect(res.status).toBe(200);
  return res.text();
}
async function upload(name: string) {
  const fd = new FormData();
  fd.append('upload', new Blob([await readFile(fixture(name))]), name);
  const reply = JSON.parse(await call('POST', '/Application?add&wait=true', { body: fd }));
  expect(reply.isSuccess).toBe(true);
  return reply.data;
}
const failure = (text: string, errorCode?: FailureCode, errorParameter?: string) =>
  JSON.stringify({ isSuccess: false, errorMessage: text, errorCode, errorParameter });
const blobStored = async (sha: string) =>
  (await lab.hub.db.selectFrom('blobs').select('sha256').where('sha256', '=', sha).executeTakeFirst()) !== undefined;

describe('POST /Application?update', () => {
  it('renames with an unquoted-key JSON body (curl form) and a PascalCase key (C# form)', async () => {
    const app = await upload('ContactManager.apk');
    expect(await call('POST', `/Application?update&id=${app.id}`, { body: '{displayName:"API Updated Application Name"}', json: true }))
      .toBe('{"isSuccess":true}');
    expect(JSON.parse(await call('GET', `/Application?id=${app.id}`))[0].displayName).toBe('API Updated Application Name');
    expect(await call('POST', `/Application?update=&id=${app.id}`, { body: '{"DisplayName":"From CSharp"}', json: true }))
      .toBe('{"isSuccess":true}');
    const [after] = JSON.parse(await call('GET', `/Application?get=&id=${app.id}`));
    expect(after).toEqual({ ...app, displayName: 'From CSharp' });
  });

  it('unknown keys, bad JSON, bad id and missing entitlement fail and change nothing', async () => {
    const app = await upload('ContactManager.apk');
    expect(await call('POST', `/Application?update&id=${app.id}`, { body: '{displayName:"x", version:"9"}', json: true }))
      .toBe(failure("Property 'version' cannot be updated. Updatable properties: displayName, enabled, notes."));
    expect(await call('POST', `/Application?update&id=${app.id}`, { body: '{displayName:"x", enabled:"maybe"}', json: true }))
      .toBe(failure('Value is not equivalent to either TrueString or FalseString.'));
    expect(await call('POST', `/Application?update&id=${app.id}`, { body: JSON.stringify({ notes: 'n'.repeat(4001) }), json: true }))
      .toBe(failure('notes must be at most 4000 characters.'));
    expect(JSON.parse(await call('POST', `/Application?update&id=${app.id}`, { body: '{displayName:', json: true })).errorMessage)
      .toMatch(/^Invalid JSON body/);
    expect(await call('POST', '/Application?update&id=not-a-guid', { body: '{displayName:"x"}', json: true }))
      .toBe(failure('Invalid Guid format: not-a-guid', 'INVALID_PARAMETER', 'id'));
    expect(await call('POST', '/Application?update&id=not-a-guid', { body: '{displayName:"x"}', json: true, as: tester }))
      .toBe(failure('User does not have required entitlement: ApplicationModify', 'ENTITLEMENT_REQUIRED'));
    expect(JSON.parse(await call('GET', `/Application?id=${app.id}`))).toEqual([app]);
  });
});

describe('POST /Application?update: enabled and notes (extension)', () => {
  it('a disabled application is listed as disabled and refuses installs with a clear Result; enabled again it installs', async () => {
    const app = await upload('ContactManager.apk');
    const serial = lab.devices[0].serial;
    expect(await call('POST', `/Application?update&id=${app.id}`, { body: '{"Enabled":"False","notes":"broken build"}', json: true }))
      .toBe('{"isSuccess":true}');
    const [disabled] = JSON.parse(await call('GET', `/Application?id=${app.id}`));
    expect(disabled).toEqual({ ...app, enabled: false, notes: 'broken build' });
    expect(await call('POST', `/Application?action=install&id=${app.id}&deviceId=${serial}&wait=true`))
      .toBe(failure(`Application '${app.displayName}' is disabled: enable it in the library before installing it.`));
    expect(await call('GET', `/Device?anyId=${serial}&applications=true`)).not.toContain(app.id);

    expect(await call('POST', `/Application?update&id=${app.id}`, { body: '{enabled:true, notes:""}', json: true })).toBe('{"isSuccess":true}');
    expect(JSON.parse(await call('GET', `/Application?id=${app.id}`))).toEqual([app]);
    expect(await call('POST', `/Application?action=install&id=${app.id}&deviceId=${serial}&wait=true`)).toBe('{"isSuccess":true}');
    expect(await call('POST', `/Application?action=uninstall&id=${app.id}&deviceId=${serial}`)).toBe('{"isSuccess":true}');
  }, 60_000);
});

describe('POST /Application?delete', () => {
  it('deletes one version (form body, C# style) and all versions; binaries go with the last reference', async () => {
    const v1 = await upload('app-info-android.apk');
    const v2 = await upload('app-info-android.apk');
    const v3 = await upload('app-info-android.apk');
    expect(v3.versionCounter).toBe(3);
    expect(await call('POST', '/Application', { body: `delete=&id=${v1.id}&all=`, form: true })).toBe('{"isSuccess":true}');
    expect(await call('GET', `/Application?id=${v1.id}`)).toBe('[]');
    expect(await blobStored(v1.applicationBlob)).toBe(true);
    expect(await call('POST', `/Application?delete&all=true&id=${v2.id}`)).toBe('{"isSuccess":true}');
    expect(await call('GET', '/Application?applicationIdentifier=com.icyleaf.appinfodemo')).toBe('[]');
    expect(await blobStored(v1.applicationBlob)).toBe(false);
  });

  it('unknown id: the legacy text with a real newline; entitlement first; bad bool rejected', async () => {
    const missing = '477f5020-fe89-4675-8e6d-92ed4302105a';
    expect(await call('POST', `/Application?delete&id=${missing}`))
      .toBe('{"isSuccess":false,"errorMessage":"Application not found.\\nParameter name: application"}');
    expect(await call('POST', `/Application?delete&id=${missing}`, { as: tester }))
      .toBe(failure('User does not have required entitlement: ApplicationDelete', 'ENTITLEMENT_REQUIRED'));
    const app = await upload('ContactManager.apk');
    expect(await call('POST', `/Application?delete&id=${app.id}&all=maybe`))
      .toBe(failure('Value is not equivalent to either TrueString or FalseString.', 'INVALID_PARAMETER', 'all'));
    expect(JSON.parse(await call('GET', `/Application?id=${app.id}`))).toHaveLength(1);
  });
});

describe('GET /Application filters', () => {
  it('typed filters with the vendor texts; enum and names case-insensitive; get= ignored', async () => {
    const app = await upload('app-info-embedded.ipa');
    expect(await call('GET', '/Application?id=nope')).toBe(failure('Invalid Guid format: nope', 'INVALID_PARAMETER', 'id'));
    expect(await call('GET', '/Application?OperatingSystem=Windows')).toBe(failure("The requested value 'Windows' was not found.", 'INVALID_PARAMETER', 'OperatingSystem'));
    const ios = JSON.parse(await call('GET', '/Application?get=&operatingSystem=ios&DisplayName=demo'));
    expect(ios.map((a: { id: string }) => a.id)).toEqual([app.id]);
    expect(JSON.parse(await call('GET', `/Application?Id=${app.id}&fileName=app-info-embedded.ipa&version=1.0&buildVersion=1`
      + '&MinimumOperatingSystemVersion=14.3&applicationIdentifier=com.icyleaf.test.Demo'))).toEqual([app]);
    expect(JSON.parse(await call('GET', `/Application?applicationBlob=${app.applicationBlob}&originalApplicationBlob=${app.applicationBlob}`)))
      .toEqual([app]);
    expect(await call('GET', `/Application?id=${app.id}&operatingSystem=Android`)).toBe('[]');
  });

  it('an uploaded IPA carries every field of the model', async () => {
    const app = await upload('app-info-iphone.ipa');
    expect(app).toMatchObject({
      displayName: 'AppInfoDemo', applicationIdentifier: 'com.icyleaf.AppInfoDemo', version: '1.2.3', buildVersion: '5',
      operatingSystem: 'iOS', minimumOperatingSystemVersion: '9.3', fileName: 'app-info-iphone.ipa', remotePort: 0,
      versionCounter: 1, fileByteCount: 42699, vendorApplicationName: 'AppInfoDemo',
      provisionExpirationDate: '2017-07-27T09:44:49Z', provisionsAllDevices: false,
      signingCertificateName: 'iPhone Developer: Yi Xiao (54P9L43M84)',
      isSigningCertificatePresentInEmbeddedProvisionProfile: true, supportedFormFactors: 'Phone',
      applicationErrors: ['The provisioning profile expired on 2017-07-27T09:44:49Z.'], enabled: true,
      appTeamIdentifier: '5PJA6N5A3B', isAgentDylibEmbeddedInApp: false,
      applicationBlob: '8412b48390243aa11064c707247ca48dd74e4cd4cd2d0dbde76f161b2433c861',
    });
    expect(app.createdDate).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    const ipad = await upload('app-info-ipad.ipa');
    expect(ipad.iconBlob).toMatch(/^data:image\/png;base64,iVBORw0KGgoAAAANSUhEUg/); // IHDR first, no CgBI
  });
});

describe('uninstall on a simulated device', () => {
  async function installContactManager(serial: string) {
    const app = await upload('ContactManager.apk');
    expect(await call('POST', `/Application?action=install&id=${app.id}&deviceId=${serial}&wait=true`)).toBe('{"isSuccess":true}');
    const installed = await lab.world.installedPackages(serial, { thirdPartyOnly: true });
    expect(installed.map((p) => p.packageName)).toContain('com.example.android.contactmanager');
    return app;
  }
  const logOf = async (serial: string) => JSON.parse(await call('GET', `/Device/Log?id=${serial}`)).data as string;
  const uninstallEvents = () => lab.hub.db.selectFrom('events').selectAll()
    .where('message', '=', 'Application Uninstalled').orderBy('event_date').execute();

  it('uninstallBundle (C# form body) removes the package, keeps data when removedate=false, records the event', async () => {
    const serial = lab.devices[0].serial;
    const app = await installContactManager(serial);
    const before = (await uninstallEvents()).length;
    expect(await call('POST', '/Application', { form: true,
      body: `action=UninstallBundle&bundleId=com.example.android.contactmanager&deviceId=${serial}&removedate=False` }))
      .toBe('{"isSuccess":true}');
    const installed = await lab.world.installedPackages(serial, { thirdPartyOnly: true });
    expect(installed.map((p) => p.packageName)).not.toContain('com.example.android.contactmanager');
    expect(await logOf(serial)).toMatch(/Package com\.example\.android\.contactmanager removed \(data kept\)/);
    const events = await uninstallEvents();
    expect(events).toHaveLength(before + 1);
    expect(events[events.length - 1]).toMatchObject({ event_type: 'ApplicationInstall', bool_value: false,
      is_success: true, application_id: app.id, application_name: 'Contact Manager', performed_by_name: 'admin' });
    // Nothing left to remove: the device's answer is the failure.
    expect(JSON.parse(await call('POST',
      `/Application?action=uninstallBundle&bundleId=com.example.android.contactmanager&deviceId=${serial}`)).errorMessage)
      .toMatch(/DELETE_FAILED/);
    expect(await uninstallEvents()).toHaveLength(before + 1);
  });

  it('uninstall by id removes the data when removedata is omitted, and accepts removedate', async () => {
    const serial = lab.devices[0].serial;
    const app = await installContactManager(serial);
    expect(await call('POST', `/Application?action=uninstall&id=${app.id}&deviceId=${serial}`)).toBe('{"isSuccess":true}');
    const removed = (await logOf(serial)).match(/Package com\.example\.android\.contactmanager removed.*/g) ?? [];
    expect(removed[removed.length - 1]).toBe('Package com.example.android.contactmanager removed');
    await installContactManager(serial);
    expect(await call('POST', `/Application?action=uninstall&id=${app.id}&deviceId=${serial}&removedate=false`)).toBe('{"isSuccess":true}');
    const kept = (await logOf(serial)).match(/Package com\.example\.android\.contactmanager removed.*/g) ?? [];
    expect(kept[kept.length - 1]).toBe('Package com.example.android.contactmanager removed (data kept)');
  });

  it('uninstallBundle checks the entitlement first, then parameters and the device', async () => {
    expect(await call('POST', '/Application?action=uninstallBundle&bundleId=x&deviceId=nothing', { as: tester }))
      .toBe(failure('User does not have required entitlement: DeviceApplicationManagement', 'ENTITLEMENT_REQUIRED'));
    expect(await call('POST', '/Application?action=uninstallBundle&deviceId=nothing'))
      .toBe(failure("Parameter 'bundleId' is required."));
    expect(await call('POST', '/Application?action=uninstallBundle&bundleId=x&deviceId=nothing'))
      .toBe(failure("Device 'nothing' not found.", 'DEVICE_NOT_FOUND'));
    expect(await call('POST', `/Application?action=uninstallBundle&bundleId=x&deviceId=${lab.devices[0].serial}&removedata=perhaps`))
      .toBe(failure('Value is not equivalent to either TrueString or FalseString.', 'INVALID_PARAMETER', 'removedata'));
  });
});

describe('upload size limit (DEVICELAB_UPLOAD_LIMIT_MB)', () => {
  let database: TestDatabase;
  let hub: RunningHub;
  let dataDir: string;
  const token = '5f0c8f0e-8a43-4a7e-9e61-3f3a8d2b1c00';
  beforeAll(async () => {
    database = await createTestDatabase({ maxConnections: 2 });
    dataDir = mkdtempSync(path.join(os.tmpdir(), 'devicelab-limit-'));
    hub = await startHub({ ...hubConfigFromEnv({ DEVICELAB_UPLOAD_LIMIT_MB: '1' }), port: 0, host: '127.0.0.1',
      linkPort: 0, databaseUrl: database.url, dataDir, adminToken: token });
  }, 60_000);
  afterAll(async () => {
    await hub.stop();
    await database.drop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('a file over the limit is a clear failure and leaves nothing behind; one under it is accepted', async () => {
    const post = async (name: string) => {
      const fd = new FormData();
      fd.append('upload', new Blob([await readFile(fixture(name))]), name);
      const res = await fetch(`${hub.url}/apiv1/Application?add&wait=true`, { method: 'POST', body: fd,
        headers: { authorization: `Basic ${Buffer.from(`admin:${token}`).toString('base64')}` } });
      expect(res.status).toBe(200);
      return JSON.parse(await res.text());
    };
    expect(await post('ApiDemos-debug.apk')) // 3 MB
      .toEqual({ isSuccess: false, errorMessage: 'The file is larger than the upload limit of 1048576 bytes.' });
    expect(readdirSync(path.join(dataDir, 'uploads'))).toEqual([]);
    expect(await hub.db.selectFrom('applications').selectAll().execute()).toEqual([]);
    expect((await post('ContactManager.apk')).isSuccess).toBe(true);
  });
});
