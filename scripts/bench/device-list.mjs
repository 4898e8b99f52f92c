#!/usr/bin/env node
// Benchmark (b): `GET /apiv1/Device` with BENCH_DEVICES (default 50) simulated Android devices Online, side by side
// with the baseline `GET /apiv1/Service` (authenticated, no device rows) in the same run, on the same connection
// pool, alternating blocks so machine load hits both alike.
//   latency:    BENCH_ROUNDS (default 10) rounds of 20 sequential requests per endpoint: median, p95
//   throughput: BENCH_CONCURRENCY (default 8) clients for BENCH_SECONDS (default 3) per endpoint, twice: req/s
import { createRequire } from 'node:module';
import { performance } from 'node:perf_hooks';
import { progress, startBenchLab } from './bench-lab.mjs';
import { waitForAvailability } from './plug-measurement.mjs';
import { ms, printTable, summarize } from './statistics.mjs';

const { defaultAndroidLab } = createRequire(import.meta.url)('../../labsim/dist');
const deviceCount = Number(process.env.BENCH_DEVICES || 50);
const rounds = Number(process.env.BENCH_ROUNDS || 10);
const perRound = 20;
const concurrency = Number(process.env.BENCH_CONCURRENCY || 8);
const seconds = Number(process.env.BENCH_SECONDS || 3);

const ENDPOINTS = { device: '/Device', service: '/Service' };

async function timedGet(lab, pathAndQuery) {
  const started = performance.now();
  const { status } = await lab.get(pathAndQuery);
  if (status !== 200) throw new Error(`GET ${pathAndQuery} answered HTTP ${status}`);
  return performance.now() - started;
}

/** Requests per second that `concurrency` clients get through in `seconds`. */
async function throughput(lab, pathAndQuery) {
  const until = performance.now() + seconds * 1000;
  let done = 0;
  const client = async () => {
    while (performance.now() < until) {
      await timedGet(lab, pathAndQuery);
      done += 1;
    }
  };
  const started = performance.now();
  await Promise.all(Array.from({ length: concurrency }, client));
  return done / ((performance.now() - started) / 1000);
}

const lab = await startBenchLab();
try {
  for (const [index, spec] of defaultAndroidLab(deviceCount).entries()) {
    await lab.world.addAndroidDevice(spec);
    if ((index + 1) % 10 === 0 || index + 1 === deviceCount) progress(`plugged ${index + 1}/${deviceCount} simulated devices`);
  }
  for (const { serial } of lab.world.devices()) await waitForAvailability(lab, serial, 'Online', 100, 120_000);
  const { body: listed } = await lab.get('/Device');
  const online = listed.filter((d) => d.availability === 'Online').length;
  if (online !== deviceCount) throw new Error(`expected ${deviceCount} devices Online, GET /Device lists ${online}`);
  progress(`${online} devices Online; warming up`);

  for (let i = 0; i < perRound; i++) for (const p of Object.values(ENDPOINTS)) await timedGet(lab, p);
  const latencies = { device: [], service: [] };
  for (let round = 0; round < rounds; round++) {
    const order = round % 2 === 0 ? ['device', 'service'] : ['service', 'device'];
    for (const name of order) for (let i = 0; i < perRound; i++) latencies[name].push(await timedGet(lab, ENDPOINTS[name]));
    progress(`latency round ${round + 1}/${rounds}`);
  }

  const rates = { device: [], service: [] };
  for (const name of ['device', 'service', 'service', 'device']) {
    rates[name].push(await throughput(lab, ENDPOINTS[name]));
    progress(`throughput ${ENDPOINTS[name]} with ${concurrency} clients: ${rates[name].at(-1).toFixed(0)} req/s`);
  }

  const stats = { device: summarize(latencies.device), service: summarize(latencies.service) };
  const rate = { device: (rates.device[0] + rates.device[1]) / 2, service: (rates.service[0] + rates.service[1]) / 2 };
  process.stdout.write(`\nGET /Device with ${deviceCount} devices vs baseline GET /Service (same run)\n`);
  printTable(['endpoint', 'n', 'median', 'p95', 'max', `req/s (${concurrency} clients)`], [
    ...['device', 'service'].map((name) => [`GET ${ENDPOINTS[name]}`, stats[name].count, ms(stats[name].median),
      ms(stats[name].p95), ms(stats[name].max), rate[name].toFixed(0)]),
    ['ratio /Device : /Service', '', `${(stats.device.median / stats.service.median).toFixed(2)}x`,
      `${(stats.device.p95 / stats.service.p95).toFixed(2)}x`, '', `${(rate.device / rate.service).toFixed(2)}x`],
  ]);
} finally {
  await lab.stop();
}
