// Cost of labsim's simulated Android screen: drawing a changed frame, PNG (screencap -p) and JPEG (minicap) at the
// display size and at the projections viewers ask for, with jpeg-js on the same pictures for comparison. Each sample follows a change of the screen (a tap that
// draws a touch mark), so nothing comes from the frame cache. Needs labsim built (`node scripts/bootstrap.mjs`).
import { createRequire } from 'node:module';
import { ms, printTable, summarize } from './statistics.mjs';

const require = createRequire(import.meta.url);
const { DeviceScreen } = require('../../labsim/dist/android/screen');
const { specFromPreset } = require('../../labsim/dist');
const jpegJs = require('../../labsim/node_modules/jpeg-js');

const SAMPLES = Number(process.env.BENCH_SAMPLES ?? 10);
const spec = specFromPreset(process.env.BENCH_PRESET ?? 'pixel-7', 0);
const apps = ['com.android.chrome', 'com.android.settings', 'com.android.vending', 'com.google.android.youtube', 'org.mozilla.firefox'];
const screen = new DeviceScreen({
  width: spec.screen.width, height: spec.screen.height, density: spec.screen.density, launcherPackage: 'com.google.android.apps.nexuslauncher',
  installed: () => apps.map((packageName) => ({ packageName, launchable: true, apkHostPath: null, stamp: '1' })),
  clock: () => '12:00', battery: () => ({ level: 80, charging: true }),
});

let y = 1400;
function measure(work) {
  const samples = [];
  for (let i = 0; i < SAMPLES; i++) {
    screen.tap(20, (y = y === 1400 ? 1500 : 1400));
    const start = process.hrtime.bigint();
    work();
    samples.push(Number(process.hrtime.bigint() - start) / 1e6);
  }
  return summarize(samples);
}

const { width, height } = screen;
const rows = [
  ['draw (RGBA)', `${width}x${height}`, measure(() => screen.rgba())],
  ['PNG', `${width}x${height}`, measure(() => screen.png())],
  ['JPEG q80', `${width}x${height}`, measure(() => screen.jpeg(80))],
  ['JPEG q80 by jpeg-js (baseline)', `${width}x${height}`, measure(() => jpegJs.encode({ width, height, data: screen.rgba() }, 80))],
  ['JPEG q80', `${width / 2}x${height / 2}`, measure(() => screen.jpeg(80, width / 2, height / 2))],
  ['JPEG q80', `${Math.round(width / 3)}x${Math.round(height / 3)}`, measure(() => screen.jpeg(80, Math.round(width / 3), Math.round(height / 3)))],
];
process.stderr.write(`${spec.model}, ${SAMPLES} samples each (draw included in every PNG/JPEG sample)\n`);
printTable(['output', 'size', 'median', 'p95', 'max'], rows.map(([what, size, s]) => [what, size, ms(s.median), ms(s.p95), ms(s.max)]));
