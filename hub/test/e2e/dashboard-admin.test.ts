/**
 * Admin work in the dashboard, in Debian's Chromium against a whole lab: a refused sign-in, adding a user, its token
 * (shown once, then used for an API call), roles within the admin's own rights, adb keys, deactivation; then the new
 * user retains a device and opens it with the `adb connect` and `devicelab connect` lines the device page shows, on a
 * phone-sized page.
 * Screenshots go to a temporary folder (DEVICELAB_SCREENSHOTS=<dir> keeps them elsewhere).
 */
import { existsSync, mkdirSync, mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Page } from 'playwright-core';
import { DEFAULT_WEB_DIR } from '../../src/config';
import { cliEnvironment, startCli } from '../../../cli/test/support/cli-process';
import { startAdbClient, type AdbClient } from '../support/adb-client';
import { launchBrowser, type TestBrowser, signIn as signInOnDashboard } from '../support/browser';
import { startTestLab, waitFor, type TestLab } from '../support/lab';

jest.setTimeout(120_000);

let lab: TestLab;
let browser: TestBrowser;
let page: Page;
let adbClient: AdbClient;
const shots = process.env.DEVICELAB_SCREENSHOTS ?? mkdtempSync(path.join(os.tmpdir(), 'devicelab-dashboard-shots-'));
const QA = 'qa@lab.test';
/** The token the dashboard showed for QA. */
let qaToken = '';

beforeAll(async () => {
  if (!existsSync(path.join(DEFAULT_WEB_DIR, 'index.html'))) throw new Error('web/dist is not built: run node scripts/bootstrap.mjs');
  mkdirSync(shots, { recursive: true });
  lab = await startTestLab({ androidCount: 1 });
  adbClient = await startAdbClient('qa');
  browser = await launchBrowser();
  page = await browser.context.newPage();
}, 120_000);
afterAll(async () => {
  await adbClient?.stop();
  await browser?.close();
  await lab?.stop();
}, 60_000);

/** Signs in afresh (a session cookie of an earlier sign-in is dropped first). */
async function signIn(login: string, token: string): Promise<void> {
  await browser.context.clearCookies();
  await signInOnDashboard(page, lab.hub.url, login, token);
}

const usersCard = () => page.locator('section[aria-labelledby="users-title"]');
const userRow = (login: string) => usersCard().locator(`tr[data-user="${login}"]`);
const detail = (login: string) => usersCard().locator(`article[aria-label="Manage ${login}"]`);
const api = (credentials: { login: string; token: string }, pathAndQuery: string, init?: RequestInit) =>
  lab.api(credentials, pathAndQuery, init).then((res) => res.json() as Promise<any>);

it('a wrong token at sign-in says "wrong login or token", not "Signed out"', async () => {
  await signIn('admin', 'not-the-token');
  const alert = page.locator('form.signin [role="alert"]');
  await alert.waitFor();
  expect(await alert.textContent()).toMatch(/wrong login or token/);
  expect(await alert.textContent()).not.toMatch(/Signed out/);
});

it('an admin adds a user and gives it a token, shown once, that works for an API call', async () => {
  await signIn('admin', lab.adminToken);
  await page.locator('.row.device').first().waitFor();
  await page.click('nav >> text=Lab');
  const add = usersCard().locator('form[aria-label="Add a user"]');
  await add.getByLabel('Login (e-mail)').fill(QA);
  await add.getByLabel('First name').fill('Quinn');
  await add.locator('button[type="submit"]').click();
  await userRow(QA).waitFor();
  expect((await api(lab.admin, `/User?userName=${QA}`))[0]).toMatchObject({ email: QA, firstName: 'Quinn', roles: ['Tester'], isActive: true });

  // Adding selects the new user: its token is one click away.
  await detail(QA).locator('button:text-is("Generate token")').click();
  const shown = detail(QA).locator('.token-once');
  await shown.waitFor();
  expect(await shown.textContent()).toMatch(/shown once/);
  await shown.locator('button', { hasText: 'Copy' }).waitFor();
  qaToken = (await shown.locator('code[aria-label="API token"]').textContent())!;
  expect(qaToken).toMatch(/\S{16,}/);
  const self = await api({ login: QA, token: qaToken }, '/User');
  expect(self).toEqual([expect.objectContaining({ email: QA })]);
  await page.screenshot({ path: path.join(shots, 'admin-token.png'), fullPage: true });

  // Once: closing and opening the user again does not show it.
  await userRow(QA).locator('button:text-is("Close")').click();
  await userRow(QA).locator('button:text-is("Manage")').click();
  await detail(QA).waitFor();
  expect(await detail(QA).locator('.token-once').count()).toBe(0);
});

it('roles: an admin creates a role and assigns it; a user admin is offered only the roles it holds and sees the hub refuse the rest', async () => {
  const rolesBox = usersCard().locator('.roles');
  await rolesBox.locator('button:text-is("New role")').click();
  const form = rolesBox.locator('form[aria-label="New role"]');
  await form.getByLabel('Role name').fill('Operator');
  for (const e of ['DeviceList', 'DeviceConnect', 'DeviceReboot']) await form.getByLabel(e, { exact: true }).check();
  await form.locator('button:text-is("Save role")').click();
  await rolesBox.locator('tr[data-role="Operator"]').waitFor();
  expect((await api(lab.admin, '/Role')).find((r: any) => r.name === 'Operator').entitlements.sort()).toEqual(['DeviceConnect', 'DeviceList', 'DeviceReboot']);

  const roles = detail(QA).locator('form[aria-label="Roles"]');
  await roles.getByLabel('Operator').check();
  await roles.locator('button:text-is("Save roles")').click();
  await detail(QA).locator('[role="status"]', { hasText: 'Roles saved.' }).waitFor();
  expect((await api(lab.admin, `/User?userName=${QA}`))[0].roles.sort()).toEqual(['Operator', 'Tester']);

  // A user administrator without device administration: Administrator is not offered, the admin's token is refused.
  await api(lab.admin, '/Role?verb=add', { method: 'POST', headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ name: 'UserAdmin', entitlements: ['UserList', 'UserModify', 'UserRolesModify', 'UserImport', 'DeviceList', 'ApplicationList'] }) });
  const userAdmin = await lab.addUser('useradmin@lab.test', ['UserAdmin']);
  await signIn(userAdmin.login, userAdmin.token);
  await page.click('nav >> text=Lab');
  await userRow(QA).locator('button:text-is("Manage")').click();
  const offered = await Promise.all((await detail(QA).locator('form[aria-label="Roles"] input[name="role"]').all()).map((input) => input.inputValue()));
  expect(offered).toEqual(['UserAdmin']);
  await userRow(QA).locator('button:text-is("Close")').click();
  await userRow('admin').locator('button:text-is("Manage")').click();
  await detail('admin').locator('button:text-is("Generate token")').click();
  const refusal = detail('admin').locator('[role="alert"]');
  await refusal.waitFor();
  expect(await refusal.textContent()).toMatch(/User 'admin' holds entitlements you do not hold \(.*DeviceModify/);
  // The admin's token still works.
  expect(await api(lab.admin, '/Device')).toHaveLength(1);
});

it('adb keys: the admin adds the user\'s key, the user retains on the device page and connects with the lines shown there', async () => {
  await signIn('admin', lab.adminToken);
  await page.click('nav >> text=Lab');
  await userRow(QA).locator('button:text-is("Manage")').click();
  const keys = detail(QA).locator('.adb-keys');
  await keys.locator('textarea[name="key"]').fill(adbClient.publicKey);
  await keys.locator('button:text-is("Add key")').click();
  const listed = keys.locator('li[data-fingerprint]');
  await listed.waitFor();
  const fingerprint = (await listed.getAttribute('data-fingerprint'))!;
  const qa = { login: QA, token: qaToken };
  const [self] = await api(qa, '/User');
  expect((await api(lab.admin, `/User/AdbKey?id=${self.id}`)).map((k: any) => k.fingerprint)).toEqual([fingerprint]);

  // QA on a phone: retain on the device page, copy the adb line, connect.
  await page.setViewportSize({ width: 390, height: 844 });
  await signIn(QA, qaToken);
  await page.locator('.row.device').first().click();
  await page.click('button:has-text("Retain")');
  const line = page.locator('code[aria-label="adb connect line"]');
  await line.waitFor({ timeout: 10_000 });
  const ticketAddress = (await api(qa, '/Device'))[0];
  expect(ticketAddress.retainedByUserName).toBe(QA);
  const command = (await line.textContent())!;
  expect(command).toMatch(/^adb connect 127\.0\.0\.1:\d+$/);
  expect(await page.locator('code[aria-label="devicelab connect line"]').textContent())
    .toMatch(new RegExp(`^devicelab connect ${ticketAddress.id} --port \\d+ --adb$`));
  await page.screenshot({ path: path.join(shots, 'connect-390.png') });
  const address = command.replace('adb connect ', '');
  await adbClient.adb(['connect', address]);
  await waitFor(async () => (await adbClient.adb(['-s', address, 'shell', 'echo', 'through-the-line'])).stdout.includes('through-the-line'),
    20_000, 'a shell through the adb line of the device page');
  // The tunnel line, as shown, through the hub with the client CLI (its --adb runs `adb connect` to the local port).
  const tunnelLine = (await page.locator('code[aria-label="devicelab connect line"]').textContent())!;
  const localAddress = `127.0.0.1:${/--port (\d+)/.exec(tunnelLine)![1]}`;
  const tunnel = startCli(tunnelLine.split(' ').slice(1), { ...cliEnvironment(lab, qa), ...adbClient.env });
  try {
    await tunnel.waitFor(new RegExp(localAddress.replace(/\./g, '\\.')));
    await waitFor(async () => (await adbClient.adb(['-s', localAddress, 'shell', 'echo', 'through-the-hub'])).stdout.includes('through-the-hub'),
      30_000, 'a shell through the devicelab connect line of the device page');
  } finally {
    tunnel.child.kill('SIGINT');
    await tunnel.done;
  }
  // The lines survive a reload while the retain lasts.
  await page.reload();
  await line.waitFor();
});

it('the device page fits a 390 px phone without horizontal scroll, its history table (with the key note) inside its card', async () => {
  // The connection above left a note with the key's fingerprint in the device's history (the admin may read it).
  await signIn('admin', lab.adminToken);
  await page.locator('.row.device').first().click();
  await waitFor(async () => {
    await page.reload();
    await page.locator('.card:has(h2:text-is("History")) td', { hasText: 'adb connection opened' }).first().waitFor({ timeout: 5_000 });
    return true;
  }, 30_000, 'the connection note in the history');
  await page.screenshot({ path: path.join(shots, 'device-390.png'), fullPage: true });
  expect(await page.evaluate('document.documentElement.scrollWidth')).toBeLessThanOrEqual(390);
  const history = page.locator('.card:has(h2:text-is("History"))');
  const [card, table] = [await history.boundingBox(), await history.locator('table').boundingBox()];
  expect(table!.x + table!.width).toBeLessThanOrEqual(card!.x + card!.width);
});

it('removing the key and deactivating the user lock the user out; reactivating lets it back in', async () => {
  await page.setViewportSize({ width: 1280, height: 800 });
  await signIn('admin', lab.adminToken);
  await page.click('nav >> text=Lab');
  await userRow(QA).locator('button:text-is("Manage")').click();
  const keys = detail(QA).locator('.adb-keys');
  await keys.locator('li[data-fingerprint] button:text-is("Remove")').click();
  await keys.locator('text=No adb key').waitFor();
  const qa = { login: QA, token: qaToken };
  const [self] = await api(qa, '/User');
  expect(await api(lab.admin, `/User/AdbKey?id=${self.id}`)).toEqual([]);

  await detail(QA).locator('button:text-is("Deactivate")').click();
  await userRow(QA).locator('[data-testid="user-active"]:text-is("no")').waitFor();
  expect((await lab.api(qa, '/Device')).status).toBe(401);
  await detail(QA).locator('button:text-is("Reactivate")').click();
  await userRow(QA).locator('[data-testid="user-active"]:text-is("yes")').waitFor();
  expect((await lab.api(qa, '/Device')).status).toBe(200);
});
