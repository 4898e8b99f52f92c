/**
 * Two hubs on one database: a `sample` field one of them adds shows in the other's catalog (and so in its
 * queries without `fields`) once that catalog's age passes CATALOG_MAX_AGE_MS, and at once on a refresh.
 */
import { CATALOG_MAX_AGE_MS, PostgresFieldCatalog } from '../../src/metrics/field-catalog';
import { createTestDatabase, type TestDatabase } from '../support/test-database';

let t: TestDatabase;
beforeAll(async () => {
  t = await createTestDatabase();
});
afterAll(() => t.drop());

const sampleFields = async (catalog: PostgresFieldCatalog) => ((await catalog.load()).get('sample') ?? []).map((f) => f.field);

it('shows a field another hub added once the loaded catalog is too old to trust', async () => {
  let now = 1_000_000;
  const ingesting = new PostgresFieldCatalog(t.db);
  const querying = new PostgresFieldCatalog(t.db, () => now);
  expect(await sampleFields(querying)).not.toContain('Bytes In Per Second');

  expect(await ingesting.addSampleFields(new Map([['Bytes In Per Second', 'number']]))).toBe(0);
  now += CATALOG_MAX_AGE_MS - 1;
  expect(await sampleFields(querying)).not.toContain('Bytes In Per Second'); // still the cached catalog
  now += 2;
  expect(await sampleFields(querying)).toContain('Bytes In Per Second');

  await ingesting.addSampleFields(new Map([['Janky frames (percent)', 'number']]));
  expect(((await querying.load(true)).get('sample') ?? []).map((f) => f.field)).toContain('Janky frames (percent)');
});
