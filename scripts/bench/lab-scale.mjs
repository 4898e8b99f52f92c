#!/usr/bin/env node
// Lab-scale benchmark of the hub's request path: the hub process on PostgreSQL with devices reported through the
// real gateway link by a synthetic gateway process (synthetic-gateway.mjs), loaded by wrk (C; wrk.mjs), every row
// against baselines sending the SAME bytes, measured in the same run in alternating rounds (DeviceLab, plain
// Express 5, bare Node `http`, DeviceLab, ...), so each row shows the baselines' own limits on this machine:
//   GET /Device, 100 devices, 50 clients; the same with 1 client (p50)        vs Express and bare Node
//   GET /Service, 20 clients; GET /Service without credentials (401), 20 clients
//   GET /Application, GET /Device/Available, 50 clients
//   GET /Device, 1,000 devices, 50 clients; the same with 1 client (p50)
//   retain+release race (BENCH_ROWS=...,race)  vs GET /Service at 200 clients
//   metrics ingest / session query (BENCH_METRICS=1)
// BENCH_SECONDS (3) per measurement, BENCH_ROUNDS (3) rounds of each side; the median round counts.
// Progress on stderr, the table on stdout.
import { spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { progress, sleep, spawnDaemon, startBenchHub } from './bench-lab.mjs';
import { percentile, printTable } from './statistics.mjs';
import { requireWrk, wrk } from './wrk.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, '..', '..');
const seconds = Number(process.env.BENCH_SECONDS || 3);
const rounds = Number(process.env.BENCH_ROUNDS || 3);
const deviceCounts = (process.env.BENCH_DEVICE_COUNTS || '100,1000').split(',').map(Number);
const raceUsers = Number(process.env.BENCH_RACE_USERS || 200);
const raceDevices = Number(process.env.BENCH_RACE_DEVICES || 50);
/** BENCH_ROWS=reads,race picks rows (default reads). */
const wanted = new Set((process.env.BENCH_ROWS || 'reads').split(','));
/** BENCH_READ_ROWS=device,device-1,service,service-401,application,available picks rows of `reads` (default all). */
const readRows = process.env.BENCH_READ_ROWS ? new Set(process.env.BENCH_READ_ROWS.split(',')) : undefined;
const readRow = (name) => readRows === undefined || readRows.has(name);

requireWrk();

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

const fmt = (f) => `${f.rate.toFixed(0)} req/s, p50 ${f.p50.toFixed(2)} ms, p99 ${f.p99.toFixed(1)} ms${f.errors ? `, ${f.errors} socket errors` : ''}`;
const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
/** The round whose rate is the median of the rounds. */
const medianRound = (results) => results.find((r) => r.rate === median(results.map((x) => x.rate)));

const hub = await startBenchHub({ gatewayName: 'synthetic-gateway' });
const rows = [];
const auth = { authorization: hub.authorization };
/** Baseline servers by file, kind and status: started once each. */
const baselines = new Map();
async function baseline(file, kind, status = 200, headers = {}) {
  const key = JSON.stringify([file, kind, status, headers]);
  if (!baselines.has(key)) {
    const server = spawnDaemon(`${kind}-bytes-server`,
      [path.join(here, 'static-bytes-server.mjs'), file, kind, String(status), JSON.stringify(headers)], process.env);
    hub.onStop(() => server.stop());
    const [, port] = await server.waitForLine(/static bytes server on port (\d+)/, 60_000);
    baselines.set(key, `http://127.0.0.1:${port}/`);
  }
  return baselines.get(key);
}

/** What the hub answers `pathAndQuery` with (as `headers`), saved to a file: the baselines send these bytes. */
async function save(pathAndQuery, name, headers = auth) {
  const res = await fetch(`${hub.url}/apiv1${pathAndQuery}`, { headers });
  const bytes = Buffer.from(await res.arrayBuffer());
  const file = path.join(hub.dir, name);
  writeFileSync(file, bytes);
  return { file, bytes: bytes.length, status: res.status, wwwAuthenticate: res.headers.get('www-authenticate') };
}

const kb = (bytes) => (bytes >= 10_240 ? `${(bytes / 1024).toFixed(0)} KB` : `${(bytes / 1024).toFixed(1)} KB`);

/**
 * One row: `rounds` alternating rounds of the hub and each baseline sending the same bytes; the median round of
 * each; ratios to each baseline. With `p50Goal`, the row compares one client's p50 to Express's instead.
 */
async function row(label, pathAndQuery, saved, { connections, goal, headers = auth, oneClient = false }) {
  const extra = saved.wwwAuthenticate ? { 'WWW-Authenticate': saved.wwwAuthenticate } : {};
  const sides = {
    DeviceLab: `${hub.url}/apiv1${pathAndQuery}`,
    Express: await baseline(saved.file, 'express', saved.status, extra),
    bare: await baseline(saved.file, 'bare', saved.status, extra),
  };
  const results = { DeviceLab: [], Express: [], bare: [] };
  for (let round = 0; round < rounds; round++) {
    for (const [side, url] of Object.entries(sides)) {
      progress(`${label}: ${side}, round ${round + 1}/${rounds}`);
      results[side].push(await wrk(url, { connections, seconds, headers: side === 'DeviceLab' ? headers : {} }));
    }
  }
  const [ours, express, bare] = ['DeviceLab', 'Express', 'bare'].map((side) => medianRound(results[side]));
  const unexpected = results.DeviceLab.reduce((sum, r) => sum + (saved.status === 200 ? r.non2xx : 0) + r.errors, 0);
  if (unexpected > 0) progress(`${label}: ${unexpected} unexpected answers or socket errors`);
  const ratio = oneClient
    ? `p50 ${ours.p50 >= express.p50 ? '+' : '-'}${Math.abs(ours.p50 - express.p50).toFixed(2)} ms vs Express`
    : `${(ours.rate / express.rate).toFixed(2)}x Express, ${(ours.rate / bare.rate).toFixed(2)}x bare`;
  rows.push([label, fmt(ours), fmt(express), fmt(bare), ratio, goal]);
}

async function waitOnline(count) {
  const started = Date.now();
  for (;;) {
    const { body } = await hub.get('/Device?availability=Online');
    const online = Array.isArray(body) ? body.length : 0;
    if (online >= count) break;
    if (Date.now() - started > 300_000) throw new Error(`only ${online}/${count} devices Online after 5 min`);
    progress(`${online}/${count} devices Online`);
    await sleep(1000);
  }
  progress(`${count} devices Online through the link after ${((Date.now() - started) / 1000).toFixed(1)} s`);
}

async function uploadLibrary() {
  for (const name of ['ContactManager.apk', 'ApiDemos-debug.apk', 'app-info-android.apk']) {
    const form = new FormData();
    form.append('upload', new Blob([readFileSync(path.join(root, '..', 'shared', 'fixtures', name))]), name);
    const { body } = await hub.get('/Application?add&wait=true', { method: 'POST', body: form });
    if (!body?.isSuccess) progress(`upload of ${name} failed: ${JSON.stringify(body).slice(0, 200)}`);
  }
}

let gateway;
try {
  if (wanted.has('reads')) {
    await uploadLibrary().catch((err) => progress(`no library to list (${err.message}): /Application lists []`));
    for (const count of deviceCounts) {
      await gateway?.stop();
      progress(`starting the synthetic gateway with ${count} devices`);
      gateway = spawnDaemon('synthetic-gateway', [path.join(here, 'synthetic-gateway.mjs')], {
        ...process.env, BENCH_DEVICES: String(count), DEVICELAB_GATEWAY_NAME: hub.gatewayName,
        DEVICELAB_GATEWAY_TOKEN: hub.gatewayToken, DEVICELAB_HUB: `127.0.0.1:${hub.linkPort}`,
      });
      hub.onStop(() => gateway.stop());
      await gateway.waitForLine(/synthetic gateway: connected/, 60_000);
      await waitOnline(count);
      const list = await save('/Device', `device-list-${count}.json`);
      if (readRow('device')) {
        await row(`GET /Device (${count} devices, ${kb(list.bytes)}), 50 clients`, '/Device', list,
          { connections: 50, goal: count === 100 ? '>= 0.5x Express, >= 0.3x bare' : '>= 0.5x Express' });
      }
      if (readRow('device-1')) {
        await row(`GET /Device (${count} devices), 1 client`, '/Device', list, { connections: 1, oneClient: true, goal: 'p50 within 1 ms of Express' });
      }
      if (count !== deviceCounts[0]) continue;
      if (readRow('service')) {
        const service = await save('/Service', 'service.json');
        await row(`GET /Service (${kb(service.bytes)}), 20 clients`, '/Service', service, { connections: 20, goal: '>= 0.5x Express' });
      }
      if (readRow('service-401')) {
        const refused = await save('/Service', 'service-401.json', {});
        await row('GET /Service without credentials (401), 20 clients', '/Service', refused,
          { connections: 20, headers: {}, goal: '>= 0.5x Express, not slower than the 200' });
      }
      if (readRow('application')) {
        const library = await save('/Application', 'application.json');
        await row(`GET /Application (${kb(library.bytes)}), 50 clients`, '/Application', library, { connections: 50, goal: '>= 0.5x Express' });
      }
      if (readRow('available')) {
        const available = await save('/Device/Available', 'available.json');
        await row(`GET /Device/Available (${kb(available.bytes)}), 50 clients`, '/Device/Available', available,
          { connections: 50, goal: '>= 0.5x Express' });
      }
    }
  }
  if (wanted.has('race')) await retainRace();
  if (process.env.BENCH_METRICS === '1') await metricsRows();
} finally {
  await hub.stop();
}
process.stdout.write(`\nLab-scale benchmark (wrk -t2, ${rounds} alternating rounds of ${seconds} s, median round): ${os.cpus().length} cores, `
  + `load ${os.loadavg().map((l) => l.toFixed(2)).join(' ')}\n`);
printTable(['request', 'DeviceLab', 'plain Express 5, same bytes', 'bare Node http, same bytes', 'ratio', 'goal'], rows);

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
  if (devices.length < raceDevices) throw new Error(`the race needs ${raceDevices} devices (BENCH_ROWS=reads,race)`);
  const usersFile = path.join(hub.dir, 'race-users.json');
  const devicesFile = path.join(hub.dir, 'race-devices.json');
  writeFileSync(usersFile, JSON.stringify(users));
  writeFileSync(devicesFile, JSON.stringify(devices.slice(0, raceDevices).map((d) => d.id)));
  progress(`retain race: ${raceUsers} users, ${raceDevices} devices`);
  const race = await runJson([path.join(here, 'retain-race.mjs'), `${hub.url}/apiv1`, usersFile, devicesFile]);
  progress('retain race baseline: GET /Service');
  const service = await wrk(`${hub.url}/apiv1/Service`, { connections: raceUsers, seconds, headers: auth });
  const requests = race.retainMs.length + race.releaseMs.length;
  const raceRate = requests / race.elapsed;
  const sortedRetain = race.retainMs.sort((a, b) => a - b);
  rows.push([`retain+release, ${raceUsers} users racing for ${raceDevices} devices`,
    `${(race.pairs / race.elapsed).toFixed(0)} pairs/s (${raceRate.toFixed(0)} req/s), retain p50 ${percentile(sortedRetain, 50).toFixed(1)} ms, `
      + `p99 ${percentile(sortedRetain, 99).toFixed(1)} ms (won p50 ${p50(race.wonMs)} ms, lost p50 ${p50(race.lostMs)} ms, release p50 ${p50(race.releaseMs)} ms); `
      + `${race.lost} lost, ${race.failures} failed ${JSON.stringify(race.failedStatuses)}, ${race.doubleRetains} double retains`,
    `GET /Service, ${raceUsers} clients: ${fmt(service)}`, '-', `${(raceRate / service.rate).toFixed(3)}x`, '>= 0.5x, p50 < 100 ms']);
  if (race.doubleRetains > 0) process.exitCode = 1;
}

async function metricsRows() {
  for (const script of ['metrics-ingest.mjs', 'metrics-query.mjs']) {
      progress(`running ${script}`);
      const child = spawn(process.execPath, [path.join(here, script)], { stdio: ['ignore', 'pipe', 'inherit'] });
      let out = '';
      child.stdout.on('data', (d) => { out += d; });
      await new Promise((resolve) => child.once('exit', resolve));
      rows.push([script, out.trim().split('\n').slice(-3).join(' | '), '', '', '', script.includes('ingest') ? '>= 0.8x raw' : '<= 1.2x hand SQL']);
    }
  }
