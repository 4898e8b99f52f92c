/**
 * The records store going away under a running hub, on a PostgreSQL this test owns (an embedded server in a
 * child process; never the machine's shared server): a connection killed mid-query is recognised by SQLSTATE,
 * every request gets 503 with Retry-After while the server is down (wrong credentials too, since checking
 * them needs the store), and the hub answers 200 again once the server is back, without a restart of its own.
 */
import { randomUUID } from 'node:crypto';
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import pg from 'pg';
import { createLogger } from '@devicelab/shared';
import { hubConfigFromEnv } from '../../src/config';
import { RECORDS_STORE_UNAVAILABLE } from '../../src/http/handler';
import { startHub, type RunningHub } from '../../src/server';
import { isDatabaseUnavailable, sqlStateOf } from '../../src/store/database';
import { createDatabaseIfMissing, withDatabaseName } from '../../src/store/database-admin';
import { findFreePort } from '../../src/store/embedded-postgres';
import { startHolder, stopHolder, type Holder } from '../support/embedded-postgres-process';

const adminToken = randomUUID();
let dataDir: string;
let port: number;
let holder: Holder;
let hub: RunningHub | undefined;

beforeAll(async () => {
  dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'devicelab-outage-'));
  await fs.chmod(dataDir, 0o711); // as root the embedded PostgreSQL runs as `postgres` and must reach its data dir
  port = await findFreePort();
  holder = await startHolder(dataDir, `--port=${port}`);
  expect(holder.report.error).toBeUndefined();
  const url = withDatabaseName(holder.report.url!, 'devicelab');
  await createDatabaseIfMissing(url);
  hub = await startHub({
    ...hubConfigFromEnv({}), port: 0, host: '127.0.0.1', linkPort: 0, databaseUrl: url, dataDir, adminToken,
  }, createLogger('hub', 'error'));
}, 120_000);

afterAll(async () => {
  await hub?.stop();
  await stopHolder(holder);
  await fs.rm(dataDir, { recursive: true, force: true });
});

const basic = (login: string, token: string) => `Basic ${Buffer.from(`${login}:${token}`).toString('base64')}`;
const service = (authorization: string) => fetch(`${hub!.url}/apiv1/Service`, { headers: { authorization } });

it('recognises a connection killed mid-query by its SQLSTATE, not its text', async () => {
  const sleeping = sql`SELECT pg_sleep(60)`.execute(hub!.db).then(() => undefined, (err: unknown) => err);
  const observer = new pg.Client({ connectionString: holder.report.url });
  await observer.connect();
  let backend: number | undefined;
  while (backend === undefined) {
    const { rows } = await observer.query<{ pid: number }>(
      "SELECT pid FROM pg_stat_activity WHERE query = 'SELECT pg_sleep(60)' AND state = 'active'",
    );
    backend = rows[0]?.pid;
  }
  await observer.end();
  process.kill(backend, 'SIGKILL'); // the server ends every session and recovers; ours sees its socket close
  const err = await sleeping;
  expect(err).toBeInstanceOf(Error);
  expect(sqlStateOf(err)).toBe('08006');
  expect(isDatabaseUnavailable(err)).toBe(true);
  // The server recovers by itself; the hub's pool reconnects.
  await expect(waitForStatus(200, () => service(basic('admin', adminToken)))).resolves.toBe(200);
}, 60_000);

it('answers 503 with Retry-After while PostgreSQL is down, and 200 again once it is back', async () => {
  expect((await service(basic('admin', adminToken))).status).toBe(200);
  await stopHolder(holder);

  for (const authorization of [basic('admin', adminToken), basic('admin', randomUUID()), basic('nobody', randomUUID())]) {
    const res = await service(authorization);
    expect(res.status).toBe(503);
    expect(res.headers.get('retry-after')).toBe('5');
    expect(await res.json()).toEqual({ isSuccess: false, errorMessage: RECORDS_STORE_UNAVAILABLE });
  }
  expect(RECORDS_STORE_UNAVAILABLE).toMatch(/records store .*unavailable/);

  holder = await startHolder(dataDir, `--port=${port}`);
  expect(holder.report.error).toBeUndefined();
  await expect(waitForStatus(200, () => service(basic('admin', adminToken)))).resolves.toBe(200);
  expect((await service(basic('admin', randomUUID()))).status).toBe(401);
}, 120_000);

/** Polls until `request` answers `status`; every answer meanwhile must be 503 (never 500). */
async function waitForStatus(status: number, request: () => Promise<Response>, timeoutMs = 30_000): Promise<number> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const res = await request();
    await res.arrayBuffer();
    if (res.status === status) return status;
    expect(res.status).toBe(503);
    if (Date.now() > deadline) throw new Error(`still HTTP ${res.status} after ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
