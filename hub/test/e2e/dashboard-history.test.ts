/**
 * The device page's history in Chromium: it names the app of an install event (and a failed install's reason),
 * and events recorded while the page is open appear without a reload.
 */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import type { Page } from 'playwright-core';
import { DEFAULT_WEB_DIR } from '../../src/config';
import { fixture } from '../../../scripts/jest/shared-files';
import { launchBrowser, type TestBrowser, signIn } from '../support/browser';
import { startTestLab, type TestLab } from '../support/lab';

let lab: TestLab;
let browser: TestBrowser;
let page: Page;

beforeAll(async () => {
  if (!existsSync(path.join(DEFAULT_WEB_DIR, 'index.html'))) throw new Error('web/dist is not built: run node scripts/bootstrap.mjs');
  lab = await startTestLab({ androidCount: 1 });
  browser = await launchBrowser();
  page = await browser.context.newPage();
}, 120_000);
afterAll(async () => {
  await browser?.close();
  await lab?.stop();
}, 60_000);

const post = async (pathAndQuery: string, body?: FormData) =>
  (await lab.api(lab.admin, pathAndQuery, { method: 'POST', body })).json() as Promise<{ isSuccess: boolean; data?: unknown }>;

it('the open device page shows installs as they happen, with the app and the failure reason', async () => {
  const form = new FormData();
  form.append('upload', new Blob([readFileSync(fixture('ContactManager.apk'))]), 'ContactManager.apk');
  const app = (await post('/Application?add&wait=true', form)).data as { id: string; version: string };
  const [device] = await (await lab.api(lab.admin, '/Device')).json() as { id: string; name: string }[];

  await signIn(page, lab.hub.url, 'admin', lab.adminToken);
  await page.locator('.live.on').waitFor();
  await page.locator('.row.device', { hasText: device.name }).click();
  await page.locator('h1', { hasText: device.name }).waitFor();
  const history = page.locator('.card', { has: page.locator('h2:text-is("History")') });
  await history.locator('table').waitFor();
  await page.evaluate('window.marker = 1');

  expect(await post(`/Application?action=install&id=${app.id}&deviceId=${device.id}&wait=true`)).toMatchObject({ isSuccess: true });
  await history.locator('tr', { hasText: `Application Installed: Contact Manager (${app.version})` }).waitFor({ timeout: 10_000 });

  await lab.world.failNextInstall(lab.devices[0].serial, 'INSUFFICIENT_STORAGE');
  expect(await post(`/Application?action=install&id=${app.id}&deviceId=${device.id}&wait=true`)).toMatchObject({ isSuccess: false });
  await history.locator('tr', { hasText: 'Application Install Failed: Contact Manager (Failure [INSTALL_FAILED_INSUFFICIENT_STORAGE])' })
    .waitFor({ timeout: 10_000 });
  // Same page all along: no reload happened.
  expect(await page.evaluate('window.marker')).toBe(1);
}, 90_000);
