/**
 * The Android DeviceDriver over adbkit and the real adb server. Per device: the adb state from the tracker,
 * a readiness (Booting until `sys.boot_completed` = 1, then Ready with facts and packages), and a generation
 * counter that cancels a running boot wait when the state changes.
 */
import type { Client, DeviceClient } from '@devicefarmer/adbkit';
import type { DeviceState, InstalledPackage } from '@devicelab/proto';
import { createLogger, type DeviceReadiness, type Logger } from '@devicelab/shared';
import {
  type ArrivingApp, type BatteryReading, DeviceCommandError, type DeviceAutomation, type DeviceDriver, type DeviceListener, type InstallOptions, type LaunchOptions,
  type UninstallOptions,
} from '../device-driver';
import { type AdbServerOptions, createAdbClient } from './adb-client';
import { arrived, installApk, uninstallPackage } from './install';
import { launchPackage } from './launch';
import { readLogcat } from './logcat';
import { type DeviceFacts, readFacts } from './facts';
import { readInstalledPackages } from './installed-packages';
import { readinessForAdbState } from './readiness';
import { readAndroidBattery } from './battery';
import { lookupUsbLocation } from './usb-location';
import { asCommandError, limitDeviceWork, runShell } from './shell';
import { Admission, type AdmissionLimits } from '../admission';
import { AdbTracker } from './tracker';
import { androidAutomation } from './automation';
import { AndroidSampling } from './sampling';
import { AndroidScreen, screencap } from './screen/android-screen';
import { UiAutomator2MjpegScreen } from './screen/uiautomator2-mjpeg';
import type { ScreenCapability } from '../../screen/screen-source';

export interface AndroidDriverOptions extends AdbServerOptions {
  logger?: Logger;
  /** First pause between `sys.boot_completed` polls while Booting; it doubles up to `bootPollMaxMs`. */
  bootPollMs?: number;
  bootPollMaxMs?: number;
  /** Shell commands at once per device and for the whole gateway (the rest wait their turn). */
  deviceWork?: AdmissionLimits;
  /** After a reboot command, how long the old boot may still answer before we trust `sys.boot_completed`. */
  rebootGraceMs?: number;
  /** Period of the `host:devices` reconciliation poll (adb 29 misses some track updates); 0 disables it. */
  devicePollMs?: number;
}

interface Entry {
  serial: string;
  adbState: string;
  readiness: DeviceReadiness;
  detail?: string;
  facts?: DeviceFacts;
  packages?: InstalledPackage[];
  /**
   * Package list reads started, and which of them gave the list kept now. Reads overlap (the one after boot, an
   * install's, a hub's refresh); a list read before an install must not replace one read after it.
   */
  packageReads: number;
  keptPackageRead: number;
  generation: number;
  /** The package the service launched last (its Graphics fields are sampled). */
  launched?: string;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export class AndroidDriver implements DeviceDriver {
  readonly operatingSystem = 'Android';
  readonly appFileExtension = '.apk';
  readonly client: Client;
  private readonly logger: Logger;
  private readonly entries = new Map<string, Entry>();
  private listener: DeviceListener | undefined;
  private tracker: AdbTracker | undefined;
  private stopped = false;
  /** Boot flows still talking to adb: stop() waits for them, so none outlives the adb server it uses. */
  private readonly bootFlows = new Set<Promise<void>>();
  private readonly bootPollMs: number;
  private readonly bootPollMaxMs: number;
  readonly admission: Admission;
  private readonly rebootGraceMs: number;
  private readonly devicePollMs: number;
  readonly sampling: AndroidSampling;
  readonly automation: DeviceAutomation;
  readonly screen: ScreenCapability = {
    // During an Appium session its UiAutomator2 server streams the screen itself (screen/uiautomator2-mjpeg.ts).
    open: (id, options) => (options?.automationSession
      ? new UiAutomator2MjpegScreen(this.device(id), { logger: this.logger })
      : new AndroidScreen(this.device(id), { logger: this.logger })),
    still: (id) => screencap(this.device(id)),
  };

  constructor(options: AndroidDriverOptions = {}) {
    this.client = createAdbClient(options);
    this.automation = androidAutomation(options);
    this.logger = options.logger ?? createLogger('gateway.android');
    this.bootPollMs = options.bootPollMs ?? 250;
    this.bootPollMaxMs = Math.max(this.bootPollMs, options.bootPollMaxMs ?? 2_000);
    this.admission = new Admission(options.deviceWork ?? { perDevice: 2, total: 24 });
    limitDeviceWork(this.client, this.admission);
    this.rebootGraceMs = options.rebootGraceMs ?? 3_000;
    this.devicePollMs = options.devicePollMs ?? 2_000;
    this.sampling = new AndroidSampling({
      readyDevice: (id) => this.device(id),
      launchedPackage: (id) => this.entries.get(id)?.launched,
    });
  }

  async start(listener: DeviceListener): Promise<void> {
    this.listener = listener;
    this.tracker = new AdbTracker(this.client, {
      state: (serial, adbState) => this.onAdbState(serial, adbState),
      removed: (serial) => this.onRemoved(serial),
    }, this.logger, { minMs: 250, maxMs: 5_000, pollMs: this.devicePollMs });
    await this.tracker.start();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.tracker?.stop();
    for (const entry of this.entries.values()) entry.generation++;
    // adbkit starts a new adb server when it finds none, so a flow left running after its owner killed the
    // server would leave an orphan one behind.
    await Promise.allSettled([...this.bootFlows]);
  }

  snapshot(): DeviceState[] {
    return [...this.entries.values()].map((e) => this.stateOf(e));
  }

  async install(id: string, appPath: string, options?: InstallOptions): Promise<DeviceState> {
    return this.installArriving(id, await arrived(appPath), options);
  }

  /** Android 7+ streams the APK as it arrives; older devices get it pushed once complete. */
  async installArriving(id: string, app: ArrivingApp, options?: InstallOptions): Promise<DeviceState> {
    const device = this.device(id);
    // `adb install` streams into `cmd package install -S` on Android 7+ (adb feature `cmd`); older devices take a push.
    const sdk = Number(this.entries.get(id)?.facts?.properties?.find((p) => p.name === 'ro.build.version.sdk')?.value);
    // Before Android 6 every permission is granted at install anyway, and pm there knows no -g.
    await installApk(device, app, { ...options, streamed: sdk >= 24, forAutomation: options?.forAutomation && !(sdk < 23) });
    return this.afterPackageChange(id, (packages) => {
      const others = packages.filter((p) => p.identifier !== options?.packageId);
      return options?.packageId ? [...others, { identifier: options.packageId, version: '', buildVersion: '', system: false }] : packages;
    });
  }

  async uninstall(id: string, packageId: string, options?: UninstallOptions): Promise<DeviceState> {
    await uninstallPackage(this.device(id), packageId, options);
    return this.afterPackageChange(id, (packages) => packages.filter((p) => p.identifier !== packageId));
  }

  async readPackages(id: string): Promise<DeviceState> {
    const device = this.device(id);
    const entry = this.entries.get(id);
    if (!entry) throw new DeviceCommandError(`Device ${id} is not connected to this gateway`, 'DEVICE_NOT_CONNECTED');
    const read = ++entry.packageReads;
    keepPackages(entry, read, await readInstalledPackages(device));
    return this.stateOf(entry);
  }

  async launch(id: string, packageId: string, options?: LaunchOptions): Promise<string> {
    const output = await launchPackage(this.device(id), packageId, options);
    const entry = this.entries.get(id);
    if (entry) entry.launched = packageId;
    return output;
  }

  readBattery(id: string): Promise<BatteryReading | undefined> {
    return readAndroidBattery(this.client.getDevice(id));
  }

  usbLocation(id: string): Promise<string | undefined> {
    return lookupUsbLocation(this.client, id);
  }

  async readLog(id: string, maxLines: number): Promise<string> {
    return readLogcat(this.device(id), maxLines);
  }

  async reboot(id: string): Promise<void> {
    const device = this.device(id);
    try {
      await device.reboot();
    } catch (err) {
      throw asCommandError(id, err);
    }
    const entry = this.entries.get(id);
    if (!entry) return;
    // adb 29 sends no track update when a TCP device drops, so do not wait for the tracker to notice.
    const generation = ++entry.generation;
    this.setReadiness(entry, 'Booting', 'Rebooting');
    this.trackBootFlow(this.bootFlow(entry, generation, true));
  }

  /** The adbkit handle of a known device; `requireReady` rejects devices that cannot take commands yet. */
  private device(id: string, requireReady = true): DeviceClient {
    const entry = this.entries.get(id);
    if (!entry) throw new DeviceCommandError(`Device ${id} is not connected to this gateway`, 'DEVICE_NOT_CONNECTED');
    if (requireReady && entry.readiness !== 'Ready') {
      throw new DeviceCommandError(`Device ${id} is not ready (${entry.readiness}${entry.detail ? `: ${entry.detail}` : ''})`, 'DEVICE_NOT_READY');
    }
    return this.client.getDevice(id);
  }

  private onAdbState(serial: string, adbState: string): void {
    if (this.stopped) return;
    let entry = this.entries.get(serial);
    if (entry && entry.adbState === adbState) return; // a re-track repeats every device
    const mapped = readinessForAdbState(adbState);
    if (!entry) {
      entry = { serial, adbState, readiness: mapped.readiness, detail: mapped.detail, generation: 0, packageReads: 0, keptPackageRead: 0 };
      this.entries.set(serial, entry);
    }
    entry.adbState = adbState;
    const generation = ++entry.generation;
    this.setReadiness(entry, mapped.readiness, mapped.detail);
    if (mapped.readiness === 'Booting') this.trackBootFlow(this.bootFlow(entry, generation, false));
  }

  private trackBootFlow(flow: Promise<void>): void {
    this.bootFlows.add(flow);
    void flow.finally(() => this.bootFlows.delete(flow));
  }

  private onRemoved(serial: string): void {
    const entry = this.entries.get(serial);
    if (!entry) return;
    entry.generation++;
    this.entries.delete(serial);
    this.sampling.forget(serial);
    this.emitRemoved(serial);
  }

  /**
   * Booting -> (wait for sys.boot_completed = 1) -> read facts -> Ready (Online) -> packages follow. The facts
   * batch includes getprop, so a device that is already booted (plugged in, gateway start) needs one command
   * before it is Ready; the boot poll backs off while a device boots.
   */
  private async bootFlow(entry: Entry, generation: number, afterReboot: boolean): Promise<void> {
    const current = () => !this.stopped && entry.generation === generation && this.entries.get(entry.serial) === entry;
    const device = this.client.getDevice(entry.serial);
    const started = Date.now();
    let sawDown = !afterReboot;
    let facts: DeviceFacts | undefined;
    for (let pause = this.bootPollMs; current(); pause = Math.min(this.bootPollMaxMs, pause * 2)) {
      let booted = false;
      const t0 = Date.now();
      try {
        if (sawDown) {
          // Facts read while the device boots may be partial: keep them only once it says it has booted.
          const read = await readFacts(device, 10_000);
          booted = read.properties?.find((p) => p.name === 'sys.boot_completed')?.value.trim() === '1';
          if (booted) facts = read;
        } else {
          booted = (await runShell(device, 'getprop sys.boot_completed', 3_000)).trim() === '1';
        }
      } catch (err) {
        sawDown = true;
        this.logger.debug({ serial: entry.serial, err, ms: Date.now() - t0 }, 'boot poll failed');
      }
      this.logger.debug({ serial: entry.serial, booted, ms: Date.now() - t0 }, 'boot poll');
      if (!booted) sawDown = true;
      if (booted && (sawDown || Date.now() - started >= this.rebootGraceMs)) break;
      await sleep(pause);
    }
    for (let attempt = 1; current() && !facts; attempt++) {
      try {
        facts = await readFacts(device);
      } catch (err) {
        this.logger.warn({ serial: entry.serial, err, attempt }, 'reading device facts failed');
        if (attempt >= 3) {
          if (current()) this.setReadiness(entry, 'Ready', `Device facts could not be read: ${asCommandError(entry.serial, err).message}`);
          return;
        }
        await sleep(this.bootPollMs);
      }
    }
    if (!current() || !facts) return;
    entry.facts = facts;
    this.setReadiness(entry, 'Ready', undefined);
    await this.readPackagesAfterBoot(entry, device, current);
  }

  /** The installed packages of a device that just became Ready (reported when read; retried twice). */
  private async readPackagesAfterBoot(entry: Entry, device: DeviceClient, current: () => boolean): Promise<void> {
    for (let attempt = 1; current(); attempt++) {
      try {
        const read = ++entry.packageReads;
        const packages = await readInstalledPackages(device);
        if (!current()) return;
        // A list read after this one started (an install's) was reported already: this one is older.
        if (keepPackages(entry, read, packages)) this.emitChanged(entry);
        return;
      } catch (err) {
        this.logger.warn({ serial: entry.serial, err, attempt }, 'reading installed packages failed');
        if (attempt >= 3) return;
        await sleep(this.bootPollMs);
      }
    }
  }

  /**
   * The device's state after an install or uninstall that succeeded, its packages read again. When they cannot be
   * read, the change the device confirmed is applied to the list we had (`edit`), so the state is still true.
   */
  private async afterPackageChange(id: string, edit: (packages: InstalledPackage[]) => InstalledPackage[]): Promise<DeviceState> {
    const entry = this.entries.get(id);
    if (!entry) throw new DeviceCommandError(`Device ${id} is not connected to this gateway`, 'DEVICE_NOT_CONNECTED');
    const read = ++entry.packageReads;
    try {
      keepPackages(entry, read, await readInstalledPackages(this.client.getDevice(id)));
    } catch (err) {
      this.logger.warn({ serial: id, err }, 'reading installed packages after a change failed; applying the change to the known list');
      keepPackages(entry, read, edit(entry.packages ?? []));
    }
    return this.stateOf(entry);
  }

  private setReadiness(entry: Entry, readiness: DeviceReadiness, detail: string | undefined): void {
    entry.readiness = readiness;
    entry.detail = detail;
    this.emitChanged(entry);
  }

  private stateOf(entry: Entry): DeviceState {
    const state: DeviceState = {
      ...(entry.facts ?? {}),
      vendorUniqueIdentifier: entry.serial,
      operatingSystem: 'Android',
      readiness: entry.readiness,
    };
    if (entry.detail) state.readinessDetail = entry.detail;
    if (entry.packages) state.packages = entry.packages;
    return state;
  }

  private emitChanged(entry: Entry): void {
    try {
      this.listener?.deviceChanged(this.stateOf(entry));
    } catch (err) {
      this.logger.error({ err }, 'device listener failed');
    }
  }

  private emitRemoved(serial: string): void {
    try {
      this.listener?.deviceRemoved(serial);
    } catch (err) {
      this.logger.error({ err }, 'device listener failed');
    }
  }
}

/** Keeps the list of package read number `read` unless a read that started later was kept already. */
function keepPackages(entry: Entry, read: number, packages: InstalledPackage[]): boolean {
  if (read < entry.keptPackageRead) return false;
  entry.keptPackageRead = read;
  entry.packages = packages;
  return true;
}
