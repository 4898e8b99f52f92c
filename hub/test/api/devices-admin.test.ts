/**
 * Administering devices over HTTP against a whole lab (real hub, real gateway, labsim devices behind the real
 * adb server): reset, enable/disable, update, delete across a gateway restart, the licensed device limit at
 * discovery, /Settings and /Device/AppiumLog. Requests are shaped as the C# client (form bodies, `update=`) and
 * curl (verbs in the query, JSON bodies) send them.
 */
import { defaultAndroidLab } from '@devicelab/labsim';
import { LICENSED_DEVICES_ENV } from '../../src/config';
import { startTestLab, waitFor, type TestLab } from '../support/lab';
import type { FailureCode } from '@devicelab/shared';

let lab: TestLab;
let admin: { login: string; token: string };
let tester: { login: string; token: string };
let serial: string;
let deviceId: string;

beforeAll(async () => {
  lab = await startTestLab({ androidCount: 1 });
  admin = lab.admin;
  tester = await lab.addUser('tester@example.com', ['Tester']);
  await lab.hub.db.insertInto('roles').values({ name: 'ListOnly', entitlements: ['DeviceList'] }).execute();
  serial = lab.devices[0].serial;
  const row = await lab.hub.db.selectFrom('devices').select('id').where('serial_number', '=', serial).executeTakeFirstOrThrow();
  deviceId = row.id;
}, 60_000);
afterAll(async () => {
  delete process.env[LICENSED_DEVICES_ENV];
  await lab.stop();
}, 60_000);

async function call(method: 'GET' | 'POST', pathAndQuery: string, init: { form?: string; json?: string; as?: typeof admin } = {}) {
  const headers: Record<string, string> = {};
  let body: string | undefined;
  if (init.form !== undefined) { headers['content-type'] = 'application/x-www-form-urlencoded'; body = init.form; }
  if (init.json !== undefined) { headers['content-type'] = 'application/json; charset=utf-8'; body = init.json; }
  const res = await lab.api(init.as ?? admin, pathAndQuery.replace(/^\/apiv1/, ''), { method, headers, body });
  expect(res.status).toBe(200);
  return res.text();
}
const device = () => lab.hub.db.selectFrom('devices').selectAll().where('id', '=', deviceId).executeTakeFirstOrThrow();
const messages = async () => (await lab.hub.db.selectFrom('events').select(['message', 'string_value'])
  .where('device_id', '=', deviceId).orderBy('event_date').orderBy('id').execute()).map((e) => e.message);
const OK = '{"isSuccess":true}';
const fail = (text: string, errorCode?: FailureCode, errorParameter?: string) =>
  JSON.stringify({ isSuccess: false, errorMessage: text, errorCode, errorParameter });

describe('POST /Device action=reset', () => {
  it('uninstalls every third-party package through the gateway, then reboots the device', async () => {
    expect((await lab.world.installedPackages(serial, { thirdPartyOnly: true })).length).toBeGreaterThan(0);
    const powerStates: string[] = [];
    lab.world.device(serial).on('state', (state: string) => powerStates.push(state));
    // Without DeviceApplicationManagement (checked first) nothing happens.
    const noApps = await lab.addUser('noapps@example.com', ['ListOnly']);
    expect(await call('POST', '/apiv1/Device', { form: `action=Reset&id=${serial}`, as: noApps }))
      .toBe(fail('User does not have required entitlement: DeviceApplicationManagement', 'ENTITLEMENT_REQUIRED'));

    expect(await call('POST', '/apiv1/Device', { form: `action=Reset&id=${serial}&uninstallAll=&reboot=` })).toBe(OK);
    expect(await lab.world.installedPackages(serial, { thirdPartyOnly: true })).toEqual([]);
    await waitFor(async () => (await device()).availability === 'Online' && powerStates.includes('booted'), 30_000, 'device back Online after reset');
    expect(powerStates).toContain('rebooting');
    expect(await messages()).toEqual(expect.arrayContaining(['Device Offline', 'Device Online']));
    // The hub's record follows: no user-installed package left.
    await waitFor(async () => (await device()).installed_packages.every((p) => p.system), 10_000, 'package list refreshed');
  }, 60_000);

  it('explicit uninstallAll=false&reboot=false does nothing and needs neither entitlement', async () => {
    const none = await lab.addUser('none@example.com', ['ListOnly']);
    expect(await call('POST', `/apiv1/Device?action=reset&id=${deviceId}&unInstallAll=false&reboot=False`, { as: none })).toBe(OK);
    expect(await call('POST', `/apiv1/Device?action=reset&id=${deviceId}&reboot=maybe`))
      .toBe(fail('Value is not equivalent to either TrueString or FalseString.', 'INVALID_PARAMETER', 'reboot'));
  });
});

describe('enable / disable / update over HTTP', () => {
  it('a disabled device cannot be retained, rebooted or reset; enabling again restores it', async () => {
    expect(await call('POST', `/apiv1/Device?update=&id=${deviceId}`, { json: '{"Enabled":"False"}' })).toBe(OK);
    expect(await call('POST', `/apiv1/Device?update&id=${serial}`, { json: '{slotNumber:"1777", notes:"rack 3"}' })).toBe(OK);
    for (const action of ['Retain', 'Reboot', 'Reset']) {
      expect(await call('POST', '/apiv1/Device', { form: `action=${action}&id=${serial}` })).toBe(fail('Device is disabled.', 'DEVICE_UNAVAILABLE'));
    }
    const [listed] = JSON.parse(await call('GET', `/apiv1/Device?id=${deviceId}`));
    expect(listed).toMatchObject({ enabled: false, slotNumber: 1777, notes: 'rack 3', availability: 'Online' });
    expect(JSON.parse(await call('GET', '/apiv1/Device/Available'))).toEqual([]);
    expect(await call('POST', '/apiv1/Device', { form: `action=Disable&id=${serial}` })).toBe(OK);
    expect(await call('POST', '/apiv1/Device', { form: `action=Enable&id=${serial}`, as: tester }))
      .toBe(fail('User does not have required entitlement: DeviceEnablement', 'ENTITLEMENT_REQUIRED'));
    expect(await call('POST', '/apiv1/Device', { form: `action=Enable&id=${serial}` })).toBe(OK);
    expect(await call('POST', '/apiv1/Device', { form: `action=Enable&id=${serial}` })).toBe(OK);
    expect(JSON.parse(await call('GET', '/apiv1/Device/Available')).map((d: { id: string }) => d.id)).toEqual([deviceId]);
    const enablement = (await messages()).filter((m) => m === 'Device Disabled' || m === 'Device Enabled');
    expect(enablement).toEqual(['Device Disabled', 'Device Enabled']);
  });

  it('lastInuseAt: now while retained, the release time afterwards', async () => {
    const retained = JSON.parse(await call('POST', '/apiv1/Device', { form: `action=Retain&id=${serial}` }));
    expect(retained.isSuccess).toBe(true);
    const [during] = JSON.parse(await call('GET', `/apiv1/Device?id=${deviceId}`));
    expect(Date.parse(during.lastInuseAt)).toBeGreaterThan(Date.now() - 5_000);
    expect(await call('POST', '/apiv1/Device', { form: `action=Release&id=${serial}` })).toBe(OK);
    const [after] = JSON.parse(await call('GET', `/apiv1/Device?id=${deviceId}`));
    await new Promise((r) => setTimeout(r, 1100));
    const [later] = JSON.parse(await call('GET', `/apiv1/Device?id=${deviceId}`));
    expect(later.lastInuseAt).toBe(after.lastInuseAt);
  });
});

describe('delete', () => {
  it('refuses an Online device; deletes it once Offline; reported Online again, it is no longer deleted', async () => {
    expect(await call('POST', '/apiv1/Device', { form: `delete=&id=${serial}` }))
      .toBe(fail(`Device '${(await device()).name}' is online; only an offline device can be deleted.`));
    await lab.stopGateway();
    await waitFor(async () => (await device()).availability === 'Offline', 15_000, 'device Offline');
    expect(await call('POST', `/apiv1/Device?delete&id=${serial}`)).toBe(OK);
    expect(await call('POST', `/apiv1/Device?delete&id=${deviceId}`)).toBe(OK);
    await lab.restartGateway();
    await waitFor(async () => (await device()).availability === 'Online', 30_000, 'device reported again');
    const [listed] = JSON.parse(await call('GET', `/apiv1/Device?id=${deviceId}`));
    expect(listed).toMatchObject({ deleted: false, availability: 'Online' });
    expect(Date.parse(listed.lastConnectedAt)).toBeGreaterThanOrEqual(Date.parse(listed.lastDisconnectedAt));
    expect(JSON.parse(await call('GET', '/apiv1/Device/Available')).map((d: { id: string }) => d.id)).toEqual([deviceId]);
    expect((await messages()).filter((m) => m === 'Device Deleted' || m === 'Device Undeleted'))
      .toEqual(['Device Deleted', 'Device Undeleted']);
  }, 60_000);
});

describe('licensed device limit at discovery', () => {
  it('a device plugged in beyond the limit stays disabled, and enabling it fails with the limit text', async () => {
    process.env[LICENSED_DEVICES_ENV] = '1';
    const spec = defaultAndroidLab(2)[1];
    await lab.world.addAndroidDevice(spec);
    const { value: newcomer } = await waitFor(() => lab.hub.db.selectFrom('devices').selectAll()
      .where('serial_number', '=', spec.serial).where('availability', '=', 'Online').executeTakeFirst(), 30_000, 'new device Online');
    expect(newcomer.enabled).toBe(false);
    const text = 'The licensed device limit of 1 enabled device is reached; disable or delete another device first.';
    expect(await call('POST', '/apiv1/Device', { form: `action=Enable&id=${spec.serial}` })).toBe(fail(text));
    expect(JSON.parse(await call('GET', '/apiv1/Settings'))).toEqual({ isSuccess: true,
      data: { resetUninstallAll: true, resetReboot: true, licensedDeviceLimit: 1, dataPortState: 'Data', retainIdleMinutes: 30, retainIdleMaxMinutes: 240, leaseMaxMinutes: 0 } });
    // Freeing the place lets it in.
    expect(await call('POST', '/apiv1/Device', { form: `action=Disable&id=${serial}` })).toBe(OK);
    expect(await call('POST', '/apiv1/Device', { form: `action=Enable&id=${spec.serial}` })).toBe(OK);
    delete process.env[LICENSED_DEVICES_ENV];
  }, 60_000);
});

describe('/Settings and /Device/AppiumLog', () => {
  it('GET and POST /Settings for administrators only', async () => {
    expect(await call('GET', '/apiv1/Settings')).toBe('{"isSuccess":true,"data":{"resetUninstallAll":true,"resetReboot":true,"retainIdleMinutes":30,"retainIdleMaxMinutes":240,"leaseMaxMinutes":0,"dataPortState":"Data"}}');
    expect(await call('GET', '/apiv1/Settings', { as: tester })).toBe(fail('User does not have required entitlement: SystemManageSettings', 'ENTITLEMENT_REQUIRED'));
    expect(await call('POST', '/apiv1/Settings?update', { json: '{"resetReboot":"false"}', as: tester }))
      .toBe(fail('User does not have required entitlement: SystemManageSettings', 'ENTITLEMENT_REQUIRED'));
    expect(await call('POST', '/apiv1/Settings?update=', { json: '{resetReboot:"False"}' })).toBe(OK);
    expect(JSON.parse(await call('GET', '/apiv1/Settings')).data).toEqual({ resetUninstallAll: true, resetReboot: false, dataPortState: 'Data', retainIdleMinutes: 30, retainIdleMaxMinutes: 240, leaseMaxMinutes: 0 });
    expect(await call('POST', '/apiv1/Settings?update', { json: '{"resetReboot":"x"}' }))
      .toBe(fail('Value is not equivalent to either TrueString or FalseString.'));
    expect(await call('POST', '/apiv1/Settings?update', { json: '{"resetReboot":true}' })).toBe(OK);
  });

  it('AppiumLog is an empty log Result', async () => {
    expect(await call('GET', `/apiv1/Device/AppiumLog?id=${serial}&currentSessionOnly=true`)).toBe('{"isSuccess":true,"data":""}');
    expect(await call('GET', '/apiv1/Device/AppiumLog?get=&id=nope&currentSessionOnly=')).toBe(fail("Device 'nope' not found.", 'DEVICE_NOT_FOUND'));
  });
});
