/**
 * `devicelab serve` on the embedded PostgreSQL, stopped with Ctrl-C: the terminal signals the whole foreground
 * process group, which must not take the embedded PostgreSQL down before the hub has recorded its stop. A
 * clean stop means the next start records ServerStarting only, never ServerRestarting.
 */
import { randomUUID } from 'node:crypto';
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startHubProcess } from '../support/hub-process';

const adminToken = randomUUID();
let dataDir: string;

beforeAll(async () => {
  dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'devicelab-serve-'));
  await fs.chmod(dataDir, 0o711); // as root the embedded PostgreSQL runs as `postgres` and must reach its data dir
});
afterAll(() => fs.rm(dataDir, { recursive: true, force: true }));

const startServe = () => startHubProcess({ databaseUrl: '', dataDir, adminToken, processGroup: true });

it('stops cleanly on Ctrl-C: the next start records no restart after a crash', async () => {
  const first = await startServe();
  expect(await first.interrupt()).toBe(130);
  expect(first.output()).not.toMatch(/"level":50/); // no error logged while stopping

  const second = await startServe();
  try {
    const res = await second.api('/Report/History');
    const history = await res.json() as { events: { eventType: string }[] };
    const types = history.events.map((e) => e.eventType);
    expect(types.filter((t) => t === 'ServerStarting')).toHaveLength(2);
    expect(types).not.toContain('ServerRestarting');
  } finally {
    expect(await second.interrupt()).toBe(130);
  }
}, 120_000);
