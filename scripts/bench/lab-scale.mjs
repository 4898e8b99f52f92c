#!/usr/bin/env node
// Lab-scale benchmark: the hub process on PostgreSQL with BENCH_DEVICES (default 1,000) devices reported
// through the real gateway link by a synthetic gateway process (synthetic-gateway.mjs), loaded by generators in
// their own processes (autocannon; retain-race.mjs), every row against a baseline measured in the same run:
//   GET /Device at 1 / 50 / 200 clients     vs a bare Node http server sending the same bytes (static-bytes-server.mjs)
//   GET /Device, If-None-Match (pollers)    vs the same bare server
//   GET /Device?properties&applications     vs the same bare server with that body
//   retain+release, 200 users, 50 devices   vs GET /Service at 200 clients
//   metrics ingest / session query          (BENCH_METRICS=1: runs metrics-ingest.mjs and metrics-query.mjs)
// BENCH_SECONDS (default 5) per measurement. Progress on stderr, the table on stdout.
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { progress, sleep, spawnDaemon, startBenchHub } from './bench-lab.mjs';
import { percentile, printTable } from './statistics.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, '..', '..');
const deviceCount = Number(process.env.BENCH_DEVICES || 1000);
const seconds = Number(process.env.BENCH_SECONDS || 5);
const raceUsers = Number(process.env.BENCH_RACE_USERS || 200);
const raceDevices = Number(process.env.BENCH_RACE_DEVICES || 50);
const DETAIL = '?properties=true&applications=true';
/** BENCH_ROWS=list,detail,race picks rows (default all). */
const wanted = new Set((process.env.BENCH_ROWS || 'list,detail,race').split(','));

/** Runs autocannon in its own process against `url`; its JSON summary. */
function autocannon(url, connections, headers = {}) {
  const args = [path.join(root, 'node_modules/autocannon/autocannon.js'), '-j', '-c', String(connections), '-d', String(seconds)];
  for (const [name, value] of Object.entries(headers)) args.push('-H', `${name}=${value}`);
  args.push(url);
  return runJson(args);
}

function runJson(args, env = process.env) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'], env });
    let out = '';
    let err = '';
    child.stdout.on('data', (d) => { out += d; });
    child.stderr.on('data', (d) => { err += d; });
    child.once('exit', (code) => {
      if (code !== 0) reject(new Error(`${path.basename(args[0])} exited ${code}: ${err}`));
      else {
        try { resolve(JSON.parse(out.trim().split('\n').pop())); } catch (e) { reject(new Error(`${out}\n${err}`)); }
      }
    });
  });
}

/** One measured row: requests/s, latency p50 and p99 (ms), refused/errored requests. */
function figures(result) {
  return {
    rate: result.requests.average, p50: result.latency.p50, p99: result.latency.p99,
    // 304 is the answer a poller wants (autocannon counts it as non-2xx).
    bad: Object.entries(result.statusCodeStats ?? {}).filter(([code]) => !code.startsWith('2') && code !== '304')
      .reduce((sum, [, { count }]) => sum + count, 0) + result.errors + result.timeouts,
    statuses: Object.entries(result.statusCodeStats ?? {}).filter(([code]) => !code.startsWith('2') && code !== '304')
      .map(([code, { count }]) => `${count}x HTTP ${code}`).concat(result.errors ? [`${result.errors} errors`] : []).join(', '),
  };
}

const fmt = (f) => `${f.rate.toFixed(0)} req/s, p50 ${f.p50.toFixed(1)} ms, p99 ${f.p99.toFixed(1)} ms${f.bad ? `, ${f.bad} failed (${f.statuses})` : ''}`;

const hub = await startBenchHub({ gatewayName: 'synthetic-gateway' });
const rows = [];
try {
  progress(`starting the synthetic gateway with ${deviceCount} devices`);
  const gateway = spawnDaemon('synthetic-gateway', [path.join(here, 'synthetic-gateway.mjs')], {
    ...process.env, BENCH_DEVICES: String(deviceCount), DEVICELAB_GATEWAY_NAME: hub.gatewayName,
    DEVICELAB_GATEWAY_TOKEN: hub.gatewayToken, DEVICELAB_HUB: `127.0.0.1:${hub.linkPort}`,
  });
  hub.onStop(() => gateway.stop());
  await gateway.waitForLine(/synthetic gateway: connected/, 60_000);
  const seeded = Date.now();
  for (;;) {
    const { body } = await hub.get('/Device?availability=Online');
    const online = Array.isArray(body) ? body.length : 0;
    if (online === deviceCount) break;
    if (Date.now() - seeded > 300_000) throw new Error(`only ${online}/${deviceCount} devices Online after 5 min`);
    progress(`${online}/${deviceCount} devices Online`);
    await sleep(1000);
  }
  progress(`${deviceCount} devices Online through the link after ${((Date.now() - seeded) / 1000).toFixed(1)} s`);

  const auth = { authorization: hub.authorization };
  const save = async (pathAndQuery, name) => {
    const res = await fetch(`${hub.url}/apiv1${pathAndQuery}`, { headers: auth });
    const bytes = Buffer.from(await res.arrayBuffer());
    const file = path.join(hub.dir, name);
    writeFileSync(file, bytes);
    return { file, bytes: bytes.length, etag: res.headers.get('etag') };
  };
  const list = await save('/Device', 'device-list.json');
  const detail = await save(`/Device${DETAIL}`, 'device-detail.json');
  progress(`GET /Device: ${(list.bytes / 1024).toFixed(0)} KB; with properties and applications: ${(detail.bytes / 1024 / 1024).toFixed(1)} MB`);

  const startStatic = async (file) => {
    const server = spawnDaemon('static-bytes-server', [path.join(here, 'static-bytes-server.mjs'), file], process.env);
    hub.onStop(() => server.stop());
    const [, port] = await server.waitForLine(/static bytes server on port (\d+)/, 10_000);
    return `http://127.0.0.1:${port}/`;
  };
  const listBaseline = await startStatic(list.file);
  const detailBaseline = await startStatic(detail.file);

  const pair = async (label, goal, url, baselineUrl, connections, headers = auth) => {
    progress(`${label}: DeviceLab`);
    const ours = figures(await autocannon(url, connections, headers));
    progress(`${label}: baseline`);
    const base = figures(await autocannon(baselineUrl, connections));
    rows.push([label, fmt(ours), fmt(base), `${(ours.rate / base.rate).toFixed(3)}x`, goal]);
  };
  if (wanted.has('list')) for (const clients of [1, 50, 200]) {
    await pair(`GET /Device (${deviceCount}, ${(list.bytes / 1024).toFixed(0)} KB), ${clients} client${clients > 1 ? 's' : ''}`,
      clients === 200 ? 'p99 < 50 ms' : '>= 0.5x', `${hub.url}/apiv1/Device`, listBaseline, clients);
  }
  if (wanted.has('list') && list.etag) {
    await pair('GET /Device, If-None-Match (304), 50 clients', '-', `${hub.url}/apiv1/Device`, listBaseline, 50,
      { ...auth, 'if-none-match': list.etag });
  }
  if (wanted.has('detail')) await pair(`GET /Device${DETAIL} (${(detail.bytes / 1024 / 1024).toFixed(1)} MB), 10 clients`, '>= 0.3x',
    `${hub.url}/apiv1/Device${DETAIL}`, detailBaseline, 10);

  if (wanted.has('race')) await retainRace();
  if (process.env.BENCH_METRICS === '1') await metricsRows();
} finally {
  await hub.stop();
}
process.stdout.write(`\nLab-scale benchmark: ${deviceCount} devices, ${seconds} s per measurement, ${os.cpus().length} cores, load ${os.loadavg().map((l) => l.toFixed(2)).join(' ')}\n`);
printTable(['path', 'DeviceLab', 'baseline (same run)', 'ratio', 'goal'], rows);

function p50(values) {
  return values.length ? percentile([...values].sort((a, b) => a - b), 50).toFixed(1) : '-';
}

async function retainRace() {
  const auth = { authorization: hub.authorization };
  progress(`creating ${raceUsers} users for the retain race`);
  const users = [];
  for (let i = 0; i < raceUsers; i++) {
    const login = `race-${i}@bench.example`;
    const added = await hub.get('/User?verb=add', {
      method: 'POST', body: JSON.stringify({ UserName: login, roles: ['Tester'] }), headers: { 'content-type': 'application/json' },
    });
    if (!added.body?.isSuccess) throw new Error(`adding ${login}: ${JSON.stringify(added.body)}`);
    users.push({ login });
  }
  const { body: listedUsers } = await hub.get('/User');
  const ids = new Map(listedUsers.map((u) => [u.email, u.id]));
  for (const user of users) {
    const { body } = await hub.get(`/User?action=generateToken&id=${ids.get(user.login)}`, { method: 'POST' });
    if (!body?.data?.apiToken) throw new Error(`no token for ${user.login}: ${JSON.stringify(body)}`);
    user.token = body.data.apiToken;
  }
  // Users who worked before (as lab users have): 200 clients first seen at once from one address would be held
  // off by the failed-login throttle's per-address budget until their first checks succeed.
  for (const user of users) {
    const res = await fetch(`${hub.url}/apiv1/Service`, { headers: { authorization: `Basic ${Buffer.from(`${user.login}:${user.token}`).toString('base64')}` } });
    if (res.status !== 200) throw new Error(`${user.login} cannot authenticate: HTTP ${res.status}`);
  }
  const { body: devices } = await hub.get('/Device');
  const usersFile = path.join(hub.dir, 'race-users.json');
  const devicesFile = path.join(hub.dir, 'race-devices.json');
  writeFileSync(usersFile, JSON.stringify(users));
  writeFileSync(devicesFile, JSON.stringify(devices.slice(0, raceDevices).map((d) => d.id)));
  progress(`retain race: ${raceUsers} users, ${raceDevices} devices`);
  const race = await runJson([path.join(here, 'retain-race.mjs'), `${hub.url}/apiv1`, usersFile, devicesFile]);
  progress('retain race baseline: GET /Service');
  const service = figures(await autocannon(`${hub.url}/apiv1/Service`, raceUsers, auth));
  const requests = race.retainMs.length + race.releaseMs.length;
  const raceRate = requests / race.elapsed;
  const sortedRetain = race.retainMs.sort((a, b) => a - b);
  rows.push([`retain+release, ${raceUsers} users racing for ${raceDevices} devices`,
    `${(race.pairs / race.elapsed).toFixed(0)} pairs/s (${raceRate.toFixed(0)} req/s), retain p50 ${percentile(sortedRetain, 50).toFixed(1)} ms, `
      + `p99 ${percentile(sortedRetain, 99).toFixed(1)} ms (won p50 ${p50(race.wonMs)} ms, lost p50 ${p50(race.lostMs)} ms, release p50 ${p50(race.releaseMs)} ms); `
      + `${race.lost} lost, ${race.failures} failed ${JSON.stringify(race.failedStatuses)}, ${race.doubleRetains} double retains`,
    `GET /Service, ${raceUsers} clients: ${fmt(service)}`, `${(raceRate / service.rate).toFixed(3)}x`, '>= 0.5x, p50 < 100 ms']);
  if (race.doubleRetains > 0) process.exitCode = 1;
}

async function metricsRows() {
  for (const script of ['metrics-ingest.mjs', 'metrics-query.mjs']) {
      progress(`running ${script}`);
      const child = spawn(process.execPath, [path.join(here, script)], { stdio: ['ignore', 'pipe', 'inherit'] });
      let out = '';
      child.stdout.on('data', (d) => { out += d; });
      await new Promise((resolve) => child.once('exit', resolve));
      rows.push([script, out.trim().split('\n').slice(-3).join(' | '), '', '', script.includes('ingest') ? '>= 0.8x raw' : '<= 1.2x hand SQL']);
    }
  }
