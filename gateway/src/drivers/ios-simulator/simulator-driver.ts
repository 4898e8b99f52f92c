/**
 * The iOS Simulator DeviceDriver over node-simctl (`xcrun simctl`): the offered simulators are found by their
 * stable names or created, booted at start, after a reboot and after someone shut them down, and reported Ready
 * once `simctl bootstatus` says the boot finished. Apps: install / uninstall / launch / listapps; reboot is
 * shutdown + boot; the log is `simctl spawn <udid> log show|stream`. A poll of `simctl list -j` notices changes
 * made outside the gateway.
 */
import type { DeviceState, InstalledPackage } from '@devicelab/proto';
import { createLogger, type DeviceReadiness, type Logger, splitShellWords } from '@devicelab/shared';
import { Simctl } from 'node-simctl';
import { DeviceCommandError, type DeviceAutomation, type DeviceDriver, type DeviceListener, type InstallOptions, type LaunchOptions } from '../device-driver';
import { unpackAppBundle } from './app-bundle';
import { packagesFromListapps } from './installed-apps';
import { simulatorFacts, type SimulatorFacts } from './simulator-facts';
import { resolveOfferedSimulators } from './simulator-set';
import type { SimulatorOffer } from './simulator-offers';
import { readListing, type SimulatorListing } from './simctl-list';
import { SimulatorSampling } from './simulator-sampling';
import { messageOf, simctlCommand } from './simctl-errors';

export interface SimulatorDriverOptions {
  /** The xcrun executable (a full path). */
  xcrun: string;
  offers: SimulatorOffer[];
  logger?: Logger;
  /** How often `simctl list -j` is read to notice changes made outside the gateway. */
  pollMs?: number;
  /** Longest wait for a boot to finish. */
  bootTimeoutMs?: number;
  /** Per simctl call (install and erase may take longer on a real Mac). */
  execTimeoutMs?: number;
}

interface Entry {
  udid: string;
  simctl: Simctl;
  readiness: DeviceReadiness;
  detail?: string;
  facts?: SimulatorFacts;
  packages?: InstalledPackage[];
  /** A boot or reboot of ours is running: the poll leaves the device alone. */
  busy: boolean;
  generation: number;
}

const LOG_SHOW_SPAN = '10m';

export class SimulatorDriver implements DeviceDriver {
  readonly operatingSystem = 'iOS';
  readonly kind = 'iOS Simulator';
  /** The hub's binary is an IPA or a zipped `.app`; the name only has to be a zip for `unzip`. */
  readonly appFileExtension = '.zip';
  readonly sampling: SimulatorSampling;
  /** On a Mac, Appium's XCUITest driver builds WebDriverAgent with xcodebuild and starts it on the simulator itself. */
  readonly automation: DeviceAutomation = {
    appiumDriver: 'xcuitest',
    installedForAutomation: 'Nothing to prepare on iOS simulators: WebDriverAgent automates any installed app, so it was installed as usual.',
    capabilities: (id, ports) => ({
      platformName: 'iOS', 'appium:automationName': 'XCUITest', 'appium:udid': id,
      'appium:wdaLocalPort': ports.wdaLocalPort, 'appium:mjpegServerPort': ports.mjpegServerPort,
    }),
  };
  private readonly logger: Logger;
  private readonly entries = new Map<string, Entry>();
  private readonly host: Simctl;
  private listener: DeviceListener | undefined;
  private pollTimer: NodeJS.Timeout | undefined;
  private stopped = false;

  constructor(private readonly options: SimulatorDriverOptions) {
    this.logger = options.logger ?? createLogger('gateway.simulator');
    this.host = this.simctl();
    this.sampling = new SimulatorSampling((id) => this.ready(id).simctl, this.logger);
  }

  private simctl(udid?: string): Simctl {
    return new Simctl({ xcrun: { path: this.options.xcrun }, udid: udid ?? null, execTimeout: this.options.execTimeoutMs ?? 5 * 60_000, logErrors: true });
  }

  /** Resolves once the offered simulators are known (created when missing); booting goes on in the background. */
  async start(listener: DeviceListener): Promise<void> {
    this.listener = listener;
    let listing: SimulatorListing;
    try {
      const udids = await resolveOfferedSimulators(this.host, this.options.offers, this.logger);
      listing = readListing(await this.host.list());
      for (const udid of udids) {
        if (this.entries.has(udid)) continue;
        const entry: Entry = { udid, simctl: this.simctl(udid), readiness: 'Booting', busy: false, generation: 0 };
        this.entries.set(udid, entry);
        entry.facts = simulatorFacts(udid, listing);
        this.setReadiness(entry, 'Booting', 'Booting the simulator');
      }
    } catch (err) {
      this.logger.error({ err }, 'the offered iOS simulators could not be set up');
      return;
    }
    for (const entry of this.entries.values()) void this.bring(entry, listing);
    this.schedulePoll();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.pollTimer) clearTimeout(this.pollTimer);
    this.sampling.stopAll();
    for (const entry of this.entries.values()) entry.generation++;
  }

  snapshot(): DeviceState[] {
    return [...this.entries.values()].map((entry) => this.stateOf(entry));
  }

  /** Boots the simulator when it is not booted, waits for the boot to finish, reads its apps: Ready. */
  private async bring(entry: Entry, listing?: SimulatorListing): Promise<void> {
    const generation = ++entry.generation;
    const current = () => !this.stopped && entry.generation === generation;
    entry.busy = true;
    try {
      const state = (listing ?? readListing(await this.host.list())).devices.find((d) => d.udid === entry.udid)?.state;
      if (state === undefined) throw new DeviceCommandError('The simulator is no longer in the simulator set (deleted?)', 'DEVICE_NOT_CONNECTED');
      if (state !== 'Booted') {
        this.setReadiness(entry, 'Booting', 'Booting the simulator');
        await entry.simctl.exec('boot', { args: [entry.udid] });
      }
      await entry.simctl.startBootMonitor({ timeout: this.options.bootTimeoutMs ?? 240_000 });
      const packages = await this.listApps(entry);
      if (!current()) return;
      entry.packages = packages;
      entry.facts = simulatorFacts(entry.udid, readListing(await this.host.list())) ?? entry.facts;
      this.setReadiness(entry, 'Ready', undefined);
    } catch (err) {
      if (!current()) return;
      this.logger.warn({ err, udid: entry.udid }, 'booting the simulator failed');
      this.setReadiness(entry, 'Offline', `The simulator did not boot: ${messageOf(err)}`);
    } finally {
      if (entry.generation === generation) entry.busy = false;
    }
  }

  private schedulePoll(): void {
    if (this.stopped) return;
    this.pollTimer = setTimeout(() => {
      this.poll().catch((err: unknown) => this.logger.debug({ err }, 'simctl list failed')).finally(() => this.schedulePoll());
    }, this.options.pollMs ?? 5_000);
    this.pollTimer.unref();
  }

  /**
   * A simulator shut down (or deleted) outside the gateway goes Offline, and is booted again when it is there; one
   * whose boot failed is tried again at every poll.
   */
  private async poll(): Promise<void> {
    const listing = readListing(await this.host.list());
    for (const entry of this.entries.values()) {
      if (entry.busy) continue;
      const listed = listing.devices.find((d) => d.udid === entry.udid);
      if (listed?.state === 'Booted' && entry.readiness === 'Ready') {
        if (entry.facts) entry.facts.diskSpaceUsed = listed.dataPathSize;
        continue;
      }
      if (!listed) {
        if (entry.readiness !== 'Offline') this.setReadiness(entry, 'Offline', 'The simulator is no longer in the simulator set');
        continue;
      }
      // Shut down behind our back, or a boot of ours that failed: (boot and) wait for it again.
      if (listed.state !== 'Booted') this.setReadiness(entry, 'Offline', `The simulator is ${listed.state}; booting it again`);
      void this.bring(entry, listing);
    }
  }

  /** The device's entry when it can take commands; DEVICE_NOT_CONNECTED / DEVICE_NOT_READY otherwise. */
  private ready(id: string): Entry {
    const entry = this.entries.get(id);
    if (!entry) throw new DeviceCommandError(`Device ${id} is not connected to this gateway`, 'DEVICE_NOT_CONNECTED');
    if (entry.readiness !== 'Ready') {
      throw new DeviceCommandError(`Device ${id} is not ready (${entry.readiness}${entry.detail ? `: ${entry.detail}` : ''})`, 'DEVICE_NOT_READY');
    }
    return entry;
  }

  async install(id: string, appPath: string, options?: InstallOptions): Promise<DeviceState> {
    const entry = this.ready(id);
    const app = await unpackAppBundle(appPath);
    try {
      if (options?.force && options.packageId) await entry.simctl.removeApp(options.packageId).catch(() => undefined);
      await simctlCommand('install', () => entry.simctl.installApp(app.appDir), 'INSTALL_FAILED');
    } finally {
      await app.discard();
    }
    return this.readPackages(id);
  }

  async uninstall(id: string, packageId: string): Promise<DeviceState> {
    const entry = this.ready(id);
    await simctlCommand('uninstall', () => entry.simctl.removeApp(packageId), 'DELETE_FAILED');
    return this.readPackages(id);
  }

  async readPackages(id: string): Promise<DeviceState> {
    const entry = this.ready(id);
    entry.packages = await this.listApps(entry);
    return this.stateOf(entry);
  }

  private async listApps(entry: Entry): Promise<InstalledPackage[]> {
    const { stdout } = await simctlCommand('listapps', () => entry.simctl.exec('listapps', { args: [entry.udid] }), 'DEVICE_UNREACHABLE');
    return packagesFromListapps(stdout);
  }

  /** `simctl launch <udid> <bundle> [args…]`: the arguments are split as a shell would; the output is `<bundle>: <pid>`. */
  async launch(id: string, packageId: string, options?: LaunchOptions): Promise<string> {
    const entry = this.ready(id);
    const args = options?.arguments ? splitShellWords(options.arguments) : [];
    const { stdout } = await simctlCommand('launch', () => entry.simctl.exec('launch', { args: [entry.udid, packageId, ...args] }), 'LAUNCH_FAILED');
    return stdout.trim();
  }

  /** shutdown, then boot in the background: the device is Offline (Rebooting) until the boot finished. */
  async reboot(id: string): Promise<void> {
    const entry = this.ready(id);
    entry.busy = true;
    entry.generation++;
    this.setReadiness(entry, 'Offline', 'Rebooting');
    try {
      await simctlCommand('shutdown', () => entry.simctl.shutdownDevice(), 'REBOOT_FAILED');
    } catch (err) {
      void this.bring(entry);
      throw err;
    }
    void this.bring(entry);
  }

  async readLog(id: string, maxLines: number): Promise<string> {
    const entry = this.ready(id);
    const { stdout } = await simctlCommand('log show',
      () => entry.simctl.spawnProcess(['log', 'show', '--style', 'compact', '--last', LOG_SHOW_SPAN]), 'DEVICE_UNREACHABLE');
    const lines = String(stdout).split('\n').filter((line: string) => line !== '' && !line.startsWith('Timestamp '));
    return lines.slice(-maxLines).join('\n');
  }

  private setReadiness(entry: Entry, readiness: DeviceReadiness, detail: string | undefined): void {
    entry.readiness = readiness;
    entry.detail = detail;
    try {
      this.listener?.deviceChanged(this.stateOf(entry));
    } catch (err) {
      this.logger.error({ err }, 'device listener failed');
    }
  }

  private stateOf(entry: Entry): DeviceState {
    const state: DeviceState = { ...(entry.facts ?? {}), vendorUniqueIdentifier: entry.udid, operatingSystem: 'iOS', readiness: entry.readiness };
    if (entry.detail) state.readinessDetail = entry.detail;
    if (entry.packages) state.packages = entry.packages;
    return state;
  }
}
