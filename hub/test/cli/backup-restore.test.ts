/**
 * `devicelab-hub backup` and `restore`, as an operator runs them: a backup of the default install's embedded
 * PostgreSQL, restored into a fresh data directory, serves the same users, devices and apps (binaries included);
 * between two external databases (DATABASE_URL) the records come back row for row, and a file that is no backup
 * is refused without changing anything.
 */
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fixture } from '../../../scripts/jest/shared-files';
import { findUserByCredentials, rotateUserToken } from '../../src/auth/users';
import { runCli } from '../../src/cli/devicelab';
import { createDatabase, type Db } from '../../src/store/database';
import { withDatabaseName } from '../../src/store/database-admin';
import { runningEmbeddedPostgresUrl } from '../../src/store/embedded-postgres';
import { EMBEDDED_DATABASE_NAME } from '../../src/store/open-records-store';
import { createUser, insertDevice } from '../domain/helpers';
import { startHubProcess, type HubProcess } from '../support/hub-process';
import { snapshotTables } from '../support/table-snapshot';
import { createTestDatabase, type TestDatabase } from '../support/test-database';

const support = path.join(__dirname, '..', 'support');
const ADMIN_TOKEN = '7d3c1a9e-5b2f-4c8d-9e6a-1f0b2c3d4e5f';
const sha256 = (data: Buffer) => createHash('sha256').update(data).digest('hex');

async function cliWith(argv: string[], env: NodeJS.ProcessEnv) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await runCli(argv, { serve: () => Promise.resolve(), env, stdout: (s) => out.push(s), stderr: (s) => err.push(s) });
  return { code, stdout: out.join(''), stderr: err.join('') };
}

/** The binary the records hold for an app, put back together from its chunks. */
async function storedBinary(db: Db, appId: string): Promise<Buffer> {
  const app = await db.selectFrom('applications').select('blob_sha256').where('id', '=', appId).executeTakeFirstOrThrow();
  const chunks = await db.selectFrom('blob_chunks').select('data').where('sha256', '=', app.blob_sha256).orderBy('seq').execute();
  return Buffer.concat(chunks.map((c) => c.data));
}

describe('the embedded PostgreSQL (the default install)', () => {
  // Data directories of their own (PostgreSQL, run as its own user under root, must reach into them).
  const [dirA, dirB, scratch] = ['a', 'b', 'file'].map((n) => mkdtempSync(path.join(os.tmpdir(), `devicelab-backup-${n}-`)));
  const file = path.join(scratch, 'records.backup');
  let hub: HubProcess | undefined;
  afterAll(async () => {
    await hub?.stop();
    for (const dir of [dirA, dirB, scratch]) rmSync(dir, { recursive: true, force: true });
  });

  /** The CLI as its own process, as an operator runs it (the embedded server's package loads only outside jest). */
  const cli = async (args: string[], dataDir: string) => {
    const result = await new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
      execFile(process.execPath, ['-r', path.join(support, 'ts-register.cjs'), path.join(support, 'cli-runner.ts'), ...args],
        { env: { ...process.env, DATABASE_URL: '', DEVICELAB_DATA_DIR: dataDir } },
        (err, stdout, stderr) => resolve({ code: err ? Number(err.code ?? 1) : 0, stdout, stderr }));
    });
    return result;
  };
  const start = (dataDir: string) => startHubProcess({ databaseUrl: '', dataDir, adminToken: ADMIN_TOKEN });
  const api = async (pathAndQuery: string, init?: RequestInit) => {
    const res = await hub!.api(pathAndQuery, init);
    expect(res.status).toBe(200);
    return res.json() as Promise<unknown>;
  };
  const withRecords = async <T>(dataDir: string, fn: (db: Db) => Promise<T>): Promise<T> => {
    const db = createDatabase(withDatabaseName((await runningEmbeddedPostgresUrl(dataDir))!, EMBEDDED_DATABASE_NAME));
    try {
      return await fn(db);
    } finally {
      await db.destroy();
    }
  };

  test('a backup taken while the hub runs, restored into a fresh data directory, serves the same users, devices and apps', async () => {
    hub = await start(dirA);
    const apk = readFileSync(fixture('ContactManager.apk'));
    const form = new FormData();
    form.append('upload', new Blob([apk]), 'ContactManager.apk');
    const uploaded = await api('/Application?add&wait=true', { method: 'POST', body: form }) as { isSuccess: boolean; data: { id: string } };
    expect(uploaded.isSuccess).toBe(true);
    const { tessToken, deviceId } = await withRecords(dirA, async (db) => {
      await createUser(db, 'tess@lab.test');
      return { tessToken: await rotateUserToken(db, 'tess@lab.test'), deviceId: (await insertDevice(db, { name: 'Backed-up Pixel' })).id };
    });
    const before = { users: await api('/User'), devices: await api('/Device'), apps: await api('/Application') };
    expect(JSON.stringify(before.devices)).toContain(deviceId);

    expect(await cli(['backup', file], dirA)).toEqual({ code: 0, stdout: `backup written to ${file}\n`, stderr: '' });
    await hub.stop();
    hub = undefined;

    expect(await cli(['restore', file], dirB)).toEqual({ code: 0, stdout: `restored from ${file}\n`, stderr: '' });
    hub = await start(dirB);
    expect({ users: await api('/User'), devices: await api('/Device'), apps: await api('/Application') }).toEqual(before);
    await withRecords(dirB, async (db) => {
      expect(await findUserByCredentials(db, 'tess@lab.test', tessToken)).toMatchObject({ login: 'tess@lab.test' });
      expect(sha256(await storedBinary(db, uploaded.data.id))).toBe(sha256(apk));
    });
  }, 480_000);

  test('restore refuses a data directory a running hub holds', async () => {
    const refused = await cli(['restore', file], dirB);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/^devicelab-hub: /);
  }, 60_000);
});

describe('an external PostgreSQL (DATABASE_URL)', () => {
  let source: TestDatabase;
  let target: TestDatabase;
  const scratch = mkdtempSync(path.join(os.tmpdir(), 'devicelab-backup-url-'));
  beforeAll(async () => {
    [source, target] = [await createTestDatabase(), await createTestDatabase()];
  });
  afterAll(async () => {
    await source?.drop();
    await target?.drop();
    rmSync(scratch, { recursive: true, force: true });
  });

  test('the records come back row for row; a file that is no backup changes nothing', async () => {
    await createUser(source.db, 'ops@lab.test');
    await insertDevice(source.db, { name: 'External Pixel' });
    const file = path.join(scratch, 'records.backup');
    expect((await cliWith(['backup', file], { DATABASE_URL: source.url })).code).toBe(0);
    expect((await cliWith(['restore', file], { DATABASE_URL: target.url })).code).toBe(0);
    const restored = await snapshotTables(target.db);
    expect(restored).toEqual(await snapshotTables(source.db));

    const bogus = path.join(scratch, 'not-a-backup');
    writeFileSync(bogus, 'hello');
    expect(await cliWith(['restore', bogus], { DATABASE_URL: target.url })).toMatchObject({ code: 1, stderr: expect.stringMatching(/^devicelab-hub: pg_restore failed: /) });
    expect(await snapshotTables(target.db)).toEqual(restored);
  }, 120_000);
});
