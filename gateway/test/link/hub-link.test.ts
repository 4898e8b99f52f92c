import { createHash } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { Command, CommandResult, GatewayMessage } from '@devicelab/proto';
import { createLogger } from '@devicelab/shared';
import { AppCache } from '../../src/apps/app-cache';
import { Backoff } from '../../src/link/backoff';
import { HubLink } from '../../src/link/hub-link';
import { hubProof, verifyHubProof } from '../../src/link/hub-proof';
import { FakeDriver } from '../support/fake-driver';
import { FakeHub } from '../support/fake-hub';
import { fixture } from '../../../scripts/jest/shared-files';

const TOKEN = 'gw-token-123';
const logger = createLogger('test', 'silent');
const android = (id: string, readiness = 'Ready') => ({ vendorUniqueIdentifier: id, operatingSystem: 'Android', readiness });

describe('hub proof', () => {
  it('is HMAC-SHA256 keyed with the raw SHA-256 of the token', () => {
    const nonce = Buffer.alloc(32, 9);
    const proof = hubProof(TOKEN, nonce);
    expect(proof).toHaveLength(32);
    expect(verifyHubProof(TOKEN, nonce, proof)).toBe(true);
    expect(verifyHubProof('other', nonce, proof)).toBe(false);
    expect(verifyHubProof(TOKEN, nonce, proof.subarray(0, 31))).toBe(false);
    expect(verifyHubProof(TOKEN, nonce, undefined)).toBe(false);
    const key = createHash('sha256').update(TOKEN).digest();
    expect(key).toHaveLength(32);
  });
});

describe('backoff', () => {
  it('grows from 250 ms to 10 s with jitter in [base/2, base]', () => {
    const low = new Backoff({ initialMs: 250, maxMs: 10_000 }, () => 0);
    const high = new Backoff({ initialMs: 250, maxMs: 10_000 }, () => 1);
    const lows = Array.from({ length: 9 }, () => low.next());
    const highs = Array.from({ length: 9 }, () => high.next());
    expect(highs).toEqual([250, 500, 1000, 2000, 4000, 8000, 10_000, 10_000, 10_000]);
    expect(lows).toEqual(highs.map((h) => h / 2));
    high.reset();
    expect(high.next()).toBe(250);
  });
});

describe('HubLink against a fake hub', () => {
  let hub: FakeHub;
  let port: number;
  let driver: FakeDriver;
  let link: HubLink | undefined;
  let dir: string;

  beforeEach(async () => {
    hub = new FakeHub(TOKEN);
    port = await hub.start();
    driver = new FakeDriver();
    dir = await mkdtemp(path.join(os.tmpdir(), 'gw-link-'));
  });

  afterEach(async () => {
    await link?.stop();
    link = undefined;
    hub.stop();
    await rm(dir, { recursive: true, force: true });
  });

  const startLink = async (backoff = { initialMs: 50, maxMs: 400 }, welcomeTimeoutMs?: number) => {
    link = new HubLink({
      name: 'lab-1', token: TOKEN, hubAddress: `127.0.0.1:${port}`, publicAddress: 'lab-1.local', publicPort: 7100,
      driver, appCache: new AppCache(path.join(dir, 'cache')), logger, backoff, welcomeTimeoutMs,
    });
    await driver.start(link);
    link.start();
    return link;
  };

  const bodies = (messages: GatewayMessage[]) => messages.map((m) => m.body);

  const command = (c: Partial<Command> & Pick<Command, 'action'> & Record<string, unknown>): Command =>
    ({ commandId: `c-${Math.random()}`, vendorUniqueIdentifier: 'dev-1', deadlineMs: Date.now() + 10_000, ...c } as Command);

  const resultOf = async (commandId: string): Promise<CommandResult> => hub.waitFor(() => {
    const m = hub.last().messages.find((x) => x.body === 'commandResult' && x.commandResult.commandId === commandId);
    return m && m.body === 'commandResult' ? m.commandResult : undefined;
  });

  it('authenticates, verifies the hub, sends a snapshot, deltas and heartbeats', async () => {
    driver.devices.set('dev-1', android('dev-1'));
    await startLink();
    const connected = new Promise((r) => link!.once('connected', r));
    const session = await hub.waitFor(() => hub.sessions[0]);
    expect(session.metadata.get('authorization')).toEqual([`Bearer ${TOKEN}`]);
    expect(session.metadata.get('x-devicelab-gateway')).toEqual(['lab-1']);
    await connected;
    await hub.waitFor(() => session.messages.some((m) => m.body === 'snapshot'));
    const [hello, snapshot] = session.messages;
    expect(hello.body === 'hello' && hello.hello).toMatchObject({ gatewayName: 'lab-1', publicAddress: 'lab-1.local', publicPort: 7100 });
    expect(hello.body === 'hello' && hello.hello.nonce).toHaveLength(32);
    expect(snapshot.body === 'snapshot' && snapshot.snapshot.devices).toMatchObject([android('dev-1')]);
    driver.put(android('dev-2', 'Booting'));
    driver.remove('dev-1');
    await hub.waitFor(() => session.messages.some((m) => m.body === 'deviceRemoved'));
    expect(bodies(session.messages).slice(2, 4)).toEqual(['deviceUpdate', 'deviceRemoved']);
    expect(session.messages[2]).toMatchObject({ deviceUpdate: { vendorUniqueIdentifier: 'dev-2', readiness: 'Booting' } });
    await hub.waitFor(() => session.messages.filter((m) => m.body === 'heartbeat').length >= 2, 2_000);
  });

  it('keeps a verified link open past the Welcome timeout', async () => {
    await startLink(undefined, 200);
    await new Promise((r) => link!.once('connected', r));
    const disconnects: string[] = [];
    link!.on('disconnected', (reason: string) => disconnects.push(reason));
    await new Promise((r) => setTimeout(r, 800));
    expect(disconnects).toEqual([]);
    expect(hub.sessions).toHaveLength(1);
  });

  it('drops a hub whose proof is wrong and takes no commands from it', async () => {
    hub.proofToken = 'not-the-token';
    driver.devices.set('dev-1', android('dev-1'));
    await startLink();
    const rejected = new Promise((r) => link!.once('hubRejected', r));
    await rejected;
    await hub.waitFor(() => hub.sessions[0]?.ended);
    const first = hub.sessions[0];
    first.call.write({ body: 'command', command: command({ action: 'reboot', reboot: {} }) });
    await new Promise((r) => setTimeout(r, 150));
    expect(bodies(first.messages)).toEqual(['hello']);
    expect(driver.calls).toEqual([]);
    expect(link!.connected).toBe(false);
    // It keeps trying (the right hub may come back), still refusing the impostor.
    await hub.waitFor(() => hub.sessions.length >= 2);
    expect(hub.sessions.every((s) => !s.messages.some((m) => m.body === 'snapshot'))).toBe(true);
  });

  it('reconnects with backoff after the hub restarts and sends a fresh snapshot', async () => {
    driver.devices.set('dev-1', android('dev-1'));
    await startLink();
    await new Promise((r) => link!.once('connected', r));
    const disconnected = new Promise((r) => link!.once('disconnected', r));
    hub.stop();
    await disconnected;
    driver.put(android('dev-3'));
    await new Promise((r) => setTimeout(r, 300)); // a few failed attempts while the hub is down
    const restarted = new FakeHub(TOKEN);
    await restarted.start(port);
    hub = restarted;
    await new Promise((r) => link!.once('connected', r));
    const session = await hub.waitFor(() => hub.sessions.find((s) => s.messages.some((m) => m.body === 'snapshot')));
    const snapshot = session.messages.find((m) => m.body === 'snapshot');
    expect(snapshot?.body === 'snapshot' && snapshot.snapshot.devices.map((d) => d.vendorUniqueIdentifier).sort()).toEqual(['dev-1', 'dev-3']);
  });

  it('executes commands and replies with results', async () => {
    driver.devices.set('dev-1', android('dev-1'));
    await startLink();
    await new Promise((r) => link!.once('connected', r));
    const session = hub.last();
    const send = (c: Command) => session.call.write({ body: 'command', command: c });

    const log = command({ action: 'readLog', readLog: { maxLines: 5 } });
    send(log);
    expect(await resultOf(log.commandId)).toEqual({ commandId: log.commandId, ok: true, errorMessage: '', text: 'log of dev-1 (5)' });

    const bad = command({ action: 'launch', launch: { applicationIdentifier: 'com.missing', arguments: '', startOnly: false } });
    send(bad);
    expect(await resultOf(bad.commandId)).toMatchObject({ ok: false, errorMessage: 'No launchable activity found for com.missing' });

    const unknownDevice = command({ vendorUniqueIdentifier: 'nope', action: 'reboot', reboot: {} });
    send(unknownDevice);
    expect(await resultOf(unknownDevice.commandId)).toMatchObject({ ok: false, errorMessage: 'Device nope is not connected to this gateway' });

    const expired = command({ deadlineMs: Date.now() - 1, action: 'reboot', reboot: {} });
    send(expired);
    expect(await resultOf(expired.commandId)).toMatchObject({ ok: false, errorMessage: expect.stringMatching(/expired/) });

    driver.delayMs = 500;
    const slow = command({ deadlineMs: Date.now() + 100, action: 'reboot', reboot: {} });
    send(slow);
    expect(await resultOf(slow.commandId)).toMatchObject({ ok: false, errorMessage: expect.stringMatching(/in time/) });
  });

  it('install fetches the blob once into the app cache, then installs from it', async () => {
    const apk = await readFile(fixture('ContactManager.apk'));
    const sha = createHash('sha256').update(apk).digest('hex');
    hub.blobs.set(sha, apk);
    driver.devices.set('dev-1', android('dev-1'));
    driver.devices.set('dev-2', android('dev-2'));
    await startLink();
    await new Promise((r) => link!.once('connected', r));
    const session = hub.last();
    const install = (device: string) => command({
      vendorUniqueIdentifier: device, action: 'install',
      install: { blobSha256: sha, fileName: 'ContactManager.apk', applicationIdentifier: 'com.example.android.contactmanager', force: true, nativeAutomation: false },
    });
    const a = install('dev-1');
    const b = install('dev-2');
    session.call.write({ body: 'command', command: a });
    session.call.write({ body: 'command', command: b });
    expect(await resultOf(a.commandId)).toMatchObject({ ok: true });
    expect(await resultOf(b.commandId)).toMatchObject({ ok: true });
    expect(hub.blobRequests).toBe(1);
    const file = path.join(dir, 'cache', `${sha}.apk`);
    expect(driver.calls.map((c) => c.args)).toEqual([
      ['dev-1', file, { force: true, packageId: 'com.example.android.contactmanager' }],
      ['dev-2', file, { force: true, packageId: 'com.example.android.contactmanager' }],
    ]);
    expect(await readFile(file)).toEqual(apk);

    const missing = command({ action: 'install', install: { blobSha256: 'a'.repeat(64), fileName: 'x.apk', applicationIdentifier: '', force: false, nativeAutomation: false } });
    session.call.write({ body: 'command', command: missing });
    expect(await resultOf(missing.commandId)).toMatchObject({ ok: false, errorMessage: expect.stringMatching(/no such blob/) });
  });
});
