/**
 * `pm list instrumentation` and `am instrument` through the real adb, with the texts real devices print:
 * ApiDemos declares `.app.LocalSampleInstrumentation` (target: itself).
 */
import * as path from 'node:path';
import { LabWorld, specFromPreset } from '../src';
import { FIXTURES, adbOn, startWorld, waitFor } from './helpers';

const APIS = 'io.appium.android.apis';
const SAMPLE = `${APIS}/.app.LocalSampleInstrumentation`;

describe('instrumentation: pm list instrumentation, am instrument', () => {
  let world: LabWorld;
  let pixel: string; // Android 14
  let nokia: string; // Android 9: status keys in the older, unsorted order

  beforeAll(async () => {
    world = await startWorld();
    pixel = (await world.addAndroidDevice(specFromPreset('pixel-7', 1))).adbSerial;
    nokia = (await world.addAndroidDevice(specFromPreset('nokia-7.1', 2))).adbSerial;
    for (const serial of [pixel, nokia]) {
      expect((await adbOn(world, serial)('install', path.join(FIXTURES, 'ApiDemos-debug.apk'))).stdout).toContain('Success');
    }
  });
  afterAll(async () => {
    await world?.stop();
  });

  /** The app's process while it runs (dumpsys gfxinfo names its pid), else null. */
  async function runningPid(serial: string): Promise<number | null> {
    const m = /Graphics info for pid (\d+) /.exec((await adbOn(world, serial)('shell', `dumpsys gfxinfo ${APIS}`)).stdout);
    return m ? Number(m[1]) : null;
  }

  test('pm list instrumentation lists what the installed manifest declares, -f with its APK, by target', async () => {
    const adb = adbOn(world, pixel);
    const line = `instrumentation:${SAMPLE} (target=${APIS})\n`;
    expect((await adb('shell', 'pm list instrumentation')).stdout).toBe(line);
    expect((await adb('shell', `pm list instrumentation ${APIS}`)).stdout).toBe(line);
    expect((await adb('shell', 'pm list instrumentation com.android.settings')).stdout).toBe('');
    const apk = (await adb('shell', `pm path ${APIS}`)).stdout.trim().replace(/^package:/, '');
    expect((await adb('shell', 'pm list instrumentation -f')).stdout).toBe(`instrumentation:${apk}=${SAMPLE} (target=${APIS})\n`);
    const [pkg] = (await world.installedPackages(pixel)).filter((p) => p.packageName === APIS);
    expect(pkg.instrumentations).toEqual([{ name: `${APIS}.app.LocalSampleInstrumentation`, targetPackage: APIS, label: 'Local Sample' }]);
  });

  test('am instrument -w runs it in the target process and prints INSTRUMENTATION_CODE: -1', async () => {
    const adb = adbOn(world, pixel);
    await adb('logcat', '-c');
    const launchesBefore = (await world.amStartLog(pixel)).length;
    const run = await adb('shell', `am instrument -w -r -e debug false --no-window-animation ${SAMPLE}`);
    expect(run).toMatchObject({ stdout: 'INSTRUMENTATION_CODE: -1\n', stderr: '', code: 0 });
    const [launch] = (await world.amStartLog(pixel)).slice(launchesBefore);
    expect(launch).toMatchObject({
      tool: 'am', commandLine: `am instrument -w -r -e debug false --no-window-animation ${SAMPLE}`,
      component: `${APIS}/${APIS}.app.LocalSampleInstrumentation`, ok: true,
    });
    // ActivityManager's lines: the target is force-stopped, started for the instrumentation, stopped when it finished.
    const log = (await adb('logcat', '-d')).stdout;
    expect(log).toMatch(new RegExp(
      `I ActivityManager: Force stopping ${APIS} appid=\\d+ user=0: start instr\n[^]*` +
      `I ActivityManager: Start proc \\d+:${APIS}/u0a\\d+ for added application ${APIS}\n[^]*` +
      `I ActivityManager: Force stopping ${APIS} appid=\\d+ user=0: finished inst\n`));
    expect(await runningPid(pixel)).toBeNull(); // finished: the process was stopped again
  });

  test('without -w it returns at once while the instrumentation runs on; a package names its only one', async () => {
    const adb = adbOn(world, pixel);
    // The next command on the device still finds the app's process running.
    const run = await adb('shell', `am instrument ${APIS}; echo @@; dumpsys gfxinfo ${APIS}`);
    expect(run.stderr).toBe('');
    const [printed, gfxinfo] = run.stdout.split('@@\n');
    expect(printed).toBe('');
    expect(gfxinfo).toMatch(/Graphics info for pid \d+ /);
    await waitFor('the run to finish', async () => (await runningPid(pixel)) === null, 5_000, 50);
  });

  test('an unknown component fails with ActivityManagerService\'s status and INSTRUMENTATION_FAILED', async () => {
    const adb = adbOn(world, pixel);
    const launchesBefore = (await world.amStartLog(pixel)).length;
    const cn = `${APIS}/${APIS}.Nope`;
    const run = await adb('shell', `am instrument -w ${APIS}/.Nope`);
    expect(run.code).toBe(1);
    expect(run.stdout).toBe(
      `INSTRUMENTATION_STATUS: Error=Unable to find instrumentation info for: ComponentInfo{${cn}}\n` +
      'INSTRUMENTATION_STATUS: id=ActivityManagerService\nINSTRUMENTATION_STATUS_CODE: -1\n');
    expect(run.stderr).toMatch(new RegExp(`^android\\.util\\.AndroidException: INSTRUMENTATION_FAILED: ${cn.replace(/\./g, '\\.')}\n\tat com\\.android\\.commands\\.am\\.Instrument\\.run\\(`));
    expect((await adb('shell', `am instrument -w -r ${APIS}/.Nope`)).stdout).toMatch(
      new RegExp(`^onError: commandError=true message=INSTRUMENTATION_FAILED: ${cn.replace(/\./g, '\\.')}\nINSTRUMENTATION_STATUS: Error=`));
    expect((await world.amStartLog(pixel)).slice(launchesBefore).map((l) => l.ok)).toEqual([false, false]);
    // Without -w there is no watcher to report to: only the exception.
    expect(await adb('shell', `am instrument ${APIS}/.Nope`)).toMatchObject({ stdout: '', code: 1 });
    // Not an instrumentation package at all.
    expect((await adb('shell', 'am instrument -w com.android.settings')).stderr).toBe('\nError: No instrumentation found for: com.android.settings\n');
    expect(await runningPid(pixel)).toBeNull();
  });

  test('Android 9: status keys in bundle order (id first)', async () => {
    const adb = adbOn(world, nokia);
    expect((await adb('shell', `am instrument -w ${SAMPLE}`)).stdout).toBe('INSTRUMENTATION_CODE: -1\n');
    expect((await adb('shell', `am instrument -w ${APIS}/.Nope`)).stdout).toMatch(/^INSTRUMENTATION_STATUS: id=ActivityManagerService\nINSTRUMENTATION_STATUS: Error=/);
  });
});
