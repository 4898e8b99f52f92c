#!/usr/bin/env node
// Benchmark (a): time from plugging a simulated Android device (`adb connect`, what a USB plug-in is to the adb
// server) until `GET /apiv1/Device` lists it Online. Goal: under 1 s.
//   first plug: a device the hub has never seen (BENCH_DEVICES of them, default 20)
//   re-plug:    a known device unplugged (`adb disconnect`, seen Offline) and plugged again (BENCH_REPLUGS, default 20)
// The client polls GET /Device?id=<serial> every BENCH_POLL_MS (default 10) ms, so a sample is at most that late.
import { createRequire } from 'node:module';
import { progress, startBenchLab } from './bench-lab.mjs';
import { measurePlugToOnline, waitForAvailability } from './plug-measurement.mjs';
import { ms, printTable, summarize } from './statistics.mjs';

const { defaultAndroidLab } = createRequire(import.meta.url)('../../labsim/dist');
const deviceCount = Number(process.env.BENCH_DEVICES || 20);
const replugCount = Number(process.env.BENCH_REPLUGS || 20);
const pollMs = Number(process.env.BENCH_POLL_MS || 10);

const lab = await startBenchLab();
try {
  const firstPlugs = [];
  for (const [index, spec] of defaultAndroidLab(deviceCount).entries()) {
    await lab.world.addAndroidDevice(spec, { plug: false });
    const elapsed = await measurePlugToOnline(lab, spec.serial, pollMs);
    firstPlugs.push(elapsed);
    progress(`first plug ${index + 1}/${deviceCount} ${spec.serial}: ${ms(elapsed)}`);
  }

  const replugs = [];
  const serials = lab.world.devices().map((d) => d.serial);
  for (let i = 0; i < replugCount; i++) {
    const serial = serials[i % serials.length];
    await lab.world.unplug(serial);
    await waitForAvailability(lab, serial, 'Offline', pollMs);
    const elapsed = await measurePlugToOnline(lab, serial, pollMs);
    replugs.push(elapsed);
    progress(`re-plug ${i + 1}/${replugCount} ${serial}: ${ms(elapsed)}`);
  }

  process.stdout.write(`\nplug -> Online in GET /Device (poll every ${pollMs} ms; goal < 1000 ms)\n`);
  const rows = [['first plug (new device)', summarize(firstPlugs)], ['re-plug (known device)', summarize(replugs)]]
    .map(([what, s]) => [what, s.count, ms(s.min), ms(s.median), ms(s.p95), ms(s.max), s.p95 < 1000 ? 'met' : 'NOT met']);
  printTable(['case', 'n', 'min', 'median', 'p95', 'max', 'goal (p95)'], rows);
} finally {
  await lab.stop();
}
