#!/usr/bin/env node
// Benchmark of the live screen, in one run against the production processes (hub, gateway; labsim devices here):
// 1. frames per second and the delay from a touch to the changed frame, read at the hub's `/Device/Screen`
//    WebSocket, against minicap read straight through the gateway host's adb server (the gateway's own Android
//    screen code, in this process). Goals: >= 0.9x the frame rate, <= +30 ms delay.
// 2. hub and gateway CPU per viewer with 1, 10 and 50 viewers of one device (one capture whatever the number).
// 3. `GET /Device` throughput without and with the grid's thumbnails of BENCH_THUMB_DEVICES (default 200) devices
//    being fetched (`/Device/Screenshot`, each device every 30 s as the grid asks).
// Needs `npx tsc -b`. BENCH_SECONDS: length of each measuring window (default 10).
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { cpuMs, progress, sleep, startBenchLab } from './bench-lab.mjs';
import { waitForAvailability } from './plug-measurement.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const require = createRequire(import.meta.url);
const { specFromPreset } = require(path.join(root, 'labsim/dist'));
const { AndroidScreen } = require(path.join(root, 'gateway/dist/drivers/android/screen/android-screen.js'));
const Adb = require(path.join(root, 'gateway/node_modules/@devicefarmer/adbkit')).default;
const WebSocket = require(path.join(root, 'hub/node_modules/ws'));
const autocannon = require('autocannon');
const seconds = Number(process.env.BENCH_SECONDS || 10);
const thumbDevices = Number(process.env.BENCH_THUMB_DEVICES || 200);
const silent = { trace() {}, debug() {}, info() {}, warn() {}, error() {}, fatal() {}, child() { return silent; } };

const median = (values) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted.length ? sorted[Math.floor(sorted.length / 2)] : NaN;
};

/** A finger dragging over the device's screen at ~30 Hz (each move changes the picture: its touch mark moves). */
function dragging(screen) {
  let step = 0;
  let on = true;
  screen.touch(5, 'down', 200, 400);
  const timer = setInterval(() => {
    step++;
    screen.touch(5, 'move', 100 + (step * 37) % 500, 300 + (step * 53) % 900);
  }, 33);
  return () => { if (on) { on = false; clearInterval(timer); screen.touch(5, 'up', 200, 400); } };
}

/** A viewer of the screen: counts frames, resolves `nextFrame()` at the next one. */
function frameCounter() {
  const counter = { frames: 0, waiters: [] };
  counter.frame = () => {
    counter.frames++;
    for (const w of counter.waiters.splice(0)) w();
  };
  counter.nextFrame = () => new Promise((resolve) => counter.waiters.push(resolve));
  return counter;
}

/** Median touch -> next frame delay over `rounds` taps at idle moments (each tap draws its touch mark). */
async function touchDelay(counter, touch, rounds = 12) {
  const delays = [];
  for (let i = 0; i < rounds; i++) {
    await sleep(700); // idle: no frame in flight
    const next = counter.nextFrame();
    const at = process.hrtime.bigint();
    touch(0.3 + (i % 5) * 0.1, 0.9);
    await Promise.race([next, sleep(5_000)]);
    delays.push(Number(process.hrtime.bigint() - at) / 1e6);
  }
  return median(delays);
}

async function fps(counter, screen) {
  const stop = dragging(screen);
  await sleep(1_000);
  const before = counter.frames;
  await sleep(seconds * 1000);
  const rate = (counter.frames - before) / seconds;
  stop();
  return rate;
}

function openViewer(url, authorization, query, counter) {
  const ws = new WebSocket(`${url.replace(/^http/, 'ws')}/apiv1/Device/Screen?${query}`, { headers: { authorization }, perMessageDeflate: false });
  ws.on('message', (data) => { if (data[0] === 2) counter.frame(); });
  ws.on('error', () => undefined);
  return new Promise((resolve, reject) => {
    ws.once('open', () => resolve(ws));
    ws.once('unexpected-response', (_req, res) => reject(new Error(`screen refused: HTTP ${res.statusCode}`)));
  });
}
const send = (ws, message) => ws.send(Buffer.concat([Buffer.from([1]), Buffer.from(JSON.stringify(message))]));

const lab = await startBenchLab();
const results = {};
try {
  const spec = specFromPreset('moto-g9-play', 0);
  await lab.world.addAndroidDevice(spec);
  await waitForAvailability(lab, spec.serial, 'Online', 50, 60_000);
  const device = lab.world.device(spec.serial);
  const [row] = (await lab.get('/Device')).body.filter((d) => d.serialNumber === spec.serial);
  const retained = (await lab.get(`/Device?action=retain&id=${row.id}`, { method: 'POST' })).body;
  if (!retained.isSuccess) throw new Error(`retain: ${retained.errorMessage}`);

  const client = Adb.createClient({ port: lab.world.adbServerPort });
  const measureDirect = async () => {
    const direct = new AndroidScreen(client.getDevice(device.adbSerial), { logger: silent });
    const counter = frameCounter();
    await direct.start({ started() {}, frame: () => counter.frame(), ended() {} });
    await sleep(1_000);
    const delayMs = await touchDelay(counter, (x, y) => {
      void direct.input({ t: 'touch', a: 'd', x, y, c: 0 });
      void direct.input({ t: 'touch', a: 'u', x, y, c: 0 });
    });
    const rate = await fps(counter, device.screen);
    await direct.stop();
    return { fps: rate, delayMs };
  };
  const measureHub = async () => {
    const counter = frameCounter();
    const ws = await openViewer(lab.url, lab.authorization, `id=${row.id}`, counter);
    await counter.nextFrame();
    await sleep(1_000);
    const delayMs = await touchDelay(counter, (x, y) => {
      send(ws, { t: 'touch', a: 'd', x, y });
      send(ws, { t: 'touch', a: 'u', x, y });
    });
    const rate = await fps(counter, device.screen);
    ws.close();
    return { fps: rate, delayMs };
  };
  // Interleaved rounds (the machine's load drifts); the gateway's capture stops 2 s after its viewer left, before
  // minicap is read directly again (it takes one client at a time).
  const rounds = { direct: [], hub: [] };
  for (let round = 0; round < 2; round++) {
    progress(`round ${round + 1}: minicap and minitouch straight through the gateway host's adb server`);
    rounds.direct.push(await measureDirect());
    await sleep(1_000);
    progress(`round ${round + 1}: through the hub's /Device/Screen WebSocket`);
    rounds.hub.push(await measureHub());
    await sleep(3_000);
    progress(JSON.stringify(rounds));
  }
  const mean = (list, key) => list.reduce((sum, r) => sum + r[key], 0) / list.length;
  results.directFps = mean(rounds.direct, 'fps');
  results.directDelayMs = mean(rounds.direct, 'delayMs');
  results.hubFps = mean(rounds.hub, 'fps');
  results.hubDelayMs = mean(rounds.hub, 'delayMs');
  results.rounds = rounds;

  const hubCounter = frameCounter();
  const owner = await openViewer(lab.url, lab.authorization, `id=${row.id}`, hubCounter);
  await hubCounter.nextFrame();
  progress('CPU per viewer: 1, 10, 50 viewers of one device');
  results.viewers = [];
  const extra = [];
  for (const n of [1, 10, 50]) {
    const counters = [hubCounter];
    while (extra.length < n - 1) {
      const counter = frameCounter();
      extra.push(await openViewer(lab.url, lab.authorization, `id=${row.id}&viewOnly=true`, counter));
      counters.push(counter);
    }
    await sleep(1_000);
    const stop = dragging(device.screen);
    await sleep(1_000);
    const hubCpu = cpuMs(lab.hub.hubPid);
    const gatewayCpu = cpuMs(lab.gatewayPid);
    const frames = hubCounter.frames;
    await sleep(seconds * 1000);
    const hubUsed = cpuMs(lab.hub.hubPid) - hubCpu;
    const gatewayUsed = cpuMs(lab.gatewayPid) - gatewayCpu;
    stop();
    results.viewers.push({
      viewers: n, fps: (hubCounter.frames - frames) / seconds,
      hubCpuPercent: hubUsed / seconds / 10, gatewayCpuPercent: gatewayUsed / seconds / 10,
      hubCpuPercentPerViewer: hubUsed / seconds / 10 / n, gatewayCpuPercentPerViewer: gatewayUsed / seconds / 10 / n,
    });
  }
  progress(`viewers: ${JSON.stringify(results.viewers)}`);
  for (const ws of [owner, ...extra]) ws.close();
  await lab.get(`/Device?action=release&id=${row.id}`, { method: 'POST' });

  progress(`GET /Device throughput without and with thumbnails of ${thumbDevices} devices`);
  const specs = [];
  for (let i = 1; i < thumbDevices; i++) specs.push(specFromPreset('moto-g9-play', 100 + i));
  for (let i = 0; i < specs.length; i += 20) await Promise.all(specs.slice(i, i + 20).map((s) => lab.world.addAndroidDevice(s)));
  await waitFor(async () => (await lab.get('/Device')).body.filter((d) => d.availability === 'Online').length >= thumbDevices, 300_000);
  const ids = (await lab.get('/Device')).body.map((d) => d.id);
  // The gateway reads every new device's facts and packages after it is Online: let that settle first.
  await sleep(20_000);
  const listRate = async () => {
    const result = await autocannon({ url: `${lab.url}/apiv1/Device`, connections: 10, duration: seconds, headers: { authorization: lab.authorization } });
    return result.requests.average;
  };
  results.deviceListPerSecond = await listRate();
  progress(`GET /Device without thumbnails: ${results.deviceListPerSecond}/s`);
  // The grid: every device's still every 30 s, 8 at a time, as the browser's image loads go.
  let thumbnails = 0;
  let thumbnailFailures = 0;
  let firstFailure;
  let gridOn = true;
  const grid = (async () => {
    while (gridOn) {
      const started = Date.now();
      let next = 0;
      await Promise.all(Array.from({ length: 8 }, async () => {
        while (gridOn && next < ids.length) {
          const id = ids[next++];
          const res = await fetch(`${lab.url}/apiv1/Device/Screenshot?id=${id}`, { headers: { authorization: lab.authorization } }).catch(() => undefined);
          if (res && (res.headers.get('content-type') ?? '').startsWith('image/')) {
            thumbnails++;
            await res.arrayBuffer().catch(() => undefined);
          } else {
            thumbnailFailures++;
            const text = await res?.text().catch(() => '');
            firstFailure ??= text ?? 'no answer';
          }
        }
      }));
      await sleep(Math.max(0, 30_000 - (Date.now() - started)));
    }
  })();
  await sleep(2_000);
  results.deviceListPerSecondWithThumbnails = await listRate();
  gridOn = false;
  await grid;
  results.thumbnails = { served: thumbnails, failed: thumbnailFailures, firstFailure };
} finally {
  await lab.stop();
}

async function waitFor(probe, timeoutMs) {
  const deadline = Date.now() + timeoutMs;
  while (!(await probe())) {
    if (Date.now() > deadline) throw new Error('timed out');
    await sleep(500);
  }
}

const ratio = results.hubFps / results.directFps;
console.log(JSON.stringify(results, null, 2));
console.log(`fps: direct ${results.directFps.toFixed(1)}, through the hub ${results.hubFps.toFixed(1)} (${ratio.toFixed(2)}x; goal >= 0.9x)`);
console.log(`touch -> changed frame: direct ${results.directDelayMs.toFixed(0)} ms, through the hub ${results.hubDelayMs.toFixed(0)} ms `
  + `(+${(results.hubDelayMs - results.directDelayMs).toFixed(0)} ms; goal <= +30 ms)`);
for (const v of results.viewers) {
  console.log(`${v.viewers} viewers: ${v.fps.toFixed(1)} fps; hub ${v.hubCpuPercent.toFixed(1)}% CPU (${v.hubCpuPercentPerViewer.toFixed(2)}%/viewer), `
    + `gateway ${v.gatewayCpuPercent.toFixed(1)}% (${v.gatewayCpuPercentPerViewer.toFixed(2)}%/viewer)`);
}
if (results.deviceListPerSecond !== undefined) {
  console.log(`GET /Device: ${results.deviceListPerSecond.toFixed(0)}/s without thumbnails, ${results.deviceListPerSecondWithThumbnails?.toFixed(0)}/s `
    + `with the grid's thumbnails (${results.thumbnails?.served} stills served, ${results.thumbnails?.failed} failed)`);
}
