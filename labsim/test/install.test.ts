import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { LabWorld, specFromPreset } from '../src';
import { FIXTURES, adbOn, startWorld } from './helpers';

const CONTACTS = 'com.example.android.contactmanager';

describe('app install paths, package manager and launching', () => {
  let world: LabWorld;
  let pixel: string; // Android 14: streamed install via abb_exec
  let nokia: string; // Android 9: no abb_exec, streamed install via exec:cmd package
  let tmp: string;

  beforeAll(async () => {
    world = await startWorld();
    pixel = (await world.addAndroidDevice(specFromPreset('pixel-7', 1))).adbSerial;
    nokia = (await world.addAndroidDevice(specFromPreset('nokia-7.1', 2))).adbSerial;
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'labsim-install-'));
  });
  afterAll(async () => {
    await world?.stop();
    fs.rmSync(tmp, { recursive: true, force: true });
  });

  test('adb install (streamed, abb_exec) installs and the package is listed', async () => {
    const adb = adbOn(world, pixel);
    const r = await adb('install', path.join(FIXTURES, 'ContactManager.apk'));
    expect(r.stdout).toBe('Performing Streamed Install\nSuccess\n');
    expect(r.code).toBe(0);
    expect((await adb('shell', 'pm list packages')).stdout.split('\n')).toContain(`package:${CONTACTS}`);
    const third = (await adb('shell', '-x', 'pm list packages -f -3 --show-versioncode')).stdout;
    expect(third).toMatch(new RegExp(`^package:/data/app/~~[A-Za-z0-9_-]{22}==/${CONTACTS}-[A-Za-z0-9_-]{22}==/base.apk=${CONTACTS} versionCode:1$`, 'm'));
    const pkgs = await world.installedPackages(pixel, { thirdPartyOnly: true });
    expect(pkgs.find((p) => p.packageName === CONTACTS)).toMatchObject({ versionCode: 1, versionName: '1.0' });
  });

  test('resolve-activity gives the launcher; am start -W is recorded and prints the real text', async () => {
    const adb = adbOn(world, pixel);
    const resolved = await adb('shell', '-x', `cmd package resolve-activity --brief -a android.intent.action.MAIN -c android.intent.category.LAUNCHER ${CONTACTS}`);
    expect(resolved.stdout).toBe(`priority=0 preferredOrder=0 match=0x108000 specificIndex=-1 isDefault=false\n${CONTACTS}/.ContactManager\n`);
    const started = await adb('shell', `am start -W -n ${CONTACTS}/.ContactManager --es source labsim`);
    expect(started.stdout).toMatch(
      new RegExp(`^Starting: Intent \\{ cmp=${CONTACTS}/.ContactManager \\(has extras\\) \\}\nStatus: ok\nLaunchState: COLD\nActivity: ${CONTACTS}/.ContactManager\nTotalTime: \\d+\nWaitTime: \\d+\nComplete\n$`),
    );
    const log = await world.amStartLog(pixel);
    expect(log.map((l) => l.commandLine)).toEqual([`am start -W -n ${CONTACTS}/.ContactManager --es source labsim`]);
    expect(log[0].component).toBe(`${CONTACTS}/${CONTACTS}.ContactManager`);
    const missing = await adb('shell', 'am start -n com.nope/.Main');
    expect(missing.stderr).toContain('Error: Activity not started, unable to resolve Intent');
    const badClass = await adb('shell', `am start -n ${CONTACTS}/.Nope`);
    expect(badClass.stderr).toBe(`Error type 3\nError: Activity class {${CONTACTS}/${CONTACTS}.Nope} does not exist.\n`);
  });

  test('pm uninstall: Success, then DELETE_FAILED_INTERNAL_ERROR', async () => {
    const adb = adbOn(world, pixel);
    expect((await adb('shell', `pm uninstall ${CONTACTS}`)).stdout).toBe('Success\n');
    expect((await adb('shell', `pm list packages ${CONTACTS}`)).stdout).toBe('');
    expect((await adb('shell', '-x', `pm uninstall ${CONTACTS}`)).stdout).toBe('Failure [DELETE_FAILED_INTERNAL_ERROR]\n');
  });

  test('adb install --no-streaming (sync push + pm install) and versions without attributes', async () => {
    const adb = adbOn(world, pixel);
    const r = await adb('install', '--no-streaming', path.join(FIXTURES, 'ApiDemos-debug.apk'));
    expect(r.stdout).toMatch(/Success\n$/);
    expect(r.code).toBe(0);
    expect((await adb('shell', 'pm list packages --show-versioncode io.appium')).stdout).toBe('package:io.appium.android.apis versionCode:0\n');
    // The temporary upload was removed again by adb (`rm` through the sandboxed path mapping).
    expect((await adb('shell', 'ls /data/local/tmp')).stdout).toBe('');
  });

  test('streamed install through exec:cmd on a device without abb_exec (Android 9)', async () => {
    const adb = adbOn(world, nokia);
    const r = await adb('install', path.join(FIXTURES, 'app-info-android.apk'));
    expect(r.stdout).toBe('Performing Streamed Install\nSuccess\n');
    expect((await adb('shell', 'pm path com.icyleaf.appinfodemo')).stdout).toMatch(/^package:\/data\/app\/com\.icyleaf\.appinfodemo-[A-Za-z0-9_-]{22}==\/base\.apk\n$/);
    const started = await adb('shell', 'am start -W -n com.icyleaf.appinfodemo/.MainActivity');
    // Android <= 9 prints ThisTime and no LaunchState.
    expect(started.stdout).toMatch(/\nStatus: ok\nActivity: com\.icyleaf\.appinfodemo\/\.MainActivity\nThisTime: \d+\nTotalTime: \d+\nWaitTime: \d+\nComplete\n$/);
  });

  test('an invalid file fails with INSTALL_PARSE_FAILED_NOT_APK', async () => {
    const bogus = path.join(tmp, 'bogus.apk');
    fs.writeFileSync(bogus, 'this is not a zip file'.repeat(100));
    const r = await adbOn(world, pixel)('install', bogus);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/^adb: failed to install .*bogus\.apk: Failure \[INSTALL_PARSE_FAILED_NOT_APK: /);
  });

  test('failNextInstall injects one failure; slow install delays', async () => {
    const adb = adbOn(world, pixel);
    await world.failNextInstall(pixel, 'INSUFFICIENT_STORAGE');
    const failed = await adb('install', path.join(FIXTURES, 'ContactManager.apk'));
    expect(failed.stderr).toContain('Failure [INSTALL_FAILED_INSUFFICIENT_STORAGE]');
    expect(failed.code).toBe(1);
    await world.setInstallDelay(pixel, 800);
    const t0 = Date.now();
    const ok = await adb('install', path.join(FIXTURES, 'ContactManager.apk'));
    expect(ok.stdout).toContain('Success');
    expect(Date.now() - t0).toBeGreaterThanOrEqual(800);
    await world.setInstallDelay(pixel, 0);
    // Legacy adbkit flow: push to /data/local/tmp, then `pm install -r "<path>"` over shell v1.
    await adb('push', path.join(FIXTURES, 'app-info-android.apk'), '/data/local/tmp/_stream.apk');
    expect((await adb('shell', '-x', 'pm install -r "/data/local/tmp/_stream.apk"')).stdout).toBe('Success\n');
    expect((await adb('shell', '-x', "'rm' '-f' '/data/local/tmp/_stream.apk'")).code).toBe(0);
    expect((await adb('shell', 'ls /data/local/tmp')).stdout).toBe('');
  });
});
