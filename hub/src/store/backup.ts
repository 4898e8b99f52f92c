/**
 * Backups of the records store with PostgreSQL's own tools: `pg_dump` in its custom format (everything: users,
 * devices, apps and their binaries, which live in the database) and `pg_restore` into a store opened the usual way
 * (the embedded PostgreSQL of a data directory, or DATABASE_URL). The client tools come from the PATH (Debian:
 * `postgresql-client`), of the server's major version or newer.
 */
import { execFile } from 'node:child_process';
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

export class BackupToolError extends Error {}

const conninfoValue = (value: string) => `'${value.replace(/[\\']/g, '\\$&')}'`;
const passfileField = (value: string) => value.replace(/[\\:]/g, '\\$&');

/**
 * Runs `fn` with a libpq connection string for `url` whose password sits in a private password file, so it never
 * appears on a command line (where any user of the host could read it).
 */
async function withConnection<T>(url: string, fn: (conninfo: string) => Promise<T>): Promise<T> {
  const parsed = new URL(url);
  const host = parsed.searchParams.get('host') ?? (decodeURIComponent(parsed.hostname.replace(/^\[|\]$/g, '')) || 'localhost');
  const port = parsed.port || '5432';
  const user = decodeURIComponent(parsed.username);
  const database = decodeURIComponent(parsed.pathname.replace(/^\//, '')) || user;
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'devicelab-pg-'));
  const passfile = path.join(dir, 'pgpass');
  try {
    await fs.writeFile(passfile, `${[host, port, database, user, decodeURIComponent(parsed.password)].map(passfileField).join(':')}\n`, { mode: 0o600 });
    const sslmode = parsed.searchParams.get('sslmode');
    const fields = { host, port, user, dbname: database, passfile, ...(sslmode ? { sslmode } : {}) };
    return await fn(Object.entries(fields).map(([k, v]) => `${k}=${conninfoValue(v)}`).join(' '));
  } finally {
    await fs.rm(dir, { recursive: true, force: true });
  }
}

function run(tool: string, args: string[]): Promise<void> {
  return new Promise((resolve, reject) => {
    execFile(tool, args, { maxBuffer: 16 * 1024 * 1024 }, (err, _stdout, stderr) => {
      if (!err) return resolve();
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') {
        return reject(new BackupToolError(`${tool} not found: install PostgreSQL's client tools (Debian: apt-get install postgresql-client)`));
      }
      reject(new BackupToolError(`${tool} failed: ${stderr.trim() || err.message}`));
    });
  });
}

/** Writes the whole records database to `file` (pg_dump's custom format). */
export function backupRecords(url: string, file: string): Promise<void> {
  return withConnection(url, (conninfo) => run('pg_dump', ['--format=custom', '--no-owner', '--no-privileges', `--file=${file}`, `--dbname=${conninfo}`]));
}

/**
 * Replaces the records database's content with the backup's, in one transaction: on any error nothing changed.
 * The database is the freshly opened (migrated) one; the backup's tables replace its.
 */
export function restoreRecords(url: string, file: string): Promise<void> {
  return withConnection(url, (conninfo) => run('pg_restore',
    ['--clean', '--if-exists', '--no-owner', '--no-privileges', '--single-transaction', '--exit-on-error', `--dbname=${conninfo}`, file]));
}
