#!/usr/bin/env node
// Benchmark: the web dashboard, in Debian's Chromium driven by playwright-core.
//   initial load:  compressed (gzip -9) JavaScript of the grid page's initial load (index.html's entry script and
//                  what it preloads; pages loaded on demand are not counted). Target < 300 KB.
//   render:        BENCH_DEVICES (default 1000) devices, from page load (navigation start) to the grid showing them
//                  all: the page's own performance mark `devicelab:grid-shown` (set after the first full grid is
//                  painted), and when the probe (count and first rows in the DOM) saw it; BENCH_ROUNDS (default 5)
//                  fresh loads from about:blank (BENCH_RELOAD=1: reloads of the live page); baseline in the same run: the same page's plain fetch of GET /apiv1/Device (the data
//                  alone). Target p95 < 1 s.
//   live update:   a device change made through the API -> the row's new state in the DOM (MutationObserver), and
//                  the client's share of it (event received -> DOM), BENCH_UPDATES (default 20) changes.
// BENCH_PROFILE=<file.json>: one more load recorded as a Chromium performance trace (open it in DevTools'
// Performance panel), and that load's requests printed as a waterfall (start and end after navigation).
// The devices are reported through the hub's real inventory code (applyDeviceState, as a gateway's report is),
// to an in-process hub on a scratch database (DATABASE_URL's server) or the embedded PostgreSQL in a temp dir.
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { chromium } from 'playwright-core';
import { ms, printTable, summarize } from './statistics.mjs';

const require = createRequire(import.meta.url);
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const { startHub } = require(path.join(root, 'hub/dist'));
const { applyDeviceState } = require(path.join(root, 'hub/dist/gateways/device-inventory.js'));
const { dropDatabaseIfExists, quoteIdentifier, withDatabaseName, withServerClient } = require(path.join(root, 'hub/dist/store/database-admin.js'));
const { createLogger } = require(path.join(root, 'shared/dist'));
const progress = (text) => process.stderr.write(`[bench] ${text}\n`);

const deviceCount = Number(process.env.BENCH_DEVICES || 1000);
const rounds = Number(process.env.BENCH_ROUNDS || 5);
const updates = Number(process.env.BENCH_UPDATES || 20);
const dist = path.join(root, 'web/dist');
const CHROMIUM = process.env.DEVICELAB_CHROMIUM || '/usr/bin/chromium';

function initialLoadBytes() {
  const html = readFileSync(path.join(dist, 'index.html'), 'utf8');
  const scripts = [...html.matchAll(/<script[^>]+src="([^"]+)"/g), ...html.matchAll(/<link[^>]+rel="modulepreload"[^>]+href="([^"]+)"/g)]
    .map((m) => m[1]);
  const files = [...new Set(scripts)].map((src) => path.join(dist, src.replace(/^\//, '')));
  const raw = files.reduce((sum, f) => sum + readFileSync(f).length, 0);
  const gzip = files.reduce((sum, f) => sum + gzipSync(readFileSync(f), { level: 9 }).length, 0);
  return { files: files.map((f) => path.basename(f)), raw, gzip };
}

function fakeDevice(i) {
  const android = i % 3 !== 0;
  return {
    vendorUniqueIdentifier: `bench-${String(i).padStart(5, '0')}`, operatingSystem: android ? 'Android' : 'iOS',
    readiness: 'Ready', serialNumber: `BENCH${i}`, model: android ? 'Pixel 7' : 'iPhone14,2',
    manufacturer: android ? 'Google' : 'Apple', friendlyModel: android ? 'Pixel 7' : 'iPhone 13 Pro',
    operatingSystemVersion: android ? '14' : '17.4', vendorDeviceName: `Bench device ${String(i).padStart(4, '0')}`,
    formFactor: 'Phone', usbHubSerialNumber: `HUB${Math.floor(i / 15)}`, usbHubPortNumber: (i % 15) + 1,
    batteryPercent: (i * 7) % 100, batteryStatus: i % 2 ? 'Charging' : 'Discharging', properties: [],
  };
}

if (!existsSync(path.join(dist, 'index.html'))) throw new Error('web/dist is not built: run node scripts/bootstrap.mjs');
const load = initialLoadBytes();
progress(`initial load: ${load.files.join(', ')}`);

const dir = mkdtempSync(path.join(os.tmpdir(), 'devicelab-bench-dashboard-'));
const stops = [];
try {
  let databaseUrl;
  if (process.env.DATABASE_URL) {
    const name = `devicelab_bench_dashboard_${process.pid}`;
    await withServerClient(process.env.DATABASE_URL, (client) => client.query(`CREATE DATABASE ${quoteIdentifier(name)}`));
    stops.push(() => dropDatabaseIfExists(process.env.DATABASE_URL, name));
    databaseUrl = withDatabaseName(process.env.DATABASE_URL, name);
  }
  const adminToken = '11111111-2222-4333-8444-555555555555';
  progress('starting the hub');
  const hub = await startHub({ port: 0, host: '127.0.0.1', linkPort: 0, databaseUrl, dataDir: path.join(dir, 'data'), adminToken, uploadLimitBytes: 1 << 20 });
  stops.push(() => hub.stop());
  await hub.registerGateway('bench-gateway');
  const { id: gatewayId } = await hub.db.selectFrom('gateways').select('id').where('name', '=', 'bench-gateway').executeTakeFirstOrThrow();
  // A real gateway's link holds its advisory lock (hub/src/fleet/link-ownership.ts); without it the lab's leader
  // takes this synthetic gateway's devices Offline as orphaned.
  if (databaseUrl) {
    const { LinkOwnership } = require(path.join(root, 'hub/dist/fleet/link-ownership.js'));
    const link = new LinkOwnership(databaseUrl, createLogger('bench', 'silent'), () => undefined, () => undefined);
    await link.acquire(gatewayId);
    stops.push(() => link.stop());
  }
  for (let i = 0; i < deviceCount; i++) {
    await applyDeviceState(hub.db, gatewayId, fakeDevice(i));
    if ((i + 1) % 250 === 0) progress(`reported ${i + 1}/${deviceCount} devices`);
  }

  const profile = path.join(dir, 'chromium');
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM, headless: true, viewport: { width: 1280, height: 800 }, bypassCSP: true, // the probes below are strings
    args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'],
  });
  stops.push(() => context.close());
  const page = await context.newPage();
  await page.goto(hub.url);
  await page.fill('input[name="login"]', 'admin');
  await page.fill('input[name="token"]', adminToken);
  await page.click('button[type="submit"]');
  const allShown = `${deviceCount} shown`;
  await page.locator('.count', { hasText: allShown }).waitFor({ timeout: 30_000 });

  const render = [];
  const seen = [];
  const fetchOnly = [];
  for (let round = 0; round < rounds; round++) {
    // A fresh load, as a user opening the dashboard: from a blank page, not a reload (which also pays for
    // tearing down the previous live page; BENCH_RELOAD=1 measures that instead).
    if (process.env.BENCH_RELOAD) await page.reload();
    else {
      await page.goto('about:blank');
      await page.goto(hub.url);
    }
    await page.locator('.count', { hasText: allShown }).waitFor({ timeout: 30_000 });
    await page.locator('.row.device').first().waitFor();
    seen.push(await page.evaluate('performance.now()'));
    // The page's own mark (device-grid.tsx), so the probe's polling is not counted; from navigation start.
    render.push(await page.evaluate(`performance.getEntriesByName('devicelab:grid-shown')[0]?.startTime ?? NaN`));
    fetchOnly.push(await page.evaluate(`(async () => { const t = performance.now();
      const r = await fetch('/apiv1/Device', { headers: { 'X-DeviceLab-CSRF': '1' } }); await r.json(); return performance.now() - t; })()`));
  }
  const rows = await page.locator('.row.device').count();
  if (process.env.BENCH_PROFILE) await profileOneLoad(page, allShown, process.env.BENCH_PROFILE, hub.url);

  // Live updates: disable/enable the first device in view; time API call -> DOM, and event -> DOM in the page.
  const first = await page.locator('.row.device').first().getAttribute('data-device-id');
  const endToEnd = [];
  const clientSide = [];
  for (let i = 0; i < updates; i++) {
    const want = i % 2 === 0 ? 'Disabled' : 'Available';
    const started = Date.now();
    const res = await fetch(`${hub.url}/apiv1/Device?action=${want === 'Disabled' ? 'disable' : 'enable'}&id=${first}`, {
      method: 'POST', headers: { authorization: `Basic ${Buffer.from(`admin:${adminToken}`).toString('base64')}` },
    });
    const result = await res.json();
    if (!result.isSuccess) throw new Error(`device change failed: ${JSON.stringify(result)}`);
    // Polled every animation frame in the page: the first frame that shows the new state.
    const handle = await page.waitForFunction(`(() => {
      const cell = document.querySelector('[data-device-id="${first}"] [data-testid="state"]');
      return cell && cell.textContent === '${want}' ? { at: Date.now(), client: performance.now() - window.__devicelabLastEvent() } : false;
    })()`, undefined, { polling: 'raf', timeout: 10_000 }).catch(async (err) => {
      progress(`row now: ${await page.locator(`[data-device-id="${first}"]`).textContent()}; live: ${await page.locator('.live').textContent()}`);
      throw err;
    }).catch(() => undefined);
    if (!handle) {
      progress('live update not seen within 10 s');
      continue;
    }
    const seen = await handle.jsonValue();
    endToEnd.push(seen.at - started);
    clientSide.push(seen.client);
  }

  const renderStats = summarize(render);
  const fetchStats = summarize(fetchOnly);
  process.stdout.write(`dashboard: ${deviceCount} devices, ${rounds} loads, ${updates} live updates\n`);
  printTable(['measure', 'value', 'spread', 'target'], [
    ['initial load JS (gzip -9)', `${(load.gzip / 1024).toFixed(1)} KB`, `raw ${(load.raw / 1024).toFixed(1)} KB`, load.gzip < 300 * 1024 ? 'target < 300 KB: met' : 'target < 300 KB: MISSED'],
    ['grid render (load -> all shown)', `median ${ms(renderStats.median)}`, `p95 ${ms(renderStats.p95)}`, renderStats.p95 < 1000 ? 'target p95 < 1 s: met' : 'target p95 < 1 s: MISSED'],
    ['  as the test probe saw it', `median ${ms(summarize(seen).median)}`, `p95 ${ms(summarize(seen).p95)}`, 'includes playwright polling'],
    ['baseline: GET /Device fetch in page', `median ${ms(fetchStats.median)}`, `p95 ${ms(fetchStats.p95)}`, `ratio ${(renderStats.median / fetchStats.median).toFixed(1)}x`],
    ['live: API call -> DOM', `median ${ms(summarize(endToEnd).median)}`, `p95 ${ms(summarize(endToEnd).p95)}`, summarize(endToEnd).p95 < 1000 ? 'target < 1 s: met' : 'target < 1 s: MISSED'],
    ['live: event -> DOM (client)', `median ${ms(summarize(clientSide).median)}`, `p95 ${ms(summarize(clientSide).p95)}`, ''],
    ['rows in the DOM (virtualised)', String(rows), `of ${deviceCount}`, ''],
  ]);
} catch (err) {
  process.stderr.write(`benchmark failed: ${err?.stack ?? err}\n`);
  process.exitCode = 1;
} finally {
  for (const stop of stops.reverse()) await stop().catch((err) => progress(`cleanup failed: ${err?.message ?? err}`));
  rmSync(dir, { recursive: true, force: true });
}

/** One fresh load (from about:blank) under Chromium's tracing (CDP Tracing domain), saved as a DevTools trace; prints its request waterfall. */
async function profileOneLoad(page, allShown, file, hubUrl) {
  const cdp = await page.context().newCDPSession(page);
  const chunks = [];
  cdp.on('Tracing.dataCollected', ({ value }) => chunks.push(...value));
  const complete = new Promise((resolve) => cdp.once('Tracing.tracingComplete', resolve));
  await cdp.send('Tracing.start', {
    transferMode: 'ReportEvents',
    traceConfig: { includedCategories: ['devtools.timeline', 'disabled-by-default-devtools.timeline', 'v8.execute', 'blink.user_timing', 'loading', 'disabled-by-default-v8.cpu_profiler'] },
  });
  await page.goto('about:blank');
  await page.goto(hubUrl);
  await page.locator('.count', { hasText: allShown }).waitFor({ timeout: 30_000 });
  const shownAt = await page.evaluate('performance.now()');
  await cdp.send('Tracing.end');
  await complete;
  const { writeFileSync } = await import('node:fs');
  writeFileSync(file, JSON.stringify({ traceEvents: chunks }));
  const entries = await page.evaluate(`performance.getEntriesByType('resource').map((e) => ({ name: e.name.replace(location.origin, ''), start: e.startTime, end: e.responseEnd }))`);
  const nav = await page.evaluate(`(() => { const n = performance.getEntriesByType('navigation')[0]; return { fetchStart: n.fetchStart, requestStart: n.requestStart, responseStart: n.responseStart, responseEnd: n.responseEnd, unload: n.unloadEventEnd - n.unloadEventStart }; })()`);
  progress(`profile: trace in ${file}; all shown at ${ms(shownAt)}; navigation ${JSON.stringify(nav)}`);
  for (const e of entries) progress(`  ${ms(e.start).padStart(9)} -> ${ms(e.end).padStart(9)}  ${e.name}`);
}
