import * as net from 'node:net';
import { stablePort } from '../src/util/ports';
import * as fs from 'node:fs';
import { LabWorld, defaultAndroidLab, parseApk, parseSimMix, startControlApi } from '../src';
import type { ControlApi } from '../src';
import { FIXTURES, adbOn, startWorld } from './helpers';

describe('device catalogue and DEVICELAB_SIM', () => {
  test('defaultAndroidLab returns distinct realistic devices', () => {
    const lab = defaultAndroidLab(7);
    expect(lab.slice(0, 5).map((s) => `${s.manufacturer} ${s.model} / Android ${s.androidVersion}`)).toEqual([
      'Google Pixel 7 / Android 14',
      'samsung SM-S911B / Android 14',
      'Google Pixel Tablet / Android 14',
      'motorola moto g(9) play / Android 11',
      'HMD Global Nokia 7.1 / Android 9',
    ]);
    expect(new Set(lab.map((s) => s.serial)).size).toBe(7);
    expect(new Set(lab.map((s) => s.wifiMac)).size).toBe(7);
  });

  test('parseSimMix', () => {
    const mix = parseSimMix('android=2, tablet=1, ios=3');
    expect(mix.android.map((s) => s.formFactor)).toEqual(['phone', 'phone', 'tablet']);
    expect(new Set(mix.android.map((s) => s.serial)).size).toBe(3);
    expect(mix.ios.map((s) => s.productType)).toEqual(['iPhone14,5', 'iPad13,18', 'iPhone16,1']);
    expect(new Set(mix.ios.map((s) => s.udid)).size).toBe(3);
    expect(parseSimMix('ipad=1, watch=2')).toMatchObject({ ios: [{ deviceClass: 'iPad' }], other: { watch: 2 } });
    expect(parseSimMix('pixel-7=2').android.map((s) => s.model)).toEqual(['Pixel 7', 'Pixel 7']);
    expect(() => parseSimMix('android')).toThrow(/kind=count/);
  });

  test('parseSimMix pins UDIDs of the iOS devices in order', () => {
    const mix = parseSimMix('ios=2, udid=18cf53cddee60c52f9c97b1521e7cbf8342628da');
    expect(mix.ios.map((s) => s.udid)).toEqual(['18cf53cddee60c52f9c97b1521e7cbf8342628da', parseSimMix('ios=2').ios[1].udid]);
    expect(mix.ios[0].productType).toBe('iPhone14,5');
    expect(() => parseSimMix('ios=1, udid=00008110-000A11112222333E, udid=00008101-000A11112222333E')).toThrow(/2 UDIDs for 1 iOS devices/);
  });

  test('APK reader extracts the manifest facts of the fixtures', () => {
    expect(parseApk(fs.readFileSync(`${FIXTURES}/app-info-android.apk`))).toMatchObject({
      packageName: 'com.icyleaf.appinfodemo', versionCode: 10, versionName: '2.1.0', minSdk: 14, launcherActivity: 'com.icyleaf.appinfodemo.MainActivity',
    });
    expect(parseApk(fs.readFileSync(`${FIXTURES}/ApiDemos-debug.apk`))).toMatchObject({
      packageName: 'io.appium.android.apis', versionCode: 0, versionName: null, launcherActivity: 'io.appium.android.apis.ApiDemos',
    });
    expect(() => parseApk(Buffer.from('PK\x03\x04 truncated'))).toThrow(/archive/);
  });
});

describe('HTTP control API', () => {
  let world: LabWorld;
  let api: ControlApi;
  let serial: string;

  beforeAll(async () => {
    world = await startWorld();
    serial = (await world.addAndroidDevice(defaultAndroidLab(1)[0])).serial;
    api = await startControlApi(world);
  });
  afterAll(async () => {
    await api?.close();
    await world?.stop();
  });

  const call = async (method: string, p: string, body?: unknown) => {
    const res = await fetch(api.url + p, { method, body: body === undefined ? undefined : JSON.stringify(body) });
    return { status: res.status, json: (await res.json()) as any };
  };

  test('GET /devices lists both serials and state', async () => {
    const { status, json } = await call('GET', '/devices');
    expect(status).toBe(200);
    expect(json).toHaveLength(1);
    expect(json[0]).toMatchObject({ serial, adbSerial: expect.stringMatching(/^127\.0\.0\.1:\d+$/), model: 'Pixel 7', plugged: true });
  });

  test('battery, unplug/plug and am-start-log through HTTP', async () => {
    expect((await call('POST', `/devices/${serial}/battery`, { level: 12, usbPowered: false })).status).toBe(200);
    const adb = adbOn(world, world.device(serial).adbSerial);
    expect((await adb('shell', 'dumpsys battery')).stdout).toContain('  level: 12\n');
    expect((await call('POST', `/devices/${serial}/battery`, { level: 300 })).status).toBe(400);

    await call('POST', `/devices/${serial}/unplug`);
    expect(await world.adbState(serial)).toBe('absent');
    expect((await call('POST', `/devices/${serial}/plug`)).json).toEqual({ state: 'device' });

    await adb('shell', 'am start -n com.android.chrome/com.google.android.apps.chrome.Main');
    const log = await call('GET', `/devices/${serial}/am-start-log`);
    expect(log.json.map((l: { commandLine: string }) => l.commandLine)).toEqual(['am start -n com.android.chrome/com.google.android.apps.chrome.Main']);
  });

  test('fail-next-install and unknown devices', async () => {
    expect((await call('POST', `/devices/${serial}/fail-next-install`, { code: 'UPDATE_INCOMPATIBLE' })).status).toBe(200);
    const r = await adbOn(world, world.device(serial).adbSerial)('install', `${FIXTURES}/ContactManager.apk`);
    expect(r.stderr).toContain(
      'Failure [INSTALL_FAILED_UPDATE_INCOMPATIBLE: Existing package com.example.android.contactmanager signatures do not match newer version; ignoring!]',
    );
    expect((await call('POST', '/devices/NOPE/plug')).status).toBe(404);
    expect((await call('POST', `/devices/${serial}/fail-next-install`, {})).status).toBe(400);
  });
});

describe('stablePort', () => {
  it('gives a key the same port on every call while it is free, and nothing when it is taken', async () => {
    const port = await stablePort('28121FDH200217');
    expect(port).toBeGreaterThanOrEqual(20000);
    expect(await stablePort('28121FDH200217')).toBe(port);
    expect(await stablePort('R5CW31XYZ08229')).not.toBe(port);
    const server = net.createServer();
    await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
    try {
      expect(await stablePort('28121FDH200217')).toBeUndefined();
    } finally {
      server.close();
    }
  });
});
