/** The embedded server runs in child processes (support/embedded-postgres-process.ts). */
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { LOCK_FILE_NAME } from '../../src/store/data-dir-lock';
import { isProcessAlive } from '../../src/store/process-liveness';
import { startHolder, stopHolder, type Holder } from '../support/embedded-postgres-process';

async function query(url: string, text: string): Promise<pg.QueryResult> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await client.query(text);
  } finally {
    await client.end();
  }
}

let dataDir: string;
const started: Holder[] = [];

beforeAll(async () => {
  dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'devicelab-embedded-test-'));
});

afterAll(async () => {
  for (const holder of started) {
    await stopHolder(holder).catch(() => undefined);
    if (holder.report.postmasterPid && isProcessAlive(holder.report.postmasterPid)) {
      process.kill(holder.report.postmasterPid, 'SIGKILL');
    }
  }
  await fs.rm(dataDir, { recursive: true, force: true });
});

describe('embedded PostgreSQL', () => {
  it('locks its data dir, and a restart after kill -9 cleans up the orphaned postmaster', async () => {
    const first = await startHolder(dataDir);
    started.push(first);
    expect(first.report.error).toBeUndefined();
    await query(first.report.url!, 'CREATE TABLE survives_restart (x int); INSERT INTO survives_restart VALUES (42)');
    const lockHolder = Number.parseInt(await fs.readFile(path.join(dataDir, LOCK_FILE_NAME), 'utf8'), 10);
    expect(lockHolder).toBe(first.child.pid);

    // A second DeviceLab on the same data dir refuses, naming the holder.
    const second = await startHolder(dataDir);
    started.push(second);
    expect(second.report.error).toMatch(new RegExp(`in use by another running DeviceLab \\(pid ${first.child.pid}\\)`));

    // kill -9 the owner: its postmaster survives as an orphan holding port and data dir.
    const killed = new Promise((resolve) => first.child.once('exit', resolve));
    first.child.kill('SIGKILL');
    await killed;
    const orphan = first.report.postmasterPid!;
    expect(isProcessAlive(orphan)).toBe(true);

    const third = await startHolder(dataDir);
    started.push(third);
    expect(third.report.error).toBeUndefined();
    expect(isProcessAlive(orphan)).toBe(false);
    expect(third.report.postmasterPid).not.toBe(orphan);
    const { rows } = await query(third.report.url!, 'SELECT x FROM survives_restart');
    expect(rows).toEqual([{ x: 42 }]);

    // A clean stop releases the lock and leaves no server behind.
    await stopHolder(third);
    expect(isProcessAlive(third.report.postmasterPid!)).toBe(false);
    await expect(fs.stat(path.join(dataDir, LOCK_FILE_NAME))).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it('on SIGTERM the owner\'s orderly shutdown still writes before the server stops', async () => {
    // embedded-postgres stops its servers from its own exit hook; the hub's last writes must not lose that race.
    const holder = await startHolder(dataDir, '--record-on-shutdown');
    started.push(holder);
    expect(holder.report.error).toBeUndefined();
    const exited = new Promise<number | null>((resolve) => holder.child.once('exit', (code) => resolve(code)));
    holder.child.kill('SIGTERM');
    await exited;
    expect(isProcessAlive(holder.report.postmasterPid!)).toBe(false);

    const again = await startHolder(dataDir);
    started.push(again);
    const { rows } = await query(again.report.url!, 'SELECT count(*)::int AS n FROM shutdown_records');
    expect(rows).toEqual([{ n: 1 }]);
    await stopHolder(again);
  });
});
