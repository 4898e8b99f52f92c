/**
 * Android automation: the UiAutomator2 driver, on the adb server the gateway itself uses. appium-adb runs the
 * `adb` binary it finds under ANDROID_HOME/platform-tools, so the server gets a small SDK root whose
 * platform-tools/adb is the gateway's adb; its server port goes in the environment and in `appium:adbPort`, and
 * `appium:suppressKillServer` keeps a session from killing the adb server every device of the gateway hangs on.
 */
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, readlink, symlink, unlink } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { DeviceAutomation } from '../device-driver';
import type { AdbServerOptions } from './adb-client';

export function androidAutomation(options: AdbServerOptions): DeviceAutomation {
  const adbPort = options.adbPort ?? 5037;
  const adbBin = options.adbBin ?? 'adb';
  return {
    appiumDriver: 'uiautomator2',
    installedForAutomation: "The app's runtime permissions were granted at install (pm install -g), as Appium's autoGrantPermissions does.",
    capabilities: (id, ports) => ({
      platformName: 'Android',
      'appium:automationName': 'UiAutomator2',
      'appium:udid': id,
      'appium:adbPort': adbPort,
      'appium:suppressKillServer': true,
      'appium:systemPort': ports.systemPort,
      'appium:mjpegServerPort': ports.mjpegServerPort,
      'appium:chromedriverPort': ports.chromedriverPort,
    }),
    environment: async () => {
      const sdkRoot = await shimSdkRoot(adbBin);
      return { ANDROID_HOME: sdkRoot, ANDROID_SDK_ROOT: sdkRoot, ANDROID_ADB_SERVER_PORT: String(adbPort) };
    },
    check: async () => (await resolveExecutable(adbBin)
      ? undefined
      : `adb (${adbBin}) is not installed or not executable: Android automation cannot run`),
  };
}

/** `<tmp>/devicelab-android-sdk-<hash of the adb path>/platform-tools/adb` -> the gateway's adb binary. */
async function shimSdkRoot(adbBin: string): Promise<string> {
  const adb = await resolveExecutable(adbBin);
  if (!adb) throw new Error(`adb (${adbBin}) not found`);
  const root = path.join(os.tmpdir(), `devicelab-android-sdk-${createHash('sha256').update(adb).digest('hex').slice(0, 12)}`);
  const link = path.join(root, 'platform-tools', 'adb');
  await mkdir(path.dirname(link), { recursive: true });
  const current = await readlink(link).catch(() => undefined);
  if (current !== adb) {
    await unlink(link).catch(() => undefined);
    await symlink(adb, link).catch((err: NodeJS.ErrnoException) => { if (err.code !== 'EEXIST') throw err; });
  }
  return root;
}

/** The absolute path of an executable: a path as given, a bare name from the PATH (`command -v`). */
function resolveExecutable(name: string): Promise<string | undefined> {
  if (name.includes(path.sep)) return Promise.resolve(existsSync(name) ? path.resolve(name) : undefined);
  return new Promise((resolve) => {
    execFile('sh', ['-c', 'command -v "$0"', name], { timeout: 5_000 }, (err, stdout) => {
      const found = stdout.trim();
      resolve(!err && found.startsWith('/') ? found : undefined);
    });
  });
}
