// Wrong-token floods against a real hub: how many wrong credentials the hub evaluates per second from
// one client address and from ever-new addresses, how many it refuses with 429, and whether a user who logged
// in before still gets in. Hub on a scratch database (DATABASE_URL, default the local PostgreSQL).
// `npx tsc -b && node scripts/bench/login-throttle.mjs` (BENCH_SECONDS, default 4; BENCH_CONCURRENCY, default 16).
import { randomUUID } from 'node:crypto';
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { hub, progress, withScratchDatabase } from './metrics-scratch-database.mjs';

const { createLogger } = hub('../node_modules/@devicelab/shared');

const seconds = Number(process.env.BENCH_SECONDS ?? 4);
const concurrency = Number(process.env.BENCH_CONCURRENCY ?? 16);
const { startHub } = hub('server.js');
const { hubConfigFromEnv } = hub('config.js');
const basic = (login, token) => `Basic ${Buffer.from(`${login}:${token}`).toString('base64')}`;

await withScratchDatabase('login', async (_db, url) => {
  const adminToken = randomUUID();
  const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'devicelab-bench-login-'));
  // The hub trusts the loopback "proxy", so X-Forwarded-For lets this one process speak from many addresses.
  const running = await startHub({
    ...hubConfigFromEnv({}), port: 0, host: '127.0.0.1', linkPort: 0, databaseUrl: url, dataDir, adminToken,
    trustProxy: ['loopback'],
  }, createLogger('hub', 'error'));
  try {
    const get = (authorization, client) => fetch(`${running.url}/apiv1/Service`, {
      headers: { authorization, ...(client ? { 'x-forwarded-for': client } : {}) },
    });
    const before = await get(basic('admin', adminToken)); // the real user (127.0.0.1), before the attacks
    progress(`real user before the attacks: HTTP ${before.status}`);

    /** `concurrency` loops sending wrong admin tokens for `seconds`; `client(n)` names the n-th request's address. */
    async function flood(title, client) {
      const statuses = new Map();
      const deadline = Date.now() + seconds * 1000;
      let n = 0;
      await Promise.all(Array.from({ length: concurrency }, async () => {
        while (Date.now() < deadline) {
          const res = await get(basic('admin', randomUUID()), client(n++));
          await res.arrayBuffer();
          statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
        }
      }));
      process.stdout.write(`${title}: ${seconds} s, ${concurrency} connections\n`);
      for (const [status, count] of [...statuses].sort()) {
        process.stdout.write(`  HTTP ${status}: ${count} (${(count / seconds).toFixed(1)}/s)\n`);
      }
      process.stdout.write(`  wrong tokens evaluated (401): ${((statuses.get(401) ?? 0) / seconds).toFixed(1)}/s\n`);
    }

    await flood('wrong admin tokens from one address (203.0.113.7)', () => '203.0.113.7');
    await flood('wrong admin tokens, each from a new address (198.18.x.y)', (n) => `198.18.${(n >> 8) & 255}.${n & 255}`);
    const known = await get(basic('admin', adminToken));
    const stranger = await get(basic('admin', adminToken), '192.0.2.1');
    process.stdout.write(`right after: the real user (logged in before, 127.0.0.1): HTTP ${known.status}; `
      + `the right token from a never-seen address: HTTP ${stranger.status}\n`);
  } finally {
    await running.stop();
    await fs.rm(dataDir, { recursive: true, force: true });
  }
});
