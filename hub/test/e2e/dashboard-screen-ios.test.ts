/**
 * The live screen of a simulated iPhone in the dashboard, in Debian's Chromium: a tester signs in, retains it and
 * sees its home screen from WebDriverAgent's stream; a click on an app icon opens that app; text with non-ASCII
 * characters typed in the page reaches it; the iPhone's keys only (Home, no Back); the Screenshot button downloads
 * a PNG of the picture shown. Without WebDriverAgent the page says the screen is view only and why.
 */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import type { Page } from 'playwright-core';
import { PNG } from 'pngjs';
import { DEFAULT_WEB_DIR } from '../../src/config';
import { launchBrowser, type TestBrowser, signIn } from '../support/browser';
import { startTestLab, waitFor, type TestLab } from '../support/lab';

/** What a page callback uses of the browser's globals (the test's types have no DOM). */
interface Canvas2d { width: number; height: number; getContext(kind: '2d'): { getImageData(x: number, y: number, w: number, h: number): { data: Uint8ClampedArray } } }

jest.setTimeout(240_000);

let lab: TestLab;
let browser: TestBrowser;
let tester: { login: string; token: string };
let deviceId: string;
let phone: ReturnType<TestLab['world']['iosDevice']>;

const xctest = () => phone.wda.screen;
type WdaNode = ReturnType<ReturnType<typeof xctest>['tree']>;
const nodes = (n: WdaNode): WdaNode[] => [n, ...n.children.flatMap(nodes)];

beforeAll(async () => {
  if (!existsSync(path.join(DEFAULT_WEB_DIR, 'index.html'))) throw new Error('web/dist is not built: run node scripts/bootstrap.mjs');
  lab = await startTestLab({ androidCount: 0, iosCount: 1 });
  phone = lab.world.iosDevice(lab.iosDevices[0].udid);
  tester = await lab.addUser('tess@dash-ios.test', ['Tester']);
  const found = await waitFor(async () => ((await (await lab.api(lab.admin, '/Device')).json()) as { id: string; vendorUniqueIdentifier?: string; readiness: string }[])
    .find((d) => d.vendorUniqueIdentifier === phone.udid && d.readiness === 'Ready'), 60_000, 'the iPhone Ready');
  deviceId = found.value.id;
  browser = await launchBrowser();
}, 120_000);
afterAll(async () => {
  await browser?.close();
  await lab?.stop();
}, 60_000);

const framesShown = async (page: Page): Promise<number> =>
  Number(await page.locator('[data-testid="screen-canvas"]').getAttribute('data-frames') ?? 0);

/** The colour the page's canvas shows at a point of the iPhone's screen in points. */
async function shownAt(page: Page, x: number, y: number): Promise<number[]> {
  const s = xctest();
  return page.locator('[data-testid="screen-canvas"]').evaluate((c, [px, py]) => {
    const canvas = c as unknown as Canvas2d;
    return [...canvas.getContext('2d').getImageData(Math.round(px * canvas.width), Math.round(py * canvas.height), 1, 1).data.slice(0, 3)];
  }, [x / s.width, y / s.height]);
}

/** The colour of the device's own picture there (PNG at its pixels). */
function deviceAt(x: number, y: number): number[] {
  const s = xctest();
  const png = PNG.sync.read(s.png());
  const i = (Math.round(y * s.scale) * png.width + Math.round(x * s.scale)) * 4;
  return [...png.data.subarray(i, i + 3)];
}

const close = (a: number[], b: number[]) => a.every((v, i) => Math.abs(v - b[i]) <= 40);

it('retain, see the home screen, open an app with a click, type non-ASCII text, Home, download a screenshot', async () => {
  const page = await browser.context.newPage();
  await signIn(page, lab.hub.url, tester.login, tester.token);
  await page.goto(`${lab.hub.url}/devices/${deviceId}`);
  await page.getByRole('button', { name: 'Retain' }).click();
  await page.locator('[data-testid="screen-status"]', { hasText: 'wda-mjpeg' }).waitFor({ timeout: 30_000 });
  await waitFor(async () => (await framesShown(page)) > 0, 30_000, 'a frame on the canvas');
  expect(await page.locator('[data-testid="screen-note"]').count()).toBe(0);

  // The canvas shows the home screen: the first icon's tile where the device draws it.
  const icon = nodes(xctest().tree()).find((n) => n.type === 'XCUIElementTypeIcon')!;
  const [cx, cy] = [icon.rect[0] + icon.rect[2] / 2, icon.rect[1] + icon.rect[3] / 2];
  const tile = deviceAt(cx, cy);
  await waitFor(async () => close(await shownAt(page, cx, cy), tile), 10_000, 'the icon drawn on the canvas');
  expect(await page.locator('[data-testid="screen-canvas"]').evaluate((c) => (c as unknown as Canvas2d).height / (c as unknown as Canvas2d).width))
    .toBeCloseTo(xctest().height / xctest().width, 2);
  // An iPhone's keys: Home, volume, Enter, Delete; no Back or Apps.
  const keys = page.getByRole('group', { name: 'Hardware keys' });
  await keys.getByRole('button', { name: 'Home' }).waitFor();
  expect(await keys.getByRole('button', { name: 'Back' }).count()).toBe(0);

  // A click on the icon opens the app, and the canvas shows the app's screen there.
  const canvas = page.locator('[data-testid="screen-canvas"]');
  await canvas.scrollIntoViewIfNeeded();
  const box = (await canvas.boundingBox())!;
  const clicked = Date.now();
  await page.mouse.click(box.x + (cx / xctest().width) * box.width, box.y + (cy / xctest().height) * box.height);
  await waitFor(async () => xctest().activeBundle() !== 'com.apple.springboard', 10_000, `${icon.label} in front`);
  expect(xctest().displayName(xctest().activeBundle())).toBe(icon.label);
  const app = deviceAt(cx, cy);
  await waitFor(async () => close(await shownAt(page, cx, cy), app), 20_000, 'the app on the canvas');
  // A loaded two-core machine: the simulator draws and encodes each new picture in JavaScript (about a second).
  expect(Date.now() - clicked).toBeLessThan(8_000);

  // Text typed in the page reaches the app's field.
  await page.fill('[data-testid="screen-text"]', 'Grüße 日本');
  await page.getByRole('button', { name: 'Send text' }).click();
  await waitFor(async () => nodes(xctest().tree()).some((n) => n.type === 'XCUIElementTypeTextField' && n.value === 'Grüße 日本'), 20_000, 'the text on the iPhone');

  await keys.getByRole('button', { name: 'Home' }).click();
  await waitFor(async () => xctest().activeBundle() === 'com.apple.springboard', 10_000, 'the home screen');
  await waitFor(async () => close(await shownAt(page, cx, cy), tile), 20_000, 'the home screen on the canvas');

  // The Screenshot button downloads a PNG of the picture shown, at the frames' size.
  const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Screenshot' }).click()]);
  expect(download.suggestedFilename()).toMatch(/\.png$/);
  const shot = PNG.sync.read(readFileSync((await download.path())!));
  expect([shot.width, shot.height]).toEqual([xctest().width * xctest().scale, xctest().height * xctest().scale]);
  const i = (Math.round(cy * xctest().scale) * shot.width + Math.round(cx * xctest().scale)) * 4;
  expect(close([...shot.data.subarray(i, i + 3)], tile)).toBe(true);

  await page.getByRole('button', { name: 'Release' }).click();
  await canvas.waitFor({ state: 'detached', timeout: 5_000 });
  await page.close();
});

it('without WebDriverAgent the page shows the screen and says it is view only, and why', async () => {
  await waitFor(async () => !lab.gateway.screens.running().includes(phone.udid), 15_000, 'the previous capture stopped');
  phone.wdaRunning = false;
  try {
    const page = await browser.context.newPage();
    await page.goto(`${lab.hub.url}/devices/${deviceId}`);
    await page.getByRole('button', { name: 'Retain' }).click();
    await page.locator('[data-testid="screen-status"]', { hasText: 'screenshotr' }).waitFor({ timeout: 30_000 });
    await page.locator('[data-testid="screen-note"]', { hasText: 'WebDriverAgent is not running on this device: view only' }).waitFor();
    await waitFor(async () => (await framesShown(page)) > 0, 30_000, 'a frame on the canvas');
    expect(await page.getByRole('group', { name: 'Hardware keys' }).count()).toBe(0);
    expect(await page.locator('[data-testid="screen-text"]').count()).toBe(0);
    await page.getByRole('button', { name: 'Release' }).click();
    await page.close();
  } finally {
    phone.wdaRunning = true;
  }
});
