/**
 * Debian's Chromium driven by playwright-core (no browser download): headless, a fresh profile per launch, no
 * background traffic. The bootstrap installs `chromium` (apt) like adb.
 */
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { chromium, type BrowserContext, type Page } from 'playwright-core';

export const CHROMIUM = process.env.DEVICELAB_CHROMIUM ?? '/usr/bin/chromium';

export interface TestBrowser {
  context: BrowserContext;
  close(): Promise<void>;
}

export async function launchBrowser(viewport = { width: 1280, height: 800 }): Promise<TestBrowser> {
  if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} not found: run the bootstrap (it installs Debian's chromium) or apt-get install chromium`);
  const profile = mkdtempSync(path.join(os.tmpdir(), 'devicelab-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    viewport,
    args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'],
  });
  return {
    context,
    async close() {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}

/**
 * Opens the dashboard at `hubUrl`, submits its sign-in form with a login and API token and waits for the answer:
 * signed in (the Sign out button) or refused (the form's alert). A navigation before then would abort the sign-in
 * request and leave the page signed out.
 */
export async function signIn(page: Page, hubUrl: string, login: string, token: string): Promise<void> {
  await page.goto(hubUrl);
  await page.fill('input[name="login"]', login);
  await page.fill('input[name="token"]', token);
  await page.click('button[type="submit"]');
  await page.locator('header.topbar button:text-is("Sign out"), form.signin [role="alert"]').first().waitFor({ timeout: 30_000 });
}
