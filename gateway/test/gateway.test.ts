/** startGateway end to end: labsim device <-> real adb server <-> gateway <-> the hub's real link server (PostgreSQL). */
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { createFakeXcrun, LabWorld, iosSpecFromPreset, specFromPreset } from '@devicelab/labsim';
import { createLogger } from '@devicelab/shared';
import { BlobStore } from '../../hub/src/apps/blob-store';
import { registerGateway } from '../../hub/src/gateways/gateway-tokens';
import { startLinkServer, type LinkServer } from '../../hub/src/gateways/link-server';
import { createTestDatabase, type TestDatabase } from '../../hub/test/support/test-database';
import { startGateway, type RunningGateway } from '../src/gateway';
import { optionsFromEnv } from '../src/main';
import { fixture } from '../../scripts/jest/shared-files';
import { eventually } from './support/eventually';

const CONTACT_PACKAGE = 'com.example.android.contactmanager';
const logger = createLogger('test', 'silent');

describe('optionsFromEnv', () => {
  it('reads the daemon environment', () => {
    expect(optionsFromEnv({
      DEVICELAB_GATEWAY_NAME: 'lab-2', DEVICELAB_GATEWAY_TOKEN: 't', DEVICELAB_HUB: 'hub:7443',
      DEVICELAB_GATEWAY_CACHE: '/var/cache/gw', ANDROID_ADB_SERVER_PORT: '15099',
      DEVICELAB_GATEWAY_PUBLIC_ADDRESS: 'lab-2.example', DEVICELAB_GATEWAY_PUBLIC_PORT: '7100',
    })).toMatchObject({
      name: 'lab-2', token: 't', hubAddress: ['hub:7443'], cacheDir: '/var/cache/gw', adbPort: 15099,
      publicAddress: 'lab-2.example', publicPort: 7100, tls: undefined,
    });
    expect(optionsFromEnv({ DEVICELAB_GATEWAY_NAME: 'a', DEVICELAB_GATEWAY_TOKEN: 't', DEVICELAB_HUB: 'h:1', DEVICELAB_HUB_TLS: '1' }).tls).toEqual({});
    expect(() => optionsFromEnv({ DEVICELAB_GATEWAY_NAME: 'a' })).toThrow(/DEVICELAB_GATEWAY_TOKEN is required/);
    expect(optionsFromEnv({ DEVICELAB_GATEWAY_NAME: 'a', DEVICELAB_GATEWAY_TOKEN: 't', DEVICELAB_HUB: 'h:1', USBMUXD_SOCKET_ADDRESS: 'UNIX:/run/mux' }))
      .toMatchObject({ usbmuxdAddress: 'UNIX:/run/mux' });
  });

  it('reads several hub replicas from DEVICELAB_HUB, in order, each once', () => {
    const env = { DEVICELAB_GATEWAY_NAME: 'a', DEVICELAB_GATEWAY_TOKEN: 't' };
    expect(optionsFromEnv({ ...env, DEVICELAB_HUB: ' hub-a:7443, hub-b:7443,,hub-a:7443 ' }).hubAddress)
      .toEqual(['hub-a:7443', 'hub-b:7443']);
    expect(() => optionsFromEnv({ ...env, DEVICELAB_HUB: ' , ' })).toThrow(/DEVICELAB_HUB/);
  });

  it('reads the iOS simulators: XCRUN_BINARY when that file exists, else xcrun on the PATH, and DEVICELAB_SIMULATORS', () => {
    const base = { DEVICELAB_GATEWAY_NAME: 'a', DEVICELAB_GATEWAY_TOKEN: 't', DEVICELAB_HUB: 'h:1' };
    const xcrun = createFakeXcrun(fs.mkdtempSync(path.join(os.tmpdir(), 'xcrun-env-'))).binary;
    expect(optionsFromEnv({ ...base, XCRUN_BINARY: xcrun, DEVICELAB_SIMULATORS: 'iPhone 15:iOS-17-5*2, 5E3C1F0A-8D2B-4C6E-9A7F-1B2C3D4E5F60' })).toMatchObject({
      xcrunBinary: xcrun,
      simulators: [
        { kind: 'create', deviceType: 'iPhone 15', platform: 'iOS', version: '17.5', count: 2 },
        { kind: 'existing', udid: '5E3C1F0A-8D2B-4C6E-9A7F-1B2C3D4E5F60' },
      ],
    });
    expect(optionsFromEnv({ ...base, PATH: path.dirname(xcrun) }).xcrunBinary).toBe(xcrun);
    expect(optionsFromEnv({ ...base, XCRUN_BINARY: '/nonexistent/xcrun', PATH: '' }).xcrunBinary).toBeUndefined();
    expect(() => optionsFromEnv({ ...base, DEVICELAB_SIMULATORS: 'iPhone 15' })).toThrow(/expected a UDID or "<device type>:<runtime>\[\*count\]"/);
    expect(() => optionsFromEnv({ ...base, DEVICELAB_SIMULATORS: 'iPhone 15:iOS-17-5*0' })).toThrow(/count must be 1 to 64/);
  });

  it('reads the Prometheus listen address, and refuses one that is not host:port', () => {
    const env = { DEVICELAB_GATEWAY_NAME: 'a', DEVICELAB_GATEWAY_TOKEN: 't', DEVICELAB_HUB: 'h:1' };
    expect(optionsFromEnv(env).metricsListen).toBeUndefined();
    expect(optionsFromEnv({ ...env, DEVICELAB_GATEWAY_METRICS_LISTEN: '127.0.0.1:9464' }).metricsListen).toEqual({ host: '127.0.0.1', port: 9464 });
    expect(optionsFromEnv({ ...env, DEVICELAB_GATEWAY_METRICS_LISTEN: '[::1]:9464' }).metricsListen).toEqual({ host: '::1', port: 9464 });
    for (const bad of ['9464', 'host:', 'host:99999', 'a:b:1']) {
      expect(() => optionsFromEnv({ ...env, DEVICELAB_GATEWAY_METRICS_LISTEN: bad })).toThrow(/DEVICELAB_GATEWAY_METRICS_LISTEN must be host:port/);
    }
  });

  it('reads the automation settings: start, port range, log budget, Appium home; off; clear errors', () => {
    const env = { DEVICELAB_GATEWAY_NAME: 'a', DEVICELAB_GATEWAY_TOKEN: 't', DEVICELAB_HUB: 'h:1' };
    expect(optionsFromEnv(env).automation).toEqual({ start: 'first-session' });
    expect(optionsFromEnv({
      ...env, DEVICELAB_AUTOMATION: 'ready', DEVICELAB_AUTOMATION_PORTS: '30000-30099', DEVICELAB_AUTOMATION_LOG_BYTES: '65536',
      DEVICELAB_APPIUM_HOME: '/opt/appium',
    }).automation).toEqual({ start: 'ready', ports: { first: 30000, last: 30099 }, logBytes: 65536, appiumHome: '/opt/appium' });
    expect(optionsFromEnv({ ...env, DEVICELAB_AUTOMATION: 'off' }).automation).toBe(false);
    expect(() => optionsFromEnv({ ...env, DEVICELAB_AUTOMATION: 'always' })).toThrow(/DEVICELAB_AUTOMATION must be first-session, ready or off/);
    expect(() => optionsFromEnv({ ...env, DEVICELAB_AUTOMATION_PORTS: '30000-30005' })).toThrow(/at least 10 ports/);
    expect(() => optionsFromEnv({ ...env, DEVICELAB_AUTOMATION_PORTS: '70000-70100' })).toThrow(/DEVICELAB_AUTOMATION_PORTS must be 'first-last'/);
    expect(() => optionsFromEnv({ ...env, DEVICELAB_AUTOMATION_LOG_BYTES: '99999999' })).toThrow(/DEVICELAB_AUTOMATION_LOG_BYTES must be 1024-3145728/);
  });
});

describe('startGateway', () => {
  let world: LabWorld;
  let t: TestDatabase;
  let blobs: BlobStore;
  let hub: LinkServer;
  let gateway: RunningGateway | undefined;
  let dir: string;
  const savedHome = process.env.HOME;

  beforeAll(async () => {
    world = new LabWorld();
    await world.start();
    process.env.HOME = world.env().HOME;
    t = await createTestDatabase({ maxConnections: 4 });
    dir = await mkdtemp(path.join(os.tmpdir(), 'gw-e2e-'));
    blobs = new BlobStore(t.db);
    hub = await startLinkServer({ db: t.db, blobs, port: 0, host: '127.0.0.1', heartbeatIntervalMs: 500, logger });
  });

  afterAll(async () => {
    await gateway?.stop();
    await hub?.stop();
    await t?.drop();
    await world?.stop();
    process.env.HOME = savedHome;
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  const deviceRow = (id: string) =>
    t.db.selectFrom('devices').select(['availability', 'readiness', 'readiness_detail', 'model', 'installed_packages'])
      .where('vendor_unique_identifier', '=', id).executeTakeFirst();

  it('reports labsim devices to the hub and installs an app pulled from it', async () => {
    const spec = specFromPreset('pixel-7', 7);
    const device = await world.addAndroidDevice(spec);
    const token = await registerGateway(t.db, 'lab-e2e');
    gateway = await startGateway({
      name: 'lab-e2e', token, hubAddress: `127.0.0.1:${hub.port}`, cacheDir: path.join(dir, 'cache'),
      adbPort: world.adbServerPort, publicAddress: '127.0.0.1', publicPort: 7100, logger,
    });
    await eventually(async () => (await deviceRow(device.adbSerial))?.availability === 'Online');
    expect(await deviceRow(device.adbSerial)).toMatchObject({ readiness: 'Ready', model: spec.model });
    expect(hub.directory.connectedGateways()).toMatchObject([
      { name: 'lab-e2e', publicAddress: '127.0.0.1', publicPort: 7100, deviceVendorUniqueIdentifiers: [device.adbSerial] },
    ]);

    const stored = await blobs.putFile(fixture('ContactManager.apk'));
    const result = await hub.directory.sendCommand(device.adbSerial, {
      action: 'install',
      install: { blobSha256: stored.sha256, applicationIdentifier: CONTACT_PACKAGE, force: false },
    }, 20_000);
    expect(result).toMatchObject({ ok: true, errorMessage: '' });
    expect((await world.installedPackages(spec.serial)).map((p) => p.packageName)).toContain(CONTACT_PACKAGE);
    const cached = await readFile(path.join(dir, 'cache', `${stored.sha256}.apk`));
    expect(createHash('sha256').update(cached).digest('hex')).toBe(stored.sha256);
    // The refreshed package list reaches the hub's records as a delta.
    await eventually(async () => (await deviceRow(device.adbSerial))?.installed_packages.some((p) => p.identifier === CONTACT_PACKAGE));

    // Stopping the gateway ends its session: the hub takes its devices Offline.
    await gateway.stop();
    gateway = undefined;
    await eventually(async () => (await deviceRow(device.adbSerial))?.availability === 'Offline', 5_000);
    expect(hub.directory.connectedGateways()).toEqual([]);
  });

  it('runs the Android and iOS drivers side by side and installs an IPA on the iOS device from the cache as .ipa', async () => {
    const android = await world.addAndroidDevice(specFromPreset('galaxy-s23', 9));
    const iphone = iosSpecFromPreset('iphone-13', 9);
    await world.addIosDevice(iphone);
    await world.iosFleet.pairWithIdevicepair(iphone.udid);
    const token = await registerGateway(t.db, 'lab-mixed');
    gateway = await startGateway({
      name: 'lab-mixed', token, hubAddress: `127.0.0.1:${hub.port}`, cacheDir: path.join(dir, 'cache-mixed'),
      adbPort: world.adbServerPort, usbmuxdAddress: world.env().USBMUXD_SOCKET_ADDRESS, publicAddress: '127.0.0.1', publicPort: 7100, logger,
    });
    await eventually(async () => (await deviceRow(android.adbSerial))?.availability === 'Online' && (await deviceRow(iphone.udid))?.availability === 'Online', 20_000);
    expect(await deviceRow(iphone.udid)).toMatchObject({ readiness: 'Ready', model: 'iPhone14,5' });

    const stored = await blobs.putFile(fixture('app-info-iphone.ipa'));
    const result = await hub.directory.sendCommand(iphone.udid, {
      action: 'install',
      install: { blobSha256: stored.sha256, applicationIdentifier: 'com.icyleaf.AppInfoDemo', force: false },
    }, 30_000);
    expect(result).toMatchObject({ ok: true, errorMessage: '' });
    expect(result.device?.packages?.map((p) => p.identifier)).toContain('com.icyleaf.AppInfoDemo');
    await expect(readFile(path.join(dir, 'cache-mixed', `${stored.sha256}.ipa`))).resolves.toBeInstanceOf(Buffer);
    await gateway.stop();
    gateway = undefined;
  }, 60_000);
});
