/**
 * The live screen of a simulated iPhone through the hub. With WebDriverAgent running on it (as a lab starts it):
 * frames from WDA's MJPEG stream (device port 9100 through usbmuxd), and the retainer's input through WDA's routes:
 * a tap on an icon opens that app (WDA's XCTest view shows it in front, and the frames change), typed non-ASCII
 * text lands in the app's field, a swipe up from the bottom edge and the Home key return to the home screen; a
 * view-only tunnel's input is dropped at the gateway; an automation client's WDA session is joined, never replaced
 * or deleted (watching a run live does not break it). Without WDA: lockdown's screenshotr, view only and why, and
 * input is refused. Stills are PNGs either way.
 */
import { encodeScreenControl } from '@devicelab/shared';
import { forwardUsbmuxPort } from '@devicelab/labsim';
import { basic, openScreen, screenUrl, type ScreenClient } from '../support/screen-client';
import { startTestLab, waitFor, type TestLab } from '../support/lab';

jest.setTimeout(180_000);

let lab: TestLab;
let deviceId: string;
let phone: ReturnType<TestLab['world']['iosDevice']>;
const clients: ScreenClient[] = [];

const json = async (res: Response): Promise<any> => res.json();
const screen = (query: string) => {
  const client = openScreen(screenUrl(lab.hub.url, query), basic(lab.admin));
  clients.push(client);
  return client;
};
const xctest = () => phone.wda.screen;
/** The picture WDA's stream sends now (quality 25, full size: its default settings). */
const streamed = () => xctest().jpeg(25, 100);
type WdaNode = ReturnType<ReturnType<typeof xctest>['tree']>;
const nodes = (n: WdaNode): WdaNode[] => [n, ...n.children.flatMap(nodes)];
/** Where an element's centre is shown, as a viewer points: 0..1 across the picture. */
function pointAt(find: (n: WdaNode) => boolean): { x: number; y: number } {
  const s = xctest();
  const node = nodes(s.tree()).find(find);
  if (!node) throw new Error('no such element on the iPhone\'s screen');
  return { x: (node.rect[0] + node.rect[2] / 2) / s.width, y: (node.rect[1] + node.rect[3] / 2) / s.height };
}
const tap = (client: ScreenClient, at: { x: number; y: number }) => {
  client.send({ t: 'touch', a: 'd', ...at });
  client.send({ t: 'touch', a: 'u', ...at });
};
const retain = async () => expect((await json(await lab.api(lab.admin, `/Device?action=retain&id=${deviceId}`, { method: 'POST' }))).isSuccess).toBe(true);
const release = async () => expect((await json(await lab.api(lab.admin, `/Device?action=release&id=${deviceId}`, { method: 'POST' }))).isSuccess).toBe(true);
/** The gateway's capture of the iPhone has stopped (the last viewer left and its linger passed). */
const captureStopped = () => waitFor(async () => !lab.gateway.screens.running().includes(phone.udid), 15_000, 'the capture stopped');

beforeAll(async () => {
  lab = await startTestLab({ androidCount: 0, iosCount: 1 });
  const udid = lab.iosDevices[0].udid;
  phone = lab.world.iosDevice(udid);
  const device = await waitFor(async () => ((await (await lab.api(lab.admin, '/Device')).json()) as { id: string; vendorUniqueIdentifier?: string; serialNumber?: string; readiness?: string }[])
    .find((d) => (d.vendorUniqueIdentifier === udid || d.serialNumber === lab.iosDevices[0].serialNumber) && d.readiness === 'Ready'), 60_000, 'the iPhone Ready');
  deviceId = device.value.id;
});
afterEach(() => {
  for (const c of clients.splice(0)) c.ws.terminate();
});
afterAll(async () => {
  await lab?.stop();
});

test('with WebDriverAgent: MJPEG frames; a tap opens an app, non-ASCII text reaches it, a swipe up and Home return', async () => {
  await retain();
  const owner = screen(`id=${deviceId}`);
  await owner.opened;
  await waitFor(async () => owner.starts.length > 0 && owner.frames > 0, 30_000, 'the first frame from WDA');
  expect(owner.starts[0]).toMatchObject({
    source: 'wda-mjpeg', viewOnly: false, width: xctest().width * xctest().scale, height: xctest().height * xctest().scale,
    controls: { touch: true, keys: true, text: true, rotate: false }, keys: expect.arrayContaining(['home', 'enter', 'delete']),
  });
  expect(owner.starts[0].note).toBeUndefined();
  expect(owner.lastFrame!.subarray(0, 2).toString('hex')).toBe('ffd8');

  // A long press on an icon (the pointer held) opens no app: SpringBoard shows the icon's menu.
  await waitFor(async () => owner.lastFrame!.equals(streamed()), 30_000, 'the home screen streamed');
  const icon = nodes(xctest().tree()).find((n) => n.type === 'XCUIElementTypeIcon')!;
  const iconAt = pointAt((n) => n.type === 'XCUIElementTypeIcon' && n.label === icon.label);
  owner.send({ t: 'touch', a: 'd', ...iconAt });
  await new Promise((r) => setTimeout(r, 700));
  owner.send({ t: 'touch', a: 'u', ...iconAt });
  await new Promise((r) => setTimeout(r, 1_500));
  expect(xctest().activeBundle()).toBe('com.apple.springboard');
  expect(owner.errors).toEqual([]);

  // A tap on the icon: the app comes to the front, and the frames show it.
  tap(owner, iconAt);
  await waitFor(async () => xctest().activeBundle() !== 'com.apple.springboard', 30_000, `${icon.label} in front`);
  expect(xctest().displayName(xctest().activeBundle())).toBe(icon.label);
  expect(xctest().state(xctest().activeBundle())).toBe(4);
  await waitFor(async () => owner.lastFrame!.equals(streamed()), 30_000, 'a frame of the app');

  // Text with non-ASCII characters, through WDA's keys, lands in the app's field; Delete takes the last one back.
  owner.send({ t: 'text', text: 'Grüße 日本!' });
  owner.send({ t: 'key', key: 'delete' });
  const field = () => nodes(xctest().tree()).find((n) => n.type === 'XCUIElementTypeTextField')?.value;
  await waitFor(async () => field() === 'Grüße 日本', 30_000, 'the typed text in the app');
  expect(owner.errors).toEqual([]);

  // A swipe up from the bottom edge (a drag in the page: down, moves, up) goes home, as on a Face ID iPhone.
  owner.send({ t: 'touch', a: 'd', x: 0.5, y: 0.995 });
  for (const y of [0.9, 0.8, 0.6]) owner.send({ t: 'touch', a: 'm', x: 0.5, y });
  owner.send({ t: 'touch', a: 'u', x: 0.5, y: 0.6 });
  await waitFor(async () => xctest().activeBundle() === 'com.apple.springboard', 30_000, 'the home screen after the swipe');
  await waitFor(async () => owner.lastFrame!.equals(streamed()), 30_000, 'the home screen\'s frame again');

  // Home from the app.
  tap(owner, pointAt((n) => n.type === 'XCUIElementTypeIcon' && n.label === icon.label));
  await waitFor(async () => xctest().activeBundle() !== 'com.apple.springboard', 30_000, 'the app again');
  owner.send({ t: 'key', key: 'home' });
  await waitFor(async () => xctest().activeBundle() === 'com.apple.springboard', 30_000, 'home after the Home key');
  // The input ran in a WDA session the gateway made (none was running); it is deleted when the capture stops.
  expect(phone.wda.session).not.toBeNull();
  owner.ws.terminate();
  await captureStopped();
  await waitFor(async () => phone.wda.session === null, 10_000, 'the gateway\'s WDA session deleted');
  await release();
});

test('the gateway drops a view-only tunnel\'s input on an iPhone too', async () => {
  await retain();
  const [device] = await json(await lab.api(lab.admin, `/Device?id=${deviceId}`));
  const [row] = await lab.hub.db.selectFrom('devices').select('retain_id').where('id', '=', deviceId).execute();
  const tunnel = await lab.hub.gateways.openTunnel({
    vendorUniqueIdentifier: device.vendorUniqueIdentifier ?? phone.udid, remoteAddress: 'test', userLogin: lab.admin.login,
    service: 'screen', viewOnly: true, retainId: row.retain_id ?? '',
  }, 10_000);
  let frames = 0;
  tunnel.on('data', (frame) => { if (frame.data?.[0] === 2) frames++; });
  tunnel.resume();
  await waitFor(async () => frames > 0, 30_000, 'a frame through the tunnel');
  const icon = pointAt((n) => n.type === 'XCUIElementTypeIcon');
  tunnel.write({ data: encodeScreenControl({ t: 'touch', a: 'd', ...icon }) });
  tunnel.write({ data: encodeScreenControl({ t: 'touch', a: 'u', ...icon }) });
  tunnel.write({ data: encodeScreenControl({ t: 'text', text: 'x' }) });
  await new Promise((r) => setTimeout(r, 1_500));
  expect(xctest().activeBundle()).toBe('com.apple.springboard');
  expect(phone.wda.session).toBeNull();
  tunnel.end();
  await release();
  await captureStopped();
});

test('input joins the WDA session an automation client runs, which lives on after the screen', async () => {
  // A client of WDA (Appium's XCUITest driver does the same) with its own session, through usbmuxd as it reaches it.
  const forward = await forwardUsbmuxPort(lab.world.iosFleet.usbmuxd.socketPath, phone.udid, 8100);
  try {
    const created = await (await fetch(`http://127.0.0.1:${forward.port}/session`, {
      method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ capabilities: { alwaysMatch: {}, firstMatch: [{}] } }),
    })).json() as { value: { sessionId: string } };
    const automation = created.value.sessionId;
    expect(phone.wda.session?.id).toBe(automation);
    await retain();
    const owner = screen(`id=${deviceId}`);
    await owner.opened;
    await waitFor(async () => owner.frames > 0, 30_000, 'a frame');
    tap(owner, pointAt((n) => n.type === 'XCUIElementTypeIcon'));
    await waitFor(async () => xctest().activeBundle() !== 'com.apple.springboard', 30_000, 'the app opened through the automation\'s session');
    owner.send({ t: 'text', text: 'ok' });
    await waitFor(async () => nodes(xctest().tree()).some((n) => n.type === 'XCUIElementTypeTextField' && Boolean(n.value?.endsWith('ok'))), 30_000, 'the text');
    owner.ws.terminate();
    await captureStopped();
    expect(phone.wda.session?.id).toBe(automation);
    const asked = await (await fetch(`http://127.0.0.1:${forward.port}/session/${automation}`)).json() as { sessionId: string };
    expect(asked.sessionId).toBe(automation);
    await fetch(`http://127.0.0.1:${forward.port}/session/${automation}`, { method: 'DELETE' });
    await fetch(`http://127.0.0.1:${forward.port}/wda/homescreen`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    await release();
  } finally {
    await forward.close();
  }
});

test('without WebDriverAgent: screenshotr, view only and why; input is refused; the still is a PNG', async () => {
  phone.wdaRunning = false;
  try {
    await retain();
    const client = screen(`id=${deviceId}`);
    await client.opened;
    await waitFor(async () => client.starts.length > 0 && client.frames > 1, 30_000, 'frames from screenshotr');
    expect(client.starts[0]).toMatchObject({ source: 'screenshotr', viewOnly: false, controls: { touch: false, keys: false, text: false, rotate: false } });
    expect(String(client.starts[0].note)).toContain('WebDriverAgent is not running on this device: view only');
    expect(client.lastFrame!.subarray(1, 4).toString('latin1')).toBe('PNG');
    tap(client, pointAt((n) => n.type === 'XCUIElementTypeIcon'));
    await waitFor(async () => client.errors.some((e) => /view only/.test(e)), 10_000, 'the refusal');
    expect(xctest().activeBundle()).toBe('com.apple.springboard');
    const still = await lab.api(lab.admin, `/Device/Screenshot?id=${deviceId}`);
    expect(still.headers.get('content-type')).toBe('image/png');
    expect(Buffer.from(await still.arrayBuffer()).equals(phone.wda.screen.png())).toBe(true);
    client.ws.terminate();
    await release();
  } finally {
    phone.wdaRunning = true;
  }
});
