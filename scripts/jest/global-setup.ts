/**
 * Prepares the run's PostgreSQL once, before any worker starts: TEST_DATABASE_URL when set, else an embedded
 * server in a temporary directory; then a migrated template database that each test file clones
 * (hub/test/support/test-database.ts). Workers learn the server through process.env, which jest copies to them.
 */
import { exportToWorkers, prepareTestDatabaseServer } from '../../hub/test/support/test-database-server';
import { missingFixturesProblem } from './shared-files';

export default async function globalSetup(): Promise<void> {
  // One clear message instead of a failure per test that reads a fixture.
  const fixturesProblem = missingFixturesProblem();
  if (fixturesProblem) throw new Error(fixturesProblem);
  const server = await prepareTestDatabaseServer();
  exportToWorkers(server);
  // globalTeardown runs in this same process and context.
  (globalThis as { __devicelabStopTestDatabase?: () => Promise<void> }).__devicelabStopTestDatabase = () =>
    server.shutdown();
}
