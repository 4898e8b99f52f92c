#!/usr/bin/env node
// Benchmark: install one large APK (BENCH_APK_MB, default 50) on BENCH_DEVICES (default 8) simulated devices at
// once through the API (POST /Application?action=install per device, all in parallel, until every async job is
// done), against plain parallel `adb install` of the same file on the same devices in the same run (Debian's adb
// streams it into `cmd package install -S`). Goal: DeviceLab <= 1.2x the adb time. Cold = the gateway has not
// cached the file yet (it fetches it from the hub once); warm = cached. Also: the gateway's RSS before, at its
// peak during, and after the installs (goal: back to about the base, not +1 file per device).
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { copyFileSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { progress, sleep, startBenchLab } from './bench-lab.mjs';
import { mib, rssOf } from './process-memory.mjs';
import { printTable } from './statistics.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const { specFromPreset } = createRequire(import.meta.url)('../../labsim/dist');
const deviceCount = Number(process.env.BENCH_DEVICES || 8);
const apkMb = Number(process.env.BENCH_APK_MB || 50);
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
  // Android 14 phones: adb and the gateway both stream the file into `cmd package install -S`.
  const specs = Array.from({ length: deviceCount }, (_, i) => specFromPreset('pixel-7', i));
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

  let peak = 0;
  async function devicelabRound() {
    await uninstallAll();
    await sleep(2000);
    const sampler = setInterval(() => { peak = Math.max(peak, rssOf(lab.gatewayPid)); }, 50);
    const started = performance.now();
    const results = await Promise.all(devices.map(async (d) => {
      const { body } = await lab.get(`/Application?action=install&id=${app.id}&deviceId=${d.id}`, { method: 'POST' });
      return pollAsync(body.data.asyncResponseId);
    }));
    const elapsed = performance.now() - started;
    clearInterval(sampler);
    if (!results.every((r) => r?.isSuccess)) throw new Error(`install failed: ${JSON.stringify(results)}`);
    return elapsed;
  }

  const rssBefore = rssOf(lab.gatewayPid);
  progress(`gateway RSS before: ${mib(rssBefore)}`);
  const adb1 = await adbRound();
  progress(`adb install x${deviceCount}: ${(adb1 / 1000).toFixed(1)} s`);
  const cold = await devicelabRound();
  progress(`DeviceLab install x${deviceCount} (cold cache): ${(cold / 1000).toFixed(1)} s`);
  const warm = await devicelabRound();
  progress(`DeviceLab install x${deviceCount} (warm cache): ${(warm / 1000).toFixed(1)} s`);
  const adb2 = await adbRound();
  progress(`adb install x${deviceCount}: ${(adb2 / 1000).toFixed(1)} s`);
  await sleep(5000);
  const rssAfter = rssOf(lab.gatewayPid);
  const adb = (adb1 + adb2) / 2;
  const s = (v) => `${(v / 1000).toFixed(1)} s`;
  process.stdout.write(`\ninstall a ${apkMb} MiB APK on ${deviceCount} devices in parallel\n`);
  printTable(['what', 'time', 'ratio to adb', 'goal'], [
    ['plain parallel adb install (mean of 2 rounds)', `${s(adb)} (${s(adb1)}, ${s(adb2)})`, '1.00x', '-'],
    ['DeviceLab, cold gateway cache', s(cold), `${(cold / adb).toFixed(2)}x`, cold / adb <= 1.2 ? 'met (<= 1.2x)' : 'NOT met (<= 1.2x)'],
    ['DeviceLab, warm gateway cache', s(warm), `${(warm / adb).toFixed(2)}x`, warm / adb <= 1.2 ? 'met (<= 1.2x)' : 'NOT met (<= 1.2x)'],
  ]);
  process.stdout.write('\ngateway memory\n');
  printTable(['when', 'RSS'], [
    ['before the installs', mib(rssBefore)], ['peak during the installs', mib(peak)], ['5 s after the last install', mib(rssAfter)],
  ]);
} finally {
  await lab.stop();
}
