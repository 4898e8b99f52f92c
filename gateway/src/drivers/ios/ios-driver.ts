/**
 * The iOS DeviceDriver over usbmuxd: Listen for Attached/Detached (reconnecting when usbmuxd restarts), the
 * host's pair record from usbmuxd (no record: Unauthorized until the device is trusted and paired, then
 * usbmuxd's Paired push retries), facts from lockdown, apps from installation_proxy, install through AFC,
 * reboot through diagnostics_relay, the log from syslog_relay (kept, and teed to the `log` metrics stream),
 * `sample`/`health_check` through IosSampling, the USB location from usbmuxd's LocationID. Launch needs developer
 * services we do not have.
 */
import type * as net from 'node:net';
import path from 'node:path';
import type { DeviceState, InstalledPackage } from '@devicelab/proto';
import { createLogger, type DeviceReadiness, type Logger, type PlistDict, isDict } from '@devicelab/shared';
import {
  type BatteryReading, DeviceCommandError, type DeviceAutomation, type DeviceDriver, type DeviceListener, type InstallOptions, type LogFollower, type LogStream,
} from '../device-driver';
import { AfcClient } from './afc';
import { iosAutomation } from './automation';
import { batteryStatusOf, factsFromLockdown, type IosFacts } from './facts';
import { browseApps, installPackage, uninstallApp } from './installation-proxy';
import { type LockdownSession, pairRecordOf } from './lockdown';
import { IosSampling } from './sampling';
import { IosScreenSource, type IosScreenOptions, iosStill } from './ios-screen';
import type { ScreenCapability } from '../../screen/screen-source';
import { type DeviceLink, openServiceSocket, withLockdown, withPlistService } from './services';
import { followSyslog, LogRing } from './syslog';
import { DEFAULT_USB_SYSFS_DIR, usbLocationOfLocationId } from './usb-location';
import { UsbmuxClient } from './usbmux';

interface IosDriverOptions {
  /** usbmuxd address (`UNIX:/path` or `host:port`). */
  usbmuxdAddress: string;
  logger?: Logger;
  /** Per request to the device. */
  timeoutMs?: number;
  /** Wait before listening again after usbmuxd went away. */
  relistenMs?: number;
  /** Where the host lists its USB devices (`/sys/bus/usb/devices`), to turn a LocationID into a port path. */
  usbSysfsDir?: string;
}

interface Entry {
  udid: string;
  deviceId: number;
  /** usbmuxd's LocationID (Linux: bus << 16 | device address). */
  locationId?: number;
  readiness: DeviceReadiness;
  detail?: string;
  facts?: IosFacts;
  packages?: InstalledPackage[];
  link?: DeviceLink;
  log: LogRing;
  stopLog?: () => void;
  /** `log` metrics streams fed from the same syslog_relay stream. */
  logFollowers: Set<LogFollower>;
  generation: number;
}

const LAUNCH_NEEDS = 'Launching apps on iOS needs developer services, which this gateway does not have: on iOS 17 and later '
  + 'a CoreDevice tunnel (RemoteXPC over the device\'s USB network interface) and a personalized Developer Disk Image '
  + 'mounted on the device (Developer Mode on); before iOS 17 the developer disk image of the device\'s iOS version';

export class IosDriver implements DeviceDriver {
  readonly operatingSystem = 'iOS';
  readonly appFileExtension = '.ipa';
  private readonly usbmux: UsbmuxClient;
  private readonly logger: Logger;
  private readonly timeoutMs: number;
  private readonly relistenMs: number;
  private readonly usbSysfsDir: string;
  private readonly entries = new Map<string, Entry>();
  /** The live screen: WebDriverAgent's stream and input where WDA runs, else screenshots, view only (ios-screen.ts). */
  readonly screen: ScreenCapability = {
    open: (id) => new IosScreenSource(this.screenOptions(id)),
    still: (id) => iosStill(this.screenOptions(id)),
  };
  private readonly udidOf = new Map<number, string>();
  private listener: DeviceListener | undefined;
  private listenSocket: net.Socket | undefined;
  private relistenTimer: NodeJS.Timeout | undefined;
  private stopped = false;
  readonly automation: DeviceAutomation;

  constructor(options: IosDriverOptions) {
    this.usbmux = new UsbmuxClient(options.usbmuxdAddress, options.timeoutMs ?? 10_000);
    this.logger = options.logger ?? createLogger('gateway.ios');
    this.timeoutMs = options.timeoutMs ?? 10_000;
    this.relistenMs = options.relistenMs ?? 1_000;
    this.usbSysfsDir = options.usbSysfsDir ?? DEFAULT_USB_SYSFS_DIR;
    this.automation = iosAutomation({
      usbmuxdAddress: options.usbmuxdAddress,
      connect: (udid, port) => this.usbmux.connect(this.ready(udid).entry.deviceId, port),
      facts: (udid) => {
        const facts = this.entries.get(udid)?.facts;
        return { platformVersion: facts?.operatingSystemVersion, deviceName: facts?.vendorDeviceName };
      },
      logger: this.logger.child({ component: 'automation' }),
    });
  }

  readonly sampling = new IosSampling({
    readyLink: (id) => this.ready(id).link,
    followSyslog: (id, follower) => {
      const { entry } = this.ready(id);
      entry.logFollowers.add(follower);
      return { stop: () => { entry.logFollowers.delete(follower); } };
    },
  });

  /** Resolves once listening; when usbmuxd is not there yet, it keeps trying in the background. */
  async start(listener: DeviceListener): Promise<void> {
    this.listener = listener;
    await this.listen().catch((err: Error) => {
      this.logger.warn({ err, usbmuxd: this.usbmux.address }, 'usbmuxd is not reachable; retrying');
      this.scheduleRelisten();
    });
  }

  private async listen(): Promise<void> {
    this.listenSocket = await this.usbmux.listen((message) => this.onUsbmux(message), (err) => {
      if (this.stopped) return;
      this.logger.warn({ err }, 'usbmuxd connection lost; devices go away until it is back');
      for (const udid of [...this.entries.keys()]) this.remove(udid);
      this.scheduleRelisten();
    });
  }

  private scheduleRelisten(): void {
    if (this.stopped || this.relistenTimer) return;
    this.relistenTimer = setTimeout(() => {
      this.relistenTimer = undefined;
      this.listen().catch(() => this.scheduleRelisten());
    }, this.relistenMs);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.relistenTimer) clearTimeout(this.relistenTimer);
    this.listenSocket?.destroy();
    for (const entry of this.entries.values()) {
      entry.generation++;
      this.stopLog(entry);
    }
  }

  snapshot(): DeviceState[] {
    return [...this.entries.values()].map((entry) => this.stateOf(entry));
  }

  private onUsbmux(message: PlistDict): void {
    const deviceId = Number(message.DeviceID);
    if (message.MessageType === 'Attached' && isDict(message.Properties)) {
      const udid = String(message.Properties.SerialNumber ?? '');
      if (!udid || message.Properties.ConnectionType === 'Network') return;
      this.udidOf.set(deviceId, udid);
      const entry: Entry = this.entries.get(udid) ?? { udid, deviceId, readiness: 'Booting', log: new LogRing(), logFollowers: new Set(), generation: 0 };
      entry.deviceId = deviceId;
      entry.locationId = typeof message.Properties.LocationID === 'number' ? message.Properties.LocationID : undefined;
      this.entries.set(udid, entry);
      void this.connect(entry);
    } else if (message.MessageType === 'Detached') {
      const udid = this.udidOf.get(deviceId);
      this.udidOf.delete(deviceId);
      const entry = udid ? this.entries.get(udid) : undefined;
      // A reboot detaches the device and attaches it again under a new DeviceID: keep it, Offline, meanwhile.
      if (entry && entry.deviceId === deviceId) {
        if (entry.readiness === 'Offline' && entry.detail === 'Rebooting') return this.detachForReboot(entry);
        this.remove(entry.udid);
      }
    } else if (message.MessageType === 'Paired') {
      const udid = this.udidOf.get(deviceId);
      const entry = udid ? this.entries.get(udid) : undefined;
      if (entry && entry.readiness === 'Unauthorized') void this.connect(entry);
    }
  }

  private detachForReboot(entry: Entry): void {
    entry.generation++;
    this.stopLog(entry);
    entry.link = undefined;
  }

  /** Stops following the syslog; the metrics streams fed from it end (the log job opens a new one when Ready). */
  private stopLog(entry: Entry): void {
    entry.stopLog?.();
    entry.stopLog = undefined;
    const followers = [...entry.logFollowers];
    entry.logFollowers.clear();
    for (const follower of followers) follower.end();
  }

  private remove(udid: string): void {
    const entry = this.entries.get(udid);
    if (!entry) return;
    entry.generation++;
    this.stopLog(entry);
    this.entries.delete(udid);
    this.emit(() => this.listener?.deviceRemoved(udid));
  }

  /** Pair record -> lockdown facts -> installed apps -> Ready; Unauthorized when this host is not paired. */
  private async connect(entry: Entry): Promise<void> {
    const generation = ++entry.generation;
    const current = () => !this.stopped && entry.generation === generation && this.entries.get(entry.udid) === entry;
    this.setReadiness(entry, 'Booting', 'Connecting to lockdownd');
    try {
      const record = await this.usbmux.readPairRecord(entry.udid);
      const pair = record && pairRecordOf(record);
      if (!current()) return;
      if (!pair) {
        return this.setReadiness(entry, 'Unauthorized',
          'This host is not paired with the device: unlock it, tap Trust on "Trust This Computer?" and pair it (idevicepair pair)');
      }
      const link: DeviceLink = { usbmux: this.usbmux, deviceId: entry.deviceId, pair, timeoutMs: this.timeoutMs };
      // One lockdown session for the facts and the service start: TLS handshakes dominate the time to Ready.
      const { facts, apps } = await withLockdown(link, async (session) => ({
        facts: await this.readFacts(entry.udid, session), apps: await session.startService('com.apple.mobile.installation_proxy'),
      }));
      const packages = await withPlistService(link, apps, this.timeoutMs, browseApps);
      if (!current()) return;
      Object.assign(entry, { link, facts, packages });
      this.followLog(entry, generation);
      this.setReadiness(entry, 'Ready', undefined);
    } catch (err) {
      if (!current()) return;
      this.logger.warn({ err, udid: entry.udid }, 'connecting to the iOS device failed');
      const code = err instanceof DeviceCommandError ? err.code : undefined;
      this.setReadiness(entry, code === 'DEVICE_NOT_PAIRED' ? 'Unauthorized' : 'Offline',
        `The device did not answer lockdown requests: ${(err as Error).message}`);
    }
  }

  private async readFacts(udid: string, session: LockdownSession): Promise<IosFacts> {
    return factsFromLockdown(udid,
      await session.getValues(), await session.getValues('com.apple.mobile.battery'), await session.getValues('com.apple.disk_usage'));
  }

  private followLog(entry: Entry, generation: number): void {
    this.stopLog(entry);
    if (!entry.link) return;
    const stream = followSyslog(entry.link, {
      line: (text) => {
        entry.log.push(text);
        for (const follower of entry.logFollowers) follower.line(text);
      },
      end: (err) => {
        if (entry.generation !== generation) return;
        if (err) this.logger.debug({ err, udid: entry.udid }, 'syslog ended');
        const followers = [...entry.logFollowers];
        entry.logFollowers.clear();
        for (const follower of followers) follower.end(err);
      },
    });
    entry.stopLog = () => stream.stop();
  }

  private screenOptions(id: string): IosScreenOptions {
    const { entry, link } = this.ready(id);
    return {
      udid: id, link, timeoutMs: this.timeoutMs, logger: this.logger.child({ component: 'screen' }),
      connect: (port) => this.usbmux.connect(entry.deviceId, port),
    };
  }

  /** The device's link; DEVICE_NOT_CONNECTED / DEVICE_NOT_READY when it cannot take commands. */
  private ready(id: string): { entry: Entry; link: DeviceLink } {
    const entry = this.entries.get(id);
    if (!entry) throw new DeviceCommandError(`Device ${id} is not connected to this gateway`, 'DEVICE_NOT_CONNECTED');
    if (entry.readiness !== 'Ready' || !entry.link) {
      throw new DeviceCommandError(`Device ${id} is not ready (${entry.readiness}${entry.detail ? `: ${entry.detail}` : ''})`, 'DEVICE_NOT_READY');
    }
    return { entry, link: entry.link };
  }

  async install(id: string, appPath: string, options?: InstallOptions): Promise<DeviceState> {
    const { link } = this.ready(id);
    if (options?.force && options.packageId) await this.uninstall(id, options.packageId).catch(() => undefined);
    const staged = `PublicStaging/${path.basename(appPath)}`;
    const afc = new AfcClient(await openServiceSocket(link, 'com.apple.afc') as net.Socket);
    try {
      await afc.makeDirectory('PublicStaging');
      await afc.upload(appPath, staged);
    } finally {
      await afc.close();
    }
    await withPlistService(link, 'com.apple.mobile.installation_proxy', 5 * 60_000, (connection) =>
      installPackage(connection, staged, (percent) => {
        this.logger.debug({ udid: id, percent }, 'install progress');
        options?.onProgress?.(Math.min(99, Math.max(0, Math.floor(percent))));
      }));
    return this.readPackages(id);
  }

  async uninstall(id: string, packageId: string): Promise<DeviceState> {
    const { link } = this.ready(id);
    await withPlistService(link, 'com.apple.mobile.installation_proxy', 60_000, (connection) => uninstallApp(connection, packageId));
    return this.readPackages(id);
  }

  async readPackages(id: string): Promise<DeviceState> {
    const { entry, link } = this.ready(id);
    entry.packages = await withPlistService(link, 'com.apple.mobile.installation_proxy', this.timeoutMs, browseApps);
    return this.stateOf(entry);
  }

  async launch(id: string): Promise<string> {
    this.ready(id);
    throw new DeviceCommandError(`${LAUNCH_NEEDS}.`, 'DEVELOPER_SERVICES_UNAVAILABLE');
  }

  /** diagnostics_relay Restart; the device is Offline (Rebooting) until it attaches again and answers. */
  async reboot(id: string): Promise<void> {
    const { entry, link } = this.ready(id);
    await withPlistService(link, 'com.apple.mobile.diagnostics_relay', this.timeoutMs, async (connection) => {
      const answer = await connection.request({ Request: 'Restart', WaitForDisconnect: true });
      if (answer.Status !== 'Success') throw new DeviceCommandError(`The device refused to restart (${String(answer.Status)})`, 'REBOOT_FAILED');
      connection.send({ Request: 'Goodbye' });
    });
    entry.generation++;
    this.setReadiness(entry, 'Offline', 'Rebooting');
  }

  async readLog(id: string, maxLines: number): Promise<string> {
    return this.ready(id).entry.log.tail(maxLines);
  }

  async readBattery(id: string): Promise<BatteryReading | undefined> {
    try {
      const battery = await withLockdown(this.ready(id).link, (session) => session.getValues('com.apple.mobile.battery'));
      if (typeof battery.BatteryCurrentCapacity !== 'number') return undefined;
      return { percent: battery.BatteryCurrentCapacity, status: batteryStatusOf(battery) };
    } catch {
      return undefined;
    }
  }

  /** The device's USB port path (`1-1.4.2`) from its LocationID, where the host lists it in sysfs. */
  async usbLocation(id: string): Promise<string | undefined> {
    const locationId = this.entries.get(id)?.locationId;
    return locationId === undefined ? undefined : usbLocationOfLocationId(locationId, this.usbSysfsDir);
  }

  private setReadiness(entry: Entry, readiness: DeviceReadiness, detail: string | undefined): void {
    entry.readiness = readiness;
    entry.detail = detail;
    this.emit(() => this.listener?.deviceChanged(this.stateOf(entry)));
  }

  private stateOf(entry: Entry): DeviceState {
    const state: DeviceState = { ...(entry.facts ?? {}), vendorUniqueIdentifier: entry.udid, operatingSystem: 'iOS', readiness: entry.readiness };
    if (entry.detail) state.readinessDetail = entry.detail;
    if (entry.packages) state.packages = entry.packages;
    return state;
  }

  private emit(report: () => void): void {
    try {
      report();
    } catch (err) {
      this.logger.error({ err }, 'device listener failed');
    }
  }
}
