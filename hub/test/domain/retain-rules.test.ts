/**
 * Rules the database and TypeScript both apply, one definition each (store/routines/), and a check here that the
 * two ends agree on every case: the retain refusal, a device's next readiness and its availability; the lab
 * counts every event records; and that the routines a hub runs are the current file's, not a migration's.
 */
import { sql } from 'kysely';
import { retainRefusal } from '../../src/domain/device-actions';
import { recordEvent } from '../../src/domain/events';
import { availabilityOf, nextReadiness } from '../../src/gateways/device-inventory';
import { withTx } from '../../src/store/database';
import { applyRoutines } from '../../src/store/routines';
import { createTestDatabase, type TestDatabase } from '../support/test-database';
import { createUser, insertDevice } from './helpers';

let t: TestDatabase;
beforeAll(async () => { t = await createTestDatabase(); });
afterAll(() => t.drop());

it('retain_refusal and retainRefusal agree on every combination of the rule inputs', async () => {
  const me = await createUser(t.db, 'me@example.com');
  const other = await createUser(t.db, 'other@example.com');
  let cases = 0;
  for (const deleted of [false, true]) {
    for (const enabled of [true, false]) {
      for (const retainedBy of [null, me.id, other.id]) {
        for (const bookedBy of [null, me.id, other.id]) {
          for (const availability of ['Online', 'Offline'] as const) {
            const device = await insertDevice(t.db, { deleted, enabled, availability, retained_by: retainedBy });
            const { rows: [row] } = await sql<{ refusal: string | null }>`
              SELECT retain_refusal(d, ${me.id}::uuid, ${bookedBy}::uuid) AS refusal FROM devices d WHERE d.id = ${device.id}`
              .execute(t.db);
            const inTypeScript = retainRefusal({ deleted, enabled, retained_by: retainedBy, availability }, me.id, bookedBy);
            const inputs = { deleted, enabled, retainedBy, bookedBy, availability };
            expect([inputs, row.refusal ?? undefined]).toEqual([inputs, inTypeScript]);
            cases += 1;
          }
        }
      }
    }
  }
  expect(cases).toBe(72);
});

it("device_booker names the booker during a device's bookings (start included, end not) and nobody outside them", async () => {
  const [first, second] = [await createUser(t.db, 'first@example.com'), await createUser(t.db, 'second@example.com')];
  const device = await insertDevice(t.db);
  const hour = 3_600_000;
  const base = Date.now() + hour;
  await t.db.insertInto('reservations').values([
    { device_id: device.id, user_id: first.id, starts_at: new Date(base), ends_at: new Date(base + hour) },
    { device_id: device.id, user_id: second.id, starts_at: new Date(base + 2 * hour), ends_at: new Date(base + 3 * hour) },
  ]).execute();
  const seen: (string | null)[] = [];
  for (const offset of [-hour, 0, hour / 2, hour, 1.5 * hour, 2 * hour, 3 * hour, 4 * hour]) {
    const at = new Date(base + offset);
    const { rows: [row] } = await sql<{ booker: string | null }>`SELECT device_booker(${device.id}::uuid, ${at}) AS booker`.execute(t.db);
    seen.push(row.booker);
  }
  expect(seen).toEqual([null, first.id, first.id, null, null, second.id, null, null]);
});

it('next_readiness and availability_of agree with nextReadiness and availabilityOf', async () => {
  const readinesses = ['Ready', 'Offline', 'Rebooting', 'Unauthorized', 'Booting', ''];
  for (const current of readinesses) {
    for (const reported of readinesses) {
      const { rows: [row] } = await sql<{ next: string; availability: string }>`
        SELECT next_readiness(${current}, ${reported}) AS next, availability_of(next_readiness(${current}, ${reported})) AS availability`
        .execute(t.db);
      const next = nextReadiness(current, reported);
      expect([current, reported, row.next, row.availability]).toEqual([current, reported, next, availabilityOf(next)]);
    }
  }
});

it('every event records the lab counts the device rows give, whoever writes it', async () => {
  const holder = await createUser(t.db, 'holder@example.com');
  await insertDevice(t.db, { availability: 'Online', retained_by: holder.id });
  await insertDevice(t.db, { availability: 'Offline', retained_by: holder.id });
  await insertDevice(t.db, { availability: 'Online', deleted: true, retained_by: holder.id });
  await withTx(t.db, (trx) => recordEvent(trx, { eventType: 'ServerStarting', message: 'Server Starting' }));
  const event = await t.db.selectFrom('events').select(['device_online_count', 'device_inuse_count'])
    .where('event_type', '=', 'ServerStarting').orderBy('event_date', 'desc').executeTakeFirstOrThrow();
  const fromRows = await t.db.selectFrom('devices').where('deleted', '=', false).select([
    sql<number>`count(*) FILTER (WHERE availability = 'Online')::int`.as('online'),
    sql<number>`count(*) FILTER (WHERE retained_by IS NOT NULL)::int`.as('inuse'),
  ]).executeTakeFirstOrThrow();
  expect(fromRows.inuse).toBeGreaterThan(0);
  expect(event).toEqual({ device_online_count: fromRows.online, device_inuse_count: fromRows.inuse });
});

it("the database runs the current file's routines, and a changed one is put back at the next start", async () => {
  const definition = async () => (await sql<{ src: string }>`
    SELECT prosrc AS src FROM pg_proc WHERE proname = 'retain_refusal'`.execute(t.db)).rows[0].src;
  const current = await definition();
  // As a database left by an older hub would be: another body, and the digest of what that hub applied.
  await sql`CREATE OR REPLACE FUNCTION retain_refusal(device devices, retainer uuid, booker uuid) RETURNS text
    LANGUAGE sql IMMUTABLE AS $$ SELECT NULL::text $$`.execute(t.db);
  await t.db.updateTable('hub_settings').set({ value: 'older' }).where('key', '=', 'routines_digest').execute();
  await applyRoutines(t.db);
  expect(await definition()).toBe(current);
  // Unchanged text: nothing is replaced (other connections keep their cached plans).
  const oid = async () => (await sql<{ oid: number; xmin: string }>`
    SELECT oid, xmin::text FROM pg_proc WHERE proname = 'retain_refusal'`.execute(t.db)).rows[0];
  const before = await oid();
  await applyRoutines(t.db);
  expect(await oid()).toEqual(before);
});
