import { sql } from 'kysely';
import { isForeignKeyViolation, isUniqueViolation, sqlStateOf, violatedConstraint, withTx } from '../../src/store/database';
import { migrateToLatest } from '../../src/store/migrate';
import { migrationProvider } from '../../src/store/migrations';
import { createTestDatabase, type TestDatabase } from '../support/test-database';

let t: TestDatabase;
beforeAll(async () => {
  t = await createTestDatabase();
});
afterAll(() => t.drop());

describe('records database', () => {
  it('is cloned from a template that already has every migration', async () => {
    const { rows } = await sql<{ name: string }>`SELECT name FROM kysely_migration ORDER BY name`.execute(t.db);
    expect(rows.map((r) => r.name)).toEqual(Object.keys(await migrationProvider.getMigrations()).sort());
    expect(rows.map((r) => r.name)).toContain('001_records');
    const tables = await t.db.introspection.getTables();
    expect(tables.map((x) => x.name)).toEqual(
      expect.arrayContaining(['users', 'roles', 'user_roles', 'gateways', 'devices', 'applications', 'async_jobs', 'events']),
    );
  });

  it('migrating again is a no-op', async () => {
    await expect(migrateToLatest(t.db)).resolves.toEqual([]);
  });

  it('withTx commits on success and rolls back on error', async () => {
    await withTx(t.db, (trx) => trx.insertInto('roles').values({ name: 'Committed', entitlements: [] }).execute());
    await expect(
      withTx(t.db, async (trx) => {
        await trx.insertInto('roles').values({ name: 'RolledBack', entitlements: [] }).execute();
        throw new Error('boom');
      }),
    ).rejects.toThrow('boom');
    const names = (await t.db.selectFrom('roles').select('name').execute()).map((r) => r.name);
    expect(names).toContain('Committed');
    expect(names).not.toContain('RolledBack');
  });

  it('refuses the root handle inside a transaction instead of silently escaping it', async () => {
    await expect(withTx(t.db, () => t.db.selectFrom('roles').selectAll().execute())).rejects.toThrow(/inside withTx/);
  });

  it('recognises constraint violations by SQLSTATE', async () => {
    const err = await t.db
      .insertInto('roles')
      .values({ name: 'committed', entitlements: [] }) // unique on lower(name)
      .execute()
      .catch((e: unknown) => e);
    expect(isUniqueViolation(err)).toBe(true);
    expect(violatedConstraint(err)).toBe('roles_name_key');
    const fk = await t.db
      .insertInto('user_roles')
      .values({ user_id: '00000000-0000-0000-0000-000000000001', role_id: '00000000-0000-0000-0000-000000000002' })
      .execute()
      .catch((e: unknown) => e);
    expect(isForeignKeyViolation(fk)).toBe(true);
    expect(sqlStateOf(new Error('plain'))).toBeUndefined();
    expect(sqlStateOf(Object.assign(new Error('x'), { code: 'ECONNREFUSED' }))).toBeUndefined();
  });

  it('a connection the server ends in the middle of a query fails that query, not the process', async () => {
    // What a PostgreSQL shutdown (e.g. Ctrl-C reaching the embedded server first) does to the hub's busy sessions.
    const marker = `records-database-${process.pid}-${Date.now()}`;
    const sleeping = sql`SELECT pg_sleep(30), ${marker}::text`.execute(t.db).then(() => 'finished', (err: Error) => err.message);
    let pid: number | undefined;
    for (let tries = 0; !pid && tries < 100; tries++) {
      const { rows } = await sql<{ pid: number }>`SELECT pid FROM pg_stat_activity
        WHERE datname = current_database() AND pid <> pg_backend_pid() AND query LIKE ${'%pg_sleep(30)%'}`.execute(t.db);
      pid = rows[0]?.pid;
      if (!pid) await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(pid).toBeDefined();
    await sql`SELECT pg_terminate_backend(${pid})`.execute(t.db);
    expect(await sleeping).toMatch(/terminat/i);
    // The pool recovers: once the dead connection is discarded, queries run again.
    let answer: unknown;
    for (let tries = 0; answer === undefined && tries < 5; tries++) {
      answer = await sql<{ ok: number }>`SELECT 1 AS ok`.execute(t.db).then((r) => r.rows, () => undefined);
    }
    expect(answer).toEqual([{ ok: 1 }]);
  });
});
