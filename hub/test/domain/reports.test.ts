/**
 * Reports over a real database filled through the domain functions that write events in production
 * (recordEvent, retain/release). Fixed dates are server-local, so the expectations hold in any time zone.
 */
import type { EventType } from '@devicelab/shared';
import { releaseDevice, retainDevice } from '../../src/domain/device-actions';
import { newTicketKeys } from '../../src/domain/device-ticket';
import { recordEvent, recordServerStart, RUNNING_FLAG, type EventInput } from '../../src/domain/events';
import { availabilityTimeline, parseTimeSpan } from '../../src/domain/reports-availability';
import { eventHistory } from '../../src/domain/reports-history';
import { resolveReportQuery, type ReportFilters } from '../../src/domain/reports-query';
import { deviceUsageHistory } from '../../src/domain/usage-report';
import { serialize } from '../../src/http/respond';
import { withTx } from '../../src/store/database';
import { createTestDatabase, type TestDatabase } from '../support/test-database';
import { createUser, insertDevice } from './helpers';
import { parseRequestDate } from '@devicelab/shared';

let t: TestDatabase;
beforeAll(async () => { t = await createTestDatabase(); });
afterAll(() => t.drop());
beforeEach(async () => { await t.db.deleteFrom('events').execute(); });

const local = (y: number, mo: number, d: number, h = 0, mi = 0, s = 0) => new Date(y, mo - 1, d, h, mi, s);
const record = (event: EventInput) => withTx(t.db, (trx) => recordEvent(trx, event));
const date = (text: string) => parseRequestDate(text)!;
const NOW = local(2016, 3, 25, 12);
async function history(filters: ReportFilters = {}, now = NOW) {
  return eventHistory(t.db, await resolveReportQuery(t.db, filters, now));
}
async function usage(filters: ReportFilters = {}, now = NOW) {
  return deviceUsageHistory(t.db, await resolveReportQuery(t.db, filters, now), now);
}
const note = (message: string, eventDate: Date, extra: Partial<EventInput> = {}) =>
  record({ eventType: 'Note', message, eventDate, ...extra });

describe('/Report/History', () => {
  it('emits the Event wire model: both date and application spellings, enums as strings, nulls omitted', async () => {
    const user = await createUser(t.db, 'wire@example.com');
    const device = await insertDevice(t.db, { name: 'Wire Pixel' });
    const appId = '6f1c2b1e-0000-4000-8000-000000000001';
    await record({
      eventType: 'ApplicationLaunch', message: 'Application Launched', deviceId: device.id, deviceName: device.name,
      performedById: user.id, performedByName: user.displayName, applicationId: appId, applicationName: 'Shop',
      eventDate: local(2016, 3, 24, 17, 9, 58),
    });
    await note('bare note', local(2016, 3, 24, 17, 0));
    const report = await history();
    const text = serialize(report, false);
    expect(text).toMatch(/^\{"count":2,"pageSize":2,"events":\[\{"/);
    expect(text).not.toContain('null');
    const [launch, bare] = report.events;
    const wireDate = local(2016, 3, 24, 17, 9, 58).toISOString().replace('.000Z', 'Z');
    expect(launch).toMatchObject({
      eventType: 'ApplicationLaunch', EventDate: wireDate, eventDate: wireDate, propertiesId: appId,
      applicationId: appId, applicationName: 'Shop', deviceId: device.id, deviceName: 'Wire Pixel',
      performedById: user.id, message: 'Application Launched', isSuccess: true, deviceOnlineCount: 1,
      deviceInuseCount: 0,
    });
    expect(Object.keys(JSON.parse(serialize(bare, false))).sort()).toEqual([
      'EventDate', 'boolValue', 'deviceInuseCount', 'deviceOnlineCount', 'eventDate', 'eventType', 'id', 'intValue',
      'isSuccess', 'message',
    ]);
  });

  it('pages newest first and stably, even with many events at the same instant (QA _2010/_2014)', async () => {
    const same = local(2016, 3, 23, 10);
    for (let i = 1; i <= 30; i++) await note(`same ${i}`, same);
    await note('newest', local(2016, 3, 23, 11));
    await note('oldest', local(2016, 3, 23, 9));
    const first = await history({ take: 10 });
    expect(first.count).toBe(32);
    expect(first.pageSize).toBe(10);
    expect(first.events.map((e) => e.message)).toEqual(
      ['newest', 'same 30', 'same 29', 'same 28', 'same 27', 'same 26', 'same 25', 'same 24', 'same 23', 'same 22']);
    const second = await history({ take: 5, skip: 5 });
    expect(second).toMatchObject({ count: 32, pageSize: 5 });
    expect(second.events.map((e) => e.id)).toEqual(first.events.slice(5, 10).map((e) => e.id));
    expect((await history({ take: 10 })).events.map((e) => e.id)).toEqual(first.events.map((e) => e.id));
    const last = await history({ skip: 30, take: 10 });
    expect(last).toMatchObject({ count: 32, pageSize: 2 });
    expect(last.events.map((e) => e.message)).toEqual(['same 1', 'oldest']);
    expect(await history({ skip: 100 })).toEqual({ count: 32, pageSize: 0, events: [] });
    expect((await history({ take: 0 })).pageSize).toBe(0);
  });

  it('date filters: same-day fromDate/toDate covers the whole day, in every request date form', async () => {
    await note('22 late', local(2016, 3, 22, 23, 59, 59));
    await note('23 start', local(2016, 3, 23, 0, 0, 0));
    await note('23 noon', local(2016, 3, 23, 12));
    await note('23 end', local(2016, 3, 23, 23, 59, 59));
    await note('24 start', local(2016, 3, 24, 0, 0, 0));
    const messages = async (filters: ReportFilters) => (await history(filters)).events.map((e) => e.message);
    const day = ['23 end', '23 noon', '23 start'];
    expect(await messages({ fromDate: date('2016-03-23'), toDate: date('2016-03-23') })).toEqual(day);
    expect(await messages({ fromDate: date('3/23/2016'), toDate: date('3/23/2016') })).toEqual(day);
    // yyyy/MM/dd as .NET's DateTime.Parse reads it (wire rule 27, docs/wire-rules.md): date-only covers the day too.
    expect(await messages({ fromDate: date('2016/03/23'), toDate: date('2016/3/23') })).toEqual(day);
    expect(await messages({ fromDate: date('2016/03/23 0:00:00'), toDate: date('2016/03/23 12:00:00') }))
      .toEqual(['23 noon', '23 start']);
    expect(await messages({ fromDate: date('3/23/2016 12:00:00 AM'), toDate: date('3/23/2016 12:00:00 PM') }))
      .toEqual(['23 noon', '23 start']);
    expect(await messages({ fromDate: date('2016-03-23T12:00:00'), toDate: date('2016-03-24 00:00:00') }))
      .toEqual(['24 start', '23 end', '23 noon']);
    const utcNoon = local(2016, 3, 23, 12).toISOString();
    expect(await messages({ fromDate: date(utcNoon), toDate: date(utcNoon.replace('.000Z', '+00:00')) }))
      .toEqual(['23 noon']);
    expect(await messages({ toDate: date('2016-03-22') })).toEqual(['22 late']);
    expect(await messages({ fromDate: date('2016-03-24') })).toEqual(['24 start']);
  });

  it('days counts back from now and replaces fromDate', async () => {
    await note('two days ago', local(2016, 3, 23, 13));
    await note('four days ago', local(2016, 3, 21, 13));
    const messages = async (filters: ReportFilters) => (await history(filters)).events.map((e) => e.message);
    expect(await messages({ days: 3 })).toEqual(['two days ago']);
    expect(await messages({ days: 3, fromDate: date('2016-01-01') })).toEqual(['two days ago']);
    expect(await messages({ days: 5 })).toEqual(['two days ago', 'four days ago']);
    expect(await messages({ days: 0 })).toEqual([]);
    await expect(history({ days: -1 })).rejects.toThrow(`Parameter 'days' must not be negative.`);
    await expect(history({ skip: -1 })).rejects.toThrow(`Parameter 'skip' must not be negative.`);
    await expect(history({ take: -5 })).rejects.toThrow(`Parameter 'take' must not be negative.`);
  });

  it('filters by application, device (Guid, serial, vendor id) and user (subject or performer)', async () => {
    const alice = await createUser(t.db, 'alice.history@example.com');
    const bob = await createUser(t.db, 'bob.history@example.com');
    const pixel = await insertDevice(t.db, { name: 'Pixel H', serial_number: 'PIXELSERIAL', vendor_unique_identifier: 'emulator-7001' });
    const other = await insertDevice(t.db, { name: 'Other H' });
    const app = '6f1c2b1e-0000-4000-8000-0000000000a1';
    const at = local(2016, 3, 23, 10);
    await note('pixel by alice', at, { deviceId: pixel.id, performedById: alice.id });
    await note('other about bob', at, { deviceId: other.id, userId: bob.id, performedById: alice.id });
    await note('app on pixel', at, { deviceId: pixel.id, applicationId: app });
    const messages = async (filters: ReportFilters) => (await history(filters)).events.map((e) => e.message).sort();
    expect(await messages({ applicationId: app })).toEqual(['app on pixel']);
    for (const id of [pixel.id, 'PIXELSERIAL', 'emulator-7001', pixel.id.toUpperCase()]) {
      expect(await messages({ device: id })).toEqual(['app on pixel', 'pixel by alice']);
    }
    expect(await messages({ userId: bob.id })).toEqual(['other about bob']);
    expect(await messages({ userId: alice.id })).toEqual(['other about bob', 'pixel by alice']);
    expect(await messages({ userId: alice.id, device: other.id })).toEqual(['other about bob']);
    expect(await messages({ device: '6f1c2b1e-0000-4000-8000-00000000dead' })).toEqual([]);
    await expect(history({ device: 'NO-SUCH-SERIAL' })).rejects.toThrow(`Device 'NO-SUCH-SERIAL' not found.`);
  });
});

describe('/Report/Usage', () => {
  const ticketKeys = newTicketKeys();

  it('pairs real retain and release into periods; an open retain is dirty with no endDate', async () => {
    const alice = await createUser(t.db, 'alice.usage@example.com', undefined, { first: 'Alice', last: 'Usage' });
    const device = await insertDevice(t.db, { name: 'Usage Pixel', operating_system_version: '14' });
    await retainDevice(t.db, alice, device.id, { ticketKeys });
    await releaseDevice(t.db, alice, device.id);
    await retainDevice(t.db, alice, device.serial_number!, { ticketKeys });
    const [retained, released, retainedAgain] = (await t.db.selectFrom('events').selectAll()
      .where('device_id', '=', device.id).orderBy('seq').execute());
    expect([retained.message, released.message, retainedAgain.message])
      .toEqual(['Device Retained', 'Device Released', 'Device Retained']);

    const now = new Date(retainedAgain.event_date.getTime() + 90_000);
    const report = await usage({ device: device.id }, now);
    expect(report).toMatchObject({ count: 2, pageSize: 2 });
    const [open, closed] = report.deviceUsage;
    expect(open).toMatchObject({
      id: retainedAgain.id, deviceId: device.id, deviceName: 'Usage Pixel', eventType: 'DeviceRetained',
      performedById: alice.id, performedByName: 'Alice Usage',
      operatingSystem: 'Android', operatingSystemVersion: '14', isDirty: true, duration: 90,
    });
    // Nobody had booked the device: reservedBy names a booking, not the retainer.
    expect([open.reservedById, open.reservedByName, closed.reservedById]).toEqual([undefined, undefined, undefined]);
    expect('endDate' in JSON.parse(serialize(open, false))).toBe(false);
    expect(closed).toMatchObject({ id: retained.id, isDirty: false, eventType: 'DeviceRetained' });
    expect(closed.endDate).toBe(serialize(released.event_date, false).replace(/"/g, ''));
    expect(closed.duration).toBeCloseTo((released.event_date.getTime() - retained.event_date.getTime()) / 1000, 3);
    expect(serialize(report, false)).toMatch(/^\{"count":2,"pageSize":2,"deviceUsage":\[/);
  });

  it('install and launch are records; usage during a booking names its booker; filters and paging as in History', async () => {
    const alice = await createUser(t.db, 'alice.apps@example.com');
    const bob = await createUser(t.db, 'bob.apps@example.com');
    const device = await insertDevice(t.db, { name: 'Apps Pixel' });
    const app = '6f1c2b1e-0000-4000-8000-0000000000b2';
    const on = { deviceId: device.id, deviceName: device.name, applicationId: app, applicationName: 'Shop' };
    const retain = (by: typeof alice, at: Date, retained: boolean) => record({
      eventType: 'DeviceRetained', message: retained ? 'Device Retained' : 'Device Released', boolValue: retained,
      deviceId: device.id, deviceName: device.name, performedById: by.id, performedByName: by.displayName,
      userId: by.id, eventDate: at,
    });
    const appEvent = (eventType: EventType, message: string, by: typeof alice, at: Date) => record({
      eventType, message, ...on, performedById: by.id, performedByName: by.displayName, eventDate: at,
    });
    await appEvent('ApplicationInstall', 'Application Installed', bob, local(2016, 3, 22, 9));
    await retain(alice, local(2016, 3, 22, 10), true);
    await appEvent('ApplicationLaunch', 'Application Launched', alice, local(2016, 3, 22, 10, 5));
    await retain(alice, local(2016, 3, 22, 10, 30), false);
    await note('not usage', local(2016, 3, 22, 10, 10), { deviceId: device.id });
    // Bob's booking from 10:00 to 10:10 holds the launch and overlaps alice's retain; the install came before it.
    await t.db.insertInto('reservations').values({ device_id: device.id, user_id: bob.id,
      starts_at: local(2016, 3, 22, 10), ends_at: local(2016, 3, 22, 10, 10) }).execute();

    const all = await usage({ device: device.id });
    expect(all.count).toBe(3);
    expect(all.deviceUsage.map((u) => [u.eventType, u.startDate === u.endDate, u.duration, u.reservedById ?? null]))
      .toEqual([
        ['ApplicationLaunch', true, 0, bob.id],
        ['DeviceRetained', false, 1800, bob.id],
        ['ApplicationInstall', true, 0, null],
      ]);
    expect(all.deviceUsage.map((u) => [u.performedById, u.reservedByName ?? null]))
      .toEqual([[alice.id, bob.login], [alice.id, bob.login], [bob.id, null]]);
    expect(all.deviceUsage[0]).toMatchObject({ applicationId: app, applicationName: 'Shop', isDirty: false });
    expect((await usage({ applicationId: app })).deviceUsage.map((u) => u.eventType))
      .toEqual(['ApplicationLaunch', 'ApplicationInstall']);
    // A user's usage: what they did, and what others did during their bookings.
    expect((await usage({ userId: bob.id })).deviceUsage.map((u) => u.eventType))
      .toEqual(['ApplicationLaunch', 'DeviceRetained', 'ApplicationInstall']);
    expect((await usage({ userId: alice.id })).count).toBe(2);
    // A period matches a range it overlaps.
    const within = await usage({ fromDate: date('3/22/2016 10:20:00 AM'), toDate: date('3/22/2016 11:00:00 AM') });
    expect(within.deviceUsage.map((u) => u.eventType)).toEqual(['DeviceRetained']);
    const page = await usage({ device: device.id, skip: 1, take: 1 });
    expect(page).toMatchObject({ count: 3, pageSize: 1 });
    expect(page.deviceUsage[0].eventType).toBe('DeviceRetained');
  });
});

describe('/Report/Availability', () => {
  const snapshot = (at: Date, online: number, inUse: number, eventType: EventType = 'DeviceAvailability') =>
    t.db.insertInto('events').values({
      event_type: eventType, message: 'Device Online', event_date: at, device_online_count: online,
      device_inuse_count: inUse,
    }).execute();

  it('reads TimeSpan text as .NET does', () => {
    expect(parseTimeSpan('00:00:30')).toBe(30_000);
    expect(parseTimeSpan('1.02:00:00')).toBe(26 * 3_600_000);
    expect(parseTimeSpan('01:30')).toBe(90 * 60_000);
    expect(parseTimeSpan('2')).toBe(2 * 86_400_000);
    expect(parseTimeSpan('00:00:01.5')).toBe(1500);
    for (const bad of ['30s', '00:60:00', '24:00:00', 'abc', '']) expect(parseTimeSpan(bad)).toBeUndefined();
  });

  it('one sample per window with the peak counts, carrying the state in from before the range', async () => {
    await snapshot(local(2016, 3, 22, 9, 59), 2, 0);
    await snapshot(local(2016, 3, 22, 10, 0, 10), 3, 0);
    await snapshot(local(2016, 3, 22, 10, 0, 20), 3, 1, 'DeviceRetained');
    await snapshot(local(2016, 3, 22, 10, 0, 25), 3, 0, 'DeviceRetained');
    await snapshot(local(2016, 3, 22, 10, 1, 5), 1, 0);
    await t.db.insertInto('events').values({ event_type: 'Note', message: 'no snapshot', event_date: local(2016, 3, 22, 10, 0, 40) }).execute();
    const timeline = await availabilityTimeline(t.db, {
      fromDate: date('2016-03-22T10:00:00'), toDate: date('2016-03-22T10:01:30'), window: '00:00:30',
    }, NOW);
    const at = (s: number) => local(2016, 3, 22, 10, 0, s).toISOString().replace('.000Z', 'Z');
    expect(timeline).toEqual([
      { date: at(0), online: 3, inUse: 1 },
      { date: at(30), online: 3, inUse: 0 },
      { date: at(60), online: 3, inUse: 0 },
    ]);
    expect(serialize(timeline[0], false)).toMatch(/^\{"date":"[^"]+Z","online":3,"inUse":1\}$/);
  });

  it('starts at the first snapshot without fromDate and stops at now; bad windows fail clearly', async () => {
    await snapshot(local(2016, 3, 25, 11), 1, 0);
    const timeline = await availabilityTimeline(t.db, { window: '00:30:00' }, NOW);
    expect(timeline.map((s) => s.online)).toEqual([1, 1]);
    expect(await availabilityTimeline(t.db, { window: '01:00:00', fromDate: date('2016-03-26') }, NOW)).toEqual([]);
    await expect(availabilityTimeline(t.db, { window: 'half a minute' }, NOW))
      .rejects.toThrow(`String 'half a minute' was not recognized as a valid TimeSpan.`);
    await expect(availabilityTimeline(t.db, { window: '00:00:00' }, NOW))
      .rejects.toThrow(`The window '00:00:00' must be at least one second.`);
    await expect(availabilityTimeline(t.db, { window: '00:00:01', days: 30 }, NOW)).rejects.toThrow(/at most 10000/);
  });
});

describe('server start events', () => {
  it('ServerStarting at every start; ServerRestarting first when the last run did not stop cleanly', async () => {
    const types = async () => (await t.db.selectFrom('events').select(['event_type', 'message', 'is_success'])
      .orderBy('seq').execute());
    const cleanStop = await recordServerStart(t.db);
    expect(await types()).toEqual([{ event_type: 'ServerStarting', message: 'Server Starting', is_success: true }]);
    await cleanStop();
    expect(await t.db.selectFrom('hub_settings').where('key', '=', RUNNING_FLAG).selectAll().execute()).toEqual([]);
    await recordServerStart(t.db); // this run "crashes": its stop step never runs
    await recordServerStart(t.db);
    expect((await types()).map((e) => e.event_type))
      .toEqual(['ServerStarting', 'ServerStarting', 'ServerRestarting', 'ServerStarting']);
    expect((await history()).events.slice(0, 2).map((e) => e.message)).toEqual(['Server Starting', 'Server Restarting']);
  });
});
