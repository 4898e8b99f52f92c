// Wrong-token flood against a real hub (issue 9): how many wrong credentials the hub evaluates per second from
// one client address, how many it refuses with 429, and whether a user who authenticated before the flood from
// the same address still gets in. Hub on a scratch database (DATABASE_URL, default the local PostgreSQL).
// `npx tsc -b && node scripts/bench/login-throttle.mjs` (BENCH_SECONDS, default 4; BENCH_CONCURRENCY, default 16).
import { randomUUID } from 'node:crypto';
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { hub, progress, withScratchDatabase } from './metrics-scratch-database.mjs';

const seconds = Number(process.env.BENCH_SECONDS ?? 4);
const concurrency = Number(process.env.BENCH_CONCURRENCY ?? 16);
const { startHub } = hub('server.js');
const { hubConfigFromEnv } = hub('config.js');
const basic = (login, token) => `Basic ${Buffer.from(`${login}:${token}`).toString('base64')}`;

await withScratchDatabase('login', async (_db, url) => {
  const adminToken = randomUUID();
  const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'devicelab-bench-login-'));
  const running = await startHub({
    ...hubConfigFromEnv({}), port: 0, host: '127.0.0.1', linkPort: 0, databaseUrl: url, dataDir, adminToken,
  });
  try {
    const get = (authorization) => fetch(`${running.url}/apiv1/Service`, { headers: { authorization } });
    const before = await get(basic('admin', adminToken)); // the real user, from this address, before the flood
    progress(`real user before the flood: HTTP ${before.status}`);
    const statuses = new Map();
    const deadline = Date.now() + seconds * 1000;
    await Promise.all(Array.from({ length: concurrency }, async () => {
      while (Date.now() < deadline) {
        const res = await get(basic('admin', randomUUID()));
        await res.arrayBuffer();
        statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
      }
    }));
    const during = await get(basic('admin', adminToken));
    process.stdout.write(`wrong-token flood: ${seconds} s, ${concurrency} connections, one client address\n`);
    for (const [status, count] of [...statuses].sort()) {
      process.stdout.write(`  HTTP ${status}: ${count} (${(count / seconds).toFixed(1)}/s)\n`);
    }
    process.stdout.write(`  wrong tokens evaluated (401): ${((statuses.get(401) ?? 0) / seconds).toFixed(1)}/s\n`);
    process.stdout.write(`  real user right after the flood, same address: HTTP ${during.status}\n`);
  } finally {
    await running.stop();
    await fs.rm(dataDir, { recursive: true, force: true });
  }
});
