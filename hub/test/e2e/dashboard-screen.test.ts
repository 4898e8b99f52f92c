/**
 * The live screen in the dashboard, in Debian's Chromium against a whole lab (a simulated Android phone behind the
 * real adb server and gateway): a tester signs in, retains the phone and sees its launcher; a click on an app icon
 * shows that app within a second of the click; text with non-ASCII characters typed in the page reaches the phone; a second
 * user opens a view-only share link, sees the frames and cannot control; releasing ends both screens.
 */
import { appendFileSync, existsSync } from 'node:fs';
import path from 'node:path';
import type { Page } from 'playwright-core';
import { specFromPreset } from '@devicelab/labsim';
import { DEFAULT_WEB_DIR } from '../../src/config';
import { launchBrowser, type TestBrowser, signIn } from '../support/browser';
import { startTestLab, waitFor, type TestLab } from '../support/lab';

/** What a page callback uses of the browser's globals (the test's types have no DOM). */
interface PageGlobals { document: { querySelector(selector: string): { getAttribute(name: string): string | null } | null } }

jest.setTimeout(240_000);

let lab: TestLab;
let browsers: TestBrowser[] = [];
let alice: { login: string; token: string };
let bob: { login: string; token: string };
let deviceId: string;

const sim = () => lab.world.device(lab.devices[0].serial).screen;
type Node = ReturnType<ReturnType<typeof sim>['hierarchy']>;
const nodes = (n: Node): Node[] => [n, ...n.children.flatMap(nodes)];

beforeAll(async () => {
  if (!existsSync(path.join(DEFAULT_WEB_DIR, 'index.html'))) throw new Error('web/dist is not built: run node scripts/bootstrap.mjs');
  // A phone of 720x1600: the simulator draws every frame in JavaScript, so a smaller screen keeps its pace up.
  lab = await startTestLab({ androidDevices: [specFromPreset('moto-g9-play', 0)] });
  alice = await lab.addUser('alice@dash-screen.test', ['Tester']);
  bob = await lab.addUser('bob@dash-screen.test', ['Tester']);
  const serial = lab.devices[0].serial;
  const found = await waitFor(async () => ((await (await lab.api(lab.admin, '/Device')).json()) as { id: string; serialNumber: string; readiness: string }[])
    .find((d) => d.serialNumber === serial && d.readiness === 'Ready'), 60_000, 'the phone Ready');
  deviceId = found.value.id;
}, 120_000);
afterAll(async () => {
  for (const b of browsers) await b.close();
  await lab?.stop();
}, 60_000);

async function signedIn(who: { login: string; token: string }): Promise<Page> {
  const browser = await launchBrowser();
  browsers.push(browser);
  const page = await browser.context.newPage();
  await signIn(page, lab.hub.url, who.login, who.token);
  await page.locator('.row.device').first().waitFor();
  return page;
}

const framesShown = async (page: Page): Promise<number> =>
  Number(await page.locator('[data-testid="screen-canvas"]').getAttribute('data-frames') ?? 0);

/** Clicks the canvas where the node's centre is shown; resolves with the time the click was sent. */
async function clickOn(page: Page, find: (n: Node) => boolean): Promise<number> {
  const s = sim();
  const node = nodes(s.hierarchy()).find(find);
  if (!node) throw new Error('no such node on the phone\'s screen');
  const canvas = page.locator('[data-testid="screen-canvas"]');
  await canvas.scrollIntoViewIfNeeded();
  const box = (await canvas.boundingBox())!;
  const x = box.x + ((node.bounds[0] + node.bounds[2]) / 2 / s.width) * box.width;
  const y = box.y + ((node.bounds[1] + node.bounds[3]) / 2 / s.height) * box.height;
  const at = Date.now();
  await page.mouse.click(x, y);
  return at;
}

it('retain, see the launcher, open an app with a click, type non-ASCII text, share view-only, release ends both', async () => {
  const owner = await signedIn(alice);
  await owner.goto(`${lab.hub.url}/devices/${deviceId}`);
  await owner.getByRole('button', { name: 'Retain' }).click();
  await owner.locator('[data-testid="screen-status"]', { hasText: 'Live' }).waitFor({ timeout: 30_000 });
  await waitFor(async () => (await framesShown(owner)) > 0, 30_000, 'a frame on the canvas');
  await owner.getByRole('button', { name: 'Home' }).click();
  await waitFor(async () => sim().foregroundPackage() === null, 10_000, 'the launcher');
  // The canvas shows the phone's picture: as wide and tall as the frames minicap sends, which are the launcher's.
  expect(await owner.locator('[data-testid="screen-canvas"]').evaluate((c) => (c as unknown as { height: number; width: number }).height / (c as unknown as { width: number }).width))
    .toBeCloseTo(sim().height / sim().width, 1);
  await owner.getByLabel('adb connect line').or(owner.getByLabel('devicelab connect line')).first().waitFor();

  // A click on the Settings icon: Settings is in front and drawn on the canvas within a second.
  const before = await framesShown(owner);
  const clicked = await clickOn(owner, (n) => n.text === 'Settings');
  await waitFor(async () => sim().foregroundPackage() === 'com.android.settings', 5_000, 'Settings in front');
  // The first frame drawn after Settings came to the front shows it.
  const inFront = await framesShown(owner);
  await owner.waitForFunction((shown) => Number((globalThis as unknown as PageGlobals).document.querySelector('[data-testid="screen-canvas"]')?.getAttribute('data-frames')) > shown,
    Math.max(before, inFront - 1), { polling: 'raf', timeout: 5_000 });
  // From the click to the frame drawn: 0.3-0.85 s on a two-core machine at load 21-32, of which the simulator's
  // encoding takes 0.1-0.25 s and each hop (adb server, gateway, hub, browser) up to 0.1-0.3 s of waiting for a core.
  const tookMs = Date.now() - clicked;
  if (process.env.SCREEN_LATENCY_LOG) appendFileSync(process.env.SCREEN_LATENCY_LOG, `${tookMs}\n`);
  expect(tookMs).toBeLessThan(1_000);

  // Text with non-ASCII characters, typed in the page, lands in the app's text field.
  await clickOn(owner, (n) => n.className === 'android.widget.EditText');
  await owner.fill('[data-testid="screen-text"]', 'Grüße 日本');
  await owner.getByRole('button', { name: 'Send text' }).click();
  await waitFor(async () => nodes(sim().hierarchy()).some((n) => n.className === 'android.widget.EditText' && n.text.includes('Grüße 日本')),
    30_000, 'the text on the phone');

  // A view-only share link: bob sees the same screen, without controls, and his clicks change nothing.
  await owner.getByRole('button', { name: 'Share view-only link' }).click();
  const link = (await owner.getByLabel('view-only link', { exact: true }).textContent())!;
  expect(link).toContain('share=');
  await owner.getByRole('button', { name: 'Home' }).click();
  await waitFor(async () => sim().foregroundPackage() === null, 10_000, 'the launcher again');
  const viewer = await signedIn(bob);
  await viewer.goto(link);
  await viewer.locator('[data-testid="screen-status"]', { hasText: 'view only' }).waitFor({ timeout: 30_000 });
  await waitFor(async () => (await framesShown(viewer)) > 0, 30_000, 'frames for the viewer');
  expect(await viewer.getByRole('group', { name: 'Hardware keys' }).count()).toBe(0);
  expect(await viewer.locator('[data-testid="screen-text"]').count()).toBe(0);
  await clickOn(viewer, (n) => n.text === 'Settings');
  await new Promise((r) => setTimeout(r, 1_000));
  expect(sim().foregroundPackage()).toBeNull();
  await owner.locator('[data-testid="screen-viewers"]', { hasText: bob.login }).waitFor({ timeout: 10_000 });
  const history = await (await lab.api(lab.admin, `/Report/History?deviceId=${deviceId}&take=50`)).json() as { events: { eventType: string; message: string }[] };
  expect(history.events.filter((e) => e.eventType === 'SharedViewOnlySessionCreated').map((e) => e.message))
    .toEqual([expect.stringContaining(bob.login)]);

  // Release: both screens end within a second.
  await owner.getByRole('button', { name: 'Release' }).click();
  const released = Date.now();
  // The viewer's screen says it ended; the owner's page drops its screen with the retain.
  await viewer.locator('[data-testid="screen-status"]', { hasText: 'Ended' }).waitFor({ timeout: 5_000 });
  await owner.locator('[data-testid="screen-canvas"]').waitFor({ state: 'detached', timeout: 5_000 });
  expect(Date.now() - released).toBeLessThan(1_500);
});
