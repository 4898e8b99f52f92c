#!/usr/bin/env node
// Makes a fresh clone runnable with nothing but Node 20 and npm: pnpm (the version pinned in package.json),
// dependencies, the TypeScript build, the `adb` binary the Android driver talks to and `socat` (simulated USB hubs).
// Each step is skipped when already done, so `npm test` and `npm run demo` stay fast on a warm checkout.
import { execFileSync, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const step = (text) => process.stderr.write(`[bootstrap] ${text}\n`);

function run(command, args, options = {}) {
  const result = spawnSync(command, args, { cwd: root, stdio: 'inherit', ...options });
  if (result.status !== 0) {
    step(`failed: ${command} ${args.join(' ')}`);
    process.exit(result.status ?? 1);
  }
}

function checkNode() {
  const [major, minor] = process.versions.node.split('.').map(Number);
  if (major < 20 || (major === 20 && minor < 18)) {
    step(`Node ${process.versions.node} is too old: DeviceLab needs Node 20.18 or newer.`);
    process.exit(1);
  }
}

function installDependencies() {
  const lock = readFileSync(path.join(root, 'pnpm-lock.yaml'));
  const manifests = ['package.json', 'shared', 'proto', 'hub', 'gateway', 'labsim', 'web']
    .map((p) => readFileSync(path.join(root, p.endsWith('.json') ? p : `${p}/package.json`)));
  const digest = createHash('sha256').update(Buffer.concat([lock, ...manifests])).digest('hex');
  const marker = path.join(root, 'node_modules', '.devicelab-installed');
  if (existsSync(marker) && readFileSync(marker, 'utf8') === digest) return;
  const pnpm = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')).packageManager; // pnpm@x.y.z
  step(`installing dependencies with ${pnpm} (first run only)`);
  run('npx', ['--yes', pnpm, 'install', '--frozen-lockfile', '--reporter=append-only']);
  writeFileSync(marker, digest);
}

function build() {
  step('building (tsc -b, incremental)');
  run(process.execPath, [path.join(root, 'node_modules/typescript/bin/tsc'), '-b']);
}

/** Digest of the dashboard's sources: web/dist is rebuilt only when they changed. */
function webSourceDigest() {
  const hash = createHash('sha256');
  const walk = (dir) => {
    for (const name of readdirSync(dir).sort()) {
      const file = path.join(dir, name);
      if (statSync(file).isDirectory()) walk(file);
      else hash.update(file).update(readFileSync(file));
    }
  };
  walk(path.join(root, 'web/src'));
  for (const file of ['index.html', 'vite.config.ts', 'package.json']) hash.update(readFileSync(path.join(root, 'web', file)));
  return hash.digest('hex');
}

/** The dashboard the hub serves at `/`: a Vite build into web/dist. */
function buildWeb() {
  const digest = webSourceDigest();
  const marker = path.join(root, 'web/dist/.devicelab-built');
  if (existsSync(marker) && readFileSync(marker, 'utf8') === digest) return;
  step('building the web dashboard (vite build)');
  run(process.execPath, [path.join(root, 'web/node_modules/vite/bin/vite.js'), 'build', '--logLevel', 'warn'], { cwd: path.join(root, 'web') });
  writeFileSync(marker, digest);
}

function commandExists(name) {
  return spawnSync('sh', ['-c', `command -v ${name}`], { stdio: 'ignore' }).status === 0;
}

/** Debian packages the lab needs on the host; installed through apt when we are root, else explained. */
function ensureHostPackages() {
  // socat makes the pseudo-terminals the simulated USB hubs sit on; libimobiledevice's tools (idevice_id from
  // libimobiledevice-utils, ideviceinstaller) are the iOS clients the tests run against the simulated usbmuxd;
  // Debian's chromium is the browser the dashboard's tests drive with playwright-core (no browser download).
  const needed = [['adb', 'adb'], ['socat', 'socat'], ['idevice_id', 'libimobiledevice-utils'], ['ideviceinstaller', 'ideviceinstaller'],
    ['chromium', 'chromium']];
  const missing = needed.filter(([binary]) => !commandExists(binary)).map(([, pkg]) => pkg);
  if (missing.length === 0) return;
  const isRoot = typeof process.getuid === 'function' && process.getuid() === 0;
  if (!isRoot || !commandExists('apt-get')) {
    step(`missing: ${missing.join(', ')}. Install with: sudo apt-get install -y ${missing.join(' ')}`
      + ' (or put Android platform-tools on PATH), then run the command again.');
    process.exit(1);
  }
  step(`installing ${missing.join(', ')} with apt-get`);
  run('apt-get', ['update', '-qq']);
  run('apt-get', ['install', '-y', '-qq', ...missing], { env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' } });
}

checkNode();
installDependencies();
build();
buildWeb();
ensureHostPackages();
try {
  execFileSync('adb', ['version'], { stdio: 'ignore' });
} catch {
  step('adb is installed but does not run; check `adb version`.');
  process.exit(1);
}
