#!/usr/bin/env node
// Benchmark: `adb push` of a BENCH_PUSH_MB (default 50) MB file to a retained simulated device three ways, in one
// run: straight through the gateway host's adb server (the baseline), through the device's adb endpoint on the
// gateway (`adb connect <gatewayAddress>:<gatewayPort>` of the retain ticket) and through the hub-relayed tunnel
// (`devicelab connect <device>`, WebSocket -> hub -> gRPC Tunnel -> gateway), the latter also without the CLI's early
// OKAYs (`--early-acks 0`, for comparison; no goal). Each way BENCH_REPEATS (default 3)
// times, interleaved; the median throughput counts. Goals: direct >= 0.8x, tunnel >= 0.5x the baseline.
// Every adb client here is real; the user's has its own HOME, key and adb server.
import { execFile, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { cpuMs, freePort, progress, sleep, startBenchLab } from './bench-lab.mjs';
import { waitForAvailability } from './plug-measurement.mjs';
import { printTable } from './statistics.mjs';

const run = promisify(execFile);
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const { defaultAndroidLab } = createRequire(import.meta.url)('../../labsim/dist');
const megabytes = Number(process.env.BENCH_PUSH_MB || 50);
// BENCH_CPU=1: also the CPU milliseconds per MB each process spent (where a way's time goes on a shared machine).
const measureCpu = process.env.BENCH_CPU === '1';
/** A process's CPU ms so far; 0 for one that cannot be read (an adb server `ss` did not name: pid 0). */
const cpuMsOrZero = (pid) => {
  try {
    return cpuMs(pid);
  } catch {
    return 0;
  }
};
/** The process listening on a local TCP port (an adb server), from `ss`. */
const listenerPid = async (port) => {
  const { stdout } = await run('ss', ['-Hltnp', `sport = :${port}`]);
  return Number(/pid=(\d+)/.exec(stdout)?.[1] ?? 0);
};
const repeats = Number(process.env.BENCH_REPEATS || 3);

const lab = await startBenchLab();
const scratch = mkdtempSync(path.join(os.tmpdir(), 'devicelab-bench-adb-'));
const userEnv = { ...process.env, HOME: scratch, ANDROID_ADB_SERVER_PORT: String(await freePort()) };
delete userEnv.ADB_VENDOR_KEYS;
const tunnelProcesses = [];
try {
  const [spec] = defaultAndroidLab(1);
  await lab.world.addAndroidDevice(spec);
  await waitForAvailability(lab, spec.serial, 'Online', 50, 60_000);
  const serial = spec.serial;

  progress('a user adb client with its own key and server');
  mkdirSync(path.join(scratch, '.android'));
  await run('adb', ['keygen', path.join(scratch, '.android', 'adbkey')], { env: userEnv });
  await run('adb', ['start-server'], { env: userEnv });
  const [admin] = (await lab.get('/User?userName=admin')).body;
  const added = await fetch(`${lab.url}/apiv1/User?action=addAdbKey&id=${admin.id}`, {
    method: 'POST', headers: { authorization: lab.authorization },
    body: new URLSearchParams({ key: readFileSync(path.join(scratch, '.android', 'adbkey.pub'), 'utf8') }),
  }).then((res) => res.json());
  if (!added.isSuccess) throw new Error(`addAdbKey: ${added.errorMessage}`);
  const retained = (await lab.get(`/Device?action=retain&id=${serial}`, { method: 'POST' })).body;
  if (!retained.isSuccess) throw new Error(`retain: ${retained.errorMessage}`);
  const direct = `${retained.data.gatewayAddress}:${retained.data.gatewayPort}`;

  progress('the hub tunnel: devicelab connect (early OKAYs), and without them (--early-acks 0)');
  const [login, token] = Buffer.from(lab.authorization.slice('Basic '.length), 'base64').toString().split(':');
  const openCli = (extra) => {
    const nodeArgs = (process.env.BENCH_CLI_NODE_ARGS || '').split(' ').filter(Boolean); // e.g. --cpu-prof
    const child = spawn(process.execPath, [...nodeArgs, path.join(root, 'cli/bin/devicelab.js'), 'connect', serial, ...extra], {
      env: { ...process.env, XDG_CONFIG_HOME: scratch, DEVICELAB_URL: lab.url, DEVICELAB_USER: login, DEVICELAB_TOKEN: token },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    tunnelProcesses.push(child);
    return new Promise((resolve, reject) => {
      let out = '';
      child.stdout.on('data', (d) => {
        out += d;
        const match = /adb connect (127\.0\.0\.1:\d+)/.exec(out);
        if (match) resolve(match[1]);
      });
      child.once('exit', (code) => reject(new Error(`devicelab connect exited ${code}`)));
    });
  };
  const tunnel = await openCli([]);
  const plainTunnel = await openCli(['--early-acks', '0']);

  for (const address of [direct, tunnel, plainTunnel]) {
    await run('adb', ['connect', address], { env: userEnv });
    for (let i = 0; ; i++) {
      const { stdout } = await run('adb', ['devices'], { env: userEnv });
      if (stdout.split('\n').some((line) => line.startsWith(`${address}\tdevice`))) break;
      if (i > 100) throw new Error(`${address} never became a device`);
      await sleep(100);
    }
  }

  const file = path.join(scratch, 'payload.bin');
  writeFileSync(file, randomBytes(megabytes * 1024 * 1024));
  const ways = [
    ['gateway host adb server (baseline)', { ...process.env, ...lab.world.env() }, lab.world.device(serial).adbSerial],
    ['direct endpoint (adb connect gateway:port)', userEnv, direct],
    ['hub tunnel (devicelab connect)', userEnv, tunnel],
    ['hub tunnel, no early OKAYs (--early-acks 0)', userEnv, plainTunnel],
  ];
  const seconds = new Map(ways.map(([name]) => [name, []]));
  const processes = measureCpu ? Object.entries({
    'user adb server': await listenerPid(userEnv.ANDROID_ADB_SERVER_PORT),
    'gateway host adb server': await listenerPid(lab.world.env().ANDROID_ADB_SERVER_PORT),
    'bench + labsim': process.pid, hub: lab.hub.hubPid, gateway: lab.gatewayPid,
    'devicelab connect': tunnelProcesses[0].pid, 'devicelab connect --early-acks 0': tunnelProcesses[1].pid,
  }) : [];
  const cpu = new Map(ways.map(([name]) => [name, new Map(processes.map(([who]) => [who, 0]))]));
  for (let r = 0; r < repeats; r++) {
    for (const [name, env, target] of ways) {
      const before = processes.map(([, pid]) => cpuMsOrZero(pid));
      const started = process.hrtime.bigint();
      await run('adb', ['-s', target, 'push', file, `/data/local/tmp/bench-${r}.bin`], { env, maxBuffer: 1 << 20 });
      const s = Number(process.hrtime.bigint() - started) / 1e9;
      processes.forEach(([who, pid], i) => cpu.get(name).set(who, cpu.get(name).get(who) + cpuMsOrZero(pid) - before[i]));
      seconds.get(name).push(s);
      progress(`${name} push ${r + 1}/${repeats}: ${(megabytes / s).toFixed(1)} MB/s`);
    }
  }
  const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
  const rate = (name) => megabytes / median(seconds.get(name));
  const baseline = rate(ways[0][0]);
  const goals = [undefined, 0.8, 0.5, undefined];
  process.stdout.write(`\nadb push of ${megabytes} MB, median of ${repeats}\n`);
  printTable(['way', 'MB/s', 'ratio to baseline', 'goal'], ways.map(([name], i) => {
    const ratio = rate(name) / baseline;
    return [name, rate(name).toFixed(1), ratio.toFixed(2),
      goals[i] === undefined ? '' : `>= ${goals[i]} ${ratio >= goals[i] ? 'met' : 'NOT met'}`];
  }));
  if (measureCpu) {
    process.stdout.write(`\nCPU ms per MB pushed (mean of ${repeats}; 10 ms ticks)\n`);
    printTable(['way', ...processes.map(([who]) => who)], ways.map(([name]) => [name,
      ...processes.map(([who]) => (cpu.get(name).get(who) / repeats / megabytes).toFixed(1))]));
  }
} finally {
  for (const child of tunnelProcesses) child.kill('SIGTERM');
  await run('adb', ['kill-server'], { env: userEnv }).catch(() => undefined);
  rmSync(scratch, { recursive: true, force: true });
  await lab.stop();
}
