/**
 * Credentials read in batches (auth/credential-reads.ts): many requests checked at once each get their own user,
 * a token rotated or a user disabled a moment before fails at once, and list requests get the lists' stamps
 * as they were when their check was read (a change committed before is in them).
 */
import { sql } from 'kysely';
import { CredentialReads } from '../../src/auth/credential-reads';
import { checkCredentials, createUser, rotateUserToken } from '../../src/auth/users';
import { createDatabase, withTx } from '../../src/store/database';
import { createTestDatabase, type TestDatabase } from '../support/test-database';

let t: TestDatabase;
beforeAll(async () => { t = await createTestDatabase({ maxConnections: 4 }); });
afterAll(() => t.drop());

test('60 checks at once: each gets its own user, the rotated token and the disabled user fail', async () => {
  const users: Awaited<ReturnType<typeof createUser>>[] = [];
  for (let i = 0; i < 30; i++) users.push(await createUser(t.db, { login: `batch-${i}@example.com`, roles: [] }));
  const rotated = users[3];
  const newToken = await rotateUserToken(t.db, rotated.user.login);
  await t.db.updateTable('users').set({ is_active: false }).where('id', '=', users[7].user.id).execute();
  const reads = new CredentialReads(t.db);
  const checks = await Promise.all(users.flatMap(({ user, token }) => [
    // Logins are case-insensitive: the upper-case form finds the same user.
    checkCredentials(t.db, user.login, token, { reads, withListStamps: false }),
    checkCredentials(t.db, user.login.toUpperCase(), token, { reads, withListStamps: true }),
  ]));
  checks.forEach((check, n) => {
    const { user } = users[Math.floor(n / 2)];
    if (user.id === rotated.user.id) expect(check).toEqual({ failure: 'wrong token' });
    else if (user.id === users[7].user.id) expect(check).toEqual({ failure: 'inactive user' });
    else expect('user' in check && check.user.id).toBe(user.id);
  });
  const renewed = await checkCredentials(t.db, rotated.user.login, newToken, { reads, withListStamps: false });
  expect('user' in renewed && renewed.user.id).toBe(rotated.user.id);
  expect(await checkCredentials(t.db, 'nobody@example.com', newToken, { reads, withListStamps: false }))
    .toEqual({ failure: 'unknown login' });
});

test('a list request gets stamps that show a change committed before its check', async () => {
  const { user, token } = await createUser(t.db, { login: 'stamps@example.com', roles: [] });
  const reads = new CredentialReads(t.db);
  const stampsOf = async () => {
    const check = await checkCredentials(t.db, user.login, token, { reads, withListStamps: true });
    return 'user' in check ? check.listStamps : undefined;
  };
  const before = await stampsOf();
  expect(before).toMatch(/^\d+:\d+:\d+\/\d+:\d+:\d+$/);
  expect(await stampsOf()).toBe(before);
  await sql`INSERT INTO devices (vendor_unique_identifier, name, operating_system) VALUES ('stamp-1', 'S', 'Android')`.execute(t.db);
  expect(await stampsOf()).not.toBe(before);
  const plain = await checkCredentials(t.db, user.login, token, { reads, withListStamps: false });
  expect('user' in plain && plain.listStamps).toBeUndefined();
});

test('the stamps change with every committed device and application change, also one committed out of order', async () => {
  const { user, token } = await createUser(t.db, { login: 'mirror@example.com', roles: [] });
  const reads = new CredentialReads(t.db);
  const stampsOf = async () => {
    const check = await checkCredentials(t.db, user.login, token, { reads, withListStamps: true });
    if (!('user' in check) || !check.listStamps) throw new Error('no stamps');
    return check.listStamps;
  };
  const [a, b] = await Promise.all(['mirror-a', 'mirror-b'].map(async (serial) => (await sql<{ id: string }>`
    INSERT INTO devices (vendor_unique_identifier, name, operating_system) VALUES (${serial}, ${serial}, 'Android')
    RETURNING id`.execute(t.db)).rows[0].id));
  const seen = new Set([await stampsOf()]);
  const expectNew = async () => {
    const stamps = await stampsOf();
    expect(seen.has(stamps)).toBe(false);
    seen.add(stamps);
  };
  await t.db.updateTable('devices').set({ notes: 'changed' }).where('id', '=', a).execute();
  await expectNew();
  // A write that changes nothing is no change.
  const unchanged = await stampsOf();
  await t.db.updateTable('devices').set({ notes: 'changed' }).where('id', '=', a).execute();
  expect(await stampsOf()).toBe(unchanged);
  await t.db.insertInto('applications').values({
    display_name: 'Stamped', application_identifier: 'com.stamped', version: '1.0', build_version: '1',
    operating_system: 'Android', blob_sha256: 'b'.repeat(64), file_name: 's.apk', file_byte_count: '10', version_counter: 1,
  }).execute();
  await expectNew();

  // A takes its stamp first but commits after B: the stamps read between the two commits must still change.
  const other = createDatabase(t.url, { maxConnections: 1 });
  let commitA!: () => void;
  let stampedA!: () => void;
  const aStamped = new Promise<void>((resolve) => { stampedA = resolve; });
  const slowA = withTx(other, async (trx) => {
    await trx.updateTable('devices').set({ notes: 'first stamped' }).where('id', '=', a).execute();
    stampedA();
    await new Promise<void>((resolve) => { commitA = resolve; });
  });
  await aStamped;
  await t.db.updateTable('devices').set({ notes: 'second stamped' }).where('id', '=', b).execute();
  await expectNew();
  commitA();
  await slowA;
  await expectNew();
  await other.destroy();

  await t.db.deleteFrom('devices').where('id', '=', b).execute();
  await expectNew();
});

test('many requests of one user after a quiet minute: one notes it, the others do not queue on the user row', async () => {
  const { user, token } = await createUser(t.db, { login: 'herd@example.com', roles: [] });
  await t.db.updateTable('users').set({ last_seen_at: new Date(Date.now() - 2 * 60_000) }).where('id', '=', user.id).execute();
  const reads = new CredentialReads(t.db);
  const other = createDatabase(t.url, { maxConnections: 1 });
  let unlock!: () => void;
  let locked!: () => void;
  const isLocked = new Promise<void>((resolve) => { locked = resolve; });
  // Another session holds the user's row, as a slow first note would.
  const holder = withTx(other, async (trx) => {
    await trx.selectFrom('users').select('id').where('id', '=', user.id).forUpdate().execute();
    locked();
    await new Promise<void>((resolve) => { unlock = resolve; });
  });
  await isLocked;
  let done = 0;
  const checks = Array.from({ length: 10 }, () => checkCredentials(t.db, user.login, token, { reads, withListStamps: false })
    .then((check) => { done++; return check; }));
  // Nine finish while the row is still held (before the fix all ten waited for it); the jest timeout fails this otherwise.
  while (done < 9) await new Promise((resolve) => setTimeout(resolve, 20));
  unlock();
  await holder;
  expect((await Promise.all(checks)).every((check) => 'user' in check)).toBe(true);
  const seen = await t.db.selectFrom('users').select('last_seen_at').where('id', '=', user.id).executeTakeFirstOrThrow();
  expect(Date.now() - seen.last_seen_at!.getTime()).toBeLessThan(60_000);
  await other.destroy();
}, 30_000);
