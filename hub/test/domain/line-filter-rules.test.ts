/**
 * The waiting line in the database (store/routines/waiting-line.ts): its filter match agrees with the filter people
 * type (shared/src/device-filter.ts, as `GET /Device?filter=` applies it) on every key, and a release hands its
 * device to the earliest waiter it suits in the release's own statement, booking rules included.
 */
import { sql } from 'kysely';
import { matchesDeviceFilter, parseDeviceFilter } from '@devicelab/shared';
import { toDeviceModel } from '../../src/domain/device-mapping';
import { selectDevices } from '../../src/domain/device-queries';
import { filterTerms } from '../../src/domain/waiting-line';
import { createTestDatabase, type TestDatabase } from '../support/test-database';
import { createUser, insertDevice } from './helpers';

let t: TestDatabase;
beforeAll(async () => { t = await createTestDatabase(); });
afterAll(() => t.drop());

const apps = (...ids: string[]) => JSON.stringify(ids.map((identifier) => ({ identifier, version: '1.0' })));

it('device_matches_filter and matchesDeviceFilter agree on every filter key', async () => {
  const holder = await createUser(t.db, 'holder@example.com');
  const devices = [
    await insertDevice(t.db, { name: 'Pixel Lab 1', model: 'Pixel 7', manufacturer: 'Google', operating_system_version: '14',
      installed_packages: apps('com.example.app'), form_factor: 'Phone' }),
    await insertDevice(t.db, { name: 'Galaxy', model: 'SM-S911B', friendly_model: 'Galaxy S23', manufacturer: 'samsung',
      operating_system_version: '13.0.1', form_factor: 'Tablet' }),
    await insertDevice(t.db, { name: 'iPhone Ä', operating_system: 'iOS', operating_system_version: '17.4.1', retained_by: holder.id }),
    await insertDevice(t.db, { operating_system_version: null, availability: 'Offline' }),
    await insertDevice(t.db, { operating_system_version: '14.10', enabled: false }),
    await insertDevice(t.db, { operating_system_version: '14.1.2', deleted: true, availability: 'Offline' }),
    await insertDevice(t.db, { operating_system_version: 'abc' }),
    await insertDevice(t.db, { operating_system_version: '12-beta_2', installed_packages: apps('com.other') }),
  ];
  const filters = ['', 'os=android', 'os=ios', 'minOs=13', 'minOs=14.1', 'minOs=0', 'maxOs=13', 'maxOs=14', 'maxOs=14.1',
    'maxOs=12', 'osVersion=14', 'osVersion=14.1', 'osVersion=13.0', 'osVersion=12', 'model=pixel', 'model=GOOGLE',
    'model=galaxy', 'model=s911', 'name=lab', 'name=ä', 'name=zzz', `id=${devices[1].serial_number}`, `id=${devices[0].id.toUpperCase()}`,
    'formFactor=tablet', 'formFactor=phone', 'app=com.example.app', 'app=com.example', 'free', 'free=false', 'online',
    'online=false', 'os=android,minOs=13,free', 'os=android,maxOs=14,model=pixel,app=com.example.app'];
  const rows = await selectDevices(t.db, { properties: false, installedPackages: true }).execute();
  let cases = 0;
  for (const text of filters) {
    const filter = parseDeviceFilter(text);
    const { rows: matched } = await sql<{ id: string; matches: boolean }>`
      SELECT d.id, device_matches_filter(d, ${filterTerms(filter)}::jsonb) AS matches FROM devices d`.execute(t.db);
    for (const row of rows) {
      const inSql = matched.find((m) => m.id === row.id)!.matches;
      const inTypeScript = matchesDeviceFilter(filter, toDeviceModel(row, { allApplications: true }));
      expect([text, row.name, inSql]).toEqual([text, row.name, inTypeScript]);
      cases += 1;
    }
  }
  expect(cases).toBe(filters.length * devices.length);
});

describe('a release', () => {
  const release = (deviceId: string, releaser: string) => sql<{ outcome: string; retained_by: string | null }>`
    SELECT outcome, retained_by FROM release_device(${deviceId}::text, ${deviceId}::uuid, ${releaser}::uuid, 'releaser',
      false, now(), NULL::text, NULL::text)`.execute(t.db).then((r) => r.rows[0]);
  const retain = (deviceId: string, userId: string) => sql`SELECT * FROM retain_lease(${deviceId}::text, ${deviceId}::uuid,
    ${userId}::uuid, 'someone', now(), NULL::text, NULL::text, NULL::int)`.execute(t.db);
  const wait = (userId: string, filter: string, deviceId: string | null = null) => t.db.insertInto('device_waiters').values({
    user_id: userId, user_name: 'waiter', filter, device_id: deviceId, filter_terms: deviceId ? null : filterTerms(parseDeviceFilter(filter)),
    purpose: 'retain', replica_id: 'test-replica', deadline: new Date(Date.now() + 60_000),
  }).returning('id').executeTakeFirstOrThrow();
  const assigned = async (id: string) => (await t.db.selectFrom('device_waiters').select('assigned_device')
    .where('id', '=', id).executeTakeFirstOrThrow()).assigned_device;

  beforeEach(async () => {
    await t.db.deleteFrom('device_waiters').execute();
  });

  it('retains the device for the earliest waiter it suits, in its own statement', async () => {
    const [holder, iosFan, first, second] = await Promise.all(['h', 'i', 'f', 's'].map((n) => createUser(t.db, `${n}-${Date.now()}@example.com`)));
    const device = await insertDevice(t.db, { operating_system_version: '14' });
    await retain(device.id, holder.id);
    const ios = await wait(iosFan.id, 'os=ios');
    const early = await wait(first.id, 'os=android,minOs=13');
    const late = await wait(second.id, 'os=android');
    const outcome = await release(device.id, holder.id);
    expect(outcome).toEqual({ outcome: 'released', retained_by: first.id });
    expect([await assigned(ios.id), await assigned(early.id), await assigned(late.id)]).toEqual([null, device.id, null]);
    const events = await t.db.selectFrom('events').select(['message', 'user_id']).where('device_id', '=', device.id)
      .where('event_type', '=', 'DeviceRetained').orderBy('seq').execute();
    expect(events).toEqual([
      { message: 'Device Retained', user_id: holder.id },
      { message: 'Device Released', user_id: holder.id },
      { message: 'Device Retained', user_id: first.id },
    ]);
  });

  it("passes over waiters during someone else's booking, and leaves the device free when nobody suits", async () => {
    const [holder, other, booker] = await Promise.all(['h', 'o', 'b'].map((n) => createUser(t.db, `${n}-${Date.now()}@example.com`)));
    const device = await insertDevice(t.db);
    await retain(device.id, holder.id);
    await t.db.insertInto('reservations').values({ device_id: device.id, user_id: booker.id,
      starts_at: new Date(Date.now() - 60_000), ends_at: new Date(Date.now() + 3_600_000) }).execute();
    const notBooker = await wait(other.id, '');
    const bookersWait = await wait(booker.id, '', device.id);
    expect(await release(device.id, holder.id)).toEqual({ outcome: 'released', retained_by: booker.id });
    expect([await assigned(notBooker.id), await assigned(bookersWait.id)]).toEqual([null, device.id]);

    await t.db.deleteFrom('device_waiters').execute();
    await wait(other.id, 'os=ios');
    expect(await release(device.id, booker.id)).toEqual({ outcome: 'released', retained_by: null });
  });
});
