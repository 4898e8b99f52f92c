/**
 * What a gateway's reports of a known device do to its record and events (device-inventory.ts): a plug's reports
 * (Booting, Ready with facts, then packages), the hub's Rebooting, and the lab counts on DeviceAvailability events.
 * A known device's report is one statement, a new device's first report one more (without a licensed limit); these
 * are the outcomes a user reads back either way.
 */
import type { DeviceState } from '@devicelab/proto';
import { applyDeviceState } from '../../src/gateways/device-inventory';
import { createTestDatabase, type TestDatabase } from '../support/test-database';

let t: TestDatabase;
let gatewayId: string;
beforeAll(async () => {
  t = await createTestDatabase();
  gatewayId = (await t.db.insertInto('gateways').values({ name: 'inventory-gw', token_sha256: Buffer.from('inventory-gw') })
    .returning('id').executeTakeFirstOrThrow()).id;
});
afterAll(() => t.drop());

const row = (id: string) => t.db.selectFrom('devices').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
const availabilityEvents = (id: string) => t.db.selectFrom('events')
  .select(['message', 'bool_value', 'string_value', 'device_online_count', 'device_inuse_count', 'device_name'])
  .where('device_id', '=', id).where('event_type', '=', 'DeviceAvailability').orderBy('event_date').orderBy('id').execute();
const onlineCount = async () => (await t.db.selectFrom('devices').select('id')
  .where('availability', '=', 'Online').where('deleted', '=', false).execute()).length;

const facts = (serial: string): DeviceState => ({
  vendorUniqueIdentifier: serial, operatingSystem: 'Android', readiness: 'Ready', model: 'Pixel 7', serialNumber: serial,
  operatingSystemVersion: '14', properties: [{ name: 'ro.build.version.sdk', value: '34' }],
});

describe('gateway reports of a device', () => {
  it('a plug: Booting records it Offline, Ready with facts Online with one event, packages follow', async () => {
    const serial = 'PLUG-1';
    const { deviceId, availability } = await applyDeviceState(t.db, gatewayId, { vendorUniqueIdentifier: serial, operatingSystem: 'Android', readiness: 'Booting' });
    expect(availability).toBe('Offline');
    expect(await row(deviceId)).toMatchObject({ name: serial, availability: 'Offline', readiness: 'Booting', last_connected_at: null });

    const online = await applyDeviceState(t.db, gatewayId, facts(serial));
    expect(online).toEqual({ vendorUniqueIdentifier: serial, deviceId, availability: 'Online', flipped: true });
    const record = await row(deviceId);
    // Named after its model once it is known; the facts stored.
    expect(record).toMatchObject({ name: 'Pixel 7', availability: 'Online', readiness: 'Ready', readiness_detail: null,
      serial_number: serial, operating_system_version: '14', gateway_id: gatewayId });
    expect(record.last_connected_at).not.toBeNull();
    expect(record.properties).toEqual([{ name: 'ro.build.version.sdk', value: '34' }]);
    const events = await availabilityEvents(deviceId);
    // The event names the device as it was called when it flipped, and counts the lab right after the flip.
    expect(events).toEqual([{ message: 'Device Online', bool_value: true, string_value: 'Online',
      device_online_count: await onlineCount(), device_inuse_count: 0, device_name: serial }]);

    const packages = [{ identifier: 'com.example.one', version: '1.0', buildVersion: '1', system: false }];
    const again = await applyDeviceState(t.db, gatewayId, { ...facts(serial), properties: [], serialNumber: '', packages });
    expect(again.flipped).toBe(false);
    const after = await row(deviceId);
    expect(after.installed_packages).toEqual(packages);
    // A report without some facts leaves them as they were.
    expect(after).toMatchObject({ serial_number: serial, properties: [{ name: 'ro.build.version.sdk', value: '34' }] });
    expect(await availabilityEvents(deviceId)).toHaveLength(1);
  });

  it('a first report that is already Ready: Online at once, named after its model, facts stored, one event', async () => {
    const serial = 'FIRST-READY-1';
    const before = await onlineCount();
    const first = await applyDeviceState(t.db, gatewayId, { ...facts(serial), vendorDeviceName: 'Lab phone 1', diskSpace: 64_000_000_000 });
    expect(first).toMatchObject({ vendorUniqueIdentifier: serial, availability: 'Online', flipped: true });
    const record = await row(first.deviceId);
    expect(record).toMatchObject({ name: 'Lab phone 1', availability: 'Online', readiness: 'Ready', readiness_detail: null,
      operating_system: 'Android', serial_number: serial, operating_system_version: '14', gateway_id: gatewayId,
      deleted: false, enabled: true, last_disconnected_at: null });
    expect(record.last_connected_at).not.toBeNull();
    expect(Number(record.disk_space)).toBe(64_000_000_000);
    expect(record.properties).toEqual([{ name: 'ro.build.version.sdk', value: '34' }]);
    expect(await onlineCount()).toBe(before + 1);
    expect(await availabilityEvents(first.deviceId)).toEqual([{ message: 'Device Online', bool_value: true, string_value: 'Online',
      device_online_count: before + 1, device_inuse_count: 0, device_name: 'Lab phone 1' }]);

    // The same device reported again is the known device (no second record, no second event).
    const again = await applyDeviceState(t.db, gatewayId, facts(serial));
    expect(again).toEqual({ ...first, flipped: false });
    expect(await t.db.selectFrom('devices').select('id').where('vendor_unique_identifier', '=', serial).execute()).toHaveLength(1);
    expect(await availabilityEvents(first.deviceId)).toHaveLength(1);
  });

  it('a first report without facts: Offline under its identifier with its readiness detail, no event', async () => {
    const serial = 'FIRST-UNAUTH-1';
    const first = await applyDeviceState(t.db, gatewayId,
      { vendorUniqueIdentifier: serial, operatingSystem: '', readiness: 'Unauthorized', readinessDetail: 'Allow USB debugging' });
    expect(first).toMatchObject({ availability: 'Offline', flipped: false });
    expect(await row(first.deviceId)).toMatchObject({ name: serial, operating_system: 'Unknown', availability: 'Offline',
      readiness: 'Unauthorized', readiness_detail: 'Allow USB debugging', last_connected_at: null });
    expect(await availabilityEvents(first.deviceId)).toEqual([]);
  });

  it('two first reports of one device at once (it moved gateways): one record, one Online event', async () => {
    const serial = 'FIRST-RACE-1';
    const otherGateway = (await t.db.insertInto('gateways').values({ name: 'inventory-gw-2', token_sha256: Buffer.from('inventory-gw-2') })
      .returning('id').executeTakeFirstOrThrow()).id;
    const [a, b] = await Promise.all([applyDeviceState(t.db, gatewayId, facts(serial)), applyDeviceState(t.db, otherGateway, facts(serial))]);
    expect(b.deviceId).toBe(a.deviceId);
    expect([a.flipped, b.flipped].sort()).toEqual([false, true]);
    expect(await t.db.selectFrom('devices').select('id').where('vendor_unique_identifier', '=', serial).execute()).toHaveLength(1);
    expect(await availabilityEvents(a.deviceId)).toHaveLength(1);
  });

  it('the hub\'s Rebooting holds until the device reports Ready; both flips are events', async () => {
    const { deviceId } = await applyDeviceState(t.db, gatewayId, facts('REBOOT-1'));
    await t.db.updateTable('devices').set({ readiness: 'Rebooting' }).where('id', '=', deviceId).execute();
    const down = await applyDeviceState(t.db, gatewayId, { vendorUniqueIdentifier: 'REBOOT-1', operatingSystem: 'Android', readiness: 'Booting', readinessDetail: 'boot animation' });
    expect(down).toMatchObject({ availability: 'Offline', flipped: true });
    const rebooting = await row(deviceId);
    expect(rebooting).toMatchObject({ readiness: 'Rebooting', availability: 'Offline', readiness_detail: null });
    expect(rebooting.last_disconnected_at).not.toBeNull();
    await applyDeviceState(t.db, gatewayId, { vendorUniqueIdentifier: 'REBOOT-1', operatingSystem: 'Android', readiness: 'Unauthorized' });
    expect((await row(deviceId)).readiness).toBe('Rebooting');
    await applyDeviceState(t.db, gatewayId, facts('REBOOT-1'));
    expect(await row(deviceId)).toMatchObject({ readiness: 'Ready', availability: 'Online' });
    expect((await availabilityEvents(deviceId)).map((e) => e.message)).toEqual(['Device Online', 'Device Offline', 'Device Online']);
  });

  it('an Offline flip counts the lab after it; a readiness detail is kept', async () => {
    const a = await applyDeviceState(t.db, gatewayId, facts('COUNT-A'));
    await applyDeviceState(t.db, gatewayId, facts('COUNT-B'));
    const before = await onlineCount();
    await applyDeviceState(t.db, gatewayId, { vendorUniqueIdentifier: 'COUNT-A', operatingSystem: 'Android', readiness: 'Unauthorized', readinessDetail: 'Allow USB debugging' });
    expect(await row(a.deviceId)).toMatchObject({ availability: 'Offline', readiness: 'Unauthorized', readiness_detail: 'Allow USB debugging' });
    expect((await availabilityEvents(a.deviceId)).at(-1)).toMatchObject({ message: 'Device Offline', bool_value: false, device_online_count: before - 1 });
  });
});
