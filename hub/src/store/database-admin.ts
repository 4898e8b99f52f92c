/**
 * Server-level operations (create, clone, drop databases) that cannot run inside a transaction or through the
 * pooled kysely handle. Used by the records-store opener and by the test-database support.
 */
import pg from 'pg';
import { isDuplicateDatabase, isMissingDatabase } from './database';

/** The same server and credentials as `url`, but database `name`. */
export function withDatabaseName(url: string, name: string): string {
  const parsed = new URL(url);
  parsed.pathname = `/${encodeURIComponent(name)}`;
  return parsed.toString();
}

/** The database a connection string names (`postgres` when it names none, as libpq defaults to the user). */
function databaseNameOf(url: string): string {
  const parsed = new URL(url);
  const name = decodeURIComponent(parsed.pathname.replace(/^\//, ''));
  return name || decodeURIComponent(parsed.username) || 'postgres';
}

/** Runs `fn` on one short-lived connection to `url`'s server, database `database` (default `postgres`). */
export async function withServerClient<T>(
  url: string,
  fn: (client: pg.Client) => Promise<T>,
  database = 'postgres',
): Promise<T> {
  const client = new pg.Client({ connectionString: withDatabaseName(url, database) });
  client.on('error', () => undefined); // a server-side disconnect surfaces on the pending query instead
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end().catch(() => undefined);
  }
}

export function quoteIdentifier(name: string): string {
  return pg.escapeIdentifier(name);
}

/** Creates the database `url` names when connecting to it says it does not exist. Returns true if created. */
export async function createDatabaseIfMissing(url: string): Promise<boolean> {
  const probe = new pg.Client({ connectionString: url });
  probe.on('error', () => undefined);
  try {
    await probe.connect();
    return false;
  } catch (err) {
    if (!isMissingDatabase(err)) throw err;
  } finally {
    await probe.end().catch(() => undefined);
  }
  try {
    await withServerClient(url, (client) => client.query(`CREATE DATABASE ${quoteIdentifier(databaseNameOf(url))}`));
    return true;
  } catch (err) {
    if (isDuplicateDatabase(err)) return false; // another hub created it in between
    throw err;
  }
}

/** Drops a database, disconnecting its sessions first (PostgreSQL 13+ `WITH (FORCE)`). Missing is fine. */
export async function dropDatabaseIfExists(serverUrl: string, name: string): Promise<void> {
  await withServerClient(serverUrl, (client) =>
    client.query(`DROP DATABASE IF EXISTS ${quoteIdentifier(name)} WITH (FORCE)`),
  );
}
