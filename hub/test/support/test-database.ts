/**
 * A fresh, migrated records database per test file, cloned from the run's template (see
 * scripts/jest/global-setup.ts). Usage:
 *
 *   let t: TestDatabase;
 *   beforeAll(async () => { t = await createTestDatabase(); });
 *   afterAll(() => t.drop());
 */
import { createDatabase, isObjectInUse, type Db } from '../../src/store/database';
import { dropDatabaseIfExists, quoteIdentifier, withDatabaseName, withServerClient } from '../../src/store/database-admin';
import { testDatabaseNameFor, TEST_ENV } from './test-database-names';

export interface TestDatabase {
  db: Db;
  /** Connection string of this database (for code under test that opens its own pool). */
  url: string;
  name: string;
  /** Closes `db` and drops the database (sessions still connected are terminated). */
  drop(): Promise<void>;
}

export interface CreateTestDatabaseOptions {
  maxConnections?: number;
}

export async function createTestDatabase(options: CreateTestDatabaseOptions = {}): Promise<TestDatabase> {
  const serverUrl = process.env[TEST_ENV.serverUrl];
  const templateName = process.env[TEST_ENV.templateName];
  const runId = process.env[TEST_ENV.runId];
  if (!serverUrl || !templateName || !runId) {
    throw new Error(
      'createTestDatabase: no test database server. Run tests through jest with the repository jest.config.js ' +
        '(its globalSetup prepares TEST_DATABASE_URL or an embedded PostgreSQL).',
    );
  }

  const name = testDatabaseNameFor(runId);
  await cloneTemplate(serverUrl, templateName, name);
  const url = withDatabaseName(serverUrl, name);
  const db = createDatabase(url, { maxConnections: options.maxConnections ?? 5 });
  let dropping: Promise<void> | undefined;
  return {
    db,
    url,
    name,
    drop() {
      dropping ??= (async () => {
        await db.destroy().catch(() => undefined);
        await dropDatabaseIfExists(serverUrl, name);
      })();
      return dropping;
    },
  };
}

/**
 * Clones under an advisory lock keyed by the template, so this run's workers take turns: PostgreSQL refuses a
 * clone while anything else is connected to the template. The retry covers a session that is still on its way
 * out (e.g. the migration pool closing) when the first clone starts.
 */
async function cloneTemplate(serverUrl: string, templateName: string, name: string): Promise<void> {
  await withServerClient(serverUrl, async (client) => {
    await client.query('SELECT pg_advisory_lock(hashtext($1))', [templateName]);
    try {
      for (let attempt = 1; ; attempt++) {
        try {
          await client.query(`CREATE DATABASE ${quoteIdentifier(name)} TEMPLATE ${quoteIdentifier(templateName)}`);
          return;
        } catch (err) {
          if (!isObjectInUse(err) || attempt >= 50) throw err;
          await new Promise((resolve) => setTimeout(resolve, 100));
        }
      }
    } finally {
      await client.query('SELECT pg_advisory_unlock(hashtext($1))', [templateName]);
    }
  });
}
