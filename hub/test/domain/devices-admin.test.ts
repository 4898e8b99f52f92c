/**
 * Administering devices (spec 2.3, 2.4, 3, 4.2): update with per-property entitlements, delete / undelete,
 * enable / disable, reset defaults and entitlement order, the automation log, the Available view. The licensed
 * device limit and gateway reports are in device-licensing.test.ts. Commands that reach a device run in
 * test/api/devices-admin.test.ts on a whole lab.
 */
import { ApiFailure, type Entitlement } from '@devicelab/shared';
import { rebootDevice } from '../../src/domain/device-actions';
import { readAutomationLog } from '../../src/domain/device-automation-log';
import { resetDevice } from '../../src/domain/device-reset';
import { deviceChangeRequest } from '../../src/api/device-body';
import { settingsChanges } from '../../src/api/settings-body';
import { deleteDevice, setDeviceEnabled, updateDevice } from '../../src/domain/device-updates';
import { listAvailableDevices, listDevices } from '../../src/domain/devices';
import { getHubSettings, updateHubSettings } from '../../src/domain/hub-settings';
import type { LinkServer } from '../../src/gateways/link-server';
import { createTestDatabase, type TestDatabase } from '../support/test-database';
import { ALL, createUser, insertDevice, startIdleLinkServer } from './helpers';

let t: TestDatabase;
let link: LinkServer;
beforeAll(async () => {
  t = await createTestDatabase({ maxConnections: 10 });
  link = await startIdleLinkServer(t.db);
});
afterAll(async () => {
  await link.stop();
  await t.drop();
});

const message = (p: Promise<unknown>) => p.then(() => 'resolved', (e) => (e instanceof ApiFailure ? e.message : `ERR ${e}`));
const without = (...names: Entitlement[]) => ALL.filter((e) => !names.includes(e));
const row = (id: string) => t.db.selectFrom('devices').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
const eventsOf = (id: string) => t.db.selectFrom('events').select(['event_type', 'message', 'bool_value', 'string_value'])
  .where('device_id', '=', id).orderBy('event_date').orderBy('id').execute();
let users = 0;
const user = (entitlements: readonly Entitlement[] = ALL) => createUser(t.db, `admin${++users}@example.com`, entitlements);

describe('POST /Device?update', () => {
  it('accepts lenient JSON: string booleans and numbers, unquoted keys, any key case, identifier by serial', async () => {
    const admin = await user();
    const d = await insertDevice(t.db, { vendor_unique_identifier: 'UPD-1', serial_number: 'UPD-SERIAL-1', notes: 'old' });
    await updateDevice(t.db, admin, d.id, deviceChangeRequest('{"Enabled":"False"}'));
    expect((await row(d.id)).enabled).toBe(false);
    await updateDevice(t.db, admin, 'UPD-SERIAL-1', deviceChangeRequest('{slotNumber:"1777", Name:"Renamed", NOTES:""}'));
    expect(await row(d.id)).toMatchObject({ slot_number: 1777, name: 'Renamed', notes: null, enabled: false });
    await updateDevice(t.db, admin, 'UPD-1', deviceChangeRequest('{"enabled":true,"slotNumber":""}'));
    expect(await row(d.id)).toMatchObject({ slot_number: null, enabled: true });
    expect((await eventsOf(d.id)).map((e) => e.message)).toEqual(['Device Disabled', 'Device Enabled']);
  });

  it('checks DeviceList, then the entitlement of each property present, before values and existence', async () => {
    const d = await insertDevice(t.db);
    const cases: [Entitlement[], string, string][] = [
      [['DeviceList'], '{"name":"x"}', 'DeviceList'],
      [['DeviceModify'], '{"slotNumber":"1"}', 'DeviceModify'],
      [['DeviceModify'], '{"notes":"n"}', 'DeviceModify'],
      [['DeviceEnablement'], '{"enabled":"invalid"}', 'DeviceEnablement'],
      [['DeviceDelete'], '{"deleted":"true"}', 'DeviceDelete'],
      [['DeviceDelete'], '{"name":"fine","deleted":"nonsense"}', 'DeviceDelete'],
    ];
    for (const [missing, body, expected] of cases) {
      const u = await user(without(...missing));
      expect(await message(updateDevice(t.db, u, d.id, deviceChangeRequest(body)))).toBe(`User does not have required entitlement: ${expected}`);
      expect(await message(updateDevice(t.db, u, 'no-such-device', deviceChangeRequest(body)))).toBe(`User does not have required entitlement: ${expected}`);
    }
    // Only what the body touches is checked: a modifier without enablement may rename.
    const modifier = await user(['DeviceList', 'DeviceModify']);
    await updateDevice(t.db, modifier, d.id, deviceChangeRequest('{"name":"By modifier"}'));
    expect((await row(d.id)).name).toBe('By modifier');
  });

  it('invalid values fail clearly and change nothing (all-or-nothing)', async () => {
    const admin = await user();
    const d = await insertDevice(t.db, { name: 'Stable', slot_number: 5, availability: 'Offline' });
    const before = await row(d.id);
    const cases: [string, string][] = [
      ['{"name":"Changed","slotNumber":"abc"}', 'Input string was not in a correct format.'],
      ['{"name":"Changed","slotNumber":"99999999999"}', 'Input string was not in a correct format.'],
      ['{"name":"Changed","enabled":"maybe"}', 'Value is not equivalent to either TrueString or FalseString.'],
      ['{"name":"Changed","deleted":""}', 'Value is not equivalent to either TrueString or FalseString.'],
      ['{"name":"   "}', 'Device name cannot be empty.'],
      ['{"name":"Changed","color":"red"}', "Device property 'color' cannot be updated. Updatable: name, slotNumber, notes, enabled, deleted."],
      ['{}', 'No device properties to update.'],
      ['[1,2]', 'Invalid JSON body: an object is expected.'],
    ];
    for (const [body, text] of cases) expect(await message(updateDevice(t.db, admin, d.id, deviceChangeRequest(body)))).toBe(text);
    expect(await message(updateDevice(t.db, admin, d.id, deviceChangeRequest('{name:')))).toMatch(/^Invalid JSON body: /);
    expect(await message(updateDevice(t.db, admin, 'nope', deviceChangeRequest('{"name":"x"}')))).toBe("Device 'nope' not found.");
    expect(await row(d.id)).toEqual(before);
    expect(await eventsOf(d.id)).toEqual([]);
  });

  it('"deleted":"true" deletes an Offline device, refuses an Online one; "false" restores', async () => {
    const admin = await user();
    const online = await insertDevice(t.db, { name: 'Busy Phone' });
    expect(await message(updateDevice(t.db, admin, online.id, deviceChangeRequest('{"deleted":"true","name":"Other"}'))))
      .toBe("Device 'Busy Phone' is online; only an offline device can be deleted.");
    expect(await row(online.id)).toMatchObject({ deleted: false, name: 'Busy Phone' });

    const off = await insertDevice(t.db, { availability: 'Offline' });
    await updateDevice(t.db, admin, off.id, deviceChangeRequest('{"Deleted":"True"}'));
    expect((await row(off.id)).deleted).toBe(true);
    await updateDevice(t.db, admin, off.id, deviceChangeRequest('{"deleted":"true"}')); // repeating changes nothing
    await updateDevice(t.db, admin, off.id, deviceChangeRequest('{"deleted":"false"}'));
    expect((await row(off.id)).deleted).toBe(false);
    expect(await eventsOf(off.id)).toEqual([
      { event_type: 'DeviceDeletion', message: 'Device Deleted', bool_value: true, string_value: null },
      { event_type: 'DeviceDeletion', message: 'Device Undeleted', bool_value: false, string_value: null },
    ]);
  });
});

describe('POST /Device?delete', () => {
  it('needs DeviceList and DeviceDelete before anything else', async () => {
    const d = await insertDevice(t.db, { availability: 'Offline' });
    for (const missing of ['DeviceList', 'DeviceDelete'] as const) {
      const u = await user(without(missing));
      expect(await message(deleteDevice(t.db, u, d.id))).toBe(`User does not have required entitlement: ${missing}`);
      expect(await message(deleteDevice(t.db, u, 'ghost'))).toBe(`User does not have required entitlement: ${missing}`);
    }
    expect((await row(d.id)).deleted).toBe(false);
  });

  it('deletes Offline devices (enabled or disabled) once, repeating succeeds; Online fails; deleted devices leave the lists', async () => {
    const admin = await user();
    const off = await insertDevice(t.db, { availability: 'Offline' });
    const offDisabled = await insertDevice(t.db, { availability: 'Offline', enabled: false });
    const on = await insertDevice(t.db, { name: 'Online Phone' });
    await deleteDevice(t.db, admin, off.id);
    await deleteDevice(t.db, admin, off.vendor_unique_identifier);
    await deleteDevice(t.db, admin, offDisabled.id);
    expect(await message(deleteDevice(t.db, admin, on.id)))
      .toBe("Device 'Online Phone' is online; only an offline device can be deleted.");
    expect(await message(deleteDevice(t.db, admin, 'ghost'))).toBe("Device 'ghost' not found.");
    expect((await row(off.id)).deleted).toBe(true);
    expect((await row(offDisabled.id)).deleted).toBe(true);
    expect((await row(on.id)).deleted).toBe(false);
    expect((await eventsOf(off.id)).map((e) => e.message)).toEqual(['Device Deleted']);
    expect((await listDevices(t.db, admin, { deleted: true })).map((d) => d.id)).toEqual(expect.arrayContaining([off.id, offDisabled.id]));
  });
});

describe('enable / disable', () => {
  it('needs DeviceEnablement first; repeating succeeds with one event per change', async () => {
    const admin = await user();
    const d = await insertDevice(t.db);
    const noEnablement = await user(without('DeviceEnablement'));
    expect(await message(setDeviceEnabled(t.db, noEnablement, 'ghost', false)))
      .toBe('User does not have required entitlement: DeviceEnablement');
    await setDeviceEnabled(t.db, admin, d.id, false);
    await setDeviceEnabled(t.db, admin, d.id, false);
    await setDeviceEnabled(t.db, admin, d.id, true);
    await setDeviceEnabled(t.db, admin, d.id, true);
    expect(await eventsOf(d.id)).toEqual([
      { event_type: 'DeviceEnablement', message: 'Device Disabled', bool_value: false, string_value: null },
      { event_type: 'DeviceEnablement', message: 'Device Enabled', bool_value: true, string_value: null },
    ]);
  });

  it('disables retained and offline devices; a disabled device cannot be rebooted or reset and is not Available', async () => {
    const admin = await user();
    const owner = await user();
    const retained = await insertDevice(t.db, { retained_by: owner.id, retained_at: new Date() });
    const offline = await insertDevice(t.db, { availability: 'Offline' });
    await setDeviceEnabled(t.db, admin, retained.id, false);
    await setDeviceEnabled(t.db, admin, offline.id, false);
    expect(await row(retained.id)).toMatchObject({ enabled: false, retained_by: owner.id });
    expect((await row(offline.id)).enabled).toBe(false);
    expect(await message(rebootDevice(t.db, link.directory, owner, retained.id))).toBe('Device is disabled.');
    expect(await message(resetDevice(t.db, link.directory, owner, retained.id))).toBe('Device is disabled.');
    expect((await listAvailableDevices(t.db, owner)).map((d) => d.id)).not.toContain(retained.id);
  });
});

describe('lastInuseAt', () => {
  it('is now while retained, else the end of the last retain; absent when never retained', async () => {
    const admin = await user();
    const ended = new Date('2026-01-02T03:04:05Z');
    const released = await insertDevice(t.db, { last_inuse_at: ended });
    const retained = await insertDevice(t.db, { retained_by: admin.id, retained_at: ended, last_inuse_at: ended });
    const never = await insertDevice(t.db);
    const byId = new Map((await listDevices(t.db, admin, {})).map((d) => [d.id, d]));
    expect(byId.get(released.id)?.lastInuseAt).toBe('2026-01-02T03:04:05Z');
    expect(Date.parse(byId.get(retained.id)!.lastInuseAt!)).toBeGreaterThan(Date.now() - 60_000);
    expect(byId.get(never.id)?.lastInuseAt).toBeUndefined();
  });
});

describe('reset: defaults and entitlement order', () => {
  it('checks DeviceApplicationManagement first when uninstalling is in effect, then DeviceReboot', async () => {
    const d = await insertDevice(t.db, { availability: 'Offline' });
    const neither = await user(without('DeviceApplicationManagement', 'DeviceReboot'));
    const noReboot = await user(without('DeviceReboot'));
    expect(await message(resetDevice(t.db, link.directory, neither, 'ghost'))).toBe('User does not have required entitlement: DeviceApplicationManagement');
    expect(await message(resetDevice(t.db, link.directory, neither, d.id, { uninstallAll: false })))
      .toBe('User does not have required entitlement: DeviceReboot');
    expect(await message(resetDevice(t.db, link.directory, noReboot, d.id))).toBe('User does not have required entitlement: DeviceReboot');
    expect(await message(resetDevice(t.db, link.directory, noReboot, d.id, { reboot: false }))).toBe('Device is offline.');
    expect(await message(resetDevice(t.db, link.directory, neither, d.id, { uninstallAll: false, reboot: false }))).toBe('Device is offline.');
  });

  it('omitted parameters follow the system-area defaults an administrator changes', async () => {
    const admin = await user();
    const settingsless = await user(without('SystemManageSettings'));
    const neither = await user(without('DeviceApplicationManagement', 'DeviceReboot'));
    const d = await insertDevice(t.db, { installed_packages: JSON.stringify([{ identifier: 'android', version: '14', buildVersion: '1', system: true }]) as never });
    expect(await getHubSettings(t.db, admin, 'Data')).toEqual({ resetUninstallAll: true, resetReboot: true, licensedDeviceLimit: null,
      dataPortState: 'Data', retainIdleMinutes: 30, retainIdleMaxMinutes: 240, leaseMaxMinutes: 0 });
    expect(await message(getHubSettings(t.db, settingsless, 'Data'))).toBe('User does not have required entitlement: SystemManageSettings');
    expect(await message(updateHubSettings(t.db, settingsless, settingsChanges('{"resetReboot":false}'))))
      .toBe('User does not have required entitlement: SystemManageSettings');

    await updateHubSettings(t.db, admin, settingsChanges('{ResetUninstallAll:"False", resetreboot:"false"}'));
    expect(await getHubSettings(t.db, admin, 'Data')).toMatchObject({ resetUninstallAll: false, resetReboot: false });
    // Nothing in effect: no entitlement needed, nothing sent to the (absent) gateway.
    expect(await resetDevice(t.db, link.directory, neither, d.id)).toEqual({ uninstalled: [], rebooted: false });
    // Explicit values win over the defaults.
    expect(await message(resetDevice(t.db, link.directory, neither, d.id, { reboot: true })))
      .toBe('User does not have required entitlement: DeviceReboot');

    for (const [body, text] of [
      ['{"resetReboot":"sometimes","resetUninstallAll":true}', 'Value is not equivalent to either TrueString or FalseString.'],
      ['{"resetUninstallAll":true,"licensedDeviceLimit":5}', "licensedDeviceLimit is set by the hub's DEVICELAB_LICENSED_DEVICES environment variable."],
      ['{"resetUninstallAll":true,"colour":"red"}', "Unknown setting 'colour'. Settings: resetUninstallAll, resetReboot, dataPortState, retainIdleMinutes, retainIdleMaxMinutes, leaseMaxMinutes."],
      ['{"resetReboot":null}', "Setting 'resetReboot' needs a value of true or false."],
      ['{}', 'No settings to update.'],
    ]) expect(await message(updateHubSettings(t.db, admin, settingsChanges(body)))).toBe(text);
    expect(await getHubSettings(t.db, admin, 'Data')).toMatchObject({ resetUninstallAll: false, resetReboot: false });
    await updateHubSettings(t.db, admin, settingsChanges('{"resetUninstallAll":true,"resetReboot":true}'));
  });
});

describe('GET /Device/AppiumLog', () => {
  const noGateways = { automationLog: async () => '' };
  it('is empty while no automation server runs; DeviceList and the device are still checked', async () => {
    const admin = await user();
    const d = await insertDevice(t.db);
    expect(await readAutomationLog(t.db, noGateways, admin, d.serial_number!, { currentSessionOnly: true })).toBe('');
    expect(await message(readAutomationLog(t.db, noGateways, admin, 'ghost'))).toBe("Device 'ghost' not found.");
    expect(await message(readAutomationLog(t.db, noGateways, await user(without('DeviceList')), 'ghost')))
      .toBe('User does not have required entitlement: DeviceList');
  });
});

describe('GET /Device/Available', () => {
  it('leaves out devices in use by anyone (the caller too), disabled, deleted (even Online) and offline', async () => {
    const me = await user();
    const free = await insertDevice(t.db);
    const mine = await insertDevice(t.db, { retained_by: me.id, retained_at: new Date() });
    const deletedOnline = await insertDevice(t.db, { deleted: true });
    const disabledOffline = await insertDevice(t.db, { enabled: false, availability: 'Offline' });
    const ids = (await listAvailableDevices(t.db, me, {})).map((d) => d.id);
    expect(ids).toContain(free.id);
    for (const d of [mine, deletedOnline, disabledOffline]) expect(ids).not.toContain(d.id);
    expect(await listAvailableDevices(t.db, await user(without('DeviceList')), {})).toEqual([]);
  });
});
