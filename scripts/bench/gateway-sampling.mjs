#!/usr/bin/env node
// Benchmark: what metrics sampling costs the gateway. BENCH_DEVICES (default 50) simulated Android devices, one
// gateway process (`gateway/dist/main.js`) at a time driving them through a private real adb server and
// reporting to a real hub process (`hub/dist/main.js serve`, PostgreSQL). Phases alternate in one run,
// off / on / on / off (ABBA, so drift of the machine hits both alike), each with a fresh gateway process:
//   off: DEVICELAB_SAMPLING=off (tracking, facts, heartbeats only)
//   on:  DEVICELAB_SAMPLE_INTERVAL_S=BENCH_INTERVAL_S (default 1) plus the default health checks and device log
// Per phase, after every device is Online and BENCH_WARMUP_S (default 5) of warm-up: the gateway's CPU time
// (utime + stime from /proc/<pid>/stat) over BENCH_SECONDS (default 30), its RSS (VmRSS, sampled every second:
// mean and max), and (on) the `sample` rows the hub stored for one device per second, read back through
// GET /Device/Metrics. The last rows are the ratios on : off. BENCH_PHASES (e.g. `on`) runs other phases.
//
// Records: DATABASE_URL names a running PostgreSQL server (a scratch database is created and dropped); else the
// hub's embedded PostgreSQL in a temp dir. Progress on stderr, the table on stdout.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { cpuMs, progress, sleep, startBenchHub } from './bench-lab.mjs';
import { printTable } from './statistics.mjs';

const require = createRequire(import.meta.url);
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const { LabWorld, defaultAndroidLab } = require(path.join(root, 'labsim/dist'));

const deviceCount = Number(process.env.BENCH_DEVICES || 50);
const seconds = Number(process.env.BENCH_SECONDS || 30);
const warmupSeconds = Number(process.env.BENCH_WARMUP_S || 5);
const intervalSeconds = Number(process.env.BENCH_INTERVAL_S || 1);
const PHASES = (process.env.BENCH_PHASES || 'off,on,on,off').split(',').map((p) => p.trim());
if (PHASES.some((p) => p !== 'on' && p !== 'off')) throw new Error('BENCH_PHASES lists on/off phases, e.g. off,on,on,off');

/** Resident set size in MiB. */
function rssMiB(pid) {
  const match = /^VmRSS:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return match ? Number(match[1]) / 1024 : NaN;
}

async function main() {
  const hub = await startBenchHub({ gatewayName: 'bench-sampling' });
  const { get } = hub;
  try {
    const onlineCount = async () => {
      const { body } = await get('/Device?availability=Online');
      return Array.isArray(body) ? body.length : 0;
    };

    progress(`starting the simulated lab: ${deviceCount} Android devices behind a private adb server`);
    const world = new LabWorld({ stateDir: path.join(hub.dir, 'labsim') });
    await world.start();
    hub.onStop(() => world.stop());
    const specs = defaultAndroidLab(deviceCount);
    for (let i = 0; i < specs.length; i += 10) {
      await Promise.all(specs.slice(i, i + 10).map((spec) => world.addAndroidDevice(spec)));
      progress(`  ${Math.min(i + 10, specs.length)}/${specs.length} devices plugged`);
    }
    const probeDevice = world.devices()[0].adbSerial;

    const results = [];
    for (const [index, mode] of PHASES.entries()) {
      progress(`phase ${index + 1}/${PHASES.length}: sampling ${mode}: starting a gateway process`);
      // BENCH_GATEWAY_NODE_ARGS, e.g. `--cpu-prof --cpu-prof-dir=/tmp/prof`: where the gateway's time goes.
      const nodeArgs = (process.env.BENCH_GATEWAY_NODE_ARGS || '').split(' ').filter(Boolean);
      const gateway = hub.startGateway(world, {
        nodeArgs,
        env: mode === 'on' ? { DEVICELAB_SAMPLE_INTERVAL_S: String(intervalSeconds) } : { DEVICELAB_SAMPLING: 'off' },
      });
      try {
        const readyBy = Date.now() + 180_000;
        let online = 0;
        while ((online = await onlineCount()) < deviceCount) {
          if (Date.now() > readyBy) throw new Error(`only ${online}/${deviceCount} devices Online after 180 s\n${gateway.output}`);
          if (gateway.exited) throw new Error(`the gateway exited\n${gateway.output}`);
          await sleep(500);
        }
        progress(`  all ${deviceCount} devices Online; warming up ${warmupSeconds} s`);
        await sleep(warmupSeconds * 1000);
        const startedAt = new Date();
        const cpu0 = cpuMs(gateway.pid);
        const rss = [];
        for (let s = 1; s <= seconds; s++) {
          await sleep(1000);
          rss.push(rssMiB(gateway.pid));
          if (s % 10 === 0 || s === seconds) progress(`  measuring: ${s}/${seconds} s, RSS ${rss[rss.length - 1].toFixed(1)} MiB`);
        }
        const cpu = (cpuMs(gateway.pid) - cpu0) / 1000; // CPU seconds
        const endedAt = new Date();
        let rowsPerSecond = NaN;
        if (mode === 'on') {
          await sleep(2_000); // the last batches reach the hub
          const query = `/Device/Metrics?id=${encodeURIComponent(probeDevice)}&table=sample&fields=Used&start=${startedAt.toISOString()}&end=${endedAt.toISOString()}`;
          const { status, body } = await get(query);
          const values = body?.results?.[0]?.series?.[0]?.values;
          if (status === 200 && Array.isArray(values)) rowsPerSecond = values.length / ((endedAt - startedAt) / 1000);
          else progress(`  GET /Device/Metrics answered ${status}: ${JSON.stringify(body).slice(0, 200)}`);
        }
        results.push({
          mode, cpuPercent: (cpu / seconds) * 100, rssMean: rss.reduce((a, b) => a + b, 0) / rss.length, rssMax: Math.max(...rss),
          rssFirst: rss[0], rssLast: rss[rss.length - 1], rowsPerSecond, cpuSeconds: cpu,
        });
        progress(`  CPU ${((cpu / seconds) * 100).toFixed(1)} % of one core, RSS max ${Math.max(...rss).toFixed(1)} MiB`);
      } finally {
        await gateway.stop();
      }
      const offlineBy = Date.now() + 60_000;
      while ((await onlineCount()) > 0 && Date.now() < offlineBy) await sleep(250);
    }

    const mean = (mode, key) => {
      const list = results.filter((r) => r.mode === mode).map((r) => r[key]);
      return list.reduce((a, b) => a + b, 0) / list.length;
    };
    const fmt = (v, unit) => (Number.isFinite(v) ? `${v.toFixed(1)}${unit}` : 'n/a');
    process.stdout.write(`\nGateway cost of sampling ${deviceCount} devices every ${intervalSeconds} s (${seconds} s per phase, phases ${PHASES.join('/')})\n\n`);
    // Reads per second over all devices, estimated from the probe device's stored rows; CPU per read from it.
    printTable(['phase', 'sampling', 'CPU (% of one core)', 'RSS mean', 'RSS max', 'RSS first -> last', 'sample rows/s (one device)', 'reads/s (all)', 'CPU per read'], results.map((r, i) => [
      i + 1, r.mode, fmt(r.cpuPercent, ' %'), fmt(r.rssMean, ' MiB'), fmt(r.rssMax, ' MiB'), `${fmt(r.rssFirst, '')} -> ${fmt(r.rssLast, ' MiB')}`,
      r.mode === 'on' ? fmt(r.rowsPerSecond, '') : '-',
      r.mode === 'on' ? fmt(r.rowsPerSecond * deviceCount, '') : '-',
      r.mode === 'on' ? fmt((r.cpuSeconds * 1000) / (r.rowsPerSecond * deviceCount * seconds), ' ms') : '-',
    ]));
    // A baseline that used no measurable CPU has no ratio; the absolute difference below still tells the cost.
    const ratio = (key) => {
      const value = mean('on', key) / mean('off', key);
      return Number.isFinite(value) ? `${value.toFixed(2)}x` : 'n/a';
    };
    if (!PHASES.includes('on') || !PHASES.includes('off')) return;
    process.stdout.write('\n');
    printTable(['ratio on : off', 'CPU', 'RSS mean', 'RSS max'], [
      ['(mean of the phases)', ratio('cpuPercent'), ratio('rssMean'), ratio('rssMax')],
    ]);
    process.stdout.write(`\nsampling on: ${fmt(mean('on', 'cpuPercent') - mean('off', 'cpuPercent'), ' %')} of one core more, `
      + `${fmt((mean('on', 'cpuPercent') - mean('off', 'cpuPercent')) / deviceCount, ' %')} per device\n`);
  } finally {
    await hub.stop();
  }
}

main().catch((err) => {
  process.stderr.write(`${err?.stack ?? err}\n`);
  process.exit(1);
});
