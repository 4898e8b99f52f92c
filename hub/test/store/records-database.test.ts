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
});
