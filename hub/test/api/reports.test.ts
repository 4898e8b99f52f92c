/**
 * Reports over HTTP as real clients call them (C# client query shape, QA curl shapes, the legacy `/Report?type=`),
 * on a real hub with real Basic authentication. No gateway is needed: the events are written through the domain's
 * recordEvent with fixed dates.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pino from 'pino';
import { createUser } from '../../src/auth/users';
import { recordEvent, RUNNING_FLAG, type EventInput } from '../../src/domain/events';
import { startHub, type RunningHub } from '../../src/server';
import { withTx } from '../../src/store/database';
import { insertDevice } from '../domain/helpers';
import { createTestDatabase, type TestDatabase } from '../support/test-database';
import type { FailureCode } from '@devicelab/shared';

let database: TestDatabase;
let hub: RunningHub;
let dataDir: string;
const tokens = new Map<string, string>();
const errors: unknown[] = [];
const logger = pino({ level: 'error', hooks: { logMethod(args, method) { errors.push(args[0]); method.apply(this, args); } } },
  { write: () => undefined });
const ADMIN_TOKEN = '7e0c1a2b-3c4d-4e5f-8a9b-0c1d2e3f4a5b';
const APP = '6f1c2b1e-0000-4000-8000-0000000000c3';
const local = (y: number, mo: number, d: number, h = 0, mi = 0, s = 0) => new Date(y, mo - 1, d, h, mi, s);
let deviceId: string;

beforeAll(async () => {
  database = await createTestDatabase({ maxConnections: 2 });
  // A previous run that never stopped cleanly: the hub must say so when it starts.
  await database.db.insertInto('hub_settings').values({ key: RUNNING_FLAG, value: '2016-03-20T00:00:00.000Z' }).execute();
  dataDir = mkdtempSync(path.join(os.tmpdir(), 'devicelab-reports-'));
  hub = await startHub({
    port: 0, host: '127.0.0.1', linkPort: 0, databaseUrl: database.url, dataDir, adminToken: ADMIN_TOKEN,
    uploadLimitBytes: 1024 * 1024,
  }, logger);
  tokens.set('admin', ADMIN_TOKEN);
  const { db } = hub;
  await db.insertInto('roles').values([
    { name: 'UsersOnly', entitlements: ['UserList'] },
    { name: 'UsersAndDevices', entitlements: ['UserList', 'DeviceList'] },
  ]).execute();
  for (const [login, roles] of [['tester@example.com', ['Tester']], ['users@example.com', ['UsersOnly']],
    ['usersdevices@example.com', ['UsersAndDevices']]] as const) {
    tokens.set(login, (await createUser(db, { login, roles: [...roles] })).token);
  }
  const device = await insertDevice(db, { name: 'Report Pixel', serial_number: 'RPTSERIAL1', vendor_unique_identifier: 'emulator-7101' });
  deviceId = device.id;
  const record = (event: EventInput) => withTx(db, (trx) => recordEvent(trx, event));
  for (let day = 22; day <= 24; day++) {
    for (let i = 0; i < 6; i++) {
      await record({
        eventType: 'ApplicationLaunch', message: 'Application Launched', deviceId, deviceName: device.name,
        applicationId: APP, applicationName: 'Shop', eventDate: local(2016, 3, day, 10, i),
      });
    }
  }
  await record({
    eventType: 'DeviceRetained', message: 'Device Retained', boolValue: true, deviceId, deviceName: device.name,
    eventDate: local(2016, 3, 24, 11),
  });
  await record({
    eventType: 'DeviceRetained', message: 'Device Released', boolValue: false, deviceId, deviceName: device.name,
    eventDate: local(2016, 3, 24, 11, 0, 19),
  });
}, 60_000);
afterAll(async () => {
  await hub?.stop();
  const flag = await database.db.selectFrom('hub_settings').select('key').where('key', '=', RUNNING_FLAG).execute();
  await database.drop();
  rmSync(dataDir, { recursive: true, force: true });
  expect(flag).toEqual([]); // a clean stop clears the running mark
}, 60_000);
afterEach(() => expect(errors).toEqual([]));

async function call(method: string, p: string, init: { body?: string; login?: string } = {}) {
  const login = init.login ?? 'admin';
  const res = await fetch(hub.url + p, {
    method, body: init.body,
    headers: {
      authorization: `Basic ${Buffer.from(`${login}:${tokens.get(login)}`).toString('base64')}`,
      ...(init.body ? { 'content-type': 'application/x-www-form-urlencoded' } : {}),
    },
  });
  expect(res.status).toBe(200);
  return res.text();
}
const json = async (method: string, p: string, init: { body?: string; login?: string } = {}) =>
  JSON.parse(await call(method, p, init));
const failure = (errorMessage: string, errorCode?: FailureCode, errorParameter?: string) =>
  JSON.stringify({ isSuccess: false, errorMessage, errorCode, errorParameter });

describe('entitlements (spec 4.5: User list, Device list, Application list, in that order)', () => {
  it.each([
    ['tester@example.com', 'UserList'], ['users@example.com', 'DeviceList'], ['usersdevices@example.com', 'ApplicationList'],
  ])('%s is refused with the %s text on every report form, before any input check', async (login, missing) => {
    const text = failure(`User does not have required entitlement: ${missing}`, 'ENTITLEMENT_REQUIRED');
    for (const p of ['/apiv1/Report/History', '/apiv1/Report/Usage?deviceId=nope', '/apiv1/Report/Availability?window=bad',
      `/apiv1/Report?type=history&applicationId=${APP}&fromDate=2016-03-22`, '/apiv1/Report?type=bogus']) {
      expect(await call('GET', p, { login })).toBe(text);
    }
    expect(await call('POST', '/apiv1/Report?type=usage', { login })).toBe(text);
    expect(await call('POST', '/apiv1/Report', { login, body: 'type=history&take=10&skip=5' })).toBe(text);
  });
});

describe('/Report/History', () => {
  it('answers the C# client query shape (empty parameters are omitted) with count, pageSize, events', async () => {
    const text = await call('GET', '/apiv1/Report/History?get=&applicationId=&deviceId=&fromDate=&toDate=&days=&userId=&skip=&take=');
    expect(text).toMatch(/^\{"count":\d+,"pageSize":\d+,"events":\[\{/);
    expect(text).toContain('"eventDate":"');
    expect(text).not.toContain('null');
    const report = JSON.parse(text);
    expect(report.count).toBe(report.pageSize);
    // The hub's own start, after a run that did not stop cleanly.
    expect(report.events.filter((e: { eventType: string }) => e.eventType.startsWith('Server')).map((e: { message: string }) => e.message))
      .toEqual(['Server Starting', 'Server Restarting']);
  });

  it('QA paging: take=10, then take=5&skip=5 gives rows 6-10; same-day fromDate/toDate gives that day', async () => {
    const q = `applicationId=${APP}&fromDate=2016-03-22&toDate=2016-03-24`;
    const first = await json('GET', `/apiv1/Report/History?${q}&take=10`);
    expect(first).toMatchObject({ count: 18, pageSize: 10 });
    expect(first.events[0]).toMatchObject({ applicationId: APP, propertiesId: APP, eventType: 'ApplicationLaunch' });
    const second = await json('GET', `/apiv1/Report/History?${q}&take=5&skip=5`);
    expect(second).toMatchObject({ count: 18, pageSize: 5 });
    expect(second.events.map((e: { id: string }) => e.id)).toEqual(first.events.slice(5, 10).map((e: { id: string }) => e.id));
    const day = await json('GET', `/apiv1/Report/History?fromDate=2016-03-23&toDate=2016-03-23&deviceId=${deviceId}`);
    expect(day.count).toBe(6);
    expect(new Set(day.events.map((e: { eventDate: string }) => new Date(e.eventDate).getDate()))).toEqual(new Set([23]));
    const us = await json('GET', `/apiv1/Report/History?fromDate=${encodeURIComponent('3/23/2016 10:02:00 AM')}&toDate=3/23/2016&deviceId=RPTSERIAL1`);
    expect(us.count).toBe(4);
  });

  it('bad input is a failure Result with HTTP 200 and the vendor texts', async () => {
    expect(await call('GET', '/apiv1/Report/History?applicationId=abc')).toBe(failure('Invalid Guid format: abc', 'INVALID_PARAMETER', 'applicationId'));
    expect(await call('GET', '/apiv1/Report/History?userId=xyz')).toBe(failure('Invalid Guid format: xyz', 'INVALID_PARAMETER', 'userId'));
    expect(await call('GET', '/apiv1/Report/History?fromDate=yesterday'))
      .toBe(failure(`String 'yesterday' was not recognized as a valid DateTime.`, 'INVALID_PARAMETER', 'fromDate'));
    expect(await call('GET', '/apiv1/Report/History?take=ten'))
      .toBe(failure('Input string was not in a correct format.', 'INVALID_PARAMETER', 'take'));
    expect(await call('GET', '/apiv1/Report/History?skip=-1')).toBe(failure(`Parameter 'skip' must not be negative.`));
    expect(await call('GET', '/apiv1/Report/History?deviceId=NOPE')).toBe(failure(`Device 'NOPE' not found.`, 'DEVICE_NOT_FOUND'));
    expect(await call('GET', `/apiv1/Report/History?toDate=${encodeURIComponent('9999-12-31T23:59:59-23:59')}`))
      .toBe(failure(`Parameter 'toDate' is out of range: '9999-12-31T23:59:59-23:59'. Dates from 0001-01-01T00:00:00Z to 9999-12-31T23:59:59Z (UTC) are accepted.`,
        'INVALID_PARAMETER', 'toDate'));
  });
});

describe('/Report/Usage', () => {
  it('derives usage records with TimeSpan durations in seconds', async () => {
    const text = await call('GET', `/apiv1/Report/Usage?deviceId=emulator-7101&fromDate=2016-03-24&toDate=2016-03-24&take=2`);
    expect(text).toMatch(/^\{"count":7,"pageSize":2,"deviceUsage":\[\{/);
    const [retain, launch] = JSON.parse(text).deviceUsage;
    expect(retain).toMatchObject({ eventType: 'DeviceRetained', deviceId, duration: 19, isDirty: false, operatingSystem: 'Android' });
    expect(launch).toMatchObject({ eventType: 'ApplicationLaunch', applicationId: APP, duration: 0, isDirty: false });
  });
});

describe('legacy /Report?type=', () => {
  it('GET and POST (query or form body) answer history and usage with the same filters; fromdate spelling', async () => {
    const viaGet = await json('GET', `/apiv1/Report?type=history&applicationId=${APP}&fromdate=2016-03-22&toDate=2016-03-24&take=10&skip=5`);
    expect(viaGet).toMatchObject({ count: 18, pageSize: 10 });
    const viaPost = await json('POST', `/apiv1/Report?type=History&applicationId=${APP}&fromdate=2016-03-22&toDate=2016-03-24&take=10&skip=5`);
    expect(viaPost).toEqual(viaGet);
    const viaForm = await json('POST', '/apiv1/Report', { body: `type=history&applicationId=${APP}&fromdate=2016-03-22&toDate=2016-03-24&take=10&skip=5` });
    expect(viaForm).toEqual(viaGet);
    const usage = await json('POST', `/apiv1/Report?type=usage&deviceId=${deviceId}&fromdate=2016-03-24`);
    expect(usage).toMatchObject({ count: 7, pageSize: 7 });
    expect(Object.keys(usage)).toEqual(['count', 'pageSize', 'deviceUsage']);
  });

  it('another type is a failure Result', async () => {
    expect(await call('GET', '/apiv1/Report?type=availability')).toBe(failure(`Unknown report type 'availability'.`));
    expect(await call('POST', '/apiv1/Report?type=x')).toBe(failure(`Unknown report type 'x'.`));
    expect(await call('GET', '/apiv1/Report')).toBe(failure(`Parameter 'type' is required.`));
  });
});

describe('/Report/Availability', () => {
  it('a Result wrapping the timeline; bad windows fail clearly', async () => {
    const text = await call('GET', '/apiv1/Report/Availability?fromDate=2016-03-24T11:00:00&toDate=2016-03-24T11:01:00&window=00:00:30');
    expect(text).toMatch(/^\{"isSuccess":true,"data":\[\{"date":"[^"]+Z","online":\d+,"inUse":\d+\},/);
    expect(JSON.parse(text).data).toHaveLength(2);
    // .NET reads a bare number as days: `30` is a valid (30-day) window.
    expect(await call('GET', '/apiv1/Report/Availability?window=30')).toMatch(/^\{"isSuccess":true,"data":\[\{"date":"2016-03-2/);
    expect(await call('GET', '/apiv1/Report/Availability?window=00:00:01'))
      .toMatch(/^\{"isSuccess":false,"errorMessage":"The window '00:00:01' gives \d+ intervals/);
    expect(await call('GET', '/apiv1/Report/Availability?window=thirty'))
      .toBe(failure(`String 'thirty' was not recognized as a valid TimeSpan.`));
  });
});
