#!/usr/bin/env node
// Benchmark: install one large APK (BENCH_APK_MB, default 50) on BENCH_DEVICES (default 8) simulated devices at
// once through the API (POST /Application?action=install per device, all in parallel, until every async job is
// done), against plain parallel `adb install` of the same file on the same devices in the same run (Debian's adb
// streams it into `cmd package install -S`). Goal: DeviceLab <= 1.2x the adb time. Cold = the gateway has not
// cached the file yet (it fetches it from the hub once); warm = cached. Also: the gateway's RSS before, at its
// peak during, and after the installs (goal: back to about the base, not +1 file per device).
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import { copyFileSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { createRequire } from 'node:module';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { progress, sleep, startBenchLab } from './bench-lab.mjs';
import { mib, rssOf } from './process-memory.mjs';
import { median, printTable } from './statistics.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const { specFromPreset } = createRequire(import.meta.url)('../../labsim/dist');
const deviceCount = Number(process.env.BENCH_DEVICES || 8);
const apkMb = Number(process.env.BENCH_APK_MB || 50);
const roundCount = Number(process.env.BENCH_ROUNDS || 3);
const PACKAGE = 'com.example.android.contactmanager';

const run = (file, args, env) => new Promise((resolve, reject) => execFile(file, args, { env: { ...process.env, ...env }, maxBuffer: 1 << 24 },
  (err, stdout, stderr) => (err ? reject(new Error(`${file} ${args.join(' ')}: ${stderr || err.message}`)) : resolve(stdout))));

/** ContactManager.apk with an incompressible stored entry: a valid APK of about `mb` MiB. */
function buildLargeApk(dir, mb) {
  const apk = path.join(dir, `large-${mb}mb.apk`);
  copyFileSync(path.join(root, '..', 'shared', 'fixtures', 'ContactManager.apk'), apk);
  const filler = path.join(dir, 'assets-filler.bin');
  writeFileSync(filler, randomBytes(mb * 1024 * 1024));
  return run('zip', ['-0', '-j', '-q', apk, filler]).then(() => apk);
}

const lab = await startBenchLab();
try {
  const { world } = lab;
  // Android 14 phones: adb and the gateway both stream the file into `cmd package install -S`. BENCH_PUSH=1: Android
  // 6 phones (no `cmd`), where both push the file to the device first, then run `pm install`.
  const older = process.env.BENCH_PUSH === '1' ? { sdk: 23, androidVersion: '6.0.1' } : {};
  const specs = Array.from({ length: deviceCount }, (_, i) => specFromPreset('pixel-7', i, older));
  for (const spec of specs) await world.addAndroidDevice(spec);
  const serials = new Set(specs.map((s) => s.serial));
  let devices = [];
  for (const deadline = Date.now() + 120_000; devices.length < deviceCount;) {
    if (Date.now() > deadline) throw new Error('devices not Online in time');
    const { body } = await lab.get('/Device');
    devices = body.filter((d) => serials.has(d.serialNumber) && d.availability === 'Online');
    await sleep(200);
  }
  const apk = await buildLargeApk(lab.hub.dir, apkMb);
  progress(`built a ${apkMb} MiB APK; uploading it`);
  const form = new FormData();
  form.append('upload', new Blob([readFileSync(apk)]), 'large.apk');
  const upload = await lab.get('/Application?add', { method: 'POST', body: form });
  const app = await pollAsync(upload.body.data.asyncResponseId, 300_000);
  const adbEnv = world.env();
  const adbSerials = world.devices().map((d) => d.adbSerial);

  async function pollAsync(id, timeoutMs = 600_000) {
    for (const deadline = Date.now() + timeoutMs; ;) {
      const { body } = await lab.get(`/Async?id=${id}`);
      if (body.isComplete) return body.data;
      if (Date.now() > deadline) throw new Error(`async job ${id} not complete`);
      await sleep(50);
    }
  }
  const uninstallAll = () => Promise.all(adbSerials.map((s) => run('adb', ['-P', String(world.adbServerPort), '-s', s, 'uninstall', PACKAGE], adbEnv).catch(() => '')));

  async function adbRound() {
    await uninstallAll();
    const started = performance.now();
    const outputs = await Promise.all(adbSerials.map((s) => run('adb', ['-P', String(world.adbServerPort), '-s', s, 'install', '-r', apk], adbEnv)));
    const elapsed = performance.now() - started;
    if (!outputs.every((o) => /Success/.test(o))) throw new Error(`adb install failed: ${outputs.join(' | ')}`);
    return elapsed;
  }

  /**
   * A POST on a connection of its own: the labsim devices share this process's event loop, so during installs it
   * can notice the hub closing an idle keep-alive connection too late and send a POST into it (not safe to repeat).
   */
  function postOnNewConnection(pathAndQuery) {
    return new Promise((resolve, reject) => {
      const request = http.request(`${lab.url}/apiv1${pathAndQuery}`, { method: 'POST', agent: false, headers: { authorization: lab.authorization } }, (res) => {
        const parts = [];
        res.on('data', (d) => parts.push(d));
        res.on('end', () => { try { resolve(JSON.parse(Buffer.concat(parts).toString())); } catch (err) { reject(err); } });
        res.on('error', reject);
      });
      request.on('error', reject);
      request.end();
    });
  }

  let peak = 0;
  async function devicelabRound() {
    await uninstallAll();
    await sleep(2000);
    const sampler = setInterval(() => { peak = Math.max(peak, rssOf(lab.gatewayPid)); }, 50);
    const started = performance.now();
    const results = await Promise.all(devices.map(async (d) => {
      // wait=true: one blocking call per device, as the CLI makes; no polling load from the benchmark itself.
      return postOnNewConnection(`/Application?action=install&id=${app.id}&deviceId=${d.id}&wait=true`);
    }));
    const elapsed = performance.now() - started;
    clearInterval(sampler);
    if (!results.every((r) => r?.isSuccess)) throw new Error(`install failed: ${JSON.stringify(results)}`);
    return elapsed;
  }

  // Rounds of adb / cold / warm back to back (cold: the gateway's cached copy removed first), so every ratio
  // compares runs taken under the same load; the median of the per-round ratios is the figure.
  const cacheDir = path.join(lab.hub.dir, 'gateway-cache');
  const dropCache = () => rmSync(cacheDir, { recursive: true, force: true });
  const rssBefore = rssOf(lab.gatewayPid);
  progress(`gateway RSS before: ${mib(rssBefore)}`);
  const rounds = [];
  const rssAfterRound = [];
  for (let round = 1; round <= roundCount; round++) {
    const adb = await adbRound();
    dropCache();
    const cold = await devicelabRound();
    const warm = await devicelabRound();
    rounds.push({ adb, cold, warm });
    rssAfterRound.push(rssOf(lab.gatewayPid));
    const s = (v) => `${(v / 1000).toFixed(1)} s`;
    progress(`round ${round}: adb ${s(adb)}, cold ${s(cold)} (${(cold / adb).toFixed(2)}x), warm ${s(warm)} (${(warm / adb).toFixed(2)}x)`);
  }
  const rssSettled = [];
  for (let i = 0; i < 6; i++) {
    await sleep(5000);
    rssSettled.push(rssOf(lab.gatewayPid));
  }
  const s = (v) => `${(v / 1000).toFixed(1)} s`;
  const times = (key) => rounds.map((r) => s(r[key])).join(', ');
  const ratio = (key) => median(rounds.map((r) => r[key] / r.adb));
  const verdict = (r) => (r <= 1.2 ? 'met (<= 1.2x)' : 'NOT met (<= 1.2x)');
  process.stdout.write(`\ninstall a ${apkMb} MiB APK on ${deviceCount} ${older.sdk ? 'Android 6 (push, then pm install)' : 'Android 14 (streamed install)'} devices in parallel, ${roundCount} rounds (load average ${os.loadavg().map((l) => l.toFixed(1)).join(' ')})\n`);
  printTable(['what', 'time per round', 'median of per-round ratios to adb', 'goal'], [
    ['plain parallel adb install', times('adb'), '1.00x', '-'],
    ['DeviceLab, cold gateway cache', times('cold'), `${ratio('cold').toFixed(2)}x`, verdict(ratio('cold'))],
    ['DeviceLab, warm gateway cache', times('warm'), `${ratio('warm').toFixed(2)}x`, verdict(ratio('warm'))],
  ]);
  process.stdout.write('\ngateway memory\n');
  printTable(['when', 'RSS'], [
    ['before the installs', mib(rssBefore)], ['peak during the installs', mib(peak)],
    ['after each round', rssAfterRound.map(mib).join(', ')],
    ['5, 10 ... 30 s after the last install', rssSettled.map(mib).join(', ')],
  ]);
} finally {
  await lab.stop();
}
