// A scratch database for the metrics benchmarks: created on the PostgreSQL server DATABASE_URL names (default
// the local one), migrated with the hub's own migrations, dropped at the end (also on Ctrl-C). Needs `npx tsc -b`.
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const require = createRequire(import.meta.url);
export const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
export const hub = (module) => require(path.join(root, 'hub', 'dist', module));
/** A dependency of the hub package (kysely, pg). */
export const hubDependency = (name) => createRequire(path.join(root, 'hub', 'package.json'))(name);

const { dropDatabaseIfExists, quoteIdentifier, withDatabaseName, withServerClient } = hub('store/database-admin.js');
const { createDatabase } = hub('store/database.js');
const { migrateToLatest } = hub('store/migrate.js');

export const progress = (text) => process.stderr.write(`${new Date().toISOString().slice(11, 19)} ${text}\n`);

/** Runs `body(db, url)` on a fresh migrated database and drops it afterwards, whatever happens. */
export async function withScratchDatabase(label, body) {
  const serverUrl = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
  const name = `devicelab_bench_${label}_${process.pid}_${Date.now()}`;
  await withServerClient(serverUrl, (client) => client.query(`CREATE DATABASE ${quoteIdentifier(name)}`));
  const url = withDatabaseName(serverUrl, name);
  const db = createDatabase(url, { maxConnections: 4 });
  let dropped = false;
  const drop = async () => {
    if (dropped) return;
    dropped = true;
    await db.destroy().catch(() => undefined);
    await dropDatabaseIfExists(serverUrl, name);
    progress(`dropped scratch database ${name}`);
  };
  const onSignal = () => { void drop().finally(() => process.exit(130)); };
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  try {
    progress(`scratch database ${name} on ${serverUrl.replace(/\/\/[^@]*@/, '//')}`);
    await migrateToLatest(db);
    return await body(db, url);
  } finally {
    await drop();
  }
}
