/**
 * The hub's link server driven by OUR REAL gateway (gateway/src, its AndroidDriver on a real adb server) in front
 * of simulated Android devices, with records in a real PostgreSQL test database: authentication, Hello/Welcome,
 * inventory (snapshot, deltas, reconnects), the hub's Rebooting, commands, FetchBlob, a stream lost mid-command.
 * The tests run in order and share one lab; each leaves the gateway connected with both devices Online unless
 * it says otherwise.
 */
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { GATEWAY_VERSION } from '@devicelab/gateway';
import { specFromPreset } from '@devicelab/labsim';
import type { CommandAction } from '@devicelab/proto';
import type { AuthenticatedUser } from '../../src/auth/authenticated-user';
import { rebootDevice } from '../../src/domain/device-actions';
import { GatewayUnavailableError } from '../../src/gateways/gateway-directory';
import { NO_LONGER_REPORTED } from '../../src/gateways/device-inventory';
import type { GatewaySession } from '../../src/gateways/gateway-session';
import { BLOB_CHUNK_BYTES } from '../../src/gateways/channels/blobs';
import { fixture } from '../../../scripts/jest/shared-files';
import {
  availabilityHistory, deviceRow, gatewayRow, sleep, startLinkLab, waitForAvailability, waitUntil,
  type LabDevice, type LinkLab, type TestGateway,
} from './real-gateway-lab';

const REBOOT_MS = 400;
const BOOT_COMPLETE_MS = 400;

let lab: LinkLab;
let A: LabDevice; // Pixel 7, Firefox preinstalled
let B: LabDevice; // Galaxy S23, Spotify preinstalled
let gateway: TestGateway | undefined;

const connected = (): TestGateway => {
  if (!gateway) throw new Error('no gateway running (an earlier test failed?)');
  return gateway;
};
const row = async (device: LabDevice) => {
  const found = await deviceRow(lab, device.vui);
  if (!found) throw new Error(`no device row for ${device.vui}`);
  return found;
};
const send = (device: LabDevice | string, action: CommandAction, timeoutMs = 10_000) =>
  lab.link.directory.sendCommand(typeof device === 'string' ? device : device.vui, action, timeoutMs);
const installAction = (sha256: string, applicationIdentifier: string): CommandAction => ({
  action: 'install', install: { blobSha256: sha256, applicationIdentifier, force: false },
});

beforeAll(async () => {
  lab = await startLinkLab({
    gatewayName: 'lab-1',
    devices: [specFromPreset('pixel-7', 0), specFromPreset('galaxy-s23', 1)],
    timings: { rebootMs: REBOOT_MS, bootCompleteMs: BOOT_COMPLETE_MS },
    // Long enough that a hung gateway is still "connected" while its replacement dials in (takeover test).
    heartbeatIntervalMs: 2_000,
  });
  [A, B] = lab.devices;
}, 60_000);

afterAll(() => lab?.stop(), 30_000);

describe('link server: authentication', () => {
  it.each([
    ['a wrong token', 'lab-1', '00000000-0000-0000-0000-000000000000'],
    ['an unknown gateway name', 'lab-9', undefined],
    ['a malformed gateway name', 'lab 1; drop', undefined],
  ])('refuses a gateway with %s: it never connects and records nothing', async (_what, name, badToken) => {
    const refused = await lab.startGateway({ name, token: badToken ?? lab.token });
    const refusal = await waitUntil(
      () => refused.logs.find((record) => record.msg === 'the hub refused this gateway (check its name and token)'),
      5_000, 'the refusal in the gateway log',
    );
    expect(refusal.reason).toBe('UNAUTHENTICATED: unknown gateway or wrong token');
    await refused.stop();
    expect(refused.connections).toBe(0);
    expect(lab.link.directory.connectedGateways()).toEqual([]);
    expect((await gatewayRow(lab))?.connected).toBe(false);
    expect(await lab.t.db.selectFrom('devices').select('id').execute()).toEqual([]);
  });
});

describe('link server: a gateway connects', () => {
  it('answers Hello with a proof the gateway accepts; the first snapshot records every device Online with its facts', async () => {
    // The gateway starts before the hub, so its devices are Ready by the time it gets through: the snapshot,
    // not a later delta, is what records them.
    await lab.stopHub();
    gateway = await lab.startGateway();
    await waitUntil(() => connected().running.drivers.snapshot().filter((d) => d.readiness === 'Ready').length === 2,
      15_000, 'both devices Ready at the gateway');
    await lab.startHub();
    // `connected` only fires once the gateway verified the hub's proof (HMAC over its nonce, keyed by the token hash).
    await waitUntil(() => connected().connections === 1, 5_000, 'the gateway connected');
    expect(connected().hubRejections).toBe(0);
    await waitForAvailability(lab, [A.vui, B.vui], 'Online', 5_000);

    const registered = await gatewayRow(lab);
    expect(registered).toMatchObject({ connected: true, public_address: 'gw.lab.test', public_port: 7000 });
    expect(lab.link.directory.connectedGateways()).toEqual([expect.objectContaining({
      name: 'lab-1', version: GATEWAY_VERSION, publicAddress: 'gw.lab.test', publicPort: 7000,
      deviceVendorUniqueIdentifiers: expect.arrayContaining([A.vui, B.vui]),
    })]);

    const a = await row(A);
    expect(a).toMatchObject({
      gateway_id: registered!.id,
      name: A.spec.deviceName,
      model: A.spec.model,
      manufacturer: A.spec.manufacturer,
      serial_number: A.spec.serial,
      operating_system: 'Android',
      operating_system_version: A.spec.androidVersion,
      operating_system_build: A.spec.buildId,
      form_factor: 'Phone',
      mac_address: A.spec.wifiMac.toUpperCase(),
      battery_percent: A.spec.battery.level,
      readiness: 'Ready',
      readiness_detail: null,
    });
    expect(Number(a.disk_space)).toBeGreaterThan(0);
    expect(a.last_connected_at).toBeInstanceOf(Date);
    expect(a.properties).toEqual(expect.arrayContaining([{ name: 'ro.serialno', value: A.spec.serial }]));
    expect(a.installed_packages).toEqual(expect.arrayContaining([
      expect.objectContaining({ identifier: 'org.mozilla.firefox', version: '121.1.0', system: false }),
    ]));
    expect(await row(B)).toMatchObject({ name: B.spec.deviceName, model: B.spec.model, manufacturer: 'samsung', serial_number: B.spec.serial });
    expect(await availabilityHistory(lab, a.id)).toEqual(['Device Online']);
    expect(await availabilityHistory(lab, (await row(B)).id)).toEqual(['Device Online']);
  });
});

describe('link server: inventory', () => {
  it('keeps Guids across a gateway restart; a new connection replacing a hung one takes unreported devices Offline without flapping the others', async () => {
    const a = await row(A);
    const b = await row(B);
    await connected().stop();
    gateway = undefined;
    await waitForAvailability(lab, [A.vui, B.vui], 'Offline', 5_000);

    // Restarted as the daemon (it transpiles its TypeScript sources as it starts: slow on a busy host): the same
    // records come back Online.
    const hung = lab.spawnGatewayDaemon();
    await waitForAvailability(lab, [A.vui, B.vui], 'Online', 60_000).catch((err: Error) => {
      throw new Error(`${err.message}\ngateway daemon output:\n${hung.output()}`);
    });
    expect((await row(A)).id).toBe(a.id);
    expect((await row(B)).id).toBe(b.id);
    const aHistory = await availabilityHistory(lab, a.id);
    expect(aHistory).toEqual(['Device Online', 'Device Offline', 'Device Online']);

    // Its host hangs (stream open, nothing sent); meanwhile B is unplugged, and a new instance of the gateway
    // gets through before the hub gives up on the hung one. (The new instance reaches the hub only once it has
    // read its devices: a gateway just started reports them Booting, which would flap A on its own.) `replaced` is
    // the hung instance's session, once the new one replaces it.
    const replaced = new Promise<GatewaySession>((resolve) => lab.link.sessions.once('removed', resolve));
    try {
      hung.child.kill('SIGSTOP');
      await lab.world.unplug(B.spec.serial);
      const route = await lab.lateRoute();
      gateway = await lab.startGateway({ hubPort: route.port });
      await waitUntil(() => {
        const seen = connected().running.drivers.snapshot();
        return seen.length === 1 && seen[0].vendorUniqueIdentifier === A.vui && seen[0].readiness === 'Ready';
      }, 10_000, 'the new gateway instance to see A Ready and B gone');
      await route.open();

      await waitForAvailability(lab, [B.vui], 'Offline', 5_000);
      expect(await row(B)).toMatchObject({ id: b.id, readiness: 'Offline', readiness_detail: 'Not reported by its gateway' });
      expect(await row(A)).toMatchObject({ id: a.id, availability: 'Online', readiness: 'Ready' });
      expect(await availabilityHistory(lab, a.id)).toEqual(aHistory); // no Offline/Online flap through the takeover
      expect(lab.link.directory.connectedGateways()).toEqual([
        expect.objectContaining({ name: 'lab-1', deviceVendorUniqueIdentifiers: [A.vui] }),
      ]);
    } finally {
      // The hung process finally dies: its replaced session takes nothing Offline.
      await hung.kill();
    }
    // Its stream is gone at the hub, and whatever that queued for the records has landed.
    await (await replaced).streamGone;
    await lab.link.recorded(A.vui);
    expect((await row(A)).availability).toBe('Online');
    expect(await availabilityHistory(lab, a.id)).toEqual(aHistory);
    expect((await gatewayRow(lab))?.connected).toBe(true);
    expect(lab.link.directory.connectedGateways()).toHaveLength(1);

    // Plugged back in, B comes back Online (a delta) under its old Guid.
    await lab.world.plug(B.spec.serial);
    await waitForAvailability(lab, [A.vui, B.vui], 'Online', 10_000);
    expect((await row(B)).id).toBe(b.id);
  }, 120_000);

  it('applies deltas: an unplugged device goes Offline and takes no commands; plugged again it is Online under its Guid', async () => {
    await waitForAvailability(lab, [A.vui, B.vui], 'Online', 10_000);
    const before = await row(A);
    const history = await availabilityHistory(lab, before.id);
    await lab.world.unplug(A.spec.serial);
    await waitForAvailability(lab, [A.vui], 'Offline', 5_000);
    expect(await row(A)).toMatchObject({ readiness: 'Offline', readiness_detail: NO_LONGER_REPORTED, last_disconnected_at: expect.any(Date) });
    await expect(send(A, { action: 'readLog', readLog: { maxLines: 1 } }, 1_000)).rejects.toBeInstanceOf(GatewayUnavailableError);
    expect((await row(B)).availability).toBe('Online');

    await lab.world.plug(A.spec.serial);
    await waitForAvailability(lab, [A.vui], 'Online', 10_000);
    expect(await row(A)).toMatchObject({ id: before.id, readiness: 'Ready', readiness_detail: null });
    expect(await availabilityHistory(lab, before.id)).toEqual([...history, 'Device Offline', 'Device Online']);
    expect((await send(A, { action: 'readLog', readLog: { maxLines: 1 } })).ok).toBe(true);
  }, 30_000);

  it('records why a device cannot be used, keeping the facts earlier reports gave when a report has none', async () => {
    const before = await row(A);
    await lab.world.setUnauthorized(A.spec.serial, true);
    try {
      const unauthorized = await waitUntil(async () => {
        const current = await row(A);
        // adb says "authorizing" for a moment before "unauthorized": wait for the settled reason.
        return current.readiness === 'Unauthorized' && /USB debugging is not authorized/.test(current.readiness_detail ?? '') && current;
      }, 10_000, 'A Unauthorized');
      // What the gateway reported: no facts, it cannot read an unauthorized device.
      const reported = connected().running.drivers.snapshot().find((d) => d.vendorUniqueIdentifier === A.vui);
      expect(reported).toEqual({
        vendorUniqueIdentifier: A.vui, operatingSystem: 'Android', readiness: 'Unauthorized', readinessDetail: expect.any(String),
      });
      expect(unauthorized.availability).toBe('Offline');
      expect(unauthorized.readiness_detail).toBe(reported!.readinessDetail);
      const facts = (r: typeof before) => ({
        name: r.name, serial_number: r.serial_number, model: r.model, manufacturer: r.manufacturer,
        operating_system_version: r.operating_system_version, mac_address: r.mac_address, disk_space: r.disk_space,
        properties: r.properties, installed_packages: r.installed_packages, battery_percent: r.battery_percent,
      });
      expect(facts(unauthorized)).toEqual(facts(before));
      expect(before.serial_number).toBe(A.spec.serial);
      expect(before.battery_percent).toBe(A.spec.battery.level);
    } finally {
      await lab.world.setUnauthorized(A.spec.serial, false);
      await waitForAvailability(lab, [A.vui], 'Online', 10_000);
    }
    expect(await row(A)).toMatchObject({ readiness: 'Ready', readiness_detail: null, battery_percent: A.spec.battery.level });
  }, 30_000);

  it('holds the hub-side Rebooting while the device reboots, until the gateway reports it Ready', async () => {
    const user = await lab.t.db.insertInto('users').values({ login: 'rebooter' }).returning('id').executeTakeFirstOrThrow();
    const rebooter: AuthenticatedUser = {
      id: user.id, login: 'rebooter', displayName: 'rebooter', entitlements: new Set(['DeviceReboot']), roles: [],
    };
    const b = await row(B);
    const started = Date.now();
    await rebootDevice(lab.t.db, lab.link.directory, rebooter, b.id);

    // Sample the hub's record and the gateway's own view of B until the hub lets go of Rebooting.
    const samples: { hub: string; availability: string; gateway: string }[] = [];
    for (;;) {
      const current = await row(B);
      const atGateway = connected().running.drivers.snapshot().find((d) => d.vendorUniqueIdentifier === B.vui);
      samples.push({ hub: current.readiness, availability: current.availability, gateway: atGateway?.readiness ?? 'absent' });
      if (current.readiness !== 'Rebooting') break;
      if (Date.now() - started > 20_000) throw new Error(`B still Rebooting after 20 s: ${JSON.stringify(samples.slice(-5))}`);
      await sleep(25);
    }
    const elapsed = Date.now() - started;
    expect(samples.at(-1)).toEqual({ hub: 'Ready', availability: 'Online', gateway: 'Ready' });
    const held = samples.slice(0, -1);
    expect(held.filter((s) => s.hub !== 'Rebooting' || s.availability !== 'Offline')).toEqual([]);
    // The gateway did report B not Ready meanwhile (Booting, or gone while it restarted); the hub held on.
    expect(held.some((s) => s.gateway === 'Booting')).toBe(true);
    expect(elapsed).toBeGreaterThanOrEqual(REBOOT_MS + BOOT_COMPLETE_MS);
    expect(await row(B)).toMatchObject({ id: b.id, readiness_detail: null, serial_number: B.spec.serial });
    expect((await availabilityHistory(lab, b.id)).slice(-2)).toEqual(['Device Offline', 'Device Online']);
  }, 30_000);
});

describe('link server: commands', () => {
  it('runs commands on the devices and matches each result to its command', async () => {
    const launch = (applicationIdentifier: string): CommandAction =>
      ({ action: 'launch', launch: { applicationIdentifier, arguments: '', startOnly: false } });
    const [onA, onB] = await Promise.all([send(A, launch('org.mozilla.firefox')), send(B, launch('com.spotify.music'))]);
    expect(onA).toMatchObject({ ok: true, errorMessage: '' });
    expect(onB).toMatchObject({ ok: true, errorMessage: '' });
    expect((await lab.world.amStartLog(A.spec.serial)).map((r) => r.component)).toContain('org.mozilla.firefox/org.mozilla.fenix.HomeActivity');
    expect((await lab.world.amStartLog(B.spec.serial)).map((r) => r.component)).toContain('com.spotify.music/com.spotify.music.MainActivity');

    const readLog: CommandAction = { action: 'readLog', readLog: { maxLines: 5 } };
    const [logA, logB] = await Promise.all([send(A, readLog), send(B, readLog)]);
    expect(logA.ok && logB.ok).toBe(true);
    const entries = (text: string) => text.trim().split('\n').filter((line) => !line.startsWith('--------- beginning of'));
    expect(entries(logA.text).length).toBeLessThanOrEqual(5);
    expect(entries(logB.text).length).toBeLessThanOrEqual(5);
    expect(logA.text).toContain('org.mozilla.firefox');
    expect(logA.text).not.toContain('com.spotify.music');
    expect(logB.text).toContain('com.spotify.music');
    expect(logB.text).not.toContain('org.mozilla.firefox');

    expect(await send(A, launch('com.missing'))).toMatchObject({ ok: false, errorMessage: 'No launchable activity found for com.missing' });
  });

  it('fails a command the gateway does not answer in time, and the link stays usable', async () => {
    const apk = await lab.blobs.putFile(fixture('ContactManager.apk'));
    await lab.world.setInstallDelay(A.spec.serial, 4_000);
    const started = Date.now();
    const late = send(A, installAction(apk.sha256, 'com.example.android.contactmanager'), 300);
    await expect(late).rejects.toBeInstanceOf(GatewayUnavailableError);
    await expect(late).rejects.toThrow(/did not answer within 300 ms/);
    expect(Date.now() - started).toBeGreaterThanOrEqual(290);
    // Answered at its deadline, not when the device finished: the slow install is still running on the device
    // (a condition, not a wall-clock bound that a loaded machine could miss).
    expect((await lab.world.installedPackages(A.spec.serial)).map((p) => p.packageName))
      .not.toContain('com.example.android.contactmanager');

    await expect(send('no-such-device', { action: 'reboot', reboot: {} }, 300)).rejects.toBeInstanceOf(GatewayUnavailableError);
    // The install finishes on the device later; its late answer changes nothing and the session carries on.
    await waitUntil(async () => (await lab.world.installedPackages(A.spec.serial)).some((p) => p.packageName === 'com.example.android.contactmanager'),
      10_000, 'the slow install to finish');
    await lab.world.setInstallDelay(A.spec.serial, 0);
    expect((await send(A, { action: 'readLog', readLog: { maxLines: 1 } })).ok).toBe(true);
    expect(connected().disconnects).toBe(0);
  }, 30_000);
});

describe('link server: FetchBlob', () => {
  it('serves an app binary to the gateway in BLOB_CHUNK_BYTES chunks for a real install', async () => {
    const apk = await lab.blobs.putFile(fixture('ApiDemos-debug.apk'));
    expect(apk.size).toBeGreaterThan(2 * BLOB_CHUNK_BYTES);
    const result = await send(A, installAction(apk.sha256, 'io.appium.android.apis'), 60_000);
    expect(result).toMatchObject({ ok: true, errorMessage: '' });
    const cached = await readFile(path.join(connected().cacheDir, `${apk.sha256}.apk`));
    expect(createHash('sha256').update(cached).digest('hex')).toBe(apk.sha256);
    expect((await lab.world.installedPackages(A.spec.serial)).map((p) => p.packageName)).toContain('io.appium.android.apis');
    // The gateway reports the new package list; the hub records it.
    await waitUntil(async () => (await row(A)).installed_packages.some((p: { identifier: string }) => p.identifier === 'io.appium.android.apis'),
      10_000, 'io.appium.android.apis in the device record');

    // The same blob through the gateway's own FetchBlob client: full BLOB_CHUNK_BYTES chunks, then the rest.
    const sizes: number[] = [];
    for await (const piece of connected().running.link.channels.blobs.fetch(apk.sha256)) sizes.push(piece.length);
    expect(sizes).toHaveLength(Math.ceil(apk.size / BLOB_CHUNK_BYTES));
    expect(sizes.slice(0, -1).every((size) => size === BLOB_CHUNK_BYTES)).toBe(true);
    expect(sizes.reduce((sum, size) => sum + size, 0)).toBe(apk.size);
  }, 60_000);

  it('fails an install whose binary the hub does not have', async () => {
    const result = await send(A, installAction('ab'.repeat(32), 'com.example.gone'));
    expect(result.ok).toBe(false);
    expect(result.errorMessage).toMatch(/NOT_FOUND/);
    expect(existsSync(path.join(connected().cacheDir, `${'ab'.repeat(32)}.apk`))).toBe(false);
  });
});

describe('link server: a gateway that goes away', () => {
  it('takes every device of a stream lost mid-command Offline within 5 s and fails the pending command', async () => {
    const apk = await lab.blobs.putFile(fixture('ContactManager.apk'));
    await lab.world.setInstallDelay(B.spec.serial, 2_000);
    const pending = send(B, installAction(apk.sha256, 'com.example.android.contactmanager'), 60_000);
    pending.catch(() => undefined);
    // The gateway has the binary and is installing it when it goes away.
    const current = connected();
    await waitUntil(() => existsSync(path.join(current.cacheDir, `${apk.sha256}.apk`)), 10_000, 'the binary in the gateway cache');
    await sleep(100);

    const stoppedAt = Date.now();
    await current.stop();
    gateway = undefined;
    await expect(pending).rejects.toBeInstanceOf(GatewayUnavailableError);
    await expect(pending).rejects.toThrow(/Gateway lab-1 disconnected/);
    await waitForAvailability(lab, [A.vui, B.vui], 'Offline', 5_000);
    expect(Date.now() - stoppedAt).toBeLessThan(5_000);
    for (const device of [A, B]) {
      expect(await row(device)).toMatchObject({
        readiness: 'Offline', readiness_detail: expect.stringMatching(/^Gateway disconnected/), last_disconnected_at: expect.any(Date),
      });
    }
    expect((await gatewayRow(lab))?.connected).toBe(false);
    expect(lab.link.directory.connectedGateways()).toEqual([]);
    await expect(send(A, { action: 'readLog', readLog: { maxLines: 1 } }, 1_000)).rejects.toBeInstanceOf(GatewayUnavailableError);
    // The device itself finishes the install it had started (no simulator timer left behind at teardown).
    await waitUntil(async () => (await lab.world.installedPackages(B.spec.serial)).some((p) => p.packageName === 'com.example.android.contactmanager'),
      10_000, 'the interrupted install to finish on the device');
  }, 30_000);
});
