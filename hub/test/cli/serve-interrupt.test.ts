/**
 * `devicelab serve` on the embedded PostgreSQL, stopped with Ctrl-C: the terminal signals the whole foreground
 * process group, which must not take the embedded PostgreSQL down before the hub has recorded its stop. A
 * clean stop means the next start records ServerStarting only, never ServerRestarting.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const support = path.join(__dirname, '..', 'support');
const main = path.join(__dirname, '..', '..', 'src', 'main.ts');
const adminToken = randomUUID();
let dataDir: string;

beforeAll(async () => {
  dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'devicelab-serve-'));
  await fs.chmod(dataDir, 0o711); // as root the embedded PostgreSQL runs as `postgres` and must reach its data dir
});
afterAll(() => fs.rm(dataDir, { recursive: true, force: true }));

/** Starts `serve` as the leader of a new process group, as a shell does for a foreground command. */
async function startServe(): Promise<{ child: ChildProcess; url: string; output: () => string }> {
  const child = spawn(process.execPath, ['-r', path.join(support, 'ts-register.cjs'), main, 'serve'], {
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: {
      ...process.env, DATABASE_URL: '', DEVICELAB_DATA_DIR: dataDir, DEVICELAB_PORT: '0', DEVICELAB_LINK_PORT: '0',
      DEVICELAB_HOST: '127.0.0.1', DEVICELAB_ADMIN_TOKEN: adminToken,
    },
  });
  let output = '';
  child.stdout!.on('data', (d) => { output += d; });
  child.stderr!.on('data', (d) => { output += d; });
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setInterval(() => {
      const match = /DeviceLab hub: (\S+)\/apiv1/.exec(output);
      if (match) { clearInterval(timer); resolve(match[1]); }
      if (child.exitCode !== null) { clearInterval(timer); reject(new Error(`serve exited early:\n${output}`)); }
    }, 100);
  });
  return { child, url, output: () => output };
}

/** Ctrl-C: SIGINT to the whole process group. Resolves with the exit code (130 = stopped itself on SIGINT). */
async function interrupt(child: ChildProcess): Promise<number | null> {
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  process.kill(-child.pid!, 'SIGINT');
  return exited;
}

it('stops cleanly on Ctrl-C: the next start records no restart after a crash', async () => {
  const first = await startServe();
  expect(await interrupt(first.child)).toBe(130);
  expect(first.output()).not.toMatch(/"level":50/); // no error logged while stopping

  const second = await startServe();
  try {
    const res = await fetch(`${second.url}/apiv1/Report/History`, {
      headers: { authorization: `Basic ${Buffer.from(`admin:${adminToken}`).toString('base64')}` },
    });
    const history = await res.json() as { events: { eventType: string }[] };
    const types = history.events.map((e) => e.eventType);
    expect(types.filter((t) => t === 'ServerStarting')).toHaveLength(2);
    expect(types).not.toContain('ServerRestarting');
  } finally {
    expect(await interrupt(second.child)).toBe(130);
  }
}, 120_000);
