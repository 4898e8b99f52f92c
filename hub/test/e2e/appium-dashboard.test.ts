/**
 * The dashboard's device page while an Appium session runs on the device (through the hub's /Appium, the real
 * Appium server and UiAutomator2 driver): who runs it, since when, its last command, and the session's Appium
 * log; the panel goes when the session is deleted, without a reload.
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import type { Page } from 'playwright-core';
import { WdioUser } from '../../../labsim/test/appium/wdio-user';
import { DEFAULT_WEB_DIR } from '../../src/config';
import { launchBrowser, type TestBrowser, signIn } from '../support/browser';
import { startTestLab, type TestLab } from '../support/lab';

jest.setTimeout(240_000);

let lab: TestLab;
let browser: TestBrowser;
let page: Page;
let user: WdioUser;

beforeAll(async () => {
  if (!existsSync(path.join(DEFAULT_WEB_DIR, 'index.html'))) throw new Error('web/dist is not built: run node scripts/bootstrap.mjs');
  lab = await startTestLab({ androidCount: 1 });
  browser = await launchBrowser();
  page = await browser.context.newPage();
  user = new WdioUser();
}, 120_000);
afterAll(async () => {
  await user?.close();
  await browser?.close();
  await lab?.stop();
}, 60_000);

it('shows the running automation session and its log, and drops it when the session ends', async () => {
  const tester = await lab.addUser('suite@example.com', ['Tester']);
  const { sessionId } = await user.session({
    protocol: 'http', hostname: '127.0.0.1', port: Number(new URL(lab.hub.url).port), path: '/Appium',
    user: tester.login, key: tester.token, connectionRetryTimeout: 180_000, capabilities: { platformName: 'Android' },
  });
  expect(await user.browser<string>('getPageSource')).toContain('<hierarchy');
  const [device] = await (await lab.api(lab.admin, '/Device')).json() as { id: string; name: string }[];

  await signIn(page, lab.hub.url, 'admin', lab.adminToken);
  await page.locator('.live.on').waitFor();
  await page.locator('.row.device', { hasText: device.name }).click();
  await page.locator('h1', { hasText: device.name }).waitFor();
  const panel = page.locator('[data-testid="automation-session"]');
  await panel.waitFor({ timeout: 15_000 });
  // The record names the session by its signature; the administrator's session view gives the whole id.
  await panel.locator('code', { hasText: sessionId }).waitFor({ timeout: 15_000 });
  await panel.locator('[data-testid="automation-user"]', { hasText: tester.login }).waitFor();
  expect(await panel.locator('[data-testid="automation-last-command"]').textContent()).not.toBe('—');
  // The session's own Appium log lines, readable.
  await panel.locator('pre.log', { hasText: sessionId }).waitFor({ timeout: 15_000 });
  expect(await page.locator('.facts dd', { hasText: '(automation session)' }).count()).toBe(1);

  await user.browser('deleteSession');
  await panel.waitFor({ state: 'detached', timeout: 15_000 });
});
