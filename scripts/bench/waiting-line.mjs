#!/usr/bin/env node
// Benchmark: the waiting line. BENCH_CLIENTS (default 200) clients, each its own user and keep-alive connection,
// half through hub replica A and half through replica B (BENCH_REPLICAS=1: all through A), loop for BENCH_SECONDS
// (default 30): wait in line for any Android device (`POST /Device?action=retain&filter=os=android&wait=600`),
// hold it BENCH_HOLD_MS (default 20), release it. BENCH_DEVICES (default 20) simulated devices.
// Measured:
//   hand-over delay: from a release being sent to the next waiter's answer naming that device (p50, p95, max),
//   against the release request's own round trip in the same run (the floor: the machine's and the HTTP path's
//   speed), and in the records, from a release to the device's next retain (the line's own part, before the answer
//   travels; 0 when the release hands the device over in its own transaction);
//   fairness: each request's wait against the fair share (clients / devices x the mean time a device is held
//   from one hand-over to the next), the largest wait, and the fewest turns any client got (no starvation);
//   double leases: a device handed to a client while another still held it (client side), and in the database,
//   two DeviceRetained events of one device without a release between them.
// Needs DATABASE_URL with two replicas (they share one PostgreSQL).
import { createRequire } from 'node:module';
import http from 'node:http';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { performance } from 'node:perf_hooks';
import { progress, spawnDaemon, startBenchLab } from './bench-lab.mjs';
import { waitForAvailability } from './plug-measurement.mjs';
import { ms, printTable, summarize } from './statistics.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const require = createRequire(import.meta.url);
const { defaultAndroidLab } = require('../../labsim/dist');
const pg = createRequire(path.join(root, 'hub/package.json'))('pg');
const clientCount = Number(process.env.BENCH_CLIENTS || 200);
const deviceCount = Number(process.env.BENCH_DEVICES || 20);
const seconds = Number(process.env.BENCH_SECONDS || 30);
const holdMs = Number(process.env.BENCH_HOLD_MS || 20);
const replicas = Number(process.env.BENCH_REPLICAS || 2);

if (replicas > 1 && !process.env.DATABASE_URL) {
  process.stderr.write('waiting-line.mjs: set DATABASE_URL (two replicas share one PostgreSQL), or BENCH_REPLICAS=1\n');
  process.exit(2);
}

function post(base, agent, authorization, query) {
  const url = new URL(base);
  return new Promise((resolve, reject) => {
    const req = http.request({
      host: url.hostname, port: url.port, method: 'POST', path: `${url.pathname}${query}`, agent,
      headers: { authorization, 'content-length': 0 },
    }, (res) => {
      const chunks = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => {
        try { resolve(JSON.parse(Buffer.concat(chunks).toString())); } catch (err) { reject(err); }
      });
    });
    req.on('error', reject);
    req.end();
  });
}

const lab = await startBenchLab();
try {
  for (const spec of defaultAndroidLab(deviceCount)) await lab.world.addAndroidDevice(spec);
  for (const { serial } of lab.world.devices()) await waitForAvailability(lab, serial, 'Online', 100, 120_000);
  const bases = [`${lab.url}/apiv1`];
  if (replicas > 1) {
    progress(`${deviceCount} devices Online through replica A; starting replica B on the same database`);
    const replicaB = spawnDaemon('hub-b', [lab.hub.hubMain, 'serve'],
      { ...lab.hub.env, DEVICELAB_DATA_DIR: path.join(lab.hub.dir, 'hub-b-data') });
    lab.hub.onStop(() => replicaB.stop());
    const [, urlB] = await replicaB.waitForLine(/DeviceLab hub: (\S+)\/apiv1/, 120_000);
    bases.push(`${urlB}/apiv1`);
  }

  progress(`creating ${clientCount} users`);
  const clients = [];
  for (let i = 0; i < clientCount; i++) {
    const login = `line-${i}@bench.example`;
    const added = await lab.get('/User?verb=add', {
      method: 'POST', body: JSON.stringify({ UserName: login, roles: ['Tester'] }), headers: { 'content-type': 'application/json' },
    });
    if (!added.body?.isSuccess) throw new Error(`adding ${login}: ${JSON.stringify(added.body)}`);
  }
  const { body: listedUsers } = await lab.get('/User');
  for (let i = 0; i < clientCount; i++) {
    const login = `line-${i}@bench.example`;
    const id = listedUsers.find((u) => u.email === login).id;
    const { body } = await lab.get(`/User?action=generateToken&id=${id}`, { method: 'POST' });
    const authorization = `Basic ${Buffer.from(`${login}:${body.data.apiToken}`).toString('base64')}`;
    const base = bases[i % bases.length];
    // Authenticated once before the race (a lab's users have worked before; see the login throttle).
    await fetch(`${base}/Service`, { headers: { authorization } });
    clients.push({ login, authorization, base, agent: new http.Agent({ keepAlive: true, maxSockets: 1 }), turns: 0 });
  }

  progress(`${clientCount} clients waiting for ${deviceCount} devices for ${seconds} s (hold ${holdMs} ms)`);
  const holders = new Map(); // serial -> client login
  const releasedAt = new Map(); // serial -> when its last release was sent
  const handOvers = [];
  // The baseline of the same run: a release request's own round trip (sent -> answered), which no hand-over can beat.
  const releaseTrips = [];
  const waits = [];
  const failures = {};
  let clientDoubles = 0;
  const started = performance.now();
  const until = started + seconds * 1000;
  await Promise.all(clients.map(async (client) => {
    while (performance.now() < until) {
      const asked = performance.now();
      const answer = await post(client.base, client.agent, client.authorization,
        `/Device?action=retain&filter=os%3Dandroid&wait=600&lease=${encodeURIComponent(client.login)}`);
      const now = performance.now();
      if (!answer.isSuccess) {
        failures[answer.errorCode ?? answer.errorMessage] = (failures[answer.errorCode ?? answer.errorMessage] ?? 0) + 1;
        continue;
      }
      const serial = answer.data.serialNumber;
      if (holders.has(serial)) clientDoubles += 1;
      holders.set(serial, client.login);
      if (releasedAt.has(serial)) handOvers.push(now - releasedAt.get(serial));
      // Requests that joined while the line was filling up are left out of the fairness figures.
      if (asked > started + 2000) waits.push(now - asked);
      client.turns += 1;
      await new Promise((resolve) => setTimeout(resolve, holdMs));
      holders.delete(serial);
      const releaseSent = performance.now();
      releasedAt.set(serial, releaseSent);
      await post(client.base, client.agent, client.authorization, `/Device?action=release&id=${serial}`);
      releaseTrips.push(performance.now() - releaseSent);
    }
  }));
  const elapsed = performance.now() - started;

  progress('checking the records for double leases');
  const db = new pg.Client({ connectionString: lab.hub.env.DATABASE_URL });
  await db.connect();
  const { rows } = await db.query(`SELECT count(*)::int AS doubles FROM (
      SELECT bool_value, lag(bool_value) OVER (PARTITION BY device_id ORDER BY event_date, seq) AS previous
      FROM events WHERE event_type = 'DeviceRetained') e
    WHERE e.bool_value AND e.previous`);
  // In the records: from a release to the device's next retain (the line's hand-over, before the answer travels).
  const { rows: recorded } = await db.query(`SELECT extract(epoch FROM (e.event_date - e.previous_date)) * 1000 AS ms FROM (
      SELECT bool_value, lag(bool_value) OVER w AS previous, event_date, lag(event_date) OVER w AS previous_date
      FROM events WHERE event_type = 'DeviceRetained' AND event_date > now() - interval '10 minutes'
      WINDOW w AS (PARTITION BY device_id ORDER BY event_date, seq)) e
    WHERE e.bool_value AND e.previous = false`);
  const { rows: [{ count: retains }] } = await db.query(
    `SELECT count(*)::int FROM events WHERE event_type = 'DeviceRetained' AND bool_value`);
  await db.end();

  const turns = clients.map((c) => c.turns);
  const totalTurns = turns.reduce((a, b) => a + b, 0);
  // A device passes from hand-over to hand-over every elapsed * devices / turns ms; a fair wait is the line's
  // length in turns of the whole lab: clients / devices of those periods.
  const cycleMs = (elapsed * deviceCount) / Math.max(1, totalTurns);
  const fairShareMs = (clientCount / deviceCount) * cycleMs;
  const handOver = summarize(handOvers);
  const wait = summarize(waits);
  const recordedHandOver = summarize(recorded.map((r) => Number(r.ms)));
  const releaseTrip = summarize(releaseTrips);
  printTable(['measure', 'value'], [
    ['replicas', String(bases.length)],
    ['hand-overs', String(handOvers.length)],
    ['hand-over delay p50 / p95 / max', `${ms(handOver.median)} / ${ms(handOver.p95)} / ${ms(handOver.max)}`],
    ['baseline: release round trip (sent -> answered) p50 / p95 / max',
      `${ms(releaseTrip.median)} / ${ms(releaseTrip.p95)} / ${ms(releaseTrip.max)}`],
    ['hand-over delay / release round trip, p50 / p95',
      `${(handOver.median / releaseTrip.median).toFixed(2)} / ${(handOver.p95 / releaseTrip.p95).toFixed(2)}`],
    ['hand-over in the records (release -> next retain) p50 / p95 / max',
      `${ms(recordedHandOver.median)} / ${ms(recordedHandOver.p95)} / ${ms(recordedHandOver.max)}`],
    ['wait p50 / p95 / max', `${ms(wait.median)} / ${ms(wait.p95)} / ${ms(wait.max)}`],
    ['fair share (clients/devices x device cycle)', ms(fairShareMs)],
    ['max wait / fair share', (wait.max / fairShareMs).toFixed(2)],
    ['turns per client min / mean / max', `${Math.min(...turns)} / ${(totalTurns / clientCount).toFixed(1)} / ${Math.max(...turns)}`],
    ['double leases (client side)', String(clientDoubles)],
    ['double leases (database: two retains without a release)', String(rows[0].doubles)],
    ['retains recorded', String(retains)],
    ['failed requests', JSON.stringify(failures)],
  ]);
  if (clientDoubles > 0 || rows[0].doubles > 0) process.exitCode = 1;
} finally {
  await lab.stop();
}
