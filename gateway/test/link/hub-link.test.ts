/**
 * The gateway's hub link on real parts: the REAL AndroidDriver talking to the REAL adb server in front of labsim
 * devices (this file's own LabWorld), and the hub's REAL link server (hub/src/gateways/link-server.ts) on a real
 * PostgreSQL test database with the gateway registered like an operator would. What the tests check is what a
 * user would: the records the hub keeps, the results the hub gets, and the state of the simulated devices.
 *
 * The one peer that is not real is ImpostorHub (support/impostor-hub.ts): a server that is not our hub and
 * therefore cannot prove itself in Welcome, something the real hub cannot be made to do.
 */
import { createHash } from 'node:crypto';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { defaultAndroidLab, LabWorld, type DeviceSnapshot } from '@devicelab/labsim';
import type { CommandAction, CommandResult } from '@devicelab/proto';
import { createLogger } from '@devicelab/shared';
import { BlobStore, type StoredBlob } from '../../../hub/src/apps/blob-store';
import { GatewayUnavailableError } from '../../../hub/src/gateways/gateway-directory';
import { registerGateway } from '../../../hub/src/gateways/gateway-tokens';
import { startLinkServer, type LinkServer } from '../../../hub/src/gateways/link-server';
import { NO_LONGER_REPORTED } from '../../../hub/src/gateways/device-inventory';
import { createTestDatabase, type TestDatabase } from '../../../hub/test/support/test-database';
import Adb from '@devicefarmer/adbkit';
import { AdbAccessEndpoints } from '../../src/access/adb-access-endpoints';
import { AppCache } from '../../src/apps/app-cache';
import { AndroidDriver } from '../../src/drivers/android/android-driver';
import { DriverRegistry } from '../../src/drivers/registry';
import { Backoff } from '../../src/link/backoff';
import { CommandExecutor } from '../../src/link/command-executor';
import { GATEWAY_VERSION, HubLink, type HubLinkOptions } from '../../src/link/hub-link';
import { hubProof, verifyHubProof } from '../../src/link/hub-proof';
import { ImpostorHub } from '../support/impostor-hub';
import { makeTestCerts } from '../support/test-certs';
import { fixture } from '../../../scripts/jest/shared-files';
import { eventually } from '../support/eventually';

const GATEWAY = 'lab-1';
const CONTACT_MANAGER = fixture('ContactManager.apk');
const CONTACT_PACKAGE = 'com.example.android.contactmanager';
const FIREFOX = 'org.mozilla.firefox';
const logger = createLogger('test', process.env.GW_TEST_LOG ?? 'silent');
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * The hub's real BlobStore; counts how often a blob is read, i.e. served to a gateway by FetchBlob. `stalled`: a
 * read gives its first chunk, then hangs as a stuck database would, until `stalled` is cleared.
 */
class CountingBlobStore extends BlobStore {
  reads = 0;
  stalled = false;
  override read(blob: StoredBlob): AsyncGenerator<Buffer> {
    this.reads++;
    if (!this.stalled) return super.read(blob);
    const store = this;
    const source = super.read(blob);
    return (async function* () {
      const first = await source.next();
      if (!first.done) yield first.value;
      while (store.stalled) await sleep(50);
      await source.return(undefined);
    })();
  }
}

describe('hub proof', () => {
  it('is HMAC-SHA256 keyed with the raw SHA-256 of the token', () => {
    const token = 'gw-token-123';
    const nonce = Buffer.alloc(32, 9);
    const proof = hubProof(token, nonce);
    expect(proof).toHaveLength(32);
    expect(verifyHubProof(token, nonce, proof)).toBe(true);
    expect(verifyHubProof('other', nonce, proof)).toBe(false);
    expect(verifyHubProof(token, nonce, proof.subarray(0, 31))).toBe(false);
    expect(verifyHubProof(token, nonce, undefined)).toBe(false);
    const key = createHash('sha256').update(token).digest();
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

describe('HubLink with the real hub link server and labsim devices', () => {
  let world: LabWorld;
  let t: TestDatabase;
  let blobs: CountingBlobStore;
  let dir: string;
  let token: string;
  let server: LinkServer | undefined;
  /** The gateway of the current test: its driver and link, stopped after each test. */
  let driver: AndroidDriver | undefined;
  /** The driver behind the registry the link routes commands through, as startGateway builds it. */
  let drivers: DriverRegistry | undefined;
  let link: HubLink | undefined;
  let cacheDir: string;
  // Two plugged devices (pixel-7 with Firefox, galaxy-s23) and a third one on the bench, not plugged in.
  let a: DeviceSnapshot;
  let b: DeviceSnapshot;
  let c: DeviceSnapshot;
  const savedHome = process.env.HOME;

  beforeAll(async () => {
    world = new LabWorld({ timings: { rebootMs: 800, bootCompleteMs: 700 } });
    await world.start();
    process.env.HOME = world.env().HOME; // adbkit may (re)start the adb server: use this world's adb key
    const [specA, specB, specC] = defaultAndroidLab(3);
    [a, b, c] = await Promise.all([
      world.addAndroidDevice(specA), world.addAndroidDevice(specB), world.addAndroidDevice(specC, { plug: false }),
    ]);
    t = await createTestDatabase({ maxConnections: 4 });
    dir = await mkdtemp(path.join(os.tmpdir(), 'gw-hublink-'));
    blobs = new CountingBlobStore(t.db);
    token = await registerGateway(t.db, GATEWAY);
    await startServer();
  });

  afterAll(async () => {
    await stopGateway();
    await server?.stop();
    await t?.drop();
    await world?.stop();
    process.env.HOME = savedHome;
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  beforeEach(async () => {
    cacheDir = await mkdtemp(path.join(dir, 'cache-'));
  });

  afterEach(async () => {
    await stopGateway();
    // The hub notices the gateway leave and takes its devices Offline: every test starts from Offline records,
    // so "Online" always means the current test's gateway reported the device Ready.
    if (server) {
      await eventually(() => server!.directory.connectedGateways().length === 0);
      await eventually(async () => (await t.db.selectFrom('devices').select('id').where('availability', '=', 'Online').execute()).length === 0);
    }
  });

  async function startServer(port = 0): Promise<LinkServer> {
    server = await startLinkServer({ db: t.db, blobs, port, host: '127.0.0.1', heartbeatIntervalMs: 200, logger });
    return server;
  }

  async function stopGateway(): Promise<void> {
    await link?.stop();
    await driver?.stop();
    link = undefined;
    driver = undefined;
  }

  /** Starts a gateway the way startGateway does (driver tracking first, then the link), with test knobs. */
  async function startLink(options: Partial<HubLinkOptions> & { port?: number; dialOnceReady?: DeviceSnapshot[] } = {}): Promise<HubLink> {
    const { port, dialOnceReady = [], ...overrides } = options;
    driver = new AndroidDriver({ adbPort: world.adbServerPort, bootPollMs: 150, rebootGraceMs: 400, devicePollMs: 500, logger });
    drivers = new DriverRegistry([driver]);
    link = new HubLink({
      name: GATEWAY, token, hubAddress: `127.0.0.1:${port ?? server!.port}`, publicAddress: 'lab-1.local', publicPort: 7100,
      drivers, appCache: new AppCache(cacheDir), logger, backoff: { initialMs: 50, maxMs: 500 }, ...overrides,
    });
    await drivers.start(link.channels.inventory);
    const d = driver;
    await eventually(() => dialOnceReady.every((device) =>
      d.snapshot().some((state) => state.vendorUniqueIdentifier === device.adbSerial && state.readiness === 'Ready')));
    link.start();
    return link;
  }

  const connected = (l: HubLink, timeoutMs = 10_000) => new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`the gateway did not connect within ${timeoutMs} ms`)), timeoutMs);
    l.once('connected', () => { clearTimeout(timer); resolve(); });
  });

  async function startConnected(options: Partial<HubLinkOptions> & { port?: number } = {}): Promise<HubLink> {
    const l = await startLink(options);
    await connected(l);
    return l;
  }

  const deviceRow = (id: string) =>
    t.db.selectFrom('devices')
      .select(['vendor_unique_identifier', 'availability', 'readiness', 'readiness_detail', 'model', 'serial_number', 'installed_packages'])
      .where('vendor_unique_identifier', '=', id).executeTakeFirst();
  const online = async (id: string) => (await deviceRow(id))?.availability === 'Online';
  const offline = async (id: string) => (await deviceRow(id))?.availability === 'Offline';
  const hubDevices = () => server!.directory.connectedGateways()[0]?.deviceVendorUniqueIdentifiers.slice().sort() ?? [];
  const sameDevices = (actual: string[], expected: string[]) => JSON.stringify(actual) === JSON.stringify(expected.slice().sort());
  const send = (device: DeviceSnapshot, action: CommandAction, timeoutMs = 10_000) =>
    server!.directory.sendCommand(device.adbSerial, action, timeoutMs);
  const installAction = (blobSha256: string, force = false): CommandAction => ({
    action: 'install',
    install: { blobSha256, applicationIdentifier: CONTACT_PACKAGE, force },
  });
  /** How a command sent through the hub ended, as a word for the deadline test. */
  const outcome = (sent: Promise<CommandResult>): Promise<string> => sent.then(
    (result) => (result.ok ? 'ok'
      : result.errorMessage === 'The command expired before the gateway could start it' ? 'expired'
        : result.errorMessage === 'The device did not finish the command in time' ? 'too slow' : `failed: ${result.errorMessage}`),
    (err: unknown) => (err instanceof GatewayUnavailableError && /did not answer within/.test(err.message) ? 'hub timeout' : `rejected: ${String(err)}`));
  const packagesOn = async (device: DeviceSnapshot) => (await world.installedPackages(device.serial)).map((p) => p.packageName);

  it('connects with its token; the snapshot and then deltas land in the records; heartbeats keep the session', async () => {
    await startConnected();
    const [gateway] = server!.directory.connectedGateways();
    expect(gateway).toMatchObject({ name: GATEWAY, publicAddress: 'lab-1.local', publicPort: 7100, version: GATEWAY_VERSION });
    // 'connected' means the snapshot is sent; the hub takes it in a moment later.
    await eventually(() => sameDevices(hubDevices(), [a.adbSerial, b.adbSerial]));
    await eventually(() => online(a.adbSerial));
    await eventually(() => online(b.adbSerial));
    // The facts are read from the device over adb (getprop), not made up by the gateway.
    expect(await deviceRow(a.adbSerial)).toMatchObject({ model: a.model, serial_number: a.serial, readiness: 'Ready' });
    // The installed packages follow the Online report.
    await eventually(async () => (await deviceRow(a.adbSerial))?.installed_packages.some((p) => p.identifier === FIREFOX) ?? false);
    expect(await deviceRow(b.adbSerial)).toMatchObject({ model: b.model, serial_number: b.serial });

    // Plugging a device in reaches the hub as deltas (Booting, then Ready); unplugging it as a removal.
    await world.plug(c.serial);
    await eventually(() => online(c.adbSerial));
    expect(await deviceRow(c.adbSerial)).toMatchObject({ model: c.model, readiness: 'Ready' });
    // ... and the devices already there stay (adbkit can emit its first device list before the driver listens).
    expect(hubDevices()).toEqual([a.adbSerial, b.adbSerial, c.adbSerial].sort());
    expect(await online(a.adbSerial) && await online(b.adbSerial)).toBe(true);
    await world.unplug(c.serial);
    await eventually(() => offline(c.adbSerial));
    expect(await deviceRow(c.adbSerial)).toMatchObject({ readiness_detail: NO_LONGER_REPORTED });
    expect(hubDevices()).toEqual([a.adbSerial, b.adbSerial].sort());

    // Well past the hub's limit of three silent heartbeat intervals (3 x 200 ms): the very same session is
    // still up because the gateway heartbeats, and its devices stay Online.
    await sleep(1_000);
    expect(server!.directory.connectedGateways()).toEqual([expect.objectContaining({ connectedAt: gateway.connectedAt })]);
    expect(link!.connected).toBe(true);
    expect(await online(a.adbSerial)).toBe(true);
  });

  it('keeps a verified link open past the Welcome timeout', async () => {
    const l = await startConnected({ welcomeTimeoutMs: 200 });
    const [session] = server!.directory.connectedGateways();
    const disconnects: string[] = [];
    l.on('disconnected', (reason: string) => disconnects.push(reason));
    await sleep(800);
    expect(disconnects).toEqual([]);
    expect(server!.directory.connectedGateways()).toEqual([expect.objectContaining({ connectedAt: session.connectedAt })]);
  });

  it('reconnects with backoff after the hub restarts and reconciles with a fresh snapshot', async () => {
    const l = await startConnected();
    await eventually(() => online(a.adbSerial));
    await eventually(() => online(b.adbSerial));
    const port = server!.port;
    const disconnected = new Promise((r) => l.once('disconnected', r));
    await server!.stop(); // takes every device of the gateway Offline
    server = undefined;
    await disconnected;
    expect(await offline(a.adbSerial)).toBe(true);

    // While the hub is away, b is unplugged and c plugged in; the gateway cannot tell the hub yet.
    await world.unplug(b.serial);
    try {
      await world.plug(c.serial);
      await sleep(400); // a few failed attempts while the hub is down

      const restartedAt = Date.now();
      await startServer(port);
      await connected(l);
      expect(Date.now() - restartedAt).toBeLessThan(2_000); // backoff capped at 500 ms in this test
      // a changed nothing while the hub was away: only the fresh snapshot can bring it back Online.
      await eventually(() => sameDevices(hubDevices(), [a.adbSerial, c.adbSerial]));
      await eventually(() => online(a.adbSerial));
      await eventually(() => online(c.adbSerial));
      expect(await offline(b.adbSerial)).toBe(true);
    } finally {
      // Back to the bench every other test expects: a and b plugged in, c not.
      server ??= await startServer(port);
      await world.unplug(c.serial);
      await world.plug(b.serial);
    }
  });

  it('runs hub commands on the devices and answers with their results', async () => {
    await startConnected();
    await eventually(() => online(a.adbSerial));

    const log = await send(a, { action: 'readLog', readLog: { maxLines: 5 } });
    expect(log).toMatchObject({ ok: true, errorMessage: '' });
    const lines = log.text.split('\n').filter((line) => /^\d\d-\d\d /.test(line));
    expect(lines.length).toBeGreaterThan(0);
    expect(lines.length).toBeLessThanOrEqual(5);

    const launched = await send(a, { action: 'launch', launch: { applicationIdentifier: FIREFOX, arguments: '--es greeting hello', startOnly: false } });
    expect(launched).toMatchObject({ ok: true, text: expect.stringMatching(/Status: ok/) });
    const last = (await world.amStartLog(a.serial)).at(-1);
    expect(last).toMatchObject({ tool: 'am', ok: true, component: `${FIREFOX}/org.mozilla.fenix.HomeActivity` });
    expect(last?.commandLine).toContain('--es greeting hello');

    const missing = await send(a, { action: 'launch', launch: { applicationIdentifier: 'com.missing', arguments: '', startOnly: false } });
    expect(missing).toMatchObject({ ok: false, errorMessage: 'No launchable activity found for com.missing' });
  });

  it('a gateway without adb endpoints answers a retain at once that it serves none', async () => {
    await startConnected(); // no adbAccess: endpoints are off on this gateway
    await eventually(() => online(a.adbSerial));
    server!.directory.notifyRetention({ vendorUniqueIdentifier: a.adbSerial, retainId: 'retain-1' });
    // The hub waits for the answer (a retain waits up to 3 s); without one this would hang until the test times out.
    await expect(server!.directory.accessPort(a.adbSerial, 'retain-1', 600_000)).resolves.toBeUndefined();
  });

  it('a retain names the port the device\'s endpoint kept at once; AccessSync comes back behind the Retentions sent before it', async () => {
    const access = new AdbAccessEndpoints({
      adb: Adb.createClient({ port: world.adbServerPort }), ports: { first: 17_700, last: 17_719 }, host: '127.0.0.1', logger,
      ownsAndroidDevice: () => true, report: () => undefined, packagesChanged: () => undefined,
    });
    try {
      const l = await startConnected({ adbAccess: access });
      await eventually(() => online(a.adbSerial));
      const directory = server!.directory;
      const retain = (retainId: string) => directory.notifyRetention({
        vendorUniqueIdentifier: a.adbSerial, retainId, userId: retainId ? 'u1' : '', userLogin: retainId ? 'alice' : '', adbKeys: [],
      });
      // A timeout of 0 answers only what the hub knows without hearing from the gateway.
      const known = (retainId: string, confirmed = false) => directory.accessPort(a.adbSerial, retainId, 0, confirmed);
      const answered = (retainId: string) => directory.accessPort(a.adbSerial, retainId, 10_000, true);
      retain('retain-1'); // a device's first retain: its endpoint opens now, and the hub learns the port
      expect(await known('retain-1')).toBeUndefined();
      const port = await answered('retain-1');
      expect(port).toBeGreaterThanOrEqual(17_700);
      retain('');
      retain('retain-2');
      expect(await known('retain-2', true)).toBeUndefined(); // confirmed: not before the gateway has it
      expect(await known('retain-2')).toBe(port); // kept from retain to retain: named at once
      await l.channels.access.sync(); // answered behind both Retentions: the gateway has applied them
      expect(access.portOf(a.adbSerial)).toBe(port);
      retain('');
      await l.channels.access.sync();
      expect(access.portOf(a.adbSerial)).toBeUndefined(); // released: open to nobody
      expect(await answered('')).toBe(port);
    } finally {
      await access.stop();
    }
  });

  it('install pulls the blob from the hub once for two devices, then installs it on both', async () => {
    await startConnected();
    await eventually(() => online(a.adbSerial));
    await eventually(() => online(b.adbSerial));
    const stored = await blobs.putFile(CONTACT_MANAGER);
    const readsBefore = blobs.reads;

    const [onA, onB] = await Promise.all([send(a, installAction(stored.sha256, true)), send(b, installAction(stored.sha256, true))]);
    expect(onA).toMatchObject({ ok: true, errorMessage: '' });
    expect(onB).toMatchObject({ ok: true, errorMessage: '' });
    expect(blobs.reads - readsBefore).toBe(1);
    expect(await packagesOn(a)).toContain(CONTACT_PACKAGE);
    expect(await packagesOn(b)).toContain(CONTACT_PACKAGE);
    // One verified file in the gateway's app cache, no partial downloads left behind.
    expect(await readdir(cacheDir)).toEqual([`${stored.sha256}.apk`]);
    expect(createHash('sha256').update(await readFile(path.join(cacheDir, `${stored.sha256}.apk`))).digest('hex')).toBe(stored.sha256);
    // The refreshed package lists reach the hub's records.
    const hasApp = async (device: DeviceSnapshot) =>
      (await deviceRow(device.adbSerial))?.installed_packages.some((p) => p.identifier === CONTACT_PACKAGE);
    await eventually(() => hasApp(a));
    await eventually(() => hasApp(b));

    // Installing again comes from the cache; a failure on the device reaches the hub as its text.
    await world.failNextInstall(a.serial, 'INSUFFICIENT_STORAGE');
    const failed = await send(a, installAction(stored.sha256));
    expect(failed).toMatchObject({
      ok: false, errorMessage: expect.stringMatching(/^Failure \[INSTALL_FAILED_INSUFFICIENT_STORAGE/), errorCode: 'INSTALL_FAILED_INSUFFICIENT_STORAGE',
    });
    // force: the app is removed first, so the device installs it from scratch (a new first-install time).
    const firstInstalled = async () => (await world.installedPackages(a.serial)).find((p) => p.packageName === CONTACT_PACKAGE)?.firstInstallTimeMs;
    const before = await firstInstalled();
    expect(await send(a, installAction(stored.sha256, true))).toMatchObject({ ok: true });
    expect(await firstInstalled()).toBeGreaterThan(before!);
    expect(blobs.reads - readsBefore).toBe(1);

    const unknownBlob = await send(a, installAction('a'.repeat(64)));
    expect(unknownBlob).toMatchObject({ ok: false, errorMessage: expect.stringMatching(/NOT_FOUND/), errorCode: 'APP_FETCH_FAILED' });
  });

  describe('a cold install (the blob not cached yet)', () => {
    const uninstallAction: CommandAction = { action: 'uninstall', uninstall: { applicationIdentifier: CONTACT_PACKAGE, keepData: false } };
    /**
     * Runs one install on each of a and b through the gateway's CommandExecutor, the blob fetched from the real hub in
     * 16 KiB pieces: the first half, then (once both devices have had bytes of it: the installs follow the download)
     * `rest` decides what comes. Without installs following the download this waits forever and the test fails.
     */
    async function installWhileDownloading(rest: (pieces: Buffer[]) => AsyncIterable<Buffer>): Promise<{ results: CommandResult[]; fetches: number }> {
      await startConnected();
      await eventually(() => online(a.adbSerial));
      await eventually(() => online(b.adbSerial));
      const stored = await blobs.putFile(CONTACT_MANAGER);
      let fetches = 0;
      const fed = new Set<string>();
      const fetcher = (sha: string, announce?: (totalSize: number) => void) => (async function* () {
        fetches++;
        const pieces: Buffer[] = [];
        for await (const chunk of link!.channels.blobs.fetch(sha, announce)) {
          for (let at = 0; at < chunk.length; at += 16_384) pieces.push(chunk.subarray(at, at + 16_384));
        }
        const half = Math.floor(pieces.length / 2);
        yield* pieces.slice(0, half);
        await eventually(() => fed.size === 2, 10_000);
        yield* rest(pieces.slice(half));
      })();
      const executor = new CommandExecutor(drivers!, new AppCache(cacheDir), fetcher, logger, () => undefined);
      for (const device of [a, b]) {
        await executor.execute({ commandId: `clean-${device.serial}`, vendorUniqueIdentifier: device.adbSerial, deadlineMs: 0, ...uninstallAction });
        expect(await packagesOn(device)).not.toContain(CONTACT_PACKAGE);
      }
      const results = await Promise.all([a, b].map((device) => executor.execute(
        { commandId: `install-${device.serial}`, vendorUniqueIdentifier: device.adbSerial, deadlineMs: Date.now() + 20_000, ...installAction(stored.sha256) },
        () => fed.add(device.serial))));
      return { results, fetches };
    }

    it('streams the binary to every device while it downloads, once, and keeps the verified file', async () => {
      const { results, fetches } = await installWhileDownloading(async function* (rest) { yield* rest; });
      expect(results).toMatchObject([{ ok: true, errorCode: '' }, { ok: true, errorCode: '' }]);
      expect(fetches).toBe(1);
      expect(await packagesOn(a)).toContain(CONTACT_PACKAGE);
      expect(await packagesOn(b)).toContain(CONTACT_PACKAGE);
      const [file] = await readdir(cacheDir);
      expect(await readdir(cacheDir)).toHaveLength(1);
      expect(createHash('sha256').update(await readFile(path.join(cacheDir, file))).digest('hex')).toBe(file.replace(/\.apk$/, ''));
    });

    it('fails every following install when the download breaks midway, and no device gets the app', async () => {
      const { results } = await installWhileDownloading(async function* (rest) {
        yield rest[0];
        throw new Error('the hub went away');
      });
      for (const result of results) {
        expect(result).toMatchObject({ ok: false, errorCode: 'APP_FETCH_FAILED', errorMessage: expect.stringMatching(/the hub went away/) });
      }
      await sleep(500); // a device that went on installing would show the app by now
      expect(await packagesOn(a)).not.toContain(CONTACT_PACKAGE);
      expect(await packagesOn(b)).not.toContain(CONTACT_PACKAGE);
      expect(await readdir(cacheDir)).toEqual([]);
    });

    it('fails every following install when the downloaded bytes do not match the digest, and no device gets the app', async () => {
      const { results } = await installWhileDownloading(async function* (rest) {
        const changed = Buffer.from(rest[0]);
        changed[0] ^= 0xff;
        yield changed;
        yield* rest.slice(1);
      });
      for (const result of results) {
        expect(result).toMatchObject({ ok: false, errorCode: 'APP_FETCH_FAILED', errorMessage: expect.stringMatching(/SHA-256/) });
      }
      await sleep(500);
      expect(await packagesOn(a)).not.toContain(CONTACT_PACKAGE);
      expect(await packagesOn(b)).not.toContain(CONTACT_PACKAGE);
      expect(await readdir(cacheDir)).toEqual([]);
    });
  });

  it('an install whose download stalls fails within the idle timeout, and leaves nothing behind', async () => {
    await startConnected({ blobIdleTimeoutMs: 1_000 });
    await eventually(() => online(a.adbSerial));
    const stored = await blobs.putFile(CONTACT_MANAGER);
    await send(a, { action: 'uninstall', uninstall: { applicationIdentifier: CONTACT_PACKAGE, keepData: false } });
    blobs.stalled = true;
    try {
      const started = Date.now();
      const result = await send(a, installAction(stored.sha256), 30_000);
      expect(result).toMatchObject({ ok: false, errorCode: 'APP_FETCH_FAILED', errorMessage: expect.stringMatching(/the hub sent nothing for 1 s/) });
      expect(Date.now() - started).toBeLessThan(15_000);
    } finally {
      blobs.stalled = false;
    }
    expect(await packagesOn(a)).not.toContain(CONTACT_PACKAGE);
    expect(await readdir(cacheDir)).toEqual([]);
    // The hub answers again: the next install downloads afresh and succeeds.
    expect(await send(a, installAction(stored.sha256), 30_000)).toMatchObject({ ok: true });
    expect(await packagesOn(a)).toContain(CONTACT_PACKAGE);
  });

  it('does not start a command past its deadline and answers a too slow one at its deadline', async () => {
    // Driven through the gateway's own CommandExecutor (real driver, real app cache, blobs from the real hub):
    // over the link the hub's own timer for the same deadline nearly always fires first and the hub drops late
    // results, so the gateway's exact answers are only reliably visible here. What the hub sees is checked too.
    await startConnected();
    await eventually(() => online(a.adbSerial));
    await eventually(() => online(b.adbSerial));
    const executor = new CommandExecutor(drivers!, new AppCache(cacheDir), (sha) => link!.channels.blobs.fetch(sha), logger, () => undefined);
    const launchFirefox: CommandAction = { action: 'launch', launch: { applicationIdentifier: FIREFOX, arguments: '', startOnly: true } };

    const launchesBefore = (await world.amStartLog(a.serial)).length;
    const expired = await executor.execute({ commandId: 'expired', vendorUniqueIdentifier: a.adbSerial, deadlineMs: Date.now() - 1, ...launchFirefox });
    expect(expired).toEqual({
      commandId: 'expired', ok: false, errorMessage: 'The command expired before the gateway could start it', errorCode: 'COMMAND_EXPIRED', text: '',
    });
    // Through the hub: a command whose deadline has passed when it reaches the gateway. The hub's own timer
    // and the gateway's answer race; either way the hub learns the command failed.
    expect(await outcome(send(a, launchFirefox, 0))).toMatch(/^(expired|hub timeout)$/);
    await sleep(500);
    expect(await world.amStartLog(a.serial)).toHaveLength(launchesBefore); // neither was started on the device

    const unknown = await executor.execute({ commandId: 'unknown', vendorUniqueIdentifier: c.adbSerial, deadlineMs: Date.now() + 5_000, ...launchFirefox });
    expect(unknown).toMatchObject({ ok: false, errorMessage: `Device ${c.adbSerial} is not connected to this gateway`, errorCode: 'DEVICE_NOT_CONNECTED' });

    const stored = await blobs.putFile(CONTACT_MANAGER);
    await world.setInstallDelay(b.serial, 1_500);
    const started = Date.now();
    const slow = await executor.execute({
      commandId: 'slow', vendorUniqueIdentifier: b.adbSerial, deadlineMs: started + 400, ...installAction(stored.sha256),
    });
    expect(slow).toMatchObject({ ok: false, errorMessage: 'The device did not finish the command in time', errorCode: 'COMMAND_TIMEOUT' });
    expect(Date.now() - started).toBeLessThan(1_200);
    const viaHub = Date.now();
    expect(await outcome(send(b, installAction(stored.sha256), 400))).toMatch(/^(too slow|hub timeout)$/);
    expect(Date.now() - viaHub).toBeLessThan(1_200);
    await world.setInstallDelay(b.serial, 0);
    // The device is not interrupted: both slow installs still complete there, although the hub was told the
    // command failed. Wait for the second one so the next test starts on an idle device.
    await eventually(async () =>
      ((await world.installedPackages(b.serial)).find((p) => p.packageName === CONTACT_PACKAGE)?.lastUpdateTimeMs ?? 0) >= viaHub + 1_500, 5_000);
  });

  it('a wrong token is refused by the hub and the gateway never connects', async () => {
    const l = await startLink({ token: 'not-the-token' });
    let wasConnected = false;
    l.on('connected', () => { wasConnected = true; });
    await sleep(600);
    expect(wasConnected).toBe(false);
    expect(l.connected).toBe(false);
    expect(server!.directory.connectedGateways()).toEqual([]);
  });

  it('speaks TLS to a hub whose certificate its CA signed, and refuses an untrusted one', async () => {
    const certs = makeTestCerts(await mkdtemp(path.join(dir, 'ca-')));
    const tlsServer = await startLinkServer({
      db: t.db, blobs, port: 0, host: '127.0.0.1', heartbeatIntervalMs: 200, logger, tls: { cert: certs.cert, key: certs.key },
    });
    try {
      const l = await startConnected({ port: tlsServer.port, tls: { ca: certs.ca, serverName: 'localhost' } });
      expect(l.connected).toBe(true);
      expect(tlsServer.directory.connectedGateways()).toMatchObject([{ name: GATEWAY }]);
      await eventually(() => online(a.adbSerial));
      await stopGateway();
      await eventually(() => tlsServer.directory.connectedGateways().length === 0);

      const otherCa = makeTestCerts(await mkdtemp(path.join(dir, 'other-ca-'))).ca;
      const untrusted = await startLink({ port: tlsServer.port, tls: { ca: otherCa, serverName: 'localhost' } });
      let wasConnected = false;
      untrusted.on('connected', () => { wasConnected = true; });
      await sleep(600);
      expect(wasConnected).toBe(false);
      expect(tlsServer.directory.connectedGateways()).toEqual([]);
    } finally {
      await stopGateway();
      await tlsServer.stop();
    }
  });

  it('drops a hub that cannot prove itself and runs none of its commands', async () => {
    const impostor = new ImpostorHub('not-the-token', () => ({
      commandId: 'impostor-1', vendorUniqueIdentifier: a.adbSerial, deadlineMs: Date.now() + 10_000,
      action: 'launch', launch: { applicationIdentifier: FIREFOX, arguments: '', startOnly: true },
    }));
    const port = await impostor.start();
    try {
      const launchesBefore = (await world.amStartLog(a.serial)).length;
      // a can take commands before the gateway dials, so a command that got through would run on it.
      const l = await startLink({ port, dialOnceReady: [a] });
      const rejected: unknown[] = [];
      l.on('hubRejected', () => rejected.push(true));
      let wasConnected = false;
      l.on('connected', () => { wasConnected = true; });
      // It keeps trying (the right hub may come back), refusing the impostor every time: the first attempt for
      // its wrong proof (hubRejected), the second because a command came before any Welcome.
      await eventually(() => impostor.sessions.length >= 3 && impostor.sessions.slice(0, 2).every((s) => s.ended), 5_000);
      expect(rejected.length).toBeGreaterThanOrEqual(1);
      await sleep(300);

      const [first, second] = impostor.sessions;
      // What the gateway gave away: its name and token (the impostor's host is where it was told to dial) ...
      expect(first.metadata.get('authorization')).toEqual([`Bearer ${token}`]);
      expect(first.metadata.get('x-devicelab-gateway')).toEqual([GATEWAY]);
      const hello = first.messages[0];
      expect(hello.body === 'hello' && hello.hello).toMatchObject({ gatewayName: GATEWAY, publicAddress: 'lab-1.local', publicPort: 7100 });
      // ... and a fresh 32-byte nonce per attempt, so a recorded Welcome cannot be replayed.
      const nonceOf = (s: typeof first) => (s.messages[0].body === 'hello' ? Buffer.from(s.messages[0].hello.nonce) : undefined);
      expect(nonceOf(first)).toHaveLength(32);
      expect(nonceOf(second)?.equals(nonceOf(first)!)).toBe(false);
      // Nothing else: no snapshot, no heartbeat, no command result; and the device never saw the command.
      expect(impostor.sessions.every((s) => s.messages.length === 1 && s.messages[0].body === 'hello')).toBe(true);
      expect(wasConnected).toBe(false);
      expect(l.connected).toBe(false);
      expect(await world.amStartLog(a.serial)).toHaveLength(launchesBefore);
    } finally {
      await stopGateway();
      impostor.stop();
    }
  });
});
