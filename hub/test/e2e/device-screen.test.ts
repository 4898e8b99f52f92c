/**
 * The live screen through the hub's `/Device/Screen` WebSocket, against a simulated Android device behind the real
 * adb server and the real gateway: who gets frames (refused at the WebSocket otherwise), the retainer's control, a
 * view-only share whose viewer cannot control and is a SharedViewOnlySessionCreated event, input the gateway
 * drops even when it comes through, and a release that ends every viewer within a second.
 */
import { basic, openScreen, screenUrl, type ScreenClient } from '../support/screen-client';
import { startTestLab, waitFor, type TestLab } from '../support/lab';
import { encodeScreenControl } from '@devicelab/shared';

jest.setTimeout(180_000);

let lab: TestLab;
let alice: { login: string; token: string };
let bob: { login: string; token: string };
let deviceId: string;
let serial: string;
const clients: ScreenClient[] = [];

const json = async (res: Response): Promise<any> => res.json();
const screen = (query: string, headers: Record<string, string>) => {
  const client = openScreen(screenUrl(lab.hub.url, query), headers);
  clients.push(client);
  return client;
};
const sim = () => lab.world.device(lab.devices[0].serial).screen;
type Node = ReturnType<ReturnType<typeof sim>['hierarchy']>;
const nodes = (n: Node): Node[] => [n, ...n.children.flatMap(nodes)];
function pointAt(find: (n: Node) => boolean): { x: number; y: number } {
  const s = sim();
  const node = nodes(s.hierarchy()).find(find);
  if (!node) throw new Error('no such node on the screen');
  return { x: (node.bounds[0] + node.bounds[2]) / 2 / s.width, y: (node.bounds[1] + node.bounds[3]) / 2 / s.height };
}
const tap = (client: ScreenClient, at: { x: number; y: number }) => {
  client.send({ t: 'touch', a: 'd', ...at });
  client.send({ t: 'touch', a: 'u', ...at });
};

beforeAll(async () => {
  lab = await startTestLab({ androidCount: 1 });
  alice = await lab.addUser('alice@screen.test', ['Tester']);
  bob = await lab.addUser('bob@screen.test', ['Tester']);
  serial = lab.devices[0].serial;
  const device = await waitFor(async () => (await json(await lab.api(lab.admin, '/Device')) as { id: string; serialNumber: string }[])
    .find((d) => d.serialNumber === serial), 60_000, 'the device listed');
  deviceId = device.value.id;
  await waitFor(async () => (await json(await lab.api(lab.admin, `/Device?id=${deviceId}`)))[0]?.readiness === 'Ready', 60_000, 'device Ready');
});

afterEach(() => {
  for (const c of clients.splice(0)) c.ws.terminate();
});

afterAll(async () => {
  await lab?.stop();
});

test('without rights there is no screen: refused at the WebSocket, before any frame', async () => {
  await expect(screen(`id=${deviceId}`, {}).opened).rejects.toThrow('HTTP 401');
  await expect(screen(`id=${deviceId}`, basic({ login: alice.login, token: 'wrong' })).opened).rejects.toThrow('HTTP 401');
  // Nobody retains it: a tester may not watch; retained by alice: bob may not either, nor with a made-up share.
  await expect(screen(`id=${deviceId}`, basic(alice)).opened).rejects.toThrow('HTTP 403');
  expect((await json(await lab.api(alice, `/Device?action=retain&id=${deviceId}`, { method: 'POST' }))).isSuccess).toBe(true);
  await expect(screen(`id=${deviceId}`, basic(bob)).opened).rejects.toThrow('HTTP 403');
  await expect(screen(`id=${deviceId}&share=not-a-share`, basic(bob)).opened).rejects.toThrow('HTTP 403');
  // The dashboard's cookie opens it only from the hub's own origin.
  const signIn = await fetch(`${lab.hub.url}/apiv1/Session`, {
    method: 'POST', body: new URLSearchParams({ login: alice.login, token: alice.token }), headers: { origin: lab.hub.url },
  });
  const cookie = (signIn.headers.get('set-cookie') ?? '').split(';')[0];
  expect(cookie).toMatch(/^devicelab_session=/);
  await expect(screen(`id=${deviceId}`, { cookie, origin: 'https://evil.example' }).opened).rejects.toThrow('HTTP 403');
  await expect(screen(`id=${deviceId}`, { cookie }).opened).rejects.toThrow('HTTP 403');
  const fromDashboard = screen(`id=${deviceId}`, { cookie, origin: lab.hub.url });
  await fromDashboard.opened;
  await waitFor(async () => fromDashboard.frames > 0, 30_000, 'a frame through the cookie');
  expect((await json(await lab.api(alice, `/Device?action=release&id=${deviceId}`, { method: 'POST' }))).isSuccess).toBe(true);
});

test('the retainer controls; a view-only share sees the same frames, cannot control, is an event; release ends both within 1 s', async () => {
  expect((await json(await lab.api(alice, `/Device?action=retain&id=${deviceId}`, { method: 'POST' }))).isSuccess).toBe(true);
  const owner = screen(`id=${deviceId}`, basic(alice));
  await owner.opened;
  await waitFor(async () => owner.starts.length > 0 && owner.frames > 0, 30_000, 'the retainer\'s first frame');
  expect(owner.starts[0]).toMatchObject({ viewOnly: false, controls: { touch: true, keys: true, text: true } });

  const share = await json(await lab.api(alice, `/Device/Share?id=${deviceId}`, { method: 'POST' }));
  expect(share).toMatchObject({ isSuccess: true, data: { id: expect.any(String), token: expect.any(String) } });
  const viewer = screen(`id=${deviceId}&share=${encodeURIComponent(share.data.token)}`, basic(bob));
  await viewer.opened;
  await waitFor(async () => viewer.starts.length > 0 && viewer.frames > 0, 30_000, 'the share viewer\'s first frame');
  expect(viewer.starts[0]).toMatchObject({ viewOnly: true, controls: { touch: false, keys: false, text: false, rotate: false } });
  const listed = await json(await lab.api(alice, `/Device/Share?id=${deviceId}`));
  expect(listed.data.viewers).toEqual(expect.arrayContaining([
    expect.objectContaining({ login: bob.login, viewOnly: true, shareId: share.data.id }),
    expect.objectContaining({ login: alice.login, viewOnly: false }),
  ]));
  expect((await json(await lab.api(bob, `/Device/Share?id=${deviceId}`))).isSuccess).toBe(false);

  // The viewer's tap on an app icon changes nothing; the retainer's opens the app, and both see the new frame.
  owner.send({ t: 'key', key: 'home' });
  await waitFor(async () => sim().foregroundPackage() === null, 10_000, 'the launcher');
  const icon = pointAt((n) => n.text === 'Settings');
  tap(viewer, icon);
  viewer.send({ t: 'key', key: 'power' });
  await new Promise((r) => setTimeout(r, 700));
  expect(sim().foregroundPackage()).toBeNull();
  expect(sim().isOn).toBe(true);
  const seen = viewer.frames;
  tap(owner, icon);
  await waitFor(async () => sim().foregroundPackage() === 'com.android.settings', 10_000, 'Settings in front');
  await waitFor(async () => viewer.frames > seen, 10_000, 'the viewer sees the change');

  const history = await json(await lab.api(lab.admin, `/Report/History?deviceId=${deviceId}&take=100`));
  const joined = history.events.filter((e: { eventType: string }) => e.eventType === 'SharedViewOnlySessionCreated');
  expect(joined).toEqual([expect.objectContaining({ performedByName: expect.any(String), message: expect.stringContaining(bob.login) })]);
  expect(joined[0].message).toContain('127.0.0.1');

  const released = await json(await lab.api(alice, `/Device?action=release&id=${deviceId}`, { method: 'POST' }));
  const at = Date.now();
  expect(released.isSuccess).toBe(true);
  await waitFor(async () => owner.closedAt !== undefined && viewer.closedAt !== undefined, 5_000, 'both closed');
  expect(owner.closedAt! - at).toBeLessThan(1_000);
  expect(viewer.closedAt! - at).toBeLessThan(1_000);
  // The share stood on that retain: it opens nothing now.
  await expect(screen(`id=${deviceId}&share=${encodeURIComponent(share.data.token)}`, basic(bob)).opened).rejects.toThrow('HTTP 403');
});

test('the gateway drops a view-only tunnel\'s input even when it reaches it', async () => {
  expect((await json(await lab.api(alice, `/Device?action=retain&id=${deviceId}`, { method: 'POST' }))).isSuccess).toBe(true);
  sim().pressKey(3);
  const [device] = await json(await lab.api(lab.admin, `/Device?id=${deviceId}`));
  const [row] = await lab.hub.db.selectFrom('devices').select('retain_id').where('id', '=', deviceId).execute();
  // What a hub would send for a view-only viewer, with a touch written straight into the tunnel.
  const tunnel = await lab.hub.gateways.openTunnel({
    vendorUniqueIdentifier: device.vendorUniqueIdentifier ?? lab.world.device(serial).adbSerial, remoteAddress: 'test', userLogin: alice.login,
    service: 'screen', viewOnly: true, retainId: row.retain_id ?? '',
  }, 10_000);
  let frames = 0;
  tunnel.on('data', (frame) => { if (frame.data?.[0] === 2) frames++; });
  tunnel.resume();
  await waitFor(async () => frames > 0, 30_000, 'a frame through the tunnel');
  const icon = pointAt((n) => n.text === 'Settings');
  tunnel.write({ data: encodeScreenControl({ t: 'touch', a: 'd', ...icon }) });
  tunnel.write({ data: encodeScreenControl({ t: 'touch', a: 'u', ...icon }) });
  await new Promise((r) => setTimeout(r, 1_000));
  expect(sim().foregroundPackage()).toBeNull();
  tunnel.end();
  expect((await json(await lab.api(alice, `/Device?action=release&id=${deviceId}`, { method: 'POST' }))).isSuccess).toBe(true);
});

test('a share for a named user; revoking it ends that viewer within 1 s; a disable ends the retainer\'s screen', async () => {
  expect((await json(await lab.api(alice, `/Device?action=retain&id=${deviceId}`, { method: 'POST' }))).isSuccess).toBe(true);
  const share = await json(await lab.api(alice, `/Device/Share?id=${deviceId}&user=${encodeURIComponent(bob.login)}`, { method: 'POST' }));
  expect(share).toMatchObject({ isSuccess: true, data: { userLogin: bob.login } });
  expect(share.data.token).toBeUndefined();
  const viewer = screen(`id=${deviceId}`, basic(bob));
  const owner = screen(`id=${deviceId}`, basic(alice));
  await Promise.all([viewer.opened, owner.opened]);
  await waitFor(async () => viewer.frames > 0 && owner.frames > 0, 30_000, 'frames for both');
  const revoked = await json(await lab.api(alice, `/Device/Share?id=${deviceId}&shareId=${share.data.id}`, { method: 'DELETE' }));
  const at = Date.now();
  expect(revoked.isSuccess).toBe(true);
  await waitFor(async () => viewer.closedAt !== undefined, 5_000, 'the viewer cut');
  expect(viewer.closedAt! - at).toBeLessThan(1_000);
  expect(viewer.errors.join(' ')).toContain('revoked');
  expect(owner.closedAt).toBeUndefined();
  // A disable (by an administrator) ends the retainer's screen too.
  const disabled = await json(await lab.api(lab.admin, `/Device?action=disable&id=${deviceId}`, { method: 'POST' }));
  const disabledAt = Date.now();
  expect(disabled.isSuccess).toBe(true);
  await waitFor(async () => owner.closedAt !== undefined, 5_000, 'the owner cut');
  expect(owner.closedAt! - disabledAt).toBeLessThan(1_000);
  expect((await json(await lab.api(lab.admin, `/Device?action=enable&id=${deviceId}`, { method: 'POST' }))).isSuccess).toBe(true);
  expect((await json(await lab.api(alice, `/Device?action=release&id=${deviceId}`, { method: 'POST' }))).isSuccess).toBe(true);
});

test('stills for the grid: anyone listing devices sees a free device\'s screen; a retained one only who may watch it', async () => {
  const still = await lab.api(bob, `/Device/Screenshot?id=${deviceId}`);
  const body = Buffer.from(await still.arrayBuffer());
  // The newest frame of a capture still running (JPEG), or the device's own screencap (PNG).
  const kind = still.headers.get('content-type');
  expect(kind === 'image/png' ? body.subarray(1, 4).toString('latin1') : kind === 'image/jpeg' ? body.readUInt16BE(0) : kind).toBe(
    kind === 'image/png' ? 'PNG' : 0xffd8);
  expect((await json(await lab.api(alice, `/Device?action=retain&id=${deviceId}`, { method: 'POST' }))).isSuccess).toBe(true);
  expect(await json(await lab.api(bob, `/Device/Screenshot?id=${deviceId}`))).toMatchObject({ isSuccess: false, errorCode: 'DEVICE_NOT_RETAINED' });
  expect((await lab.api(alice, `/Device/Screenshot?id=${deviceId}`)).headers.get('content-type')).toMatch(/^image\//);
  expect((await json(await lab.api(alice, `/Device?action=release&id=${deviceId}`, { method: 'POST' }))).isSuccess).toBe(true);
});
