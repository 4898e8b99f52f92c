/**
 * LabWorld: the single world model of the simulated lab. Owns the simulated
 * Android devices and a private adb server (own port, own HOME), the simulated
 * iOS devices behind a private usbmuxd (ios/ios-fleet.ts), and turns lab actions
 * (plug, unplug, reboot, faults, hub port modes) into what real hardware would do.
 * Device ids are Android hardware serials (or adb serials) and iOS UDIDs.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import type { AuthMode, DropFault } from './adbd/device-port';
import type { LaunchRecord } from './android/activity';
import { DeviceTimings, PowerState, SimAndroidDevice } from './android/device';
import type { InstalledPackage } from './android/packages';
import type { AndroidDeviceSpec } from './android/spec';
import type { BatteryState } from './android/system-services';
import { applyPortMode } from './cambrionix/hub-attachments';
import { SimCambrionixHub, type SimCambrionixHubOptions } from './cambrionix/sim-hub';
import { type AddIosDeviceOptions, IosFleet, type IosDeviceSnapshot } from './ios/ios-fleet';
import type { SimIosDevice } from './ios/device';
import type { IosDeviceSpec } from './ios/spec';
import { AdbCli } from './util/adb-cli';
import { ephemeralPort, isPortFree, randomFreePort } from './util/ports';

export interface LabWorldOptions {
  /** Port of the private adb server; default: a random free port in 15037-16999. */
  adbServerPort?: number;
  /** adb binary; default `adb` from PATH (Debian: /usr/bin/adb). */
  adbPath?: string;
  /** Root for device state dirs and the private HOME; default: a fresh tmp dir removed on stop(). */
  stateDir?: string;
  /** Default device timings (overridable per reboot). */
  timings?: Partial<DeviceTimings>;
  /** Also serve the simulated usbmuxd on 127.0.0.1:<port> (0 = any free port); it always listens on a unix socket. */
  usbmuxdTcpPort?: number;
  /**
   * How long after a hub port loses its data line the host notices the device gone (a real USB detach takes some
   * 100-500 ms to reach adb and usbmuxd); default 0.
   */
  usbDetachMs?: number;
}

export interface AddDeviceOptions {
  /** Run `adb connect` right away (default true). */
  plug?: boolean;
  auth?: AuthMode;
  /** Fixed TCP port for the device's adbd; default: a free ephemeral port. */
  port?: number;
}

export interface DeviceSnapshot {
  /** Hardware serial (ro.serialno). */
  serial: string;
  /** Serial the adb server uses for this TCP device. */
  adbSerial: string;
  port: number;
  model: string;
  manufacturer: string;
  androidVersion: string;
  sdk: number;
  formFactor: string;
  plugged: boolean;
  power: PowerState;
  bootCompleted: boolean;
  auth: AuthMode;
  battery: Required<BatteryState>;
}

interface Entry {
  device: SimAndroidDevice;
  plugged: boolean;
  /** Serialises background adb calls for this device (disconnect must precede the reconnect). */
  adbOps: Promise<unknown>;
}

export class LabWorld {
  private readonly entries = new Map<string, Entry>();
  private adb: AdbCli | null = null;
  private root = '';
  private ownsRoot = false;
  private readonly timings: DeviceTimings;
  private readonly usbDetachMs: number;
  private readonly hubs: SimCambrionixHub[] = [];
  private ios: IosFleet | null = null;

  constructor(private readonly options: LabWorldOptions = {}) {
    this.timings = { rebootMs: 3000, bootCompleteMs: 2000, ...options.timings };
    this.usbDetachMs = options.usbDetachMs ?? 0;
  }

  get adbServerPort(): number {
    if (!this.adb) throw new Error('LabWorld not started');
    return this.adb.serverPort;
  }

  /** Env for code under test to reach this lab: the adb server (adbkit, adb CLI) and usbmuxd (USBMUXD_SOCKET_ADDRESS). */
  env(): Record<string, string> {
    if (!this.adb) throw new Error('LabWorld not started');
    return { ...this.adb.env(), ...this.iosFleet.env() };
  }

  /** The simulated iOS devices and their usbmuxd. */
  get iosFleet(): IosFleet {
    if (!this.ios) throw new Error('LabWorld not started');
    return this.ios;
  }

  /** The adb CLI bound to this world's server (handy in tests). */
  get adbCli(): AdbCli {
    if (!this.adb) throw new Error('LabWorld not started');
    return this.adb;
  }

  async start(): Promise<void> {
    if (this.adb) return;
    this.ownsRoot = !this.options.stateDir;
    this.root = this.options.stateDir ?? fs.mkdtempSync(path.join(os.tmpdir(), 'labsim-'));
    const home = path.join(this.root, 'home');
    fs.mkdirSync(path.join(home, '.android'), { recursive: true });
    const port = this.options.adbServerPort ?? (await randomFreePort(15037, 16999));
    if (this.options.adbServerPort !== undefined && !(await isPortFree(port))) {
      throw new Error(`adb server port ${port} is already in use`);
    }
    this.adb = new AdbCli(this.options.adbPath ?? 'adb', port, home);
    const r = await this.adb.run(['start-server']);
    if (r.code !== 0) throw new Error(`adb start-server failed: ${r.stderr || r.stdout}`);
    this.ios = new IosFleet(this.root);
    await this.ios.start(this.options.usbmuxdTcpPort);
  }

  async stop(): Promise<void> {
    const adb = this.adb;
    // Detach first: a queued background `adb connect` after kill-server would spawn a new, orphaned server.
    this.adb = null;
    await Promise.all([...this.entries.values()].map((e) => e.adbOps.catch(() => undefined)));
    for (const { device } of this.entries.values()) {
      device.removeAllListeners('state');
      await device.stop();
    }
    this.entries.clear();
    for (const hub of this.hubs.splice(0)) await hub.stop();
    await this.ios?.stop();
    this.ios = null;
    if (adb) await adb.run(['kill-server']);
    if (this.ownsRoot && this.root) fs.rmSync(this.root, { recursive: true, force: true });
  }

  async addAndroidDevice(spec: AndroidDeviceSpec, opts: AddDeviceOptions = {}): Promise<DeviceSnapshot> {
    if (!this.adb) throw new Error('LabWorld not started');
    if (this.entries.has(spec.serial)) throw new Error(`device ${spec.serial} already exists`);
    const port = opts.port ?? (await ephemeralPort());
    const device = new SimAndroidDevice(spec, path.join(this.root, 'devices', spec.serial), port, this.timings);
    if (opts.auth) device.setAuthMode(opts.auth);
    await device.start();
    const entry: Entry = { device, plugged: false, adbOps: Promise.resolve() };
    this.entries.set(spec.serial, entry);
    // A rebooting USB device disappears from the bus and re-enumerates when adbd starts.
    // Mirror that over TCP (disconnect, then connect) instead of waiting for adb's retry timer (1-8 s).
    device.on('state', (state: PowerState) => {
      const adb = this.adb;
      if (!entry.plugged || !adb) return;
      const args = state === 'rebooting' ? ['disconnect', device.adbSerial] : state === 'booting' ? ['connect', device.adbSerial] : null;
      if (args) entry.adbOps = entry.adbOps.then(() => adb.run(args));
    });
    if (opts.plug !== false) await this.plug(spec.serial);
    return this.snapshot(entry);
  }

  /** Adds an iPhone/iPad behind the world's usbmuxd, plugged in (Attached) unless `plug: false`. */
  async addIosDevice(spec: IosDeviceSpec, opts: AddIosDeviceOptions = {}): Promise<IosDeviceSnapshot> {
    if (this.entries.has(spec.udid)) throw new Error(`device ${spec.udid} already exists`);
    await this.iosFleet.addDevice(spec, opts);
    return this.iosFleet.snapshotOf(spec.udid);
  }

  iosDevices(): IosDeviceSnapshot[] {
    return this.iosFleet.devices();
  }

  /** The live simulated iOS device. */
  iosDevice(udid: string): SimIosDevice {
    return this.iosFleet.device(udid);
  }

  devices(): DeviceSnapshot[] {
    return [...this.entries.values()].map((e) => this.snapshot(e));
  }

  /** The live simulated device (by hardware serial or adb serial). */
  device(serial: string): SimAndroidDevice {
    return this.entry(serial).device;
  }

  /**
   * USB plug-in equivalent. Android: `adb connect`, then wait until adb lists the device; returns the adb state.
   * iOS: usbmuxd reports it Attached; returns "attached" (or "rebooting" until it is back).
   */
  async plug(serial: string, timeoutMs = 10_000): Promise<string> {
    if (this.isIos(serial)) {
      this.iosFleet.plug(serial);
      return this.iosFleet.snapshotOf(serial).attached ? 'attached' : 'rebooting';
    }
    const entry = this.entry(serial);
    entry.plugged = true;
    await this.adbCli.run(['connect', entry.device.adbSerial]);
    return this.waitForState(serial, ['device', 'unauthorized'], timeoutMs);
  }

  /** USB unplug equivalent: `adb disconnect` (adb emits a track-devices removal). */
  async unplug(serial: string): Promise<void> {
    if (this.isIos(serial)) return this.iosFleet.unplug(serial);
    const entry = this.entry(serial);
    entry.plugged = false;
    await this.adbCli.run(['disconnect', entry.device.adbSerial]);
  }

  /** Reboots the device as `adb reboot` would; resolves when the reboot has started. */
  async reboot(serial: string, timings: Partial<DeviceTimings> = {}): Promise<void> {
    if (this.isIos(serial)) return this.iosFleet.reboot(serial, timings.rebootMs);
    const device = this.device(serial);
    Object.assign(device.timings, timings);
    device.reboot('');
  }

  /** Current adb state of a device ("device", "offline", "unauthorized", or "absent"). */
  async adbState(serial: string): Promise<string> {
    const list = await this.adbCli.devices();
    return list.get(this.device(serial).adbSerial)?.state ?? 'absent';
  }

  async waitForState(serial: string, states: string[], timeoutMs = 10_000): Promise<string> {
    const deadline = Date.now() + timeoutMs;
    let state = 'absent';
    while (Date.now() < deadline) {
      state = await this.adbState(serial);
      if (states.includes(state)) return state;
      await new Promise((r) => setTimeout(r, 150));
    }
    throw new Error(`device ${serial} did not reach ${states.join('/')} (last state: ${state})`);
  }

  /** Android: a `Failure [INSTALL_FAILED_<code>]` code; iOS: an installd error name (ApplicationVerificationFailed ...). */
  async failNextInstall(serial: string, code: string): Promise<void> {
    if (this.isIos(serial)) return this.iosFleet.failNextInstall(serial, code);
    this.device(serial).pm.failNextInstall(code);
  }

  async setInstallDelay(serial: string, ms: number): Promise<void> {
    this.device(serial).pm.installDelayMs = ms;
  }

  /**
   * Arms a connection drop: at the next stream open, or after N more bytes.
   * The current transport is reset so the fault applies to the one adb opens next.
   */
  async dropConnection(serial: string, fault: DropFault): Promise<void> {
    const device = this.device(serial);
    device.armDropFault(fault);
    device.dropConnections();
  }

  /** Unauthorized: AUTH is never accepted; authorized again: accepted after the host sends its key. */
  async setUnauthorized(serial: string, unauthorized: boolean): Promise<string> {
    const entry = this.entry(serial);
    entry.device.setAuthMode(unauthorized ? 'reject' : 'accept');
    entry.device.dropConnections();
    if (!entry.plugged) return 'absent';
    // Re-plug so adb runs the handshake again now instead of on its retry timer.
    await this.adbCli.run(['disconnect', entry.device.adbSerial]);
    return this.plug(serial);
  }

  async setBattery(serial: string, state: Partial<BatteryState>): Promise<void> {
    if (this.isIos(serial)) {
      return this.iosFleet.setBattery(serial, {
        ...(state.level !== undefined ? { level: state.level } : {}),
        ...(state.usbPowered !== undefined ? { externalConnected: state.usbPowered } : {}),
      });
    }
    this.device(serial).setBattery(state);
  }

  async amStartLog(serial: string): Promise<LaunchRecord[]> {
    return this.device(serial).launchLog();
  }

  async installedPackages(serial: string, opts: { thirdPartyOnly?: boolean } = {}): Promise<InstalledPackage[]> {
    return this.device(serial).installedPackages().filter((p) => !opts.thirdPartyOnly || !p.system);
  }

  /**
   * A simulated Cambrionix hub on a pseudo-terminal (`options.path`), with `attachments` (port -> device
   * serial) wired so that a port's mode plugs, unplugs and powers the device behind it.
   */
  async addCambrionixHub(options: SimCambrionixHubOptions, attachments: Record<number, string> = {}): Promise<SimCambrionixHub> {
    const hub = new SimCambrionixHub(options);
    for (const [port, serial] of Object.entries(attachments)) {
      const batteryLevel = this.isIos(serial) ? () => this.iosDevice(serial).batteryState().level : () => this.device(serial).battery.get().level;
      hub.model.connect(Number(port), { attached: () => hub.model.mode(Number(port)) !== 'o', batteryLevel });
    }
    hub.model.onModeChange = (port, mode) => {
      const serial = attachments[port];
      if (!serial) return;
      applyPortMode({
        setUsbPower: (s, powered) => void this.setBattery(s, { usbPowered: powered }),
        setDataLink: (s, connected) => {
          // The host notices the detach usbDetachMs after the switch (at once without it).
          const detached = connected || this.usbDetachMs === 0 ? undefined : delay(this.usbDetachMs);
          if (this.isIos(s)) {
            if (connected) this.iosFleet.plug(s);
            else if (detached) void detached.then(() => this.iosFleet.unplug(s));
            else this.iosFleet.unplug(s);
            return;
          }
          const entry = this.entry(s);
          entry.adbOps = entry.adbOps.then(async () => {
            if (connected) return this.plug(s);
            await detached;
            return this.unplug(s);
          }).catch(() => undefined);
        },
      }, serial, mode);
    };
    await hub.start();
    this.hubs.push(hub);
    return hub;
  }

  private isIos(id: string): boolean {
    return this.ios !== null && this.ios.has(id);
  }

  private entry(serial: string): Entry {
    const direct = this.entries.get(serial);
    if (direct) return direct;
    for (const e of this.entries.values()) if (e.device.adbSerial === serial) return e;
    throw new Error(`unknown device ${serial}`);
  }

  private snapshot(e: Entry): DeviceSnapshot {
    const d = e.device;
    return {
      serial: d.spec.serial, adbSerial: d.adbSerial, port: d.port, model: d.spec.model, manufacturer: d.spec.manufacturer,
      androidVersion: d.spec.androidVersion, sdk: d.spec.sdk, formFactor: d.spec.formFactor, plugged: e.plugged,
      power: d.powerState, bootCompleted: d.isBootCompleted, auth: d.authMode(), battery: d.battery.get(),
    };
  }
}
