#!/usr/bin/env node
// Benchmark: the hub's WebDriver endpoint (/Appium) against the same commands sent straight to the gateway's Appium
// server of the device, in one run, on a lab deployed as in production (hub and gateway processes, the real Appium
// server and UiAutomator2 driver, simulated Android devices behind a real adb server).
//   session creation: POST /session + DELETE through the hub vs direct, BENCH_SESSIONS (default 3) each, alternated
//                     (after one warm-up session per device, which installs the UiAutomator2 server on it).
//   command latency:  BENCH_COMMANDS (default 500) `GET /session/:id/window/rect` each way on ONE session created
//                     through the hub (the id the hub answers is Appium's own, so the same session takes the same
//                     command direct), alternated command by command (which goes first alternates too): both ways
//                     meet the same load of the machine. p50, p95; overhead = hub p50 - direct p50, and the median
//                     of the paired differences. Commands carry no credentials, as webdriverio sends them.
//                     A third way, alternated with them: two byte pumps (byte-pump.mjs, one process each) chained in
//                     front of the same Appium server, where the hub and the gateway stand. It parses nothing, so its
//                     cost over direct is the floor that two more processes on the path set on this machine
//                     (BENCH_FLOOR_PUMP=socat: Debian's socat instead, the floor of a relay written in C).
//   CPU per command:  BENCH_CPU_COMMANDS (default 300) commands direct, then as many through the hub; the hub's and
//                     the gateway's CPU time (/proc) of the second block less the first's (their background work),
//                     per command: what a relayed command costs the two processes, whatever the machine's load.
//   throughput:       BENCH_DEVICES (default 8) parallel sessions on as many devices (created through the hub), each
//                     sending commands back to back, 4 rounds of BENCH_SECONDS (default 3) alternating direct and
//                     through the hub: commands/s in all each way.
//   memory:           RSS of each device's Appium server process on the gateway (its process group), mean and max.
// Goal: overhead <= 2 ms per command at p50, hub/direct <= 1.2x. The load average is printed with the figures.
import http from 'node:http';
import { execFileSync, spawn } from 'node:child_process';
import net from 'node:net';
import os from 'node:os';
import { createRequire } from 'node:module';
import { performance } from 'node:perf_hooks';
import { cpuMs, freePort, progress, sleep, spawnDaemon, startBenchLab } from './bench-lab.mjs';
import { waitForAvailability } from './plug-measurement.mjs';
import { ms, printTable, summarize } from './statistics.mjs';

const { defaultAndroidLab } = createRequire(import.meta.url)('../../labsim/dist');
const deviceCount = Number(process.env.BENCH_DEVICES || 8);
const commands = Number(process.env.BENCH_COMMANDS || 500);
const cpuCommands = Number(process.env.BENCH_CPU_COMMANDS || 300);
const sessions = Number(process.env.BENCH_SESSIONS || 3);
const seconds = Number(process.env.BENCH_SECONDS || 3);

// Idle connections are dropped after 2 s, before the servers' keep-alive timeout (Node's 5 s) closes one just as it
// is reused (between the throughput rounds, a way's connections wait a round).
const agent = new http.Agent({ keepAlive: true, maxSockets: 64, timeout: 2000 });

/** One WebDriver request; resolves with status and parsed body. */
function request(base, method, path, body, headers = {}) {
  return new Promise((resolve, reject) => {
    const url = new URL(path, base);
    const payload = body === undefined ? undefined : Buffer.from(JSON.stringify(body));
    const req = http.request(url, { method, agent, headers: { ...headers, ...(payload ? { 'content-type': 'application/json', 'content-length': payload.length } : {}) } }, (res) => {
      const chunks = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString();
        let parsed;
        try { parsed = JSON.parse(text); } catch { parsed = text; }
        resolve({ status: res.statusCode, body: parsed });
      });
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(payload);
  });
}

async function createSession(base, capabilities, headers) {
  const answer = await request(base, 'POST', 'session', { capabilities: { alwaysMatch: capabilities, firstMatch: [{}] } }, headers);
  if (answer.status !== 200) throw new Error(`POST ${base}session: ${answer.status} ${JSON.stringify(answer.body).slice(0, 500)}`);
  return { id: answer.body.value.sessionId, capabilities: answer.body.value.capabilities };
}
const deleteSession = async (base, id, headers) => {
  const answer = await request(base, 'DELETE', `session/${id}`, undefined, headers);
  if (answer.status !== 200) throw new Error(`DELETE ${base}session/${id}: ${answer.status}`);
};

/** One command; its duration in ms. */
async function timedCommand(base, id) {
  const started = performance.now();
  const answer = await request(base, 'GET', `session/${id}/window/rect`);
  const took = performance.now() - started;
  if (answer.status !== 200) throw new Error(`command failed: ${answer.status} ${JSON.stringify(answer.body).slice(0, 300)}`);
  return took;
}

/**
 * Two byte pumps chained in front of 127.0.0.1:`port`, each its own process (also stopped with the lab): Node's
 * (byte-pump.mjs, what a relay written as the hub and the gateway are costs at the least), or with
 * BENCH_FLOOR_PUMP=socat Debian's socat (a relay in C).
 */
async function pumpsTo(port, lab) {
  const pumps = [];
  let next = port;
  for (const side of ['gateway-side', 'hub-side']) {
    const pump = process.env.BENCH_FLOOR_PUMP === 'socat' ? await socatPump(next, lab) : await nodePump(`${side} byte pump`, next, lab);
    pumps.push(pump);
    next = pump.port;
  }
  return { base: `http://127.0.0.1:${next}/`, stop: () => Promise.all(pumps.map((pump) => pump.stop())) };
}

async function nodePump(name, target, lab) {
  const daemon = spawnDaemon(name, [new URL('./byte-pump.mjs', import.meta.url).pathname, String(target)], process.env);
  const stop = () => daemon.stop();
  lab.hub.onStop(stop);
  const [, port] = await daemon.waitForLine(/byte pump on port (\d+)/, 30_000);
  return { port: Number(port), stop };
}

async function socatPump(target, lab) {
  const port = await freePort();
  const socat = spawn('socat', [`TCP-LISTEN:${port},bind=127.0.0.1,reuseaddr,fork,nodelay`, `TCP:127.0.0.1:${target},nodelay`],
    { stdio: 'ignore', detached: true });
  const stop = async () => { try { process.kill(-socat.pid); } catch { /* gone */ } }; // with its forked children
  lab.hub.onStop(stop);
  for (let tries = 0; !(await accepts(port)); tries++) {
    if (tries === 200) throw new Error(`socat never listened on port ${port}`);
    await sleep(50);
  }
  return { port, stop };
}

const accepts = (port) => new Promise((resolve) => {
  const probe = net.connect(port, '127.0.0.1', () => { probe.destroy(); resolve(true); }).on('error', () => resolve(false));
});

const cpuOf = (pids) => Object.fromEntries(Object.entries(pids).map(([name, pid]) => [name, cpuMs(pid)]));

/** Commands back to back on every session at once for `seconds`; how many in all. */
async function commandsFor(targets) {
  const until = performance.now() + seconds * 1000;
  const counts = await Promise.all(targets.map(async ({ base, id }) => {
    let n = 0;
    while (performance.now() < until) {
      const answer = await request(base, 'GET', `session/${id}/window/rect`);
      if (answer.status !== 200) throw new Error(`command failed: ${answer.status}`);
      n++;
    }
    return n;
  }));
  return counts.reduce((a, b) => a + b, 0);
}

/**
 * The Appium server processes this bench's gateway spawned (its children: other labs on the machine run their own),
 * with their port and RSS (MiB).
 */
function appiumServers(gatewayPid) {
  const out = execFileSync('ps', ['-eo', 'pid=,ppid=,rss=,args='], { encoding: 'utf8' });
  return out.split('\n').map((line) => line.trim().split(/\s+/)).filter((fields) => Number(fields[1]) === gatewayPid
    && fields.includes('--devicelab-appium') && fields.includes('--port'))
    .map((fields) => ({ port: Number(fields[fields.indexOf('--port') + 1]), rss: Number(fields[2]) / 1024 }));
}

const startLoad = os.loadavg().map((l) => l.toFixed(1)).join(', ');
const lab = await startBenchLab();
try {
  for (const spec of defaultAndroidLab(deviceCount)) await lab.world.addAndroidDevice(spec);
  for (const { serial } of lab.world.devices()) await waitForAvailability(lab, serial, 'Online', 100, 120_000);
  const hub = `${lab.url}/Appium/`;
  const auth = { authorization: lab.authorization };
  const caps = (serial) => ({ platformName: 'Android', 'appium:udid': serial });
  // A device's Appium server starts at its first session, which also installs the UiAutomator2 server on the device:
  // one warm-up session per device through the hub, in parallel.
  progress(`${deviceCount} devices Online; a warm-up session on each`);
  await Promise.all(lab.world.devices().map(async ({ serial }) => {
    const session = await createSession(hub, caps(serial), auth);
    await deleteSession(hub, session.id, auth);
  }));
  // Each device's Appium server (a child of this lab's gateway): a direct session on it tells whose it is.
  progress('finding the Appium servers');
  const directOf = new Map();
  const deadline = Date.now() + 180_000;
  while (directOf.size < deviceCount) {
    if (Date.now() > deadline) throw new Error(`found ${directOf.size} of ${deviceCount} Appium servers`);
    for (const { port } of appiumServers(lab.gatewayPid)) {
      const base = `http://127.0.0.1:${port}/`;
      if ([...directOf.values()].includes(base)) continue;
      const status = await request(base, 'GET', 'status').catch(() => undefined);
      if (!status || status.status !== 200) continue;
      const session = await createSession(base, { platformName: 'Android', 'appium:automationName': 'UiAutomator2' });
      directOf.set(session.capabilities.udid, base);
      await deleteSession(base, session.id);
      progress(`device ${session.capabilities.udid}: Appium on port ${port}`);
    }
    if (directOf.size < deviceCount) await new Promise((resolve) => setTimeout(resolve, 1000));
  }
  const serials = [...directOf.keys()];
  const [first] = serials;

  progress('session creation');
  // Direct sessions ask for what the gateway adds to a session's capabilities (the device, its adb server and its
  // block of ports, read back from a session made through the hub), so both ways create the same session.
  const throughHub = await createSession(hub, caps(first), auth);
  await deleteSession(hub, throughHub.id, auth);
  const directCaps = { platformName: 'Android', 'appium:automationName': 'UiAutomator2' };
  for (const name of ['udid', 'adbPort', 'suppressKillServer', 'systemPort', 'mjpegServerPort', 'chromedriverPort']) {
    if (throughHub.capabilities[name] !== undefined) directCaps[`appium:${name}`] = throughHub.capabilities[name];
  }
  const created = { hub: [], direct: [] };
  for (let i = 0; i < sessions; i++) {
    for (const via of ['direct', 'hub']) {
      const base = via === 'hub' ? hub : directOf.get(first);
      const headers = via === 'hub' ? auth : {};
      const started = performance.now();
      const session = await createSession(base, via === 'hub' ? caps(first) : directCaps, headers);
      created[via].push(performance.now() - started);
      await deleteSession(base, session.id, headers);
    }
  }

  progress('command latency, alternated');
  const latency = { hub: [], direct: [], pumps: [] };
  const differences = [];
  const session = await createSession(hub, caps(first), auth);
  const pumps = await pumpsTo(Number(new URL(directOf.get(first)).port), lab);
  const ways = { hub: hub, direct: directOf.get(first), pumps: pumps.base };
  for (let i = 0; i < 20; i++) for (const via of Object.keys(ways)) await timedCommand(ways[via], session.id); // warm every way
  const orders = [['hub', 'direct', 'pumps'], ['direct', 'pumps', 'hub'], ['pumps', 'hub', 'direct']];
  for (let i = 0; i < commands; i++) {
    const took = {};
    for (const via of orders[i % orders.length]) took[via] = await timedCommand(ways[via], session.id);
    for (const via of Object.keys(ways)) latency[via].push(took[via]);
    differences.push(took.hub - took.direct);
  }
  await pumps.stop();

  progress(`command p50: hub ${ms(summarize(latency.hub).median)}, direct ${ms(summarize(latency.direct).median)}, `
    + `paired difference ${ms(summarize(differences).median)}`);
  progress('CPU per command');
  const pids = { hub: lab.hub.hubPid, gateway: lab.gatewayPid };
  const before = cpuOf(pids);
  for (let i = 0; i < cpuCommands; i++) await timedCommand(ways.direct, session.id);
  const between = cpuOf(pids);
  for (let i = 0; i < cpuCommands; i++) await timedCommand(ways.hub, session.id);
  const after = cpuOf(pids);
  const cpuPerCommand = (name) => ((after[name] - between[name]) - (between[name] - before[name])) / cpuCommands;
  progress(`CPU per relayed command: hub ${cpuPerCommand('hub').toFixed(2)} ms, gateway ${cpuPerCommand('gateway').toFixed(2)} ms`);
  await deleteSession(hub, session.id, auth);

  progress(`throughput: ${serials.length} parallel sessions, alternating rounds`);
  const targets = await Promise.all(serials.map(async (serial) => ({ serial, id: (await createSession(hub, caps(serial), auth)).id })));
  const done = { hub: 0, direct: 0 };
  for (let round = 0; round < 4; round++) {
    const via = round % 2 === 0 ? 'direct' : 'hub';
    done[via] += await commandsFor(targets.map(({ serial, id }) => ({ base: via === 'hub' ? hub : directOf.get(serial), id })));
  }
  const rates = { hub: done.hub / (2 * seconds), direct: done.direct / (2 * seconds) };
  const rss = appiumServers(lab.gatewayPid).map((server) => server.rss);
  await Promise.all(targets.map((t) => deleteSession(hub, t.id, auth)));

  const hubLatency = summarize(latency.hub);
  const directLatency = summarize(latency.direct);
  const pumpsLatency = summarize(latency.pumps);
  const hubCreate = summarize(created.hub);
  const directCreate = summarize(created.direct);
  printTable(['measure', 'through the hub', 'direct to Appium', 'hub - direct', 'hub cost (x)'], [
    ['command p50', ms(hubLatency.median), ms(directLatency.median), ms(hubLatency.median - directLatency.median), (hubLatency.median / directLatency.median).toFixed(2)],
    ['command p95', ms(hubLatency.p95), ms(directLatency.p95), ms(hubLatency.p95 - directLatency.p95), (hubLatency.p95 / directLatency.p95).toFixed(2)],
    ['command, paired difference p50', '', '', ms(summarize(differences).median), ''],
    ['floor: two byte pumps for hub and gateway, p50', ms(pumpsLatency.median), ms(directLatency.median),
      ms(pumpsLatency.median - directLatency.median), (pumpsLatency.median / directLatency.median).toFixed(2)],
    [`throughput, ${serials.length} sessions`, `${rates.hub.toFixed(0)}/s`, `${rates.direct.toFixed(0)}/s`, '', (rates.direct / rates.hub).toFixed(2)],
    ['session create+delete p50', ms(hubCreate.median), ms(directCreate.median), ms(hubCreate.median - directCreate.median), (hubCreate.median / directCreate.median).toFixed(2)],
  ]);
  process.stdout.write(`CPU per relayed command: hub ${cpuPerCommand('hub').toFixed(2)} ms, gateway ${cpuPerCommand('gateway').toFixed(2)} ms `
    + `(${cpuCommands} commands through the hub less as many direct)\n`);
  const meanRss = rss.reduce((a, b) => a + b, 0) / (rss.length || 1);
  process.stdout.write(`Appium server RSS on the gateway, ${rss.length} servers with a session each: mean ${meanRss.toFixed(0)} MiB, max ${Math.max(...rss).toFixed(0)} MiB\n`);
  process.stdout.write(`samples: ${latency.hub.length} commands each way; ${sessions} session creations each way\n`);
  process.stdout.write(`load average (1, 5, 15 min): at the start ${startLoad}, at the end ${os.loadavg().map((l) => l.toFixed(1)).join(', ')}\n`);
} finally {
  await lab.stop();
}
