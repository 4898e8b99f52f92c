/**
 * Turns an app binary from the hub into the `.app` directory `simctl install` takes: a zipped `.app` bundle
 * (`Name.app/…` at the root) or an IPA (`Payload/Name.app/…`) is unpacked with `unzip` (on every Mac; it refuses
 * paths that leave the target directory). A bundle built for devices is refused before anything is installed.
 */
import { execFile } from 'node:child_process';
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { decodePlistDict, type PlistDict } from '@devicelab/shared';
import { DeviceCommandError } from '../device-driver';

const run = promisify(execFile);
const UNZIP_TIMEOUT_MS = 5 * 60_000;

export const DEVICE_BUILD_ON_SIMULATOR = (platform: string) =>
  `The application is built for iOS devices (${platform}) and cannot be installed on an iOS Simulator; `
  + 'upload a simulator build (a zipped .app, or an IPA, built for iphonesimulator)';

export interface UnpackedApp {
  appDir: string;
  info: PlistDict;
  /** Removes the unpacked files. */
  discard(): Promise<void>;
}

export async function unpackAppBundle(archive: string): Promise<UnpackedApp> {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'devicelab-simapp-'));
  const discard = () => fs.rm(dir, { recursive: true, force: true });
  try {
    await run('unzip', ['-qq', '-o', archive, '-d', dir], { timeout: UNZIP_TIMEOUT_MS, maxBuffer: 1024 * 1024 }).catch((err: Error) => {
      throw new DeviceCommandError(`The application archive could not be unpacked: ${err.message.split('\n')[0]}`, 'INSTALL_FAILED_INVALID_APK');
    });
    const appDir = await findApp(dir);
    const info = await fs.readFile(path.join(appDir, 'Info.plist')).then(decodePlistDict).catch(() => {
      throw new DeviceCommandError('The application bundle has no readable Info.plist', 'INSTALL_FAILED_INVALID_APK');
    });
    const platform = platformOf(info);
    if (platform && platform !== 'iphonesimulator') throw new DeviceCommandError(DEVICE_BUILD_ON_SIMULATOR(platform), 'INSTALL_FAILED_WRONG_PLATFORM');
    return { appDir, info, discard };
  } catch (err) {
    await discard();
    throw err;
  }
}

/** The platform an Info.plist was built for (`iphonesimulator`, `iphoneos`), lower case; undefined when it says none. */
export function platformOf(info: PlistDict): string | undefined {
  if (typeof info.DTPlatformName === 'string' && info.DTPlatformName) return info.DTPlatformName.toLowerCase();
  const supported = Array.isArray(info.CFBundleSupportedPlatforms) ? info.CFBundleSupportedPlatforms.map((p) => String(p).toLowerCase()) : [];
  return supported[0];
}

async function findApp(dir: string): Promise<string> {
  for (const base of [path.join(dir, 'Payload'), dir]) {
    const names = await fs.readdir(base).catch(() => [] as string[]);
    const apps = names.filter((name) => name.endsWith('.app'));
    if (apps.length === 1) return path.join(base, apps[0]);
    if (apps.length > 1) throw new DeviceCommandError(`The archive holds ${apps.length} app bundles; it must hold one`, 'INSTALL_FAILED_INVALID_APK');
  }
  throw new DeviceCommandError('The archive holds no .app bundle (expected Name.app/ at its root, or Payload/Name.app/ in an IPA)', 'INSTALL_FAILED_INVALID_APK');
}
