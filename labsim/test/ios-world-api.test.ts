/**
 * The iOS side of the world's API: the device catalogue, usbmuxd on TCP as well as on its unix socket, and the
 * HTTP control API driving an iPhone (plug, unplug, battery, install faults) as seen by Debian's tools.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { LabWorld, defaultIosLab, startControlApi, type ControlApi } from '../src';
import { idevice } from './ios-helpers';

describe('iOS device catalogue', () => {
  test('defaultIosLab gives distinct devices with real-looking identifiers', () => {
    const lab = defaultIosLab(6);
    expect(lab.slice(0, 4).map((s) => `${s.productType} ${s.hardwareModel} iOS ${s.productVersion} (${s.buildVersion})`)).toEqual([
      'iPhone14,5 D17AP iOS 17.2.1 (21C66)', 'iPad13,18 J271AP iOS 16.6.1 (20G81)', 'iPhone16,1 D83AP iOS 17.4.1 (21E236)', 'iPhone12,8 D79AP iOS 16.7.5 (20H307)',
    ]);
    expect(new Set(lab.map((s) => s.udid)).size).toBe(6);
    expect(new Set(lab.map((s) => s.serialNumber)).size).toBe(6);
    expect(new Set(lab.map((s) => s.wifiAddress)).size).toBe(6);
    for (const s of lab) {
      // A12 and later: ChipID in hex, a dash, 16 hex digits.
      expect(s.udid).toBe(`0000${s.chipId.toString(16).toUpperCase()}-${s.udid.slice(9)}`);
      expect(s.udid).toMatch(/^[0-9A-F]{8}-[0-9A-F]{16}$/);
      expect(s.serialNumber).toMatch(/^[A-Z0-9]{10}$/);
    }
    expect(defaultIosLab(2)).toEqual(defaultIosLab(2).map((s) => ({ ...s })));
  });
});

describe('world with iOS devices', () => {
  let world: LabWorld;
  let api: ControlApi;
  let run: ReturnType<typeof idevice>;
  const [iphone] = defaultIosLab(1);

  beforeAll(async () => {
    world = new LabWorld({ usbmuxdTcpPort: 0 });
    await world.start();
    await world.addIosDevice(iphone);
    api = await startControlApi(world);
    run = idevice(world);
  }, 60_000);

  afterAll(async () => {
    await api?.close();
    await world?.stop();
  }, 60_000);

  const call = async (method: string, path: string, body?: unknown): Promise<{ status: number; body: any }> => {
    const res = await fetch(`${api.url}${path}`, { method, ...(body ? { body: JSON.stringify(body), headers: { 'content-type': 'application/json' } } : {}) });
    return { status: res.status, body: await res.json() };
  };

  test('a state dir too deep for a unix socket path gets its usbmuxd socket under the tmp dir', async () => {
    const deep = mkdtempSync(path.join(tmpdir(), 'labsim-deep-'));
    const stateDir = path.join(deep, 'x'.repeat(60), 'y'.repeat(60));
    const deepWorld = new LabWorld({ stateDir });
    try {
      await deepWorld.start();
      const [ipad] = defaultIosLab(2).slice(1);
      await deepWorld.addIosDevice(ipad);
      expect(deepWorld.iosFleet.usbmuxd.socketPath.startsWith(tmpdir())).toBe(true);
      expect((await idevice(deepWorld)('idevice_id', '-l')).stdout).toBe(`${ipad.udid}\n`);
    } finally {
      await deepWorld.stop();
      rmSync(deep, { recursive: true, force: true });
    }
  }, 60_000);

  test('usbmuxd answers on TCP too', async () => {
    const port = world.iosFleet.usbmuxd.tcpPort;
    expect(port).toBeGreaterThan(0);
    const listed = await new Promise<string>((resolve) => {
      execFile('idevice_id', ['-l'], { env: { ...process.env, USBMUXD_SOCKET_ADDRESS: `127.0.0.1:${port}` } },
        (_err: unknown, stdout: string) => resolve(stdout));
    });
    expect(listed).toBe(`${iphone.udid}\n`);
  });

  test('the control API lists, unplugs, plugs and charges an iPhone', async () => {
    expect((await call('GET', '/ios-devices')).body).toEqual([expect.objectContaining({ udid: iphone.udid, productType: 'iPhone14,5', attached: true })]);
    expect(await call('POST', `/devices/${iphone.udid}/unplug`)).toEqual({ status: 200, body: { ok: true } });
    expect((await run('idevice_id', '-l')).stdout).toBe('');
    expect(await call('POST', `/devices/${iphone.udid}/plug`)).toEqual({ status: 200, body: { state: 'attached' } });
    expect((await run('idevice_id', '-l')).stdout).toBe(`${iphone.udid}\n`);
    expect((await call('POST', `/devices/${iphone.udid}/battery`, { level: 15, usbPowered: false })).status).toBe(200);
    expect((await call('GET', `/devices/${iphone.udid}`)).body.battery).toEqual({ level: 15, charging: false, externalConnected: false });
  });

  test('the control API arms installd errors by name and refuses unknown ones', async () => {
    expect((await call('POST', `/devices/${iphone.udid}/fail-next-install`, { code: 'INSUFFICIENT_STORAGE' }))).toEqual({
      status: 400, body: { error: expect.stringContaining('ApplicationVerificationFailed') },
    });
    expect((await call('POST', `/devices/${iphone.udid}/fail-next-install`, { code: 'InsufficientStorage' })).status).toBe(200);
    expect((await call('POST', `/devices/${iphone.udid}/unauthorized`, { unauthorized: true })).status).toBe(404);
  });
});
