/**
 * The web dashboard in Debian's Chromium against a whole lab (hub serving web/dist, gateway, simulated Android
 * devices on a simulated Cambrionix hub): what a tester and an operator do, checked on the page. Screenshots of
 * the grid and the device page go to a temporary folder (DEVICELAB_SCREENSHOTS=<dir> keeps them elsewhere).
 */
import { existsSync, mkdirSync, mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Locator, Page } from 'playwright-core';
import { DEFAULT_WEB_DIR } from '../../src/config';
import { fixture } from '../../../scripts/jest/shared-files';
import { launchBrowser, type TestBrowser, signIn } from '../support/browser';
import { startTestLab, waitFor, type TestLab } from '../support/lab';

let lab: TestLab;
let browser: TestBrowser;
let page: Page;
const shots = process.env.DEVICELAB_SCREENSHOTS ?? mkdtempSync(path.join(os.tmpdir(), 'devicelab-dashboard-shots-'));

beforeAll(async () => {
  if (!existsSync(path.join(DEFAULT_WEB_DIR, 'index.html'))) throw new Error('web/dist is not built: run node scripts/bootstrap.mjs');
  mkdirSync(shots, { recursive: true });
  lab = await startTestLab({ androidCount: 3, usbHub: {} });
  browser = await launchBrowser();
  page = await browser.context.newPage();
}, 120_000);
afterAll(async () => {
  await browser?.close();
  await lab?.stop();
}, 60_000);

const row = (name: string) => page.locator('.row.device', { hasText: name });

it('signs in with login and API token and shows every device in the grid', async () => {
  await signIn(page, lab.hub.url, 'admin', lab.adminToken);
  await page.locator('.row.device').first().waitFor();
  await page.locator('.live.on').waitFor();
  expect(await page.locator('.row.device').count()).toBe(3);
  const names = await page.locator('.row.device .name strong').allTextContents();
  expect(names).toHaveLength(3);
  expect(await page.locator('.row.device [data-testid="state"]').allTextContents()).toEqual(['Available', 'Available', 'Available']);
  // The cookie is HTTP-only: page scripts cannot read it.
  expect(await page.evaluate('document.cookie')).toBe('');
}, 60_000);

it('a simulated unplug turns the device Offline in the grid without a reload, and a plug brings it back', async () => {
  const name = (await page.locator('.row.device .name strong').first().textContent())!;
  const device = await deviceNamed(name);
  await page.evaluate('window.marker = 1');
  await lab.world.unplug(serialOf(device));
  await waitForRowState(name, 'Offline', 10_000);
  await lab.world.plug(serialOf(device));
  await waitForRowState(name, 'Available', 20_000);
  // Same page all along: no reload happened.
  expect(await page.evaluate('window.marker')).toBe(1);
}, 60_000);

it('an unauthorized device reads Unauthorized, with the gateway\'s reason, in the API, the grid and the device page', async () => {
  const target = lab.devices[2];
  const name = (await deviceBySerial(target.serial)).name;
  await lab.world.setUnauthorized(target.serial, true);
  try {
    // adb says "authorizing" for a moment before "unauthorized": wait for the settled reason.
    await waitFor(async () => /USB debugging is not authorized/.test((await deviceBySerial(target.serial)).readinessReason ?? ''),
      15_000, 'the unauthorized reason in GET /Device');
    expect(await deviceBySerial(target.serial)).toMatchObject({ availability: 'Offline', readiness: 'Unauthorized' });
    await waitForRowState(name, 'Unauthorized', 20_000);
    await row(name).locator('[data-testid="state-reason"]', { hasText: 'USB debugging is not authorized' }).waitFor();
    // The README's grid picture: a free device, and one that says why it cannot be used.
    await page.screenshot({ path: path.join(shots, 'grid.png') });
    await row(name).click();
    await page.locator('[data-testid="device-state"]:text-is("Unauthorized")').waitFor();
    await page.locator('[data-testid="device-state-reason"]', { hasText: 'accept the prompt on the device' }).waitFor();
  } finally {
    await lab.world.setUnauthorized(target.serial, false);
  }
  await page.click('nav >> text=Devices');
  // Authorized again, adb reconnects and the gateway reads the device anew: slow on a loaded machine. Waiting for the
  // API first keeps that apart from what is checked next, the grid following the record live.
  await waitFor(async () => (await deviceBySerial(target.serial)).readiness === 'Ready', 45_000, 'the device Ready again in GET /Device');
  await waitForRowState(name, 'Available', 10_000);
  expect((await deviceBySerial(target.serial)).readinessReason).toBeUndefined();
}, 90_000);

it('uploads an APK with a progress bar', async () => {
  await page.click('nav >> text=Apps');
  await page.setInputFiles('input[type="file"]', fixture('ApiDemos-debug.apk'));
  const progress = page.locator('.progress.upload');
  await progress.waitFor();
  await page.locator('.progress.upload[data-phase="done"]').waitFor({ timeout: 60_000 });
  expect(await progress.locator('progress').getAttribute('value')).toBe('1');
  await page.locator('.apps-table tr', { hasText: 'io.appium.android.apis' }).waitFor();
}, 90_000);

it('the library disables an app (the hub then refuses to install it) and enables it again', async () => {
  const appRow = page.locator('.apps-table tr', { hasText: 'io.appium.android.apis' }).first();
  const id = (await appRow.getAttribute('data-app-id'))!;
  const enabledOf = async () => ((await (await lab.api(lab.admin, `/Application?id=${id}`)).json()) as { enabled: boolean }[])[0].enabled;
  await appRow.locator('button:text-is("Disable")').click();
  await appRow.locator('[data-testid="app-enabled"]:text-is("no")').waitFor();
  expect(await enabledOf()).toBe(false);
  const refused = await (await lab.api(lab.admin, `/Application?action=install&id=${id}&deviceId=${lab.devices[0].serial}&wait=true`, { method: 'POST' })).json();
  expect(refused).toEqual({ isSuccess: false, errorMessage: expect.stringMatching(/is disabled/) });
  await appRow.locator('button:text-is("Enable")').click();
  await appRow.locator('[data-testid="app-enabled"]:text-is("yes")').waitFor();
  expect(await enabledOf()).toBe(true);
}, 30_000);

it('on the device page: retain, install from the library, switch the USB port, see a metrics plot', async () => {
  await page.click('nav >> text=Devices');
  const target = lab.devices[1];
  const name = (await deviceBySerial(target.serial)).name;
  await row(name).click();
  await page.locator('h1', { hasText: name }).waitFor();

  await page.click('button:has-text("Retain")');
  await page.locator('[data-testid="device-state"]', { hasText: 'Retained by you' }).waitFor({ timeout: 10_000 });
  expect((await deviceBySerial(target.serial)).retainedById).toBeDefined();
  // The lease: no maximum length in this lab, released after the default 30 idle minutes.
  await page.locator('[data-testid="lease-end"]', { hasText: 'no maximum' }).waitFor();
  await page.locator('[data-testid="idle-release"]', { hasText: /in (29|30) min/ }).waitFor();

  const select = page.locator('label:has-text("Install from the library") select');
  await select.selectOption({ label: await select.locator('option', { hasText: 'API Demos' }).first().textContent() ?? '' });
  // The package manager takes its time once the bytes are in, so the page sees the install running with a percent.
  await lab.world.setInstallDelay(target.serial, 3000);
  // The first poll of the job meets the hub's answer while PostgreSQL restarts: the page polls on, the install is not
  // reported failed while it runs.
  let unavailable = 0;
  await page.route('**/apiv1/Async?*', async (route) => {
    if (unavailable++ > 0) return route.continue();
    return route.fulfill({ status: 503, contentType: 'application/json',
      body: JSON.stringify({ isSuccess: false, errorMessage: 'The records store (PostgreSQL) is unavailable; try again in a few seconds.' }) });
  });
  await page.click('button:has-text("Install")');
  const bar = page.locator('.progress[role="status"][data-percent]');
  await bar.waitFor({ timeout: 30_000 });
  // One look at the bar (it moves on between separate reads): its percent, the progress element and the text agree.
  const shown = await bar.evaluate((element) => ({
    percent: element.getAttribute('data-percent'), value: element.querySelector('progress')?.getAttribute('value'), text: element.textContent,
  }));
  const percent = Number(shown.percent);
  expect(percent).toBeGreaterThanOrEqual(0);
  expect(percent).toBeLessThan(100);
  expect(shown.value).toBe(String(percent));
  expect(shown.text).toContain(`Install in progress: ${percent}%`);
  // The outcome: "Install: done." or "Install failed: <why>" (the assertion then shows why).
  const outcome = page.locator('p[role="status"]').filter({ hasText: /^Install(:| failed)/ });
  await outcome.waitFor({ timeout: 60_000 });
  expect(await outcome.textContent()).toBe('Install: done.');
  expect(unavailable).toBeGreaterThan(1);
  await page.unroute('**/apiv1/Async?*');
  await lab.world.setInstallDelay(target.serial, 0);
  await page.locator('.apps li', { hasText: 'io.appium.android.apis' }).waitFor();

  // A device that refuses the install: the page shows the device's reason and the advice for its code, as an error.
  await lab.world.failNextInstall(target.serial, 'INSUFFICIENT_STORAGE');
  await page.click('button:has-text("Install")');
  const refused = page.locator('p[role="status"]').filter({ hasText: /^Install failed/ });
  await refused.waitFor({ timeout: 60_000 });
  expect(await refused.getAttribute('class')).toBe('error');
  expect(await refused.getAttribute('data-error-code')).toBe('INSTALL_FAILED_INSUFFICIENT_STORAGE');
  expect(await refused.textContent()).toMatch(/INSTALL_FAILED_INSUFFICIENT_STORAGE.* The device is out of storage: uninstall apps from it/);

  await page.click('fieldset.port button:has-text("Off")');
  await page.locator('[data-testid="device-state"]', { hasText: 'Offline' }).waitFor({ timeout: 15_000 });
  await page.click('fieldset.port button:has-text("Data")');
  await page.locator('[data-testid="device-state"]', { hasText: 'Retained by you' }).waitFor({ timeout: 30_000 });

  // The gateway samples every 10 s: once the hub has samples of this device, the page (reloaded) plots them.
  const id = (await deviceBySerial(target.serial)).id;
  await waitFor(async () => {
    const body: any = await (await lab.api(lab.admin, `/Device/Metrics?id=${id}&table=sample&fields=Used&start=${new Date(Date.now() - 600_000).toISOString()}`)).json();
    return (body.results?.[0]?.series?.[0]?.values?.length ?? 0) > 0;
  }, 40_000, 'a memory sample of the device');
  await page.reload();
  await page.locator('.plot canvas').waitFor({ timeout: 30_000 });
  expect(Number(await page.locator('.plot').getAttribute('data-points'))).toBeGreaterThan(0);
  await page.screenshot({ path: path.join(shots, 'device.png') });
}, 150_000);

it('the Lab page shows the gateway connected with its version, then disconnected with last seen and its hub errored', async () => {
  await page.click('nav >> text=Lab');
  const gateway = page.locator('article.gateway', { hasText: 'lab-gateway' });
  await gateway.locator('[data-testid="gateway-state"]:text-is("Connected")').waitFor({ timeout: 10_000 });
  const listed = await (await lab.api(lab.admin, '/Gateway')).json() as { name: string; version?: string }[];
  const version = listed.find((g) => g.name === 'lab-gateway')?.version;
  expect(version).toBeTruthy();
  expect(await gateway.locator('[data-testid="gateway-version"]').textContent()).toBe(version);

  // Reports: the availability report drawn as a chart beside its table (the lab has been online for a while).
  const chart = page.locator('.report-chart[aria-label="Devices online and in use over time"]');
  await chart.locator('canvas').waitFor({ timeout: 10_000 });
  expect(Number(await chart.getAttribute('data-points'))).toBeGreaterThan(0);

  await lab.stopGateway();
  // Live, without a reload: the page keeps the stopped gateway, disconnected, with the hub it last reported.
  await gateway.locator('[data-testid="gateway-state"]:text-is("Disconnected")').waitFor({ timeout: 15_000 });
  expect(await gateway.locator('[data-testid="gateway-last-seen"]').textContent()).not.toBe('—');
  await gateway.locator('.hub .error').first().waitFor({ timeout: 10_000 });
  await lab.restartGateway();
}, 60_000);

it('signs out: the sign-in form is back and the API no longer accepts the old cookie', async () => {
  const cookies = await browser.context.cookies();
  const session = cookies.find((c) => c.name === 'devicelab_session')!;
  expect(session).toMatchObject({ httpOnly: true, sameSite: 'Strict' });
  await page.click('button:has-text("Sign out")');
  await page.locator('input[name="login"]').waitFor();
  const res = await fetch(`${lab.hub.url}/apiv1/Device`, { headers: { cookie: `devicelab_session=${session.value}` } });
  expect(res.status).toBe(401);
  await page.reload();
  await page.locator('input[name="token"]').waitFor();
}, 30_000);

it('keyboard only: signs in through labelled inputs, opens a device page and retains the device', async () => {
  await page.goto(lab.hub.url);
  await page.getByLabel('Login').waitFor();
  await page.getByLabel('API token').waitFor();
  await page.getByLabel('Login').focus();
  await page.keyboard.type('admin');
  await page.keyboard.press('Tab');
  await page.keyboard.type(lab.adminToken);
  await page.keyboard.press('Enter');
  const name = (await deviceBySerial(lab.devices[0].serial)).name;
  await waitForRowState(name, 'Available', 30_000);
  await tabUntil(page.locator('.row.device:focus', { hasText: name }));
  await page.keyboard.press('Enter');
  await page.locator('h1', { hasText: name }).waitFor();
  await tabUntil(page.locator('button:focus', { hasText: /^Retain$/ }));
  await page.keyboard.press('Enter');
  await page.locator('[data-testid="device-state"]', { hasText: 'Retained by you' }).waitFor({ timeout: 10_000 });
}, 60_000);

/** Presses Tab until `focused` (a `:focus` locator) matches (at most 60 times), as a keyboard user moves on. */
async function tabUntil(focused: Locator): Promise<void> {
  for (let i = 0; i < 60; i += 1) {
    await page.keyboard.press('Tab');
    if (await focused.count() > 0) return;
  }
  throw new Error('Tab never reached the element');
}

/** Waits, without reloading, until the grid row of `name` shows `state` (the page's own live update). */
async function waitForRowState(name: string, state: string, timeoutMs: number): Promise<void> {
  await row(name).locator(`[data-testid="state"]:text-is("${state}")`).waitFor({ timeout: timeoutMs });
}

interface WireDevice {
  id: string; name: string; serialNumber: string; vendorUniqueIdentifier: string; retainedById?: string;
  availability: string; readiness: string; readinessReason?: string;
}

async function devices(): Promise<WireDevice[]> {
  return (await lab.api(lab.admin, '/Device')).json() as Promise<WireDevice[]>;
}
async function deviceNamed(name: string): Promise<WireDevice> {
  return (await devices()).find((d) => d.name === name)!;
}
async function deviceBySerial(serial: string): Promise<WireDevice> {
  return (await devices()).find((d) => d.serialNumber === serial)!;
}
/** The labsim serial (adb serial) of a device record. */
function serialOf(device: WireDevice): string {
  return lab.devices.find((spec) => spec.serial === device.serialNumber)!.serial;
}
