/**
 * Apps on a simulated iPhone through Debian's ideviceinstaller: the list (User by default, list_all with system
 * apps), installing a real IPA from the fixtures (AFC upload to PublicStaging, installation_proxy progress, the
 * app's own Info.plist facts), uninstalling it, an injected installd failure and an IPA whose minimum iOS is above
 * the device's.
 */
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { LabWorld, iosSpecFromPreset } from '../src';
import { fixture } from '../../scripts/jest/shared-files';
import { buildZip } from '../../scripts/jest/zip-builder';
import { idevice } from './ios-helpers';

let world: LabWorld;
let run: ReturnType<typeof idevice>;
const spec = iosSpecFromPreset('iphone-13', 3);
const IPA = fixture('app-info-iphone.ipa');
const BUNDLE_ID = 'com.icyleaf.AppInfoDemo';

beforeAll(async () => {
  world = new LabWorld();
  await world.start();
  await world.addIosDevice(spec);
  run = idevice(world);
  await world.iosFleet.pairWithIdevicepair(spec.udid);
}, 60_000);

afterAll(async () => {
  await world?.stop();
}, 60_000);

/** Bundle ids of `ideviceinstaller -l` (1.1.1: `id, "CFBundleVersion", "CFBundleDisplayName"`). */
const listedIds = (stdout: string): string[] => stdout.split('\n').slice(1).filter(Boolean).map((l) => l.split(', ')[0]);

it('lists user apps by default and system apps with list_all', async () => {
  const user = await run('ideviceinstaller', '-l');
  expect(user.code).toBe(0);
  expect(user.stdout).toBe('CFBundleIdentifier, CFBundleVersion, CFBundleDisplayName\ncom.google.chrome.ios, "120.6099.119", "Chrome"\n');
  const all = await run('ideviceinstaller', '-l', '-o', 'list_all');
  expect(listedIds(all.stdout)).toEqual(expect.arrayContaining(['com.apple.mobilesafari', 'com.apple.Preferences', 'com.google.chrome.ios']));
  expect(listedIds((await run('ideviceinstaller', '-l', '-o', 'list_system')).stdout)).not.toContain('com.google.chrome.ios');
});

it('installs a real IPA with progress, lists it from its Info.plist, and uninstalls it', async () => {
  const install = await run('ideviceinstaller', '-i', IPA);
  expect(install.code).toBe(0);
  expect(install.stdout).toContain(`Installing '${BUNDLE_ID}'`);
  const progress = install.stdout.split(/[\r\n]+/).filter((l) => l.startsWith('Install: '));
  expect(progress[0]).toBe('Install: CreatingStagingDirectory (5%)');
  expect(progress).toContain('Install: VerifyingApplication (40%)');
  expect(progress[progress.length - 1]).toBe('Install: Complete');
  expect((await run('ideviceinstaller', '-l')).stdout).toContain(`${BUNDLE_ID}, "5", "${BUNDLE_ID}"`);
  const installed = world.iosFleet.installedApps(spec.udid).find((a) => a.bundleId === BUNDLE_ID);
  expect(installed?.attributes).toEqual(expect.objectContaining({ CFBundleShortVersionString: '1.2.3', ApplicationType: 'User' }));
  // installd consumed the package ideviceinstaller staged.
  expect(readdirSync(path.join(world.iosDevice(spec.udid).mediaRoot, 'PublicStaging'))).toEqual([]);

  const uninstall = await run('ideviceinstaller', '-U', BUNDLE_ID);
  expect(uninstall.code).toBe(0);
  expect(uninstall.stdout.split(/[\r\n]+/).filter(Boolean)).toEqual([
    `Uninstalling '${BUNDLE_ID}'`, 'Uninstall: RemovingApplication (50%)', 'Uninstall: GeneratingApplicationMap (90%)', 'Uninstall: Complete',
  ]);
  expect(listedIds((await run('ideviceinstaller', '-l')).stdout)).toEqual(['com.google.chrome.ios']);
}, 60_000);

it('fails the next install with the injected installd error and installs nothing', async () => {
  await world.failNextInstall(spec.udid, 'ApplicationVerificationFailed');
  const install = await run('ideviceinstaller', '-i', IPA);
  expect(install.code).not.toBe(0);
  expect(install.stderr).toContain('ERROR: Install failed. Got error "ApplicationVerificationFailed" with code 0xe8008015');
  expect(install.stderr).toContain('A valid provisioning profile for this executable was not found.');
  expect(listedIds((await run('ideviceinstaller', '-l')).stdout)).not.toContain(BUNDLE_ID);
  // One failure only.
  expect((await run('ideviceinstaller', '-i', IPA)).code).toBe(0);
  expect(listedIds((await run('ideviceinstaller', '-l')).stdout)).toContain(BUNDLE_ID);
}, 60_000);

it('refuses an app whose MinimumOSVersion is above the device iOS', async () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'labsim-ipa-'));
  try {
    const ipa = path.join(dir, 'future.ipa');
    writeFileSync(ipa, buildZip([{
      name: 'Payload/Future.app/Info.plist',
      data: '<?xml version="1.0" encoding="UTF-8"?><plist version="1.0"><dict><key>CFBundleIdentifier</key><string>com.example.future</string>'
        + '<key>CFBundleExecutable</key><string>Future</string><key>CFBundleVersion</key><string>1</string>'
        + '<key>MinimumOSVersion</key><string>99.0</string></dict></plist>',
    }]));
    const install = await run('ideviceinstaller', '-i', ipa);
    expect(install.code).not.toBe(0);
    expect(install.stderr).toContain('Got error "DeviceOSVersionTooLow"');
    expect(install.stderr).toContain('(99.0 > 17.2.1)');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}, 60_000);

