/**
 * The dashboard's views of the lab read as a user needs them, in Debian's Chromium against a whole lab: two uploads
 * of one APK told apart in the library (counter, date, uploader, size), a metrics line broken between marker periods, the availability report
 * without its empty hours, usage in readable durations, and the gateway's own address and "Connected now".
 * Screenshots go to a temporary folder (DEVICELAB_SCREENSHOTS=<dir> keeps them elsewhere).
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Page } from 'playwright-core';
import { DEFAULT_SAMPLING } from '@devicelab/gateway';
import { DEFAULT_WEB_DIR } from '../../src/config';
import { fixture } from '../../../scripts/jest/shared-files';
import { launchBrowser, type TestBrowser, signIn } from '../support/browser';
import { startTestLab, waitFor, type TestLab } from '../support/lab';

jest.setTimeout(120_000);

let lab: TestLab;
let browser: TestBrowser;
let page: Page;
let deviceId: string;
const shots = process.env.DEVICELAB_SCREENSHOTS ?? mkdtempSync(path.join(os.tmpdir(), 'devicelab-dashboard-shots-'));

const api = (pathAndQuery: string, init?: RequestInit) => lab.api(lab.admin, pathAndQuery, init).then((res) => res.json() as Promise<any>);

beforeAll(async () => {
  if (!existsSync(path.join(DEFAULT_WEB_DIR, 'index.html'))) throw new Error('web/dist is not built: run node scripts/bootstrap.mjs');
  mkdirSync(shots, { recursive: true });
  // A sample a second, so that marker periods and the pause between them fill in quickly.
  lab = await startTestLab({ androidCount: 1, sampling: { ...DEFAULT_SAMPLING, sampleIntervalMs: 1000, healthCheckIntervalMs: 0, logLinesPerSecond: 0 } });
  deviceId = (await api('/Device'))[0].id;
  browser = await launchBrowser();
  page = await browser.context.newPage();
  await signIn(page, lab.hub.url, 'admin', lab.adminToken);
  await page.locator('.row.device').first().waitFor();
}, 120_000);
afterAll(async () => {
  await browser?.close();
  await lab?.stop();
}, 60_000);

it('the library tells two uploads of one APK apart (version counter, upload date, uploader, size) and names each warning once', async () => {
  const apk = readFileSync(fixture('ApiDemos-debug.apk'));
  for (let i = 0; i < 2; i += 1) {
    const form = new FormData();
    form.append('file', new Blob([apk]), 'ApiDemos-debug.apk');
    expect((await api('/Application?verb=add&wait=true', { method: 'POST', body: form })).isSuccess).toBe(true);
  }
  const apps = await api('/Application') as { id: string; versionCounter: number; createdDate: string; uploadedByName: string }[];
  expect(apps.map((app) => app.uploadedByName)).toEqual(['admin', 'admin']);
  await page.click('nav >> text=Apps');
  for (const app of apps) {
    const row = page.locator(`.apps-table tr[data-app-id="${app.id}"]`);
    await row.waitFor();
    expect(await row.locator('[data-testid="version-counter"]').textContent()).toBe(`(v${app.versionCounter})`);
    const uploaded = await page.evaluate((date) => new Date(date).toLocaleString(), app.createdDate);
    const upload = await row.locator('[data-testid="upload"]').textContent();
    expect(upload).toContain(uploaded);
    expect(upload).toContain(`${(apk.length / 1024 / 1024).toFixed(1)} MiB`);
    expect(upload).toContain('by admin');
  }

  // An IPA whose profile expired: the hub's warning says so, and the page does not say it a second time.
  const form = new FormData();
  form.append('file', new Blob([readFileSync(fixture('app-info-iphone.ipa'))]), 'app-info-iphone.ipa');
  const ipa = await api('/Application?verb=add&wait=true', { method: 'POST', body: form });
  expect(ipa.data.applicationErrors).toEqual([expect.stringMatching(/^The provisioning profile expired on /)]);
  await page.reload();
  const ipaRow = page.locator(`.apps-table tr[data-app-id="${ipa.data.id}"]`);
  await ipaRow.locator('.warn').first().waitFor();
  const warned = await ipaRow.locator('.warn').allTextContents();
  expect(warned.filter((w) => /expired/i.test(w))).toHaveLength(1);
  await page.screenshot({ path: path.join(shots, 'library.png'), fullPage: true });
});

/** How many `sample` rows the device has since `since`. */
async function samplesSince(since: Date): Promise<number> {
  const body = await api(`/Device/Metrics?id=${deviceId}&table=sample&fields=Used&start=${since.toISOString()}`);
  return body.results?.[0]?.series?.[0]?.values?.length ?? 0;
}

async function markerPeriod(): Promise<void> {
  const started = new Date();
  expect(await api(`/Device/Metrics?action=startmarker&id=${deviceId}&name=checkout`, { method: 'POST' })).toEqual({ isSuccess: true });
  await waitFor(async () => (await samplesSince(started)) >= 3, 30_000, 'samples inside the marker period');
  expect(await api(`/Device/Metrics?action=stopmarker&id=${deviceId}&name=checkout`, { method: 'POST' })).toEqual({ isSuccess: true });
}

it('a metrics plot over two marker periods draws two lines, not one across the pause between them', async () => {
  await markerPeriod();
  const paused = new Date();
  await waitFor(async () => (await samplesSince(paused)) >= 10, 40_000, 'ten samples between the marker periods');
  await markerPeriod();
  const marked = await api(`/Device/Metrics?id=${deviceId}&table=sample&marker=checkout&markerLimit=5&fields=Used`);
  expect(marked.results[0].series).toHaveLength(2);

  await page.goto(`${lab.hub.url}/devices/${deviceId}`);
  await page.getByLabel('Marker').fill('checkout');
  await page.getByLabel('Marker').press('Tab');
  const plot = page.locator('.metrics .plot');
  await plot.locator('canvas').waitFor({ timeout: 20_000 });
  await waitFor(async () => Number(await plot.getAttribute('data-points')) >= 6, 10_000, 'both periods plotted');
  expect(await plot.getAttribute('data-lines')).toBe('2');
  await page.locator('.metrics').screenshot({ path: path.join(shots, 'metrics-markers.png') });
});

it('reports: availability lists the periods something was online, usage reads in minutes or seconds, not "0.00 h"', async () => {
  expect((await api(`/Device?action=retain&id=${deviceId}`, { method: 'POST' })).isSuccess).toBe(true);
  expect(await api(`/Device?action=release&id=${deviceId}`, { method: 'POST' })).toEqual({ isSuccess: true });
  await page.click('nav >> text=Lab');
  // The waiting line, for those who may take devices back: nobody waits in this lab now.
  await page.locator('[data-testid="waiting-line"]', { hasText: 'Nobody is waiting for a device.' }).waitFor();
  const reports = page.locator('section.card', { has: page.locator('h2:text-is("Reports")') });
  const periods = reports.locator('.availability-table tbody tr');
  await periods.first().waitFor({ timeout: 10_000 });
  // A week of hourly windows, almost all before this lab existed: only the periods with devices online are rows.
  const rows = await periods.evaluateAll((trs) => trs.map((tr) => [...tr.querySelectorAll('td')].map((td) => td.textContent)));
  expect(rows.length).toBeLessThan(5);
  for (const [, , online, inUse] of rows) expect(Number(online) + Number(inUse)).toBeGreaterThan(0);
  const usage = reports.locator('table.table').first().locator('td:last-child');
  await usage.first().waitFor();
  expect(await usage.first().textContent()).toMatch(/^\d+ (s|min)$/);
  expect(await reports.textContent()).not.toContain('0.00 h');
  await reports.screenshot({ path: path.join(shots, 'reports.png') });
});

it('the gateway view shows the gateway\'s own address and "Connected now", then when it was last seen', async () => {
  const [gateway] = await api('/Gateway') as { name: string; publicAddress: string; publicPort: number }[];
  const card = page.locator('article.gateway', { hasText: gateway.name });
  await card.waitFor();
  expect(await card.locator('[data-testid="gateway-address"]').textContent()).toBe(`${gateway.publicAddress}:${gateway.publicPort}`);
  expect(await card.locator('[data-testid="gateway-last-seen"]').textContent()).toBe('Connected now');
  await lab.stopGateway();
  await card.locator('[data-testid="gateway-state"]:text-is("Disconnected")').waitFor({ timeout: 15_000 });
  const [away] = await api('/Gateway') as { lastSeenAt: string }[];
  const lastSeen = await page.evaluate((date) => new Date(date).toLocaleString(), away.lastSeenAt);
  expect(await card.locator('[data-testid="gateway-last-seen"]').textContent()).toBe(lastSeen);
  await lab.restartGateway();
});
