/**
 * Which minicap and minitouch files a device takes, from the npm packages `@devicefarmer/minicap-prebuilt` and
 * `@devicefarmer/minitouch-prebuilt`: the first ABI of `ro.product.cpu.abilist` the packages build for, the PIE
 * binary from SDK 16 on, and minicap's native library for the device's SDK. Where no native library exists for the
 * SDK (31 and later), minicap runs from its apk through `app_process` instead.
 */
import fs from 'node:fs';
import path from 'node:path';

export interface DeviceScreenFacts {
  /** `ro.product.cpu.abilist` split, or `ro.product.cpu.abi` on devices older than 5.0. */
  abis: string[];
  sdk: number;
}

export type MinicapFiles =
  | { kind: 'native'; abi: string; binary: string; library: string }
  | { kind: 'apk'; apk: string };

export interface ScreenBinaries {
  minicap: MinicapFiles;
  /** Undefined when no ABI of the device has a minitouch build (the screen is then view only). */
  minitouch?: { abi: string; binary: string };
}

function packageDir(name: string): string {
  return path.dirname(require.resolve(`${name}/package.json`));
}

export function chooseScreenBinaries(facts: DeviceScreenFacts): ScreenBinaries {
  const minicapRoot = path.join(packageDir('@devicefarmer/minicap-prebuilt'), 'prebuilt');
  const minitouchRoot = path.join(packageDir('@devicefarmer/minitouch-prebuilt'), 'prebuilt');
  const suffix = facts.sdk >= 16 ? '' : '-nopie';
  let minicap: MinicapFiles | undefined;
  for (const abi of facts.abis) {
    const binary = path.join(minicapRoot, abi, 'bin', `minicap${suffix}`);
    const library = path.join(minicapRoot, abi, 'lib', `android-${facts.sdk}`, 'minicap.so');
    if (fs.existsSync(binary) && fs.existsSync(library)) {
      minicap = { kind: 'native', abi, binary, library };
      break;
    }
  }
  minicap ??= { kind: 'apk', apk: path.join(minicapRoot, 'noarch', 'minicap.apk') };
  const touchAbi = facts.abis.find((abi) => fs.existsSync(path.join(minitouchRoot, abi, 'bin', `minitouch${suffix}`)));
  return {
    minicap,
    ...(touchAbi ? { minitouch: { abi: touchAbi, binary: path.join(minitouchRoot, touchAbi, 'bin', `minitouch${suffix}`) } } : {}),
  };
}

/** The APK of Appium Settings (its Unicode IME types any text), shipped inside the UiAutomator2 driver package. */
export function appiumSettingsApk(): string | undefined {
  try {
    const driver = packageDir('appium-uiautomator2-driver');
    const settings = path.dirname(require.resolve('io.appium.settings/package.json', { paths: [driver] }));
    const apk = path.join(settings, 'apks', 'settings_apk-debug.apk');
    return fs.existsSync(apk) ? apk : undefined;
  } catch {
    return undefined;
  }
}
