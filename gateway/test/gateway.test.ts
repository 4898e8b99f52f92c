/** startGateway end to end: real adb server + labsim device <-> gateway <-> a fake hub link server. */
import { createHash } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { LabWorld, specFromPreset } from '@devicelab/labsim';
import type { CommandResult, DeviceState } from '@devicelab/proto';
import { createLogger } from '@devicelab/shared';
import { startGateway, type RunningGateway } from '../src/gateway';
import { optionsFromEnv } from '../src/main';
import { FakeHub } from './support/fake-hub';
import { fixture } from '../../scripts/jest/shared-files';

const TOKEN = 'e2e-token';

describe('optionsFromEnv', () => {
  it('reads the daemon environment', () => {
    expect(optionsFromEnv({
      DEVICELAB_GATEWAY_NAME: 'lab-2', DEVICELAB_GATEWAY_TOKEN: 't', DEVICELAB_HUB: 'hub:7443',
      DEVICELAB_GATEWAY_CACHE: '/var/cache/gw', ANDROID_ADB_SERVER_PORT: '15099',
      DEVICELAB_GATEWAY_PUBLIC_ADDRESS: 'lab-2.example', DEVICELAB_GATEWAY_PUBLIC_PORT: '7100',
    })).toMatchObject({
      name: 'lab-2', token: 't', hubAddress: 'hub:7443', cacheDir: '/var/cache/gw', adbPort: 15099,
      publicAddress: 'lab-2.example', publicPort: 7100, tls: undefined,
    });
    expect(optionsFromEnv({ DEVICELAB_GATEWAY_NAME: 'a', DEVICELAB_GATEWAY_TOKEN: 't', DEVICELAB_HUB: 'h:1', DEVICELAB_HUB_TLS: '1' }).tls).toEqual({});
    expect(() => optionsFromEnv({ DEVICELAB_GATEWAY_NAME: 'a' })).toThrow(/DEVICELAB_GATEWAY_TOKEN is required/);
  });
});

describe('startGateway', () => {
  let world: LabWorld;
  let hub: FakeHub;
  let gateway: RunningGateway | undefined;
  let dir: string;
  const savedHome = process.env.HOME;

  beforeAll(async () => {
    world = new LabWorld();
    await world.start();
    process.env.HOME = world.env().HOME;
    hub = new FakeHub(TOKEN);
    dir = await mkdtemp(path.join(os.tmpdir(), 'gw-e2e-'));
  });

  afterAll(async () => {
    await gateway?.stop();
    hub.stop();
    await world.stop();
    process.env.HOME = savedHome;
    await rm(dir, { recursive: true, force: true });
  });

  it('reports labsim devices to the hub and installs an app pulled from it', async () => {
    const spec = specFromPreset('pixel-7', 7);
    const device = await world.addAndroidDevice(spec);
    const port = await hub.start();
    gateway = await startGateway({
      name: 'lab-e2e', token: TOKEN, hubAddress: `127.0.0.1:${port}`, cacheDir: path.join(dir, 'cache'),
      adbPort: world.adbServerPort, publicAddress: '127.0.0.1', publicPort: 7100, logger: createLogger('test', 'silent'),
    });
    const session = await hub.waitFor(() => hub.sessions[0]);
    const readyOnHub = () => session.messages.some((m) =>
      (m.body === 'deviceUpdate' && m.deviceUpdate.vendorUniqueIdentifier === device.adbSerial && m.deviceUpdate.readiness === 'Ready')
      || (m.body === 'snapshot' && m.snapshot.devices.some((d: DeviceState) => d.vendorUniqueIdentifier === device.adbSerial && d.readiness === 'Ready')));
    await hub.waitFor(readyOnHub, 15_000);
    expect(session.messages[1].body).toBe('snapshot');

    const apk = await readFile(fixture('ContactManager.apk'));
    const sha = createHash('sha256').update(apk).digest('hex');
    hub.blobs.set(sha, apk);
    session.call.write({
      body: 'command',
      command: {
        commandId: 'install-1', vendorUniqueIdentifier: device.adbSerial, deadlineMs: Date.now() + 30_000, action: 'install',
        install: { blobSha256: sha, fileName: 'ContactManager.apk', applicationIdentifier: 'com.example.android.contactmanager', force: false, nativeAutomation: false },
      },
    });
    const result = await hub.waitFor(() => {
      const m = session.messages.find((x) => x.body === 'commandResult');
      return m?.body === 'commandResult' ? m.commandResult : undefined;
    }, 20_000) as CommandResult;
    expect(result).toMatchObject({ commandId: 'install-1', ok: true });
    expect((await world.installedPackages(spec.serial)).map((p) => p.packageName)).toContain('com.example.android.contactmanager');
    // The refreshed package list reaches the hub as a delta.
    await hub.waitFor(() => session.messages.some((m) => m.body === 'deviceUpdate'
      && m.deviceUpdate.packages?.some((p) => p.identifier === 'com.example.android.contactmanager')), 10_000);

    await gateway.stop();
    gateway = undefined;
    await hub.waitFor(() => session.ended, 5_000);
  });
});
