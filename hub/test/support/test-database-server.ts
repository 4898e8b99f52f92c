/**
 * The PostgreSQL server a jest run uses, prepared once in globalSetup: `TEST_DATABASE_URL` when set (CI),
 * otherwise an embedded PostgreSQL in a temporary directory. Creates the run's migrated template database and
 * removes databases left behind by killed runs. Test files then clone the template (`test-database.ts`).
 */
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createDatabase } from '../../src/store/database';
import { dropDatabaseIfExists, quoteIdentifier, withDatabaseName, withServerClient } from '../../src/store/database-admin';
import { startEmbeddedPostgres, type EmbeddedPostgres } from '../../src/store/embedded-postgres';
import { migrateToLatest } from '../../src/store/migrate';
import { isProcessAlive } from '../../src/store/process-liveness';
import { newRunId, parseTestDatabaseName, templateNameFor, TEST_DATABASE_PREFIX, TEST_ENV } from './test-database-names';

/** Databases of runs older than this are dropped even when we cannot tell whether their jest is alive. */
const ABANDONED_AFTER_MS = 6 * 60 * 60 * 1000;

export interface TestDatabaseServer {
  serverUrl: string;
  runId: string;
  templateName: string;
  /** Drops this run's databases and stops the embedded server if one was started. */
  shutdown(): Promise<void>;
}

export async function prepareTestDatabaseServer(env: NodeJS.ProcessEnv = process.env): Promise<TestDatabaseServer> {
  let embedded: EmbeddedPostgres | undefined;
  let tempDir: string | undefined;
  let serverUrl = env.TEST_DATABASE_URL;
  if (!serverUrl) {
    tempDir = await fs.mkdtemp(path.join(os.tmpdir(), 'devicelab-jest-'));
    embedded = await startEmbeddedPostgres({ dataDir: tempDir });
    serverUrl = embedded.url;
  }

  const runId = newRunId();
  const templateName = templateNameFor(runId);
  try {
    await dropAbandonedTestDatabases(serverUrl, isLocalServer(serverUrl));
    await createTemplate(serverUrl, templateName);
  } catch (err) {
    await embedded?.stop().catch(() => undefined);
    throw err;
  }

  const url = serverUrl;
  return {
    serverUrl: url,
    runId,
    templateName,
    async shutdown() {
      await dropRunDatabases(url, runId).catch(() => undefined);
      if (embedded) await embedded.stop();
      if (tempDir) await fs.rm(tempDir, { recursive: true, force: true });
    },
  };
}

/** Publishes the server to the workers (jest passes globalSetup's process.env on to them). */
export function exportToWorkers(server: TestDatabaseServer, env: NodeJS.ProcessEnv = process.env): void {
  env[TEST_ENV.serverUrl] = server.serverUrl;
  env[TEST_ENV.templateName] = server.templateName;
  env[TEST_ENV.runId] = server.runId;
}

/**
 * The template holds the migrated schema. Its connection is closed before any test clones it: PostgreSQL
 * refuses `CREATE DATABASE ... TEMPLATE t` while t has sessions.
 */
async function createTemplate(serverUrl: string, templateName: string): Promise<void> {
  await withServerClient(serverUrl, (client) => client.query(`CREATE DATABASE ${quoteIdentifier(templateName)}`));
  const db = createDatabase(withDatabaseName(serverUrl, templateName), { maxConnections: 1 });
  try {
    await migrateToLatest(db);
  } finally {
    await db.destroy();
  }
}

async function listTestDatabases(serverUrl: string): Promise<string[]> {
  const { rows } = await withServerClient(serverUrl, (client) =>
    client.query<{ datname: string }>(`SELECT datname FROM pg_database WHERE starts_with(datname, $1)`, [
      TEST_DATABASE_PREFIX,
    ]),
  );
  return rows.map((r) => r.datname);
}

/** Drops databases of runs that are over: their jest process is gone (local server only) or they are old. */
async function dropAbandonedTestDatabases(serverUrl: string, serverIsLocal: boolean): Promise<void> {
  for (const name of await listTestDatabases(serverUrl)) {
    const parsed = parseTestDatabaseName(name);
    if (!parsed) continue;
    const old = Date.now() - parsed.startedAt.getTime() > ABANDONED_AFTER_MS;
    const runGone = serverIsLocal && !isProcessAlive(parsed.runPid);
    if (old || runGone) await dropDatabaseIfExists(serverUrl, name).catch(() => undefined);
  }
}

async function dropRunDatabases(serverUrl: string, runId: string): Promise<void> {
  for (const name of await listTestDatabases(serverUrl)) {
    if (parseTestDatabaseName(name)?.runId === runId) await dropDatabaseIfExists(serverUrl, name);
  }
}

/** A run's pid only says something about a server on this machine (CI's and this box's are local). */
function isLocalServer(serverUrl: string): boolean {
  const host = new URL(serverUrl).hostname.replace(/^\[|\]$/g, '');
  return host === '' || host === 'localhost' || host === '::1' || host.startsWith('127.');
}
