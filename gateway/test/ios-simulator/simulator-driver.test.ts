/**
 * The iOS Simulator driver through node-simctl's real code against labsim's fake xcrun: the offered simulators
 * are created with stable names (and found again by a second gateway), booted and Ready with facts from their
 * device type and runtime; a zipped .app and a simulator IPA install and are listed, a device build is refused
 * before anything is installed, launch passes its arguments, uninstall, reboot and a shutdown behind the
 * gateway's back come back Ready, the log and the health probe come from simctl.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createFakeXcrun, type FakeXcrun } from '@devicelab/labsim';
import { createLogger } from '@devicelab/shared';
import { execFileSync } from 'node:child_process';
import { SimulatorDriver } from '../../src/drivers/ios-simulator/simulator-driver';
import { parseSimulatorOffers } from '../../src/drivers/ios-simulator/simulator-offers';
import { buildSimulatorApp } from '../../../scripts/jest/simulator-app';
import { Recorder } from '../support/recorder';

const OFFERS = 'iPhone 15:iOS-17-5*2,iPad Pro (11-inch):iOS-17-5';
const BUNDLE_ID = 'org.devicelab.labsimapp';
let dir: string;
let xcrun: FakeXcrun;
let driver: SimulatorDriver;
let recorder: Recorder;

const logger = createLogger('test', process.env.GW_TEST_LOG ?? 'silent');
const newDriver = () => new SimulatorDriver({ xcrun: xcrun.binary, offers: parseSimulatorOffers(OFFERS), pollMs: 1_000, logger });
const devices = () => xcrun.store.read().devices;
const udidOf = (name: string) => devices().find((d) => d.name === name)!.udid;
const writeApp = (name: string, bytes: Buffer) => {
  const file = path.join(dir, name);
  fs.writeFileSync(file, bytes);
  return file;
};

beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'simdriver-'));
  xcrun = createFakeXcrun(path.join(dir, 'xcode'));
  recorder = new Recorder();
  driver = newDriver();
  await driver.start(recorder);
  for (const name of ['DeviceLab iPhone 15 #1', 'DeviceLab iPhone 15 #2', 'DeviceLab iPad Pro (11-inch) #1']) {
    await recorder.waitReadiness(udidOf(name), 'Ready', 90_000);
  }
}, 120_000);

afterAll(async () => {
  await driver?.stop();
  fs.rmSync(dir, { recursive: true, force: true });
}, 120_000);

it('creates the offered simulators with stable names, boots them and reports their facts', () => {
  expect(devices().map((d) => [d.name, d.state]).sort()).toEqual([
    ['DeviceLab iPad Pro (11-inch) #1', 'Booted'], ['DeviceLab iPhone 15 #1', 'Booted'], ['DeviceLab iPhone 15 #2', 'Booted'],
  ]);
  const phone = recorder.latest(udidOf('DeviceLab iPhone 15 #1'))!;
  expect(phone).toMatchObject({
    operatingSystem: 'iOS', readiness: 'Ready', model: 'iPhone15,4', friendlyModel: 'iPhone 15', productType: 'iPhone15,4', operatingSystemVersion: '17.5',
    operatingSystemBuild: '21F79', formFactor: 'Phone', deviceClass: 'iPhone Simulator', vendorDeviceName: 'DeviceLab iPhone 15 #1',
  });
  expect(phone.properties).toContainEqual({ name: 'Simulator', value: 'true' });
  expect(phone.usbHubSerialNumber ?? '').toBe('');
  expect(phone.packages?.find((p) => p.identifier === 'com.apple.mobilesafari')?.system).toBe(true);
  const pad = recorder.latest(udidOf('DeviceLab iPad Pro (11-inch) #1'))!;
  expect(pad).toMatchObject({ formFactor: 'Tablet', deviceClass: 'iPad Simulator', friendlyModel: 'iPad Pro (11-inch)' });
}, 120_000);

it('finds the same simulators again after a restart instead of creating new ones', async () => {
  const before = devices().map((d) => d.udid).sort();
  const again = newDriver();
  const seen = new Recorder();
  try {
    await again.start(seen);
    await seen.waitReadiness(before[0], 'Ready', 60_000);
    expect(again.snapshot().map((s) => s.vendorUniqueIdentifier).sort()).toEqual(before);
    expect(devices().map((d) => d.udid).sort()).toEqual(before);
  } finally {
    await again.stop();
  }
}, 120_000);

it('installs a zipped .app and a simulator IPA, lists, launches with arguments and uninstalls', async () => {
  const udid = udidOf('DeviceLab iPhone 15 #1');
  const state = await driver.install(udid, writeApp('app.zip', buildSimulatorApp()));
  expect(state.packages).toContainEqual({ identifier: BUNDLE_ID, version: '1.2', buildVersion: '12', system: false });
  expect(devices().find((d) => d.udid === udid)!.apps.map((a) => a.bundleId)).toEqual([BUNDLE_ID]);

  const ipa = await driver.install(udid, writeApp('sim.ipa', buildSimulatorApp({ ipa: true, version: '1.3', build: '13' })), { force: true, packageId: BUNDLE_ID });
  expect(ipa.packages).toContainEqual({ identifier: BUNDLE_ID, version: '1.3', buildVersion: '13', system: false });

  const output = await driver.launch(udid, BUNDLE_ID, { arguments: `--flag 'a b'` });
  expect(output).toMatch(new RegExp(`^${BUNDLE_ID.replace(/\./g, '\\.')}: \\d+$`));
  expect(await driver.readLog(udid, 50)).toContain('arguments: ["--flag","a b"]');

  const removed = await driver.uninstall(udid, BUNDLE_ID);
  expect(removed.packages?.some((p) => p.identifier === BUNDLE_ID)).toBe(false);
  expect(devices().find((d) => d.udid === udid)!.apps).toEqual([]);
}, 120_000);

it('refuses a device build before installing anything, saying why', async () => {
  const udid = udidOf('DeviceLab iPhone 15 #2');
  await expect(driver.install(udid, writeApp('device.ipa', buildSimulatorApp({ ipa: true, platform: 'iphoneos' })))).rejects
    .toMatchObject({ code: 'INSTALL_FAILED_WRONG_PLATFORM', message: expect.stringContaining('built for iOS devices (iphoneos)') });
  expect(devices().find((d) => d.udid === udid)!.apps).toEqual([]);
  await expect(driver.launch(udid, 'org.example.missing')).rejects.toMatchObject({ code: 'LAUNCH_FAILED', message: expect.stringContaining('org.example.missing') });
}, 120_000);

it('reboots through shutdown and boot: Offline, then Ready again', async () => {
  const udid = udidOf('DeviceLab iPhone 15 #2');
  const bootedAt = devices().find((d) => d.udid === udid)!.lastBootedAt;
  const from = recorder.events.length;
  await new Promise((r) => setTimeout(r, 1100)); // lastBootedAt has whole seconds
  await driver.reboot(udid);
  await recorder.waitReadiness(udid, 'Offline', 20_000, from);
  await recorder.waitReadiness(udid, 'Ready', 60_000, from);
  expect(devices().find((d) => d.udid === udid)!.lastBootedAt).not.toBe(bootedAt);
}, 120_000);

it('boots a simulator again that was shut down behind its back', async () => {
  const udid = udidOf('DeviceLab iPad Pro (11-inch) #1');
  const from = recorder.events.length;
  execFileSync(xcrun.binary, ['simctl', 'shutdown', udid]);
  await recorder.waitReadiness(udid, 'Offline', 20_000, from);
  await recorder.waitReadiness(udid, 'Ready', 60_000, from);
  expect(devices().find((d) => d.udid === udid)!.state).toBe('Booted');
}, 120_000);

it('probes health through simctl and follows the log stream', async () => {
  const udid = udidOf('DeviceLab iPhone 15 #1');
  await expect(driver.sampling.probe(udid, 5_000)).resolves.toBeUndefined();
  const lines: string[] = [];
  const stream = driver.sampling.followLog(udid, { line: (l) => lines.push(l), end: () => undefined });
  try {
    await new Promise((r) => setTimeout(r, 800));
    await driver.launch(udid, 'com.apple.Maps');
    const deadline = Date.now() + 30_000;
    while (!lines.some((l) => l.includes('Launching com.apple.Maps')) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    expect(lines.some((l) => l.includes('Launching com.apple.Maps'))).toBe(true);
  } finally {
    stream.stop();
  }
}, 120_000);
