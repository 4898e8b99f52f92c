/**
 * Backups of the records store with PostgreSQL's own tools: `pg_dump` in its custom format (everything: users,
 * devices, apps and their binaries, which live in the database) and `pg_restore` into a store opened the usual way
 * (the embedded PostgreSQL of a data directory, or DATABASE_URL). The client tools come from the PATH (Debian:
 * `postgresql-client`), of the server's major version or newer.
 */
import { execFile } from 'node:child_process';

export class BackupToolError extends Error {}

/** Connection parameters for libpq's environment: the password never appears on a command line. */
function libpqEnvironment(url: string): NodeJS.ProcessEnv {
  const parsed = new URL(url);
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    PGHOST: decodeURIComponent(parsed.hostname.replace(/^\[|\]$/g, '')) || 'localhost',
    PGPORT: parsed.port || '5432',
    PGUSER: decodeURIComponent(parsed.username),
    PGPASSWORD: decodeURIComponent(parsed.password),
    PGDATABASE: decodeURIComponent(parsed.pathname.replace(/^\//, '')) || decodeURIComponent(parsed.username),
  };
  const sslmode = parsed.searchParams.get('sslmode');
  if (sslmode) env.PGSSLMODE = sslmode;
  const host = parsed.searchParams.get('host');
  if (host) env.PGHOST = host; // a Unix socket folder
  return env;
}

function run(tool: string, args: string[], url: string): Promise<void> {
  return new Promise((resolve, reject) => {
    execFile(tool, args, { env: libpqEnvironment(url), maxBuffer: 16 * 1024 * 1024 }, (err, _stdout, stderr) => {
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
  return run('pg_dump', ['--format=custom', '--no-owner', '--no-privileges', `--file=${file}`], url);
}

/**
 * Replaces the records database's content with the backup's, in one transaction: on any error nothing changed.
 * The database is the freshly opened (migrated) one; the backup's tables replace its.
 */
export function restoreRecords(url: string, file: string): Promise<void> {
  const database = libpqEnvironment(url).PGDATABASE!;
  return run('pg_restore', ['--clean', '--if-exists', '--no-owner', '--no-privileges', '--single-transaction', '--exit-on-error', `--dbname=${database}`, file], url);
}
