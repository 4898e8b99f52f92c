// What the crafted hostile packages cost a real hub process (hub/test/support/hostile-packages.ts: icons of
// megabytes, parser hangs, shared plist values, thousands of zero entries), each uploaded once with `wait=true`,
// beside a valid fixture APK; then BENCH_ICON_APPS uploads of the 7.8 MB-icon APK and what `GET /Application`
// answers with them stored. Prints time per upload and the hub's RSS peak (sampled every 20 ms from /proc).
// `DEVICELAB_PACKAGE_TIMEOUT_S` (passed to the hub) shortens the parse deadline when measuring an older hub.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { progress, startBenchHub } from './bench-lab.mjs';
import { printTable } from './statistics.mjs';

const require = createRequire(import.meta.url);
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
require(path.join(root, 'hub/test/support/ts-register.cjs'));
const { apkWithIcon, heavyIconPng, hostilePackageUploads } = require(path.join(root, 'hub/test/support/hostile-packages.ts'));
const { fixture } = require(path.join(root, 'scripts/jest/shared-files.ts'));

const ICON_APPS = Number(process.env.BENCH_ICON_APPS || 50);
const MB = 1024 * 1024;

const hub = await startBenchHub();
const rss = () => Number(/^VmRSS:\s+(\d+) kB/m.exec(readFileSync(`/proc/${hub.hubPid}/status`, 'utf8'))[1]) * 1024;
let peak = 0;
const sampler = setInterval(() => { peak = Math.max(peak, rss()); }, 20);

async function timed(pathAndQuery, init) {
  peak = rss();
  const started = performance.now();
  const { status, body } = await hub.get(pathAndQuery, init);
  return { ms: performance.now() - started, status, body, peak: Math.max(peak, rss()) };
}

async function upload(fileName, bytes) {
  const form = new FormData();
  form.append('upload', new Blob([bytes]), fileName);
  return timed('/Application?add&wait=true', { method: 'POST', body: form });
}

const rows = [];
const outcome = ({ status, body }) => (status !== 200 ? `HTTP ${status}` : body.isSuccess ? 'accepted'
  : `refused: ${String(body.errorMessage).slice(0, 70)}`);
try {
  progress(`hub RSS at rest ${(rss() / MB).toFixed(0)} MB`);
  const cases = [{ label: 'valid ContactManager.apk', fileName: 'ContactManager.apk', bytes: readFileSync(fixture('ContactManager.apk')) },
    ...hostilePackageUploads(fixture)];
  for (const item of cases) {
    const result = await upload(item.fileName, item.bytes);
    progress(`${item.label}: ${result.ms.toFixed(0)} ms`);
    rows.push([item.label, (item.bytes.length / 1024).toFixed(0), result.ms.toFixed(0), (result.peak / MB).toFixed(0), outcome(result)]);
  }
  const heavy = apkWithIcon(fixture, heavyIconPng());
  let slowest = 0;
  for (let i = 0; i < ICON_APPS; i++) slowest = Math.max(slowest, (await upload('heavy-icon.apk', heavy)).ms);
  rows.push([`${ICON_APPS} more uploads of the 7.8 MB-icon APK (slowest)`, (heavy.length / 1024).toFixed(0), slowest.toFixed(0),
    (peak / MB).toFixed(0), '']);
  const list = await timed('/Application');
  const listBytes = typeof list.body === 'string' ? list.body.length : JSON.stringify(list.body).length;
  rows.push([`GET /Application with ${ICON_APPS + 2} heavy-icon apps stored`, `${(listBytes / 1024).toFixed(0)} answered`,
    list.ms.toFixed(0), (list.peak / MB).toFixed(0), `HTTP ${list.status}`]);
  printTable(['upload', 'KB', 'ms', 'hub RSS peak MB', 'outcome'], rows);
} finally {
  clearInterval(sampler);
  await hub.stop();
}
