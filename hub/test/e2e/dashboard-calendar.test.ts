/**
 * The booking calendars in Chromium, two users at once: Alice books a device on the lab calendar and sees her
 * block; Bob, with the calendar already open, sees it appear labelled with her name and is refused (in the hub's
 * words) when he books over it; Alice cancels and it disappears from both; the device page shows the device's
 * week and books an hour chosen on it, weekly; the keyboard moves between cells. A user who may not book is offered
 * no booking.
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import type { Page } from 'playwright-core';
import { DEFAULT_WEB_DIR } from '../../src/config';
import { launchBrowser, type TestBrowser, signIn } from '../support/browser';
import { startTestLab, type TestLab } from '../support/lab';

let lab: TestLab;
const browsers: TestBrowser[] = [];
let alice: { login: string; token: string };
let bob: { login: string; token: string };
let viewer: { login: string; token: string };
let devices: { id: string; name: string }[];

beforeAll(async () => {
  if (!existsSync(path.join(DEFAULT_WEB_DIR, 'index.html'))) throw new Error('web/dist is not built: run node scripts/bootstrap.mjs');
  lab = await startTestLab({ androidCount: 2 });
  alice = await lab.addUser('alice@example.com', ['Tester']);
  bob = await lab.addUser('bob@example.com', ['Tester']);
  const role = await lab.api(lab.admin, '/Role?add', { method: 'POST', headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ name: 'Onlooker', entitlements: ['DeviceList'] }) });
  expect(await role.json()).toMatchObject({ isSuccess: true });
  viewer = await lab.addUser('viewer@example.com', ['Onlooker']);
  devices = (await (await lab.api(lab.admin, '/Device')).json() as { id: string; name: string }[]).sort((a, b) => a.name.localeCompare(b.name));
}, 120_000);
afterAll(async () => {
  for (const b of browsers) await b.close();
  await lab?.stop();
}, 60_000);

async function openPage(who: { login: string; token: string }): Promise<Page> {
  const browser = await launchBrowser();
  browsers.push(browser);
  const page = await browser.context.newPage();
  await signIn(page, lab.hub.url, who.login, who.token);
  await page.locator('.live.on').waitFor();
  return page;
}

const pad = (n: number) => String(n).padStart(2, '0');
/** An `<input type="datetime-local">` value (the browser runs in this process's time zone). */
const localInput = (d: Date) => `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}T${pad(d.getHours())}:${pad(d.getMinutes())}`;
const monday = (d: Date) => new Date(d.getFullYear(), d.getMonth(), d.getDate() - ((d.getDay() + 6) % 7)).getTime();
/** Shows the week holding `at` (this week or the next). */
async function showWeekOf(page: Page, at: Date) {
  if (monday(at) !== monday(new Date())) await page.getByRole('button', { name: 'Next week' }).click();
}

it('books from the lab calendar, shows the booker to others live, refuses an overlap in the hub\'s words, and cancels', async () => {
  const [device] = devices;
  const start = new Date(Math.ceil(Date.now() / 3_600_000) * 3_600_000 + 3_600_000);
  const end = new Date(start.getTime() + 2 * 3_600_000);

  const alicePage = await openPage(alice);
  const bobPage = await openPage(bob);
  for (const page of [alicePage, bobPage]) {
    await page.getByRole('link', { name: 'Calendar' }).click();
    await page.getByTestId('lab-calendar').waitFor();
    await showWeekOf(page, start);
  }
  await bobPage.evaluate(() => { (globalThis as unknown as { marker: number }).marker = 1; });

  // Alice books through the form (the keyboard's way in): device, start, end, note.
  await alicePage.getByRole('button', { name: 'New booking…' }).click();
  const form = alicePage.getByRole('form', { name: 'New booking' });
  await form.getByLabel('Device').selectOption({ label: device.name });
  await form.getByLabel('Start').fill(localInput(start));
  await form.getByLabel('End').fill(localInput(end));
  await form.getByLabel('Note').fill('release testing');
  await form.getByRole('button', { name: 'Book' }).click();
  await alicePage.getByRole('status').filter({ hasText: `Booked ${device.name}` }).waitFor();
  const aliceRow = alicePage.locator(`.timeline-row[data-device="${device.name}"]`);
  const aliceBlock = aliceRow.getByTestId('booking');
  await expect(aliceBlock.innerText()).resolves.toContain(`${alice.login} (you)`);
  expect(await aliceBlock.getAttribute('class')).toContain('mine');

  // Bob's open calendar shows it without a reload, labelled with the booker, not as his.
  const bobRow = bobPage.locator(`.timeline-row[data-device="${device.name}"]`);
  const bobBlock = bobRow.getByTestId('booking');
  await bobBlock.waitFor({ timeout: 10_000 });
  expect(await bobBlock.innerText()).toContain(alice.login);
  expect(await bobBlock.innerText()).not.toContain('(you)');
  expect(await bobBlock.getAttribute('class')).not.toContain('mine');
  expect(await bobPage.evaluate(() => (globalThis as unknown as { marker?: number }).marker)).toBe(1);
  // Her booking's details offer him no Cancel.
  await bobBlock.click();
  const details = bobPage.getByTestId('booking-details');
  await details.getByText(`Booked by ${alice.login}`).first().waitFor();
  expect(await details.getByText('release testing').count()).toBe(1);
  expect(await details.getByRole('button', { name: /Cancel/ }).count()).toBe(0);
  await details.getByRole('button', { name: 'Close' }).click();

  // Bob books over it: refused, with the hub's message naming her booking.
  await bobPage.getByRole('button', { name: 'New booking…' }).click();
  const bobForm = bobPage.getByRole('form', { name: 'New booking' });
  await bobForm.getByLabel('Device').selectOption({ label: device.name });
  await bobForm.getByLabel('Start').fill(localInput(new Date(start.getTime() + 30 * 60_000)));
  await bobForm.getByLabel('End').fill(localInput(new Date(end.getTime() + 30 * 60_000)));
  await bobForm.getByRole('button', { name: 'Book' }).click();
  const refusal = bobPage.getByTestId('booking-error');
  await refusal.waitFor();
  expect(await refusal.innerText()).toMatch(new RegExp(`^Device '${device.name}' is already reserved from .+ by '${alice.login.replace(/\./g, '\\.')}'\\.$`));
  expect(await bobRow.getByTestId('booking').count()).toBe(1);

  // Alice cancels: gone from her calendar and, live, from Bob's.
  await aliceBlock.click();
  await alicePage.getByTestId('booking-details').getByRole('button', { name: 'Cancel booking' }).click();
  await alicePage.getByRole('status').filter({ hasText: 'Booking cancelled.' }).waitFor();
  expect(await aliceRow.getByTestId('booking').count()).toBe(0);
  await bobRow.getByTestId('booking').waitFor({ state: 'detached', timeout: 10_000 });
  expect(await (await lab.api(alice, '/Reservation')).json()).toEqual({ isSuccess: true, data: [] });
}, 120_000);

it("the device page shows the device's week and books an hour chosen on it", async () => {
  const [, device] = devices;
  const page = await openPage(alice);
  await page.goto(`${lab.hub.url}/devices/${device.id}`);
  const calendar = page.getByTestId('device-calendar');
  await calendar.waitFor();
  // Two hours from now, on the day and hour cell it falls in.
  const at = new Date(Date.now() + 2 * 3_600_000);
  await showWeekOf(page, at);
  await calendar.locator(`[data-cell="${at.getHours()}:${(at.getDay() + 6) % 7}"]`).click();
  const form = page.getByRole('form', { name: 'New booking' });
  expect(await form.getByLabel('Start').inputValue()).toBe(localInput(new Date(at.getFullYear(), at.getMonth(), at.getDate(), at.getHours())));
  await form.getByLabel('Repeat').selectOption({ label: 'Weekly, 2 times' });
  await form.getByRole('button', { name: 'Book' }).click();
  const block = calendar.getByTestId('booking').first();
  await block.waitFor();
  expect(await block.innerText()).toContain(`${alice.login} (you)`);
  const bookings = ((await (await lab.api(alice, `/Reservation?deviceId=${device.id}`)).json()) as { data: { deviceId: string; seriesId: string }[] }).data;
  expect(bookings).toHaveLength(2);
  expect(bookings[1].seriesId).toBe(bookings[0].seriesId);
  // The second week's occurrence is on the next week's page.
  await page.getByRole('button', { name: 'Next week' }).click();
  await calendar.getByTestId('booking').first().waitFor();
  expect(await calendar.getByTestId('booking').first().innerText()).toContain(`${alice.login} (you)`);
  // The keyboard moves between hour cells.
  await calendar.locator('[data-cell="9:0"]').focus();
  await page.keyboard.press('ArrowRight');
  await page.keyboard.press('ArrowDown');
  expect(await page.evaluate(() => (globalThis as unknown as { document: { activeElement: { getAttribute(n: string): string } } })
    .document.activeElement.getAttribute('data-cell'))).toBe('10:1');
}, 90_000);

it('offers no booking to a user who may not book, and still shows the calendar', async () => {
  const page = await openPage(viewer);
  await page.getByRole('link', { name: 'Calendar' }).click();
  await page.getByTestId('lab-calendar').waitFor();
  await page.getByTestId('no-booking').waitFor();
  expect(await page.getByRole('button', { name: 'New booking…' }).count()).toBe(0);
  expect(await page.locator('.timeline-track button.cell').count()).toBe(0);
  // The booking Alice made on the device page is there, hers.
  await page.getByTestId('booking').first().waitFor();
  // The page's own address, reloaded or pasted, opens the calendar again.
  await page.reload();
  await page.getByTestId('lab-calendar').waitFor();
}, 60_000);
