#!/usr/bin/env node
// Benchmark: hub replicas on one PostgreSQL. Needs DATABASE_URL (both replicas share its scratch database).
//   throughput: `GET /apiv1/Device` with BENCH_DEVICES (default 20) devices Online, autocannon in its own process
//               (BENCH_CONNECTIONS, default 8, for BENCH_SECONDS, default 5): against replica A alone, then split
//               over A and B at once (two autocannon processes, half the connections each), alternated twice.
//   command latency: `GET /apiv1/Device/Log?lines=5` (a readLog command to the gateway, which is linked to A)
//               through A (its own link) vs through B (relayed through PostgreSQL), BENCH_COMMANDS (default 40)
//               sequential each, alternating.
import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { performance } from 'node:perf_hooks';
import { progress, spawnDaemon, startBenchLab } from './bench-lab.mjs';
import { waitForAvailability } from './plug-measurement.mjs';
import { ms, printTable, summarize } from './statistics.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const { defaultAndroidLab } = createRequire(import.meta.url)('../../labsim/dist');
const deviceCount = Number(process.env.BENCH_DEVICES || 20);
const connections = Number(process.env.BENCH_CONNECTIONS || 8);
const seconds = Number(process.env.BENCH_SECONDS || 5);
const commands = Number(process.env.BENCH_COMMANDS || 40);

if (!process.env.DATABASE_URL) {
  process.stderr.write('hub-replicas.mjs: set DATABASE_URL (replicas share one PostgreSQL; the embedded one serves one hub)\n');
  process.exit(2);
}

/** autocannon in its own process against `url`; its JSON summary. */
function autocannon(url, count, authorization) {
  const args = [path.join(root, 'node_modules/autocannon/autocannon.js'), '-j', '-c', String(count), '-d', String(seconds),
    '-H', `authorization=${authorization}`, url];
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (d) => { out += d; });
    child.stderr.on('data', (d) => { err += d; });
    child.once('exit', (code) => {
      if (code !== 0) return reject(new Error(`autocannon exited ${code}: ${err}`));
      const result = JSON.parse(out.trim().split('\n').pop());
      const bad = result.non2xx + result.errors + result.timeouts;
      if (bad > 0) return reject(new Error(`autocannon: ${bad} failed requests against ${url}`));
      resolve(result.requests.average);
    });
  });
}

const lab = await startBenchLab();
try {
  for (const spec of defaultAndroidLab(deviceCount)) await lab.world.addAndroidDevice(spec);
  for (const { serial } of lab.world.devices()) await waitForAvailability(lab, serial, 'Online', 100, 120_000);
  progress(`${deviceCount} devices Online through replica A; starting replica B on the same database`);
  const replicaB = spawnDaemon('hub-b', [lab.hub.hubMain, 'serve'],
    { ...lab.hub.env, DEVICELAB_DATA_DIR: path.join(lab.hub.dir, 'hub-b-data') });
  lab.hub.onStop(() => replicaB.stop());
  const [, urlB] = await replicaB.waitForLine(/DeviceLab hub: (\S+)\/apiv1/, 120_000);
  const getB = async (pathAndQuery) => {
    const res = await fetch(`${urlB}/apiv1${pathAndQuery}`, { headers: { authorization: lab.authorization } });
    return { status: res.status, body: await res.json() };
  };
  const { body: service } = await getB('/Service');
  if (service.hubReplicas.length !== 2) throw new Error(`expected 2 live replicas, /Service lists ${service.hubReplicas.length}`);

  const rates = { one: [], two: [] };
  for (const mode of ['one', 'two', 'one', 'two']) {
    const rate = mode === 'one'
      ? await autocannon(`${lab.url}/apiv1/Device`, connections, lab.authorization)
      : (await Promise.all([lab.url, urlB].map((url) => autocannon(`${url}/apiv1/Device`, connections / 2, lab.authorization))))
        .reduce((sum, r) => sum + r, 0);
    rates[mode].push(rate);
    progress(`GET /Device, ${mode === 'one' ? 'replica A alone' : 'replicas A and B'}: ${rate.toFixed(0)} req/s`);
  }

  const { body: devices } = await lab.get('/Device');
  const target = devices[0].id;
  const timed = async (get) => {
    const started = performance.now();
    const { status, body } = await get(`/Device/Log?id=${target}&lines=5`);
    if (status !== 200 || body.isSuccess !== true) throw new Error(`readLog failed: ${status} ${JSON.stringify(body).slice(0, 300)}`);
    return performance.now() - started;
  };
  for (let i = 0; i < 5; i++) { await timed(lab.get); await timed(getB); } // warm-up
  const latency = { owner: [], relayed: [] };
  for (let i = 0; i < commands; i++) {
    const order = i % 2 === 0 ? ['owner', 'relayed'] : ['relayed', 'owner'];
    for (const name of order) latency[name].push(await timed(name === 'owner' ? lab.get : getB));
  }

  const mean = (values) => values.reduce((a, b) => a + b, 0) / values.length;
  const one = mean(rates.one);
  const two = mean(rates.two);
  const owner = summarize(latency.owner);
  const relayed = summarize(latency.relayed);
  const [load1] = os.loadavg();
  process.stdout.write(`\nHub replicas on one PostgreSQL: ${deviceCount} devices, ${os.cpus().length} cores, load average ${load1.toFixed(2)}\n`);
  printTable(['GET /Device throughput', `req/s (${connections} connections, ${seconds} s, 2 runs)`, 'ratio'], [
    ['one replica (A)', one.toFixed(0), '1.00x'],
    ['two replicas (A + B)', two.toFixed(0), `${(two / one).toFixed(2)}x`],
  ]);
  process.stdout.write('\n');
  printTable(['readLog command', 'n', 'median', 'p95', 'max'], [
    ['through the owning replica (A)', owner.count, ms(owner.median), ms(owner.p95), ms(owner.max)],
    ['through the other replica (B, relayed)', relayed.count, ms(relayed.median), ms(relayed.p95), ms(relayed.max)],
    ['ratio relayed : owner', '', `${(relayed.median / owner.median).toFixed(2)}x`, `${(relayed.p95 / owner.p95).toFixed(2)}x`, ''],
  ]);
} finally {
  await lab.stop();
}
