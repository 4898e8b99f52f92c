// What hostile uploads cost a real hub process: the 1 MB zip bomb named `.apk` and the broken-zip
// corpus of the tests (hub/test/apps/broken-zips.ts: crafted cases and BENCH_CORPUS seeded random corruptions of
// the fixtures), each uploaded with `wait=true`, against the baseline of a valid fixture APK uploaded in the same
// run (alternating with the bomb). Prints time per upload and the hub's RSS: before, peak per phase (sampled
// every 20 ms from /proc) and its high-water mark. Progress on stderr, the table on stdout.
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { progress, startBenchHub } from './bench-lab.mjs';
import { printTable, summarize } from './statistics.mjs';

const require = createRequire(import.meta.url);
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
require(path.join(root, 'hub/test/support/ts-register.cjs'));
const { corruptedFixtures, craftedUploads, zipBomb } = require(path.join(root, 'hub/test/apps/broken-zips.ts'));
const { fixture } = require(path.join(root, 'scripts/jest/shared-files.ts'));

const ROUNDS = Number(process.env.BENCH_ROUNDS || 5);
const CORPUS = Number(process.env.BENCH_CORPUS || 120);
const SEED = Number(process.env.BENCH_SEED || 9);
const BASELINE = process.env.BENCH_BASELINE || 'ApiDemos-debug.apk';
const MB = 1024 * 1024;

const hub = await startBenchHub();
const memory = (field) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm')
  .exec(readFileSync(`/proc/${hub.hubPid}/status`, 'utf8'))[1]) * 1024;
let peak = 0;
const sampler = setInterval(() => { peak = Math.max(peak, memory('VmRSS')); }, 20);

async function upload(fileName, bytes) {
  const form = new FormData();
  form.append('upload', new Blob([bytes]), fileName);
  const started = performance.now();
  const { status, body } = await hub.get('/Application?add&wait=true', { method: 'POST', body: form });
  const ms = performance.now() - started;
  if (status !== 200) throw new Error(`HTTP ${status} for ${fileName}`);
  return { ms, ok: body.isSuccess === true, text: body.errorMessage };
}

const rows = [];
try {
  const idleRss = memory('VmRSS');
  progress(`hub RSS at rest ${(idleRss / MB).toFixed(0)} MB`);
  const baseline = readFileSync(fixture(BASELINE));
  const bomb = zipBomb();
  // Built before any upload: a pause longer than the hub's keep-alive timeout would make the next upload race a
  // closing connection.
  const corpus = [...craftedUploads(fixture), ...corruptedFixtures(fixture, CORPUS, SEED)];
  const phase = { baseline: [], bomb: [] };
  const phasePeak = { baseline: 0, bomb: 0 };
  for (let round = 0; round < ROUNDS; round++) {
    for (const [name, file, bytes] of [['baseline', BASELINE, baseline], ['bomb', 'bomb.apk', bomb]]) {
      peak = memory('VmRSS');
      const result = await upload(file, bytes);
      if (name === 'bomb' && result.ok) throw new Error('the bomb was accepted');
      if (name === 'baseline' && !result.ok) throw new Error(`the baseline failed: ${result.text}`);
      phase[name].push(result.ms);
      phasePeak[name] = Math.max(phasePeak[name], peak);
    }
    progress(`round ${round + 1}/${ROUNDS}: baseline ${phase.baseline.at(-1).toFixed(0)} ms, bomb ${phase.bomb.at(-1).toFixed(0)} ms`);
  }
  rows.push([`valid ${BASELINE} (${(baseline.length / MB).toFixed(1)} MB)`, phase.baseline, phasePeak.baseline, `${ROUNDS} accepted`]);
  rows.push([`zip bomb bomb.apk (${(bomb.length / MB).toFixed(1)} MB, 1 GiB inflated)`, phase.bomb, phasePeak.bomb, `${ROUNDS} refused`]);

  const times = [];
  let refused = 0;
  peak = memory('VmRSS');
  for (const [i, item] of corpus.entries()) {
    const result = await upload(item.fileName, item.bytes).catch((err) => {
      throw new Error(`${item.label}: ${err.message} (hub process ${existsSync(`/proc/${hub.hubPid}`) ? 'alive' : 'gone'})`, { cause: err });
    });
    times.push(result.ms);
    if (!result.ok) refused++;
    if ((i + 1) % 20 === 0) progress(`corpus ${i + 1}/${corpus.length}`);
  }
  rows.push([`broken-zip corpus (${corpus.length} files, seed ${SEED})`, times, peak, `${refused} refused, ${corpus.length - refused} accepted`]);

  console.log(`hub RSS at rest: ${(idleRss / MB).toFixed(0)} MB; high-water mark after the run: ${(memory('VmHWM') / MB).toFixed(0)} MB`);
  printTable(['uploads', 'n', 'median ms', 'p95 ms', 'max ms', 'hub RSS peak MB', 'outcome'], rows.map(([what, samples, rss, outcome]) => {
    const { count, median, p95, max } = summarize(samples);
    return [what, count, median.toFixed(0), p95.toFixed(0), max.toFixed(0), (rss / MB).toFixed(0), outcome];
  }));
} finally {
  clearInterval(sampler);
  await hub.stop();
}
