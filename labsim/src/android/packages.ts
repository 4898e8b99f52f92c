/**
 * Simulated package manager: installed packages, APK installs (all three
 * adb install paths end here), uninstall, listing and launcher resolution.
 * Output texts follow real `pm` / `cmd package` (device-data.md 1.9-1.11).
 */
import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { ApkInstrumentation, ApkParseError, parseApk } from '../apk/apk';
import type { AndroidDeviceSpec } from './spec';
import type { LogBuffer } from './logcat';
import type { ToolIO } from './tool-io';

export interface InstalledPackage {
  packageName: string;
  versionCode: number;
  versionName: string | null;
  system: boolean;
  /** Device path of base.apk, as `pm path` prints it. */
  codePath: string;
  launcherActivity: string | null;
  activities: string[];
  instrumentations: ApkInstrumentation[];
  uid: number;
  firstInstallTimeMs: number;
  lastUpdateTimeMs: number;
  /** `<uses-permission>` names the APK asks for. */
  requestedPermissions?: string[];
  /** Runtime (dangerous) permissions the app asks for, and whether each is granted (`pm install -g` grants them all). */
  runtimePermissions?: Record<string, boolean>;
}

/** Android's dangerous permissions (granted at runtime from Android 6 on; install-time before). */
const RUNTIME_PERMISSIONS = new Set([
  'READ_CALENDAR', 'WRITE_CALENDAR', 'CAMERA', 'READ_CONTACTS', 'WRITE_CONTACTS', 'GET_ACCOUNTS', 'ACCESS_FINE_LOCATION',
  'ACCESS_COARSE_LOCATION', 'ACCESS_BACKGROUND_LOCATION', 'RECORD_AUDIO', 'READ_PHONE_STATE', 'READ_PHONE_NUMBERS', 'CALL_PHONE',
  'ANSWER_PHONE_CALLS', 'READ_CALL_LOG', 'WRITE_CALL_LOG', 'ADD_VOICEMAIL', 'USE_SIP', 'BODY_SENSORS', 'SEND_SMS', 'RECEIVE_SMS',
  'READ_SMS', 'RECEIVE_WAP_PUSH', 'RECEIVE_MMS', 'READ_EXTERNAL_STORAGE', 'WRITE_EXTERNAL_STORAGE', 'ACTIVITY_RECOGNITION',
  'POST_NOTIFICATIONS', 'READ_MEDIA_IMAGES', 'READ_MEDIA_VIDEO', 'READ_MEDIA_AUDIO', 'NEARBY_WIFI_DEVICES', 'BLUETOOTH_SCAN',
  'BLUETOOTH_CONNECT', 'BLUETOOTH_ADVERTISE', 'UWB_RANGING',
].map((name) => `android.permission.${name}`));

/** Messages a real device prints next to each failure code (the code is what clients key on). */
const FAILURE_TEXT: Record<string, (pkg: string) => string> = {
  INSTALL_FAILED_ALREADY_EXISTS: (p) => `Attempt to re-install ${p} without first uninstalling.`,
  INSTALL_FAILED_INVALID_APK: () => 'Failed to extract native libraries, res=-2',
  INSTALL_FAILED_INSUFFICIENT_STORAGE: () => '',
  INSTALL_FAILED_UPDATE_INCOMPATIBLE: (p) => `Existing package ${p} signatures do not match newer version; ignoring!`,
  INSTALL_FAILED_TEST_ONLY: () => 'installPackageLI',
  INSTALL_FAILED_USER_RESTRICTED: () => 'Install canceled by user',
  INSTALL_FAILED_NO_MATCHING_ABIS: () => 'Failed to extract native libraries, res=-113',
  INSTALL_PARSE_FAILED_NO_CERTIFICATES: () => 'No signature found in package of version 2 or newer for package',
};

const SYSTEM_PACKAGES: Array<[string, string, string | null]> = [
  ['android', '/system/framework/framework-res.apk', null],
  ['com.android.settings', '/system_ext/priv-app/Settings/Settings.apk', 'com.android.settings.Settings'],
  ['com.android.systemui', '/system_ext/priv-app/SystemUIGoogle/SystemUIGoogle.apk', null],
  ['com.android.phone', '/system/priv-app/TeleService/TeleService.apk', null],
  ['com.android.shell', '/system/priv-app/Shell/Shell.apk', null],
  ['com.android.providers.contacts', '/system/priv-app/ContactsProvider/ContactsProvider.apk', null],
  ['com.android.providers.media.module', '/apex/com.android.mediaprovider/priv-app/MediaProvider/MediaProvider.apk', null],
  ['com.android.bluetooth', '/system/app/Bluetooth/Bluetooth.apk', null],
  ['com.android.vending', '/product/priv-app/Phonesky/Phonesky.apk', 'com.android.vending.AssetBrowserActivity'],
  ['com.google.android.gms', '/product/priv-app/PrebuiltGmsCore/PrebuiltGmsCore.apk', null],
  ['com.android.chrome', '/product/app/Chrome/Chrome.apk', 'com.google.android.apps.chrome.Main'],
  ['com.google.android.apps.messaging', '/product/app/PrebuiltBugle/PrebuiltBugle.apk', 'com.google.android.apps.messaging.ui.ConversationListActivity'],
  ['com.google.android.dialer', '/product/priv-app/GoogleDialer/GoogleDialer.apk', 'com.google.android.dialer.extensions.GoogleDialtactsActivity'],
  ['com.google.android.youtube', '/product/app/YouTube/YouTube.apk', 'com.google.android.youtube.app.honeycomb.Shell$HomeActivity'],
  ['com.google.android.webview', '/product/app/WebViewGoogle/WebViewGoogle.apk', null],
];

const VENDOR_PACKAGES: Record<string, Array<[string, string, string | null]>> = {
  google: [['com.google.android.apps.nexuslauncher', '/system_ext/priv-app/NexusLauncherRelease/NexusLauncherRelease.apk', null]],
  samsung: [
    ['com.sec.android.app.launcher', '/system/priv-app/TouchWizHome_2017/TouchWizHome_2017.apk', null],
    ['com.sec.android.app.camera', '/system/priv-app/SamsungCamera/SamsungCamera.apk', 'com.sec.android.app.camera.Camera'],
  ],
  motorola: [['com.motorola.launcher3', '/product/priv-app/MotoLauncher3/MotoLauncher3.apk', null]],
};

/** Short component form, as ComponentName.flattenToShortString prints it. */
export function shortComponent(pkg: string, cls: string): string {
  return cls.startsWith(pkg + '.') ? `${pkg}/${cls.slice(pkg.length)}` : `${pkg}/${cls}`;
}

/** An instrumentation with the package that declares it (InstrumentationInfo). */
export interface InstalledInstrumentation extends ApkInstrumentation {
  packageName: string;
  /** The declaring package's APK (`pm list instrumentation -f`). */
  sourceDir: string;
}

/** String.compareTo: UTF-16 code unit order, not the locale's. */
function compareJava(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

export interface InstallOptions {
  allowReplace: boolean;
  allowDowngrade: boolean;
  /** `-g`: every runtime permission the app asks for is granted at install. */
  grantRuntimePermissions?: boolean;
}

export class PackageManager {
  private readonly packages = new Map<string, InstalledPackage>();
  private nextUid = 10245;
  private pendingFailure: string | null = null;
  /** Packages whose uninstall fails with a code (fault injection: an active device admin app). */
  private readonly uninstallRefusals = new Map<string, string>();
  /** Artificial install latency (fault injection: slow install). */
  installDelayMs = 0;

  constructor(private readonly spec: AndroidDeviceSpec, private readonly fsRoot: string, private readonly log: LogBuffer) {
    const bootTime = Date.now() - 86_400_000 * 30;
    for (const [name, codePath, launcher] of [...SYSTEM_PACKAGES, ...(VENDOR_PACKAGES[spec.brand] ?? [])]) {
      this.packages.set(name, {
        packageName: name, versionCode: spec.sdk * 10_000_000 + 1, versionName: spec.androidVersion, system: true, codePath,
        launcherActivity: launcher, activities: launcher ? [launcher] : [], instrumentations: [], uid: 1000 + this.packages.size,
        firstInstallTimeMs: spec.buildDateUtc * 1000, lastUpdateTimeMs: spec.buildDateUtc * 1000,
      });
    }
    for (const app of spec.thirdPartyApps ?? []) {
      this.packages.set(app.packageName, {
        packageName: app.packageName, versionCode: app.versionCode, versionName: app.versionName, system: app.system,
        codePath: `${this.newCodeDir(app.packageName)}/base.apk`, launcherActivity: app.launcherActivity ?? null,
        activities: app.launcherActivity ? [app.launcherActivity] : [], instrumentations: [], uid: this.nextUid++, firstInstallTimeMs: bootTime, lastUpdateTimeMs: bootTime,
      });
    }
  }

  list(): InstalledPackage[] {
    return [...this.packages.values()];
  }

  get(name: string): InstalledPackage | undefined {
    return this.packages.get(name);
  }

  /** Declared instrumentations, as PackageManager.queryInstrumentation returns them: all, or those targeting `target`. */
  instrumentations(target?: string): InstalledInstrumentation[] {
    return this.list().flatMap((p) => p.instrumentations
      .filter((i) => target === undefined || i.targetPackage === target)
      .map((i) => ({ ...i, packageName: p.packageName, sourceDir: p.codePath })));
  }

  /** Fault injection: the next install fails with this code (e.g. "INSUFFICIENT_STORAGE"). */
  failNextInstall(code: string): void {
    const upper = code.toUpperCase();
    this.pendingFailure = /^INSTALL_/.test(upper) ? upper : `INSTALL_FAILED_${upper}`;
  }

  /** Fault injection: uninstalling `name` fails with `code` until called again without one. */
  refuseUninstall(name: string, code: string | undefined): void {
    if (code) this.uninstallRefusals.set(name, code);
    else this.uninstallRefusals.delete(name);
  }

  /** Installs APK bytes; returns the text pm prints ("Success" or "Failure [...]"), without newline. */
  async install(apk: Buffer, options: InstallOptions): Promise<{ ok: boolean; text: string }> {
    if (this.installDelayMs > 0) await new Promise((r) => setTimeout(r, this.installDelayMs));
    let info;
    try {
      info = parseApk(apk);
    } catch (e) {
      const reason = e instanceof ApkParseError ? e.message : String(e);
      const tmp = `/data/app/vmdl${randomBytes(4).readUInt32LE(0) % 2_000_000_000}.tmp/base.apk`;
      return this.fail(`INSTALL_PARSE_FAILED_NOT_APK: Failed parse during installPackageLI: ${tmp} (${reason})`);
    }
    if (this.pendingFailure) {
      const code = this.pendingFailure;
      this.pendingFailure = null;
      const text = FAILURE_TEXT[code]?.(info.packageName) ?? 'Simulated failure';
      return this.fail(text ? `${code}: ${text}` : code);
    }
    const existing = this.packages.get(info.packageName);
    if (existing && !options.allowReplace) return this.fail(`INSTALL_FAILED_ALREADY_EXISTS: ${FAILURE_TEXT.INSTALL_FAILED_ALREADY_EXISTS(info.packageName)}`);
    if (existing && info.versionCode < existing.versionCode && !options.allowDowngrade) {
      return this.fail(`INSTALL_FAILED_VERSION_DOWNGRADE: Downgrade detected: Update version code ${info.versionCode} is older than current ${existing.versionCode}`);
    }
    if (info.minSdk > this.spec.sdk) {
      return this.fail(`INSTALL_FAILED_OLDER_SDK: Failed parse during installPackageLI: /data/app/vmdl1406573721.tmp/base.apk (at Binary XML file line #7): Requires newer sdk version #${info.minSdk} (current version is #${this.spec.sdk})`);
    }
    const codeDir = existing && !existing.system ? path.posix.dirname(existing.codePath) : this.newCodeDir(info.packageName);
    const hostFile = path.join(this.fsRoot, codeDir, 'base.apk');
    fs.mkdirSync(path.dirname(hostFile), { recursive: true });
    fs.writeFileSync(hostFile, apk);
    const now = Date.now();
    this.packages.set(info.packageName, {
      packageName: info.packageName, versionCode: info.versionCode, versionName: info.versionName, system: false,
      codePath: `${codeDir}/base.apk`, launcherActivity: info.launcherActivity, activities: info.activities,
      instrumentations: info.instrumentations,
      uid: existing?.uid ?? this.nextUid++, firstInstallTimeMs: existing?.firstInstallTimeMs ?? now, lastUpdateTimeMs: now,
      requestedPermissions: info.permissions,
      runtimePermissions: this.runtimePermissionsOf(info.permissions, existing, options.grantRuntimePermissions === true),
    });
    this.log.log('I', 'PackageManager', `installPackageLI: ${info.packageName} versionCode=${info.versionCode}`);
    return { ok: true, text: 'Success' };
  }

  uninstall(name: string, keepData: boolean): { ok: boolean; text: string } {
    const pkg = this.packages.get(name);
    if (!pkg || pkg.system) return { ok: false, text: 'Failure [DELETE_FAILED_INTERNAL_ERROR]' };
    const refusal = this.uninstallRefusals.get(name);
    if (refusal) return { ok: false, text: `Failure [${refusal}]` };
    this.packages.delete(name);
    fs.rmSync(path.join(this.fsRoot, path.posix.dirname(pkg.codePath)), { recursive: true, force: true });
    this.log.log('I', 'PackageManager', `Package ${name} removed${keepData ? ' (data kept)' : ''}`);
    return { ok: true, text: 'Success' };
  }

  /** `pm <args>` and `cmd package <args>`. Returns the exit code. */
  async command(args: string[], io: ToolIO, readFile: (devicePath: string) => Buffer | null): Promise<number> {
    const [sub, ...rest] = args;
    switch (sub) {
      case 'list':
        if (rest[0] === 'packages') return this.listPackages(rest.slice(1), io);
        if (rest[0] === 'instrumentation') return this.listInstrumentation(rest.slice(1), io);
        if (rest[0] === 'features') {
          io.out(['android.hardware.wifi', 'android.hardware.bluetooth', 'android.hardware.camera', 'android.hardware.touchscreen', 'android.software.webview']
            .map((f) => `feature:${f}\n`).join(''));
          return 0;
        }
        io.err(`Error: unknown list type '${rest[0] ?? ''}'\n`);
        return 1;
      case 'path': {
        const pkg = this.packages.get(rest.filter((a) => !a.startsWith('-') && !/^\d+$/.test(a)).pop() ?? '');
        if (!pkg) return 1;
        io.out(`package:${pkg.codePath}\n`);
        return 0;
      }
      case 'install':
        return this.installFromFile(rest, io, readFile);
      case 'uninstall': {
        const name = rest.filter((a) => !a.startsWith('-') && !/^\d+$/.test(a)).pop();
        if (!name) {
          io.err('Error: package name not specified\n');
          return 1;
        }
        const r = this.uninstall(name, rest.includes('-k'));
        io.out(r.text + '\n');
        return r.ok ? 0 : 1;
      }
      case 'resolve-activity':
        return this.resolveActivity(rest, io);
      case 'clear':
        io.out(this.packages.has(rest[rest.length - 1] ?? '') ? 'Success\n' : 'Failed\n');
        return 0;
      case 'grant':
      case 'revoke':
        return 0;
      default:
        io.err(`Unknown command: ${sub ?? ''}\n`);
        return 1;
    }
  }

  private async installFromFile(args: string[], io: ToolIO, readFile: (devicePath: string) => Buffer | null): Promise<number> {
    const file = args.filter((a, i) => !a.startsWith('-') && args[i - 1] !== '-S' && args[i - 1] !== '--user').pop();
    if (!file) {
      io.err('Error: must either specify a package size or an APK file\n');
      return 1;
    }
    const data = readFile(file);
    if (!data) {
      io.err(`Error: Unable to open file: ${file}\nConsider using a file under /data/local/tmp/\nError: Can't open file: ${file}\n`);
      return 1;
    }
    const r = await this.install(data, this.installOptions(args));
    io.out(r.text + '\n');
    return r.ok ? 0 : 1;
  }

  /** pm install flags: replacing is the default on modern pm (-r is accepted, -R forbids it); -g grants (Android 6+). */
  installOptions(args: string[]): InstallOptions {
    return { allowReplace: !args.includes('-R'), allowDowngrade: args.includes('-d'), grantRuntimePermissions: args.includes('-g') };
  }

  /**
   * Runtime permissions after an install: before Android 6 every permission is granted at install; from Android 6 on
   * they start denied unless `-g` grants them, and an update keeps what was granted before.
   */
  private runtimePermissionsOf(requested: string[], existing: InstalledPackage | undefined, grant: boolean): Record<string, boolean> {
    const runtime = requested.filter((name) => RUNTIME_PERMISSIONS.has(name));
    return Object.fromEntries(runtime.map((name) => [name, this.spec.sdk < 23 || grant || existing?.runtimePermissions?.[name] === true]));
  }

  private listPackages(args: string[], io: ToolIO): number {
    const flags = new Set(args.filter((a) => a.startsWith('-')));
    const filter = args.filter((a, i) => !a.startsWith('-') && args[i - 1] !== '--user').pop();
    const lines = this.list()
      .filter((p) => !flags.has('-3') || !p.system)
      .filter((p) => !flags.has('-s') || p.system)
      .filter((p) => !filter || p.packageName.includes(filter))
      .map((p) => {
        let line = 'package:' + (flags.has('-f') ? `${p.codePath}=` : '') + p.packageName;
        if (flags.has('--show-versioncode')) line += ` versionCode:${p.versionCode}`;
        if (flags.has('-U')) line += ` uid:${p.uid}`;
        return line + '\n';
      });
    io.out(lines.join(''));
    return 0;
  }

  /** `pm list instrumentation [-f] [target]`, sorted by target package as PackageManagerShellCommand does. */
  private listInstrumentation(args: string[], io: ToolIO): number {
    let showSourceDir = false;
    let target: string | undefined;
    for (const a of args) {
      if (a === '-f') showSourceDir = true;
      else if (!a.startsWith('-')) target = a;
      else {
        io.out(`Error: Unknown option: ${a}\n`);
        return 255;
      }
    }
    const lines = this.instrumentations(target)
      .sort((a, b) => compareJava(a.targetPackage ?? '', b.targetPackage ?? ''))
      .map((i) => `instrumentation:${showSourceDir ? `${i.sourceDir}=` : ''}${shortComponent(i.packageName, i.name)} (target=${i.targetPackage})\n`);
    io.out(lines.join(''));
    return 0;
  }

  private resolveActivity(args: string[], io: ToolIO): number {
    // The intent is given by flags; a trailing bare argument is the package.
    const valued = new Set(['-a', '-c', '-d', '-t', '-n', '-p', '--user', '-f']);
    const positional = args.filter((a, i) => !a.startsWith('-') && !valued.has(args[i - 1]));
    const pIndex = args.indexOf('-p');
    const pkgName = pIndex >= 0 ? args[pIndex + 1] : positional.pop();
    const pkg = pkgName ? this.packages.get(pkgName) : undefined;
    if (!pkg || !pkg.launcherActivity) {
      io.out('No activity found\n');
      return 0;
    }
    io.out(`priority=0 preferredOrder=0 match=0x108000 specificIndex=-1 isDefault=false\n${shortComponent(pkg.packageName, pkg.launcherActivity)}\n`);
    return 0;
  }

  private fail(text: string): { ok: boolean; text: string } {
    this.log.log('W', 'PackageManager', `Install failed: ${text}`);
    return { ok: false, text: `Failure [${text}]` };
  }

  /** Code directory layout by release (device-data.md 1.9). */
  private newCodeDir(pkg: string): string {
    const b64 = () => randomBytes(16).toString('base64url') + '==';
    if (this.spec.sdk >= 30) return `/data/app/~~${b64()}/${pkg}-${b64()}`;
    if (this.spec.sdk >= 28) return `/data/app/${pkg}-${b64()}`;
    return `/data/app/${pkg}-1`;
  }
}
