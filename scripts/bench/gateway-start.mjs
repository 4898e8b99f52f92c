#!/usr/bin/env node
// Benchmark: a gateway started with many devices already plugged must come up. BENCH_DEVICES (default 200)
// simulated Android devices are plugged into the lab's adb server first; then the gateway process starts and
// the client polls GET /Device until every device is Online (goal: within 60 s). Then the gateway is killed
// (SIGKILL) and the time until the hub lists them all Offline is measured (goal: < 5 s).
// Also printed: the memory and process count of the simulated lab (labsim + its adb server; goal for 200
// devices: < 1 GiB) and the gateway's RSS once all devices are Online.
import { createRequire } from 'node:module';
import { performance } from 'node:perf_hooks';
import { progress, sleep, startBenchHub } from './bench-lab.mjs';
import { adbServerPid, mib, rssOf, treeOf } from './process-memory.mjs';
import { printTable } from './statistics.mjs';
import path from 'node:path';

const { LabWorld, defaultAndroidLab } = createRequire(import.meta.url)('../../labsim/dist');
const deviceCount = Number(process.env.BENCH_DEVICES || 200);
const goalMs = 60_000;

/** The bench process (labsim lives in it) and its adb server; the hub and gateway processes are left out. */
function labMemory(world, exclude) {
  const tree = treeOf(process.pid, exclude);
  const adbPid = adbServerPid(world.adbServerPort);
  const rss = tree.reduce((sum, p) => sum + p.rss, 0) + (adbPid ? rssOf(adbPid) : 0);
  return { rss, processes: tree.length - 1 + (adbPid ? 1 : 0) };
}

async function countAvailability(hub, serials) {
  const { status, body } = await hub.get('/Device');
  if (status !== 200 || !Array.isArray(body)) throw new Error(`GET /Device answered HTTP ${status}`);
  const counts = { Online: 0, Offline: 0, other: 0 };
  for (const d of body) if (serials.has(d.serialNumber)) counts[d.availability in counts ? d.availability : 'other'] += 1;
  return counts;
}

async function waitUntil(what, hub, serials, availability, timeoutMs, gateway) {
  const started = performance.now();
  let last = '';
  for (;;) {
    if (gateway?.exited) throw new Error(`the gateway process exited:\n${gateway.output.slice(-4000)}`);
    const counts = await countAvailability(hub, serials);
    const line = `${what}: ${counts[availability]}/${serials.size} ${availability} after ${((performance.now() - started) / 1000).toFixed(1)} s`;
    if (line.split(' after')[0] !== last) { progress(line); last = line.split(' after')[0]; }
    if (counts[availability] === serials.size) return performance.now() - started;
    if (performance.now() - started > timeoutMs) return NaN;
    await sleep(100);
  }
}

const hub = await startBenchHub();
try {
  const world = new LabWorld({ stateDir: path.join(hub.dir, 'labsim') });
  await world.start();
  hub.onStop(() => world.stop());
  const baseLab = labMemory(world, [hub.hubPid]);
  const specs = defaultAndroidLab(deviceCount);
  const plugStarted = performance.now();
  for (let i = 0; i < specs.length; i += 20) {
    await Promise.all(specs.slice(i, i + 20).map((spec) => world.addAndroidDevice(spec)));
    progress(`plugged ${Math.min(i + 20, specs.length)}/${specs.length} devices`);
  }
  const plugMs = performance.now() - plugStarted;
  const serials = new Set(specs.map((s) => s.serial));
  const idleLab = labMemory(world, [hub.hubPid]);

  progress('starting the gateway process');
  const gateway = hub.startGateway(world);
  hub.onStop(() => gateway.stop());
  const onlineMs = await waitUntil('gateway start', hub, serials, 'Online', 10 * 60_000, gateway);
  const gatewayRss = rssOf(gateway.pid);
  const busyLab = labMemory(world, [hub.hubPid, gateway.pid]);

  progress('killing the gateway (SIGKILL)');
  process.kill(gateway.pid, 'SIGKILL');
  const offlineMs = (await waitUntil('gateway killed', hub, serials, 'Offline', 60_000));

  process.stdout.write(`\ngateway start with ${deviceCount} devices plugged\n`);
  printTable(['what', 'figure', 'goal'], [
    ['all devices plugged into adb (labsim)', `${(plugMs / 1000).toFixed(1)} s`, '-'],
    ['gateway start -> all Online', Number.isNaN(onlineMs) ? 'NOT all Online in 10 min' : `${(onlineMs / 1000).toFixed(1)} s`, onlineMs < goalMs ? 'met (< 60 s)' : 'NOT met (< 60 s)'],
    ['gateway SIGKILL -> all Offline', Number.isNaN(offlineMs) ? 'NOT all Offline in 60 s' : `${(offlineMs / 1000).toFixed(2)} s`, offlineMs < 5000 ? 'met (< 5 s)' : 'NOT met (< 5 s)'],
    ['simulated lab RSS, no devices', mib(baseLab.rss), '-'],
    [`simulated lab RSS, ${deviceCount} devices idle`, mib(idleLab.rss), deviceCount >= 200 ? (idleLab.rss < 1024 ** 3 ? 'met (< 1 GiB)' : 'NOT met (< 1 GiB)') : '-'],
    [`simulated lab RSS, ${deviceCount} devices, gateway reading them`, mib(busyLab.rss), deviceCount >= 200 ? (busyLab.rss < 1024 ** 3 ? 'met (< 1 GiB)' : 'NOT met (< 1 GiB)') : '-'],
    ['simulated lab processes (busy)', String(busyLab.processes), '-'],
    ['gateway RSS, all Online', mib(gatewayRss), '-'],
  ]);
} finally {
  await hub.stop();
}
