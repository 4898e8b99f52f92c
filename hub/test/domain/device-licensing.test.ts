/**
 * The licensed device limit (spec 8: disabled devices do not count) on enable, undelete and discovery, and what
 * gateway reports do to deleted devices and OS versions (device-inventory.ts).
 */
import { ApiFailure } from '@devicelab/shared';
import { deviceChangeRequest } from '../../src/api/device-body';
import { deleteDevice, setDeviceEnabled, updateDevice } from '../../src/domain/device-updates';
import { listAvailableDevices, listDevices } from '../../src/domain/devices';
import { LICENSED_DEVICES_ENV } from '../../src/config';
import { getHubSettings } from '../../src/domain/hub-settings';
import { applyDeviceState } from '../../src/gateways/device-inventory';
import { createTestDatabase, type TestDatabase } from '../support/test-database';
import { createUser, insertDevice } from './helpers';

let t: TestDatabase;
beforeAll(async () => {
  t = await createTestDatabase({ maxConnections: 10 });
  // A lab that already holds a licensed device, so every limit below is at least 2 (the texts use the plural).
  await insertDevice(t.db);
});
afterAll(() => t.drop());
afterEach(() => { delete process.env[LICENSED_DEVICES_ENV]; });

const message = (p: Promise<unknown>) => p.then(() => 'resolved', (e) => (e instanceof ApiFailure ? e.message : `ERR ${e}`));
const row = (id: string) => t.db.selectFrom('devices').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
const eventsOf = (id: string) => t.db.selectFrom('events').select(['event_type', 'message', 'bool_value', 'string_value'])
  .where('device_id', '=', id).orderBy('event_date').orderBy('id').execute();
let users = 0;
const user = () => createUser(t.db, `licensing${++users}@example.com`);

describe('licensed device limit', () => {
  const licensed = async () => (await t.db.selectFrom('devices').select('id')
    .where('enabled', '=', true).where('deleted', '=', false).execute()).length;

  it('enabling beyond the limit fails and changes nothing; disabled and deleted devices do not count', async () => {
    const admin = await user();
    const a = await insertDevice(t.db, { enabled: false });
    const b = await insertDevice(t.db, { enabled: false });
    const deletedOne = await insertDevice(t.db, { availability: 'Offline', deleted: true });
    process.env[LICENSED_DEVICES_ENV] = String(await licensed() + 1);
    await setDeviceEnabled(t.db, admin, a.id, true);
    const full = `The licensed device limit of ${await licensed()} enabled devices is reached; disable or delete another device first.`;
    expect(await message(setDeviceEnabled(t.db, admin, b.id, true))).toBe(full);
    expect(await message(updateDevice(t.db, admin, b.id, deviceChangeRequest('{"enabled":"true","name":"Never"}')))).toBe(full);
    expect(await message(updateDevice(t.db, admin, deletedOne.id, deviceChangeRequest('{"deleted":"false"}')))).toBe(full);
    expect(await row(b.id)).toMatchObject({ enabled: false, name: b.name });
    expect((await row(deletedOne.id)).deleted).toBe(true);
    // Restoring it disabled does not count, and freeing a place lets b in.
    await updateDevice(t.db, admin, deletedOne.id, deviceChangeRequest('{"deleted":"false","enabled":"false"}'));
    await setDeviceEnabled(t.db, admin, a.id, false);
    await setDeviceEnabled(t.db, admin, b.id, true);
    expect((await row(b.id)).enabled).toBe(true);
    expect((await getHubSettings(t.db, admin, 'Data')).licensedDeviceLimit).toBe(Number(process.env[LICENSED_DEVICES_ENV]));
  });

  it('two concurrent enables for the last place: exactly one wins', async () => {
    const admin = await user();
    const devices = await Promise.all([insertDevice(t.db, { enabled: false }), insertDevice(t.db, { enabled: false })]);
    process.env[LICENSED_DEVICES_ENV] = String(await licensed() + 1);
    const outcomes = await Promise.all(devices.map((d) => message(setDeviceEnabled(t.db, admin, d.id, true))));
    expect(outcomes.filter((o) => o === 'resolved')).toHaveLength(1);
    expect(await licensed()).toBe(Number(process.env[LICENSED_DEVICES_ENV]));
  });

  it('a newly discovered device beyond the limit stays disabled and says why; a malformed limit is a clear failure', async () => {
    const admin = await user();
    const gateway = await insertGateway('license-gw');
    process.env[LICENSED_DEVICES_ENV] = String(await licensed());
    await applyDeviceState(t.db, gateway, { vendorUniqueIdentifier: 'NEW-OVER-LIMIT', operatingSystem: 'Android', readiness: 'Ready', model: 'Pixel 9' });
    const [found] = await listDevices(t.db, admin, { name: 'Pixel 9' });
    expect(found).toMatchObject({ enabled: false, availability: 'Online' });
    const text = `The licensed device limit of ${process.env[LICENSED_DEVICES_ENV]} enabled devices is reached; disable or delete another device first.`;
    expect((await row(found.id)).readiness_detail).toBe(text);
    expect(await eventsOf(found.id)).toEqual(expect.arrayContaining([
      { event_type: 'DeviceEnablement', message: 'Device Disabled', bool_value: false, string_value: text },
    ]));
    delete process.env[LICENSED_DEVICES_ENV];
    await applyDeviceState(t.db, gateway, { vendorUniqueIdentifier: 'NEW-UNLIMITED', operatingSystem: 'Android', readiness: 'Ready' });
    expect((await t.db.selectFrom('devices').select('enabled').where('vendor_unique_identifier', '=', 'NEW-UNLIMITED')
      .executeTakeFirstOrThrow()).enabled).toBe(true);
    process.env[LICENSED_DEVICES_ENV] = 'ten';
    expect(await message(getHubSettings(t.db, admin, 'Data')))
      .toBe("DEVICELAB_LICENSED_DEVICES must be a whole number of devices (0 or more), not 'ten'.");
  });
});

async function insertGateway(name: string): Promise<string> {
  const gw = await t.db.insertInto('gateways').values({ name, token_sha256: Buffer.from(name) }).returning('id')
    .executeTakeFirstOrThrow();
  return gw.id;
}

describe('gateway reports', () => {
  it('a deleted device that its gateway reports Online again is undeleted, with a DeviceDeletion event', async () => {
    const admin = await user();
    const gateway = await insertGateway('deleted-gw');
    const state = { vendorUniqueIdentifier: 'DEL-AGAIN', operatingSystem: 'Android', readiness: 'Ready', model: 'Back Again' };
    const { deviceId } = await applyDeviceState(t.db, gateway, { ...state, readiness: 'Offline' });
    await deleteDevice(t.db, admin, deviceId);
    // Still attached but not ready (unauthorized, booting): it stays deleted.
    await applyDeviceState(t.db, gateway, { ...state, readiness: 'Unauthorized' });
    expect(await row(deviceId)).toMatchObject({ deleted: true, availability: 'Offline' });
    await applyDeviceState(t.db, gateway, state);
    expect(await row(deviceId)).toMatchObject({ deleted: false, availability: 'Online', enabled: true });
    expect((await listAvailableDevices(t.db, admin)).map((d) => d.id)).toContain(deviceId);
    expect((await eventsOf(deviceId)).filter((e) => e.event_type === 'DeviceDeletion')).toEqual([
      { event_type: 'DeviceDeletion', message: 'Device Deleted', bool_value: true, string_value: null },
      { event_type: 'DeviceDeletion', message: 'Device Undeleted', bool_value: false, string_value: null },
    ]);
  });

  it('an undeleted device beyond the licensed limit comes back disabled and says why', async () => {
    const admin = await user();
    const gateway = await insertGateway('undeleted-license-gw');
    const state = { vendorUniqueIdentifier: 'DEL-OVER-LIMIT', operatingSystem: 'Android', readiness: 'Offline' };
    const { deviceId } = await applyDeviceState(t.db, gateway, state);
    await deleteDevice(t.db, admin, deviceId);
    process.env[LICENSED_DEVICES_ENV] = String((await t.db.selectFrom('devices').select('id')
      .where('enabled', '=', true).where('deleted', '=', false).execute()).length);
    await applyDeviceState(t.db, gateway, { ...state, readiness: 'Ready' });
    const text = `The licensed device limit of ${process.env[LICENSED_DEVICES_ENV]} enabled devices is reached; disable or delete another device first.`;
    expect(await row(deviceId)).toMatchObject({ deleted: false, enabled: false, availability: 'Online', readiness_detail: text });
  });

  it('a new OS version records DeviceOperatingSystemChange "Device OS Changed" with the new version', async () => {
    const gateway = await insertGateway('os-gw');
    const state = { vendorUniqueIdentifier: 'OS-CHANGE', operatingSystem: 'Android', readiness: 'Ready', operatingSystemVersion: '13' };
    const { deviceId } = await applyDeviceState(t.db, gateway, state);
    await applyDeviceState(t.db, gateway, state);
    await applyDeviceState(t.db, gateway, { ...state, operatingSystemVersion: '' }); // unknown is not a change
    await applyDeviceState(t.db, gateway, { ...state, operatingSystemVersion: '14' });
    const changes = (await eventsOf(deviceId)).filter((e) => e.event_type === 'DeviceOperatingSystemChange');
    expect(changes).toEqual([{ event_type: 'DeviceOperatingSystemChange', message: 'Device OS Changed', bool_value: false, string_value: '14' }]);
    expect((await row(deviceId)).operating_system_version).toBe('14');
  });
});
