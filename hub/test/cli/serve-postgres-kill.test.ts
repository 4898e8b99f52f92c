/**
 * `devicelab serve` on its embedded PostgreSQL when the postmaster is killed (kill -9): the hub restarts it on the
 * same data directory and answers 200 again, with nothing lost; meanwhile every request gets 503, never 500.
 * When the server cannot be restarted, the hub exits non-zero so that its supervisor starts it again.
 */
import { randomUUID } from 'node:crypto';
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { isProcessAlive } from '../../src/store/process-liveness';
import { startHubProcess, type HubProcess } from '../support/hub-process';

const adminToken = randomUUID();
let dataDir: string;

beforeAll(async () => {
  dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'devicelab-pgkill-'));
  await fs.chmod(dataDir, 0o711); // as root the embedded PostgreSQL runs as `postgres` and must reach its data dir
});
afterAll(() => fs.rm(dataDir, { recursive: true, force: true }));

type Serve = HubProcess;
const startServe = () => startHubProcess({ databaseUrl: '', dataDir, adminToken, processGroup: true });
const stopServe = async (serve: Serve) => { await serve.interrupt(); };

const basic = (login: string, token: string) => `Basic ${Buffer.from(`${login}:${token}`).toString('base64')}`;

async function postmasterPid(): Promise<number> {
  return Number.parseInt(await fs.readFile(path.join(dataDir, 'postgres', 'postmaster.pid'), 'utf8'), 10);
}

/** Alternates right and wrong credentials until the right ones answer 200; returns every status seen. */
async function pollUntilBack(serve: Serve, timeoutMs: number): Promise<{ statuses: number[]; retryAfter: Set<string | null> }> {
  const statuses: number[] = [];
  const retryAfter = new Set<string | null>();
  const deadline = Date.now() + timeoutMs;
  for (let i = 0; Date.now() < deadline; i++) {
    const token = i % 2 === 0 ? randomUUID() : adminToken;
    const res = await fetch(`${serve.url}/apiv1/Service`, { headers: { authorization: basic('admin', token) } }).catch(() => undefined);
    if (!res) break; // the hub is gone
    await res.arrayBuffer();
    statuses.push(res.status);
    if (res.status === 503) retryAfter.add(res.headers.get('retry-after'));
    if (token === adminToken && res.status === 200) break;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return { statuses, retryAfter };
}

it('restarts its embedded PostgreSQL after kill -9 and answers 200 again, 503 meanwhile', async () => {
  const serve = await startServe();
  try {
    const before = await postmasterPid();
    const killedAt = Date.now();
    process.kill(before, 'SIGKILL');
    const { statuses, retryAfter } = await pollUntilBack(serve, 60_000);
    const backAfterMs = Date.now() - killedAt;
    process.stdout.write(`postmaster kill -9 -> HTTP 200 again after ${backAfterMs} ms; statuses seen: ${statuses.join(',')}\n`);

    expect(statuses[statuses.length - 1]).toBe(200);
    expect(statuses.filter((status) => ![200, 401, 503].includes(status))).toEqual([]);
    if (statuses.includes(503)) expect([...retryAfter]).toEqual(['5']);
    expect(await postmasterPid()).not.toBe(before);
    expect(isProcessAlive(before)).toBe(false);
    expect(serve.output()).toMatch(/embedded PostgreSQL exited unexpectedly; restarting it/);
    expect(serve.output()).toMatch(/embedded PostgreSQL restarted/);
    // Wrong credentials are 401 again (the store answers), not 503.
    const wrong = await fetch(`${serve.url}/apiv1/Service`, { headers: { authorization: basic('admin', randomUUID()) } });
    expect(wrong.status).toBe(401);
  } finally {
    await stopServe(serve);
  }
}, 180_000);

it('exits non-zero when its embedded PostgreSQL cannot be restarted, answering 503 until then', async () => {
  const serve = await startServe();
  try {
    // The running server does not read its configuration again; a restart does, and fails on it.
    const conf = path.join(dataDir, 'postgres', 'postgresql.conf');
    const original = await fs.readFile(conf, 'utf8');
    await fs.appendFile(conf, '\nthis line is not a setting\n');
    try {
      process.kill(await postmasterPid(), 'SIGKILL');
      const { statuses } = await pollUntilBack(serve, 60_000);
      expect(statuses.length).toBeGreaterThan(0);
      expect(statuses.filter((status) => status !== 503)).toEqual([]);
      expect(await serve.exited).toBe(1);
      expect(serve.output()).toMatch(/could not be restarted after 6 attempts/);
    } finally {
      await fs.writeFile(conf, original);
    }
  } finally {
    await stopServe(serve);
  }
}, 180_000);
