#!/usr/bin/env node
// Benchmark (a) for iOS: time from plugging a simulated iPhone/iPad (usbmuxd reports it Attached) until
// `GET /apiv1/Device` lists it Online, beside a baseline taken in the same run: the time until a raw usbmuxd
// `Listen` client sees the same Attached (what the gateway cannot be faster than). Goal: p95 under 1 s.
// Then the gateway's RSS per iOS device: RSS (VmRSS of the gateway process) with 0 and with N Online devices.
//   BENCH_IOS_DEVICES  devices (default 10), each paired with this host once (idevicepair, as an operator does)
//   BENCH_REPLUGS      plugs measured (default 20): a paired device unplugged (seen Offline) and plugged again.
//                      An iOS device is trusted once per host before it can be used, so every measured plug is of
//                      a paired device; the first appearance waits for a person to tap Trust and is not timed.
//   BENCH_POLL_MS      GET /Device poll interval (default 10)
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import net from 'node:net';
import { performance } from 'node:perf_hooks';
import { progress, sleep, startBenchLab } from './bench-lab.mjs';
import { measurePlugToOnline, waitForAvailability } from './plug-measurement.mjs';
import { ms, printTable, summarize } from './statistics.mjs';

const require = createRequire(import.meta.url);
const { defaultIosLab } = require('../../labsim/dist');
const { encodePlist, decodePlistDict } = require('../../shared/dist');
const deviceCount = Number(process.env.BENCH_IOS_DEVICES || 10);
const replugCount = Number(process.env.BENCH_REPLUGS || 20);
const pollMs = Number(process.env.BENCH_POLL_MS || 10);

/** A raw usbmuxd Listen connection; `attached(udid)` resolves at the next Attached of that device. */
async function rawListener(socketPath) {
  const socket = net.connect({ path: socketPath });
  await new Promise((resolve, reject) => socket.once('connect', resolve).once('error', reject));
  const waiters = new Map();
  let pending = Buffer.alloc(0);
  socket.on('data', (chunk) => {
    pending = Buffer.concat([pending, chunk]);
    while (pending.length >= 16 && pending.length >= pending.readUInt32LE(0)) {
      const length = pending.readUInt32LE(0);
      const message = decodePlistDict(pending.subarray(16, length));
      pending = pending.subarray(length);
      const udid = message.MessageType === 'Attached' ? message.Properties?.SerialNumber : undefined;
      waiters.get(udid)?.(performance.now());
      waiters.delete(udid);
    }
  });
  const body = encodePlist({ MessageType: 'Listen', ClientVersionString: 'bench', ProgName: 'bench' });
  const header = Buffer.alloc(16);
  header.writeUInt32LE(16 + body.length, 0);
  header.writeUInt32LE(1, 4);
  header.writeUInt32LE(8, 8);
  header.writeUInt32LE(1, 12);
  socket.write(Buffer.concat([header, body]));
  return {
    attached: (udid) => new Promise((resolve) => waiters.set(udid, resolve)),
    close: () => socket.destroy(),
  };
}

const rssMiB = (pid) => Number(/^VmRSS:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))[1]) / 1024;

/** Mean RSS over `seconds` one-second reads, after the gateway settled. */
async function steadyRss(pid, seconds = 10) {
  const reads = [];
  for (let s = 0; s < seconds; s++) {
    await sleep(1_000);
    reads.push(rssMiB(pid));
  }
  return reads.reduce((a, b) => a + b, 0) / reads.length;
}

const lab = await startBenchLab();
try {
  const world = lab.world;
  const listener = await rawListener(world.iosFleet.usbmuxd.socketPath);
  await sleep(3_000); // the gateway is up and listening to usbmuxd
  const rssEmpty = await steadyRss(lab.gatewayPid);
  progress(`gateway RSS with no iOS device: ${rssEmpty.toFixed(1)} MiB`);

  const specs = defaultIosLab(deviceCount);
  const rss = [[0, rssEmpty]];
  for (const [index, spec] of specs.entries()) {
    await world.addIosDevice(spec);
    await world.iosFleet.pairWithIdevicepair(spec.udid);
    await waitForAvailability(lab, spec.udid, 'Online', 50);
    progress(`device ${index + 1}/${deviceCount} ${spec.udid} paired and Online`);
    if (index + 1 === Math.ceil(deviceCount / 2) || index + 1 === deviceCount) {
      rss.push([index + 1, await steadyRss(lab.gatewayPid)]);
      progress(`gateway RSS with ${index + 1} iOS devices: ${rss.at(-1)[1].toFixed(1)} MiB`);
    }
  }

  const toOnline = [];
  const toAttached = [];
  for (let i = 0; i < replugCount; i++) {
    const { udid } = specs[i % specs.length];
    world.iosFleet.unplug(udid);
    await waitForAvailability(lab, udid, 'Offline', pollMs);
    const started = performance.now();
    const attached = listener.attached(udid);
    const elapsed = await measurePlugToOnline(lab, udid, pollMs);
    toAttached.push((await attached) - started);
    toOnline.push(elapsed);
    progress(`plug ${i + 1}/${replugCount} ${udid}: Online after ${ms(elapsed)} (usbmuxd Attached after ${ms(toAttached.at(-1))})`);
  }
  listener.close();

  process.stdout.write(`\niOS plug -> Online in GET /Device (paired devices; poll every ${pollMs} ms; goal < 1000 ms)\n`);
  const row = (what, s, goal) => [what, s.count, ms(s.min), ms(s.median), ms(s.p95), ms(s.max), goal ? (s.p95 < 1000 ? 'met' : 'NOT met') : ''];
  printTable(['case', 'n', 'min', 'median', 'p95', 'max', 'goal (p95)'], [
    row('baseline: usbmuxd Attached at a raw Listen client', summarize(toAttached), false),
    row('plug -> Online in GET /Device', summarize(toOnline), true),
  ]);
  process.stdout.write(`\ngateway RSS (mean of 10 reads, 1 s apart, after the devices settled; sampling at its defaults)\n`);
  printTable(['iOS devices', 'RSS', 'per device since 0'], rss.map(([n, mib]) =>
    [String(n), `${mib.toFixed(1)} MiB`, n ? `${(((mib - rssEmpty) * 1024) / n).toFixed(0)} KiB` : '']));
} finally {
  await lab.stop();
}
