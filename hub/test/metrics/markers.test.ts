/**
 * Markers (spec 3, 4.3) on a real database: start/stop rules, the automatic `session` marker of retain and
 * release (written in their transactions), and the per-device passive-logging switch.
 */
import { sql } from 'kysely';
import { retainDevice, releaseDevice } from '../../src/domain/device-actions';
import { newTicketKeys } from '../../src/domain/device-ticket';
import { deviceMarkerPeriods, markerPeriods, startMarker, stopMarker } from '../../src/metrics/markers';
import { metricsDisabledDevices, setMetricsEnabled } from '../../src/metrics/passive-logging';
import type { AuthenticatedUser } from '../../src/auth/authenticated-user';
import { createUser, insertDevice } from '../domain/helpers';
import { createTestDatabase, type TestDatabase } from '../support/test-database';

let t: TestDatabase;
let admin: AuthenticatedUser;
let tester: AuthenticatedUser;
const ticketKeys = newTicketKeys();
const at = (second: number) => new Date(Date.parse('2026-11-22T10:00:00Z') + second * 1000);

beforeAll(async () => {
  t = await createTestDatabase();
  admin = await createUser(t.db, 'admin@lab.test');
  tester = await createUser(t.db, 'tester@lab.test', ['DeviceList', 'DeviceConnect']);
});
afterAll(() => t.drop());

const openMarkers = async (deviceId: string) => (await sql<{ name: string }>`
  SELECT name FROM metrics.markers WHERE device_id = ${deviceId}::uuid AND stopped_at IS NULL ORDER BY name`.execute(t.db))
  .rows.map((r) => r.name);

describe('markers: start and stop', () => {
  it('several markers with different names may be open; stop ends the one of the same name on the same device', async () => {
    const device = await insertDevice(t.db, { name: 'Marker phone' });
    await startMarker(t.db, tester, device.serial_number!, 'login flow', at(0));
    await startMarker(t.db, tester, device.id, 'Ünïcode & spaces / "quotes"', at(1));
    expect(await openMarkers(device.id)).toEqual(['login flow', 'Ünïcode & spaces / "quotes"']);
    await stopMarker(t.db, tester, device.vendor_unique_identifier, 'login flow', at(5));
    expect(await openMarkers(device.id)).toEqual(['Ünïcode & spaces / "quotes"']);
    expect(await markerPeriods(t.db, device.id, 'login flow', 5, 0)).toEqual([{ name: 'login flow', startedAt: at(0), stoppedAt: at(5) }]);
    // The same name may start again once stopped: a second period.
    await startMarker(t.db, tester, device.id, 'login flow', at(10));
    expect((await markerPeriods(t.db, device.id, 'login flow', 5, 0)).map((p) => p.startedAt)).toEqual([at(10), at(0)]);
  });

  it('the device and its marker periods in one lookup: any identifier, most recent first, limit and offset', async () => {
    const device = await insertDevice(t.db, { name: 'Lookup phone', serial_number: 'LOOKUP-SERIAL' });
    for (const second of [0, 10, 20]) {
      await startMarker(t.db, tester, device.id, 'lap', at(second));
      await stopMarker(t.db, tester, device.id, 'lap', at(second + 5));
    }
    await startMarker(t.db, tester, device.id, 'lap', at(30));
    for (const identifier of [device.id, ` ${device.vendor_unique_identifier} `, 'LOOKUP-SERIAL']) {
      expect(await deviceMarkerPeriods(t.db, identifier, 'lap', 2, 1)).toEqual({
        device: { id: device.id, name: 'Lookup phone' },
        periods: [{ name: 'lap', startedAt: at(20), stoppedAt: at(25) }, { name: 'lap', startedAt: at(10), stoppedAt: at(15) }],
      });
    }
    expect((await deviceMarkerPeriods(t.db, device.id, 'lap', 1, 0)).periods).toEqual([{ name: 'lap', startedAt: at(30), stoppedAt: undefined }]);
    expect(await deviceMarkerPeriods(t.db, device.id, 'lap', 5, 4)).toEqual({ device: { id: device.id, name: 'Lookup phone' }, periods: [] });
    expect(await deviceMarkerPeriods(t.db, device.id, 'no such marker', 5, 0)).toEqual({ device: { id: device.id, name: 'Lookup phone' }, periods: [] });
    await expect(deviceMarkerPeriods(t.db, ' nobody ', 'lap', 1, 0)).rejects.toThrow("Device 'nobody' not found.");
  });

  it('clear failures: a second start of an open name, a stop without start, a stop on another device, the reserved session', async () => {
    const a = await insertDevice(t.db, { name: 'Phone A' });
    const b = await insertDevice(t.db, { name: 'Phone B' });
    await startMarker(t.db, tester, a.id, 'run', at(0));
    await expect(startMarker(t.db, tester, a.id, 'run', at(1))).rejects.toThrow("Marker 'run' is already started on device 'Phone A'.");
    await expect(stopMarker(t.db, tester, a.id, 'walk', at(1))).rejects.toThrow("Marker 'walk' is not started on device 'Phone A'.");
    await expect(stopMarker(t.db, tester, b.id, 'run', at(1))).rejects.toThrow("Marker 'run' is not started on device 'Phone B'.");
    await expect(startMarker(t.db, tester, a.id, 'session')).rejects.toThrow("The marker 'session' is started and stopped by retain and release.");
    await expect(startMarker(t.db, tester, 'nope', 'run')).rejects.toThrow("Device 'nope' not found.");
    const nobody = await createUser(t.db, 'nobody@lab.test', ['DeviceConnect']);
    await expect(startMarker(t.db, nobody, 'nope', 'run')).rejects.toThrow('User does not have required entitlement: DeviceList');
    expect(await openMarkers(a.id)).toEqual(['run']);
    expect(await openMarkers(b.id)).toEqual([]);
  });
});

describe('markers: session', () => {
  it('retain opens `session`, release closes it; each retain is its own period', async () => {
    const device = await insertDevice(t.db, { name: 'Session phone' });
    await retainDevice(t.db, tester, device.id, { ticketKeys });
    expect(await openMarkers(device.id)).toEqual(['session']);
    // Retaining again by the same user is the same retain: no new period.
    await retainDevice(t.db, tester, device.id, { ticketKeys });
    await releaseDevice(t.db, tester, device.id);
    expect(await openMarkers(device.id)).toEqual([]);
    await retainDevice(t.db, admin, device.id, { ticketKeys });
    await releaseDevice(t.db, admin, device.id);
    const periods = await markerPeriods(t.db, device.id, 'session', 10, 0);
    expect(periods).toHaveLength(2);
    for (const period of periods) expect(period.stoppedAt!.getTime()).toBeGreaterThanOrEqual(period.startedAt.getTime());
    const retains = await t.db.selectFrom('events').select(['event_date', 'message']).where('device_id', '=', device.id)
      .orderBy('event_date').execute();
    expect(retains.map((e) => e.message)).toEqual(['Device Retained', 'Device Released', 'Device Retained', 'Device Released']);
  });

  it('a failed retain leaves no session marker', async () => {
    const device = await insertDevice(t.db, { name: 'Busy phone' });
    await retainDevice(t.db, admin, device.id, { ticketKeys });
    await expect(retainDevice(t.db, tester, device.id, { ticketKeys })).rejects.toThrow("is in use by 'admin@lab.test'");
    expect((await markerPeriods(t.db, device.id, 'session', 10, 0))).toHaveLength(1);
  });
});

describe('passive logging switch', () => {
  it('needs Device list and Device modify; persists; lists switched-off devices for the gateways', async () => {
    const device = await insertDevice(t.db, { name: 'Quiet phone' });
    await expect(setMetricsEnabled(t.db, tester, device.id, false)).rejects.toThrow('User does not have required entitlement: DeviceModify');
    expect(await setMetricsEnabled(t.db, admin, device.id, false)).toBe(true);
    expect(await setMetricsEnabled(t.db, admin, device.id, false)).toBe(false); // no change
    expect(await metricsDisabledDevices(t.db)).toEqual([device.vendor_unique_identifier]);
    expect(await setMetricsEnabled(t.db, admin, device.id, true)).toBe(true);
    expect(await metricsDisabledDevices(t.db)).toEqual([]);
  });
});
