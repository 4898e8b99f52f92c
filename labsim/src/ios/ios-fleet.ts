/**
 * The iOS half of the lab world: one simulated usbmuxd and the iPhones/iPads behind it. A device is on the bus
 * (Attached in usbmux) while it is plugged in and booted; unplugging, a hub port without data and a reboot take
 * it off the bus (Detached), and it comes back with a new DeviceID, as a USB re-enumeration gives.
 */
import { execFile } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { SimIosDevice, type IosPowerState, type IosTrustPolicy } from './device';
import type { IosInstalledApp } from './apps';
import type { IosDeviceSpec } from './spec';
import { UsbmuxServer } from './usbmux-server';

export interface IosDeviceSnapshot {
  udid: string;
  name: string;
  productType: string;
  productVersion: string;
  deviceClass: string;
  serialNumber: string;
  plugged: boolean;
  /** On the usbmux bus right now (plugged and booted). */
  attached: boolean;
  power: IosPowerState;
  battery: { level: number; charging: boolean; externalConnected: boolean };
}

export interface IosBatteryUpdate {
  level?: number;
  /** USB power present (a hub port in Off mode removes it); the device charges while it is. */
  externalConnected?: boolean;
}

const MAX_SOCKET_PATH = 100;

export interface AddIosDeviceOptions {
  /** Plugged in (Attached) at once; default true. */
  plug?: boolean;
  /**
   * The USB port path the device hangs from (`1-1.4.3`): the fleet lists it in its simulated sysfs
   * (`usbSysfsDir`) with the bus and address its LocationID carries, as the Linux kernel and usbmuxd do.
   */
  usbPath?: string;
}

interface Entry {
  device: SimIosDevice;
  plugged: boolean;
}

export class IosFleet {
  readonly usbmuxd: UsbmuxServer;
  private readonly entries = new Map<string, Entry>();
  private nextLocation = 1;
  /** The simulated `/sys/bus/usb/devices` of this host (devices added with a `usbPath`). */
  readonly usbSysfsDir: string;

  /** Set when the socket had to move to a short tmp path; removed on stop(). */
  private readonly socketDir: string | null = null;

  constructor(private readonly root: string) {
    let socketPath = path.join(root, 'usbmuxd.sock');
    // A unix socket path has at most 107 bytes; a deep state dir gets its socket under the tmp dir instead.
    if (Buffer.byteLength(socketPath) > MAX_SOCKET_PATH) {
      this.socketDir = fs.mkdtempSync(path.join(os.tmpdir(), 'labsim-usbmuxd-'));
      socketPath = path.join(this.socketDir, 'usbmuxd.sock');
    }
    this.usbmuxd = new UsbmuxServer(socketPath);
    this.usbSysfsDir = path.join(root, 'sys', 'bus', 'usb', 'devices');
  }

  /** Starts usbmuxd on its unix socket, and on 127.0.0.1:tcpPort when given (0 = any free port). */
  start(tcpPort?: number): Promise<void> {
    return this.usbmuxd.start(tcpPort);
  }

  async stop(): Promise<void> {
    for (const { device } of this.entries.values()) {
      device.removeAllListeners('power');
      device.stop();
    }
    this.entries.clear();
    await this.usbmuxd.stop();
    if (this.socketDir) fs.rmSync(this.socketDir, { recursive: true, force: true });
  }

  /** For libusbmuxd (Debian's tools) and appium-ios-device. */
  env(): Record<string, string> {
    return { USBMUXD_SOCKET_ADDRESS: `UNIX:${this.usbmuxd.socketPath}` };
  }

  async addDevice(spec: IosDeviceSpec, opts: AddIosDeviceOptions = {}): Promise<SimIosDevice> {
    if (this.entries.has(spec.udid)) throw new Error(`device ${spec.udid} already exists`);
    const bus = opts.usbPath ? Number(/^(\d+)-\d+(\.\d+)*$/.exec(opts.usbPath)?.[1]) : 1;
    if (!Number.isInteger(bus)) throw new Error(`invalid USB path ${JSON.stringify(opts.usbPath)} (expected bus-port.port..., e.g. 1-1.4.3)`);
    const address = this.nextLocation++;
    if (opts.usbPath) this.listInSysfs(opts.usbPath, bus, address, spec);
    // Linux usbmuxd reports (bus << 16) | address.
    const device = new SimIosDevice(spec, path.join(this.root, 'ios', spec.udid), (bus << 16) | address);
    await device.start();
    const entry: Entry = { device, plugged: false };
    this.entries.set(spec.udid, entry);
    device.on('power', () => this.sync(entry));
    if (opts.plug !== false) this.plug(spec.udid);
    return device;
  }

  has(udid: string): boolean {
    return this.entries.has(udid);
  }

  device(udid: string): SimIosDevice {
    const entry = this.entries.get(udid);
    if (!entry) throw new Error(`unknown iOS device ${udid}`);
    return entry.device;
  }

  devices(): IosDeviceSnapshot[] {
    return [...this.entries.values()].map((e) => this.snapshot(e));
  }

  snapshotOf(udid: string): IosDeviceSnapshot {
    return this.snapshot(this.entry(udid));
  }

  plug(udid: string): void {
    const entry = this.entry(udid);
    entry.plugged = true;
    this.sync(entry);
  }

  unplug(udid: string): void {
    const entry = this.entry(udid);
    entry.plugged = false;
    this.sync(entry);
  }

  /** Restarts the device as diagnostics_relay Restart does; `rebootMs` is how long it stays away. */
  reboot(udid: string, rebootMs?: number): void {
    const device = this.device(udid);
    if (rebootMs !== undefined) device.rebootMs = rebootMs;
    device.reboot();
  }

  /** How the device answers a host's Pair (the trust dialog). */
  setTrustPolicy(udid: string, policy: IosTrustPolicy): void {
    this.device(udid).trustPolicy = policy;
  }

  /**
   * Pairs the host with the device the way an operator does, with Debian's `idevicepair pair` against this
   * usbmuxd, so clients that only read pair records (appium-ios-device) find one. Asynchronous on purpose: the
   * simulator runs in this process, so a synchronous child would wait for answers this process cannot give.
   */
  async pairWithIdevicepair(udid: string): Promise<void> {
    const { code, output } = await new Promise<{ code: number; output: string }>((resolve) => {
      execFile('idevicepair', ['-u', udid, 'pair'], { env: { ...process.env, ...this.env() }, timeout: 30_000 }, (err, stdout, stderr) => {
        resolve({ code: err ? 1 : 0, output: `${stdout}${stderr}`.trim() });
      });
    });
    if (code !== 0) throw new Error(`idevicepair pair failed for ${udid}: ${output}`);
  }

  failNextInstall(udid: string, errorName: string): void {
    this.device(udid).failNextInstall(errorName);
  }

  setBattery(udid: string, update: IosBatteryUpdate): void {
    this.device(udid).battery.set({
      ...(update.level !== undefined ? { level: update.level } : {}),
      ...(update.externalConnected !== undefined ? { usbPowered: update.externalConnected } : {}),
    });
  }

  installedApps(udid: string, type: 'User' | 'System' | 'Any' = 'User'): IosInstalledApp[] {
    return this.device(udid).apps.list(type);
  }

  private sync(entry: Entry): void {
    const { device } = entry;
    const onBus = entry.plugged && device.powerState === 'booted';
    device.setHostAttached(onBus);
    if (onBus) {
      this.usbmuxd.attach(device);
    } else {
      this.usbmuxd.detach(device);
      device.dropConnections();
    }
  }

  /** What the kernel shows of a USB device: bus number, address, Apple's vendor id, the serial (UDID without dashes). */
  private listInSysfs(usbPath: string, bus: number, address: number, spec: IosDeviceSpec): void {
    const dir = path.join(this.usbSysfsDir, usbPath);
    fs.mkdirSync(dir, { recursive: true });
    const files: Record<string, string> = {
      busnum: String(bus), devnum: String(address), idVendor: '05ac', idProduct: spec.deviceClass === 'iPad' ? '12ab' : '12a8',
      serial: spec.udid.replace(/-/g, ''), product: spec.deviceClass, manufacturer: 'Apple Inc.',
    };
    for (const [name, value] of Object.entries(files)) fs.writeFileSync(path.join(dir, name), `${value}\n`);
  }

  private entry(udid: string): Entry {
    const entry = this.entries.get(udid);
    if (!entry) throw new Error(`unknown iOS device ${udid}`);
    return entry;
  }

  private snapshot(e: Entry): IosDeviceSnapshot {
    const d = e.device;
    return {
      udid: d.udid, name: d.spec.deviceName, productType: d.spec.productType, productVersion: d.spec.productVersion,
      deviceClass: d.spec.deviceClass, serialNumber: d.spec.serialNumber, plugged: e.plugged, attached: this.usbmuxd.isAttached(d),
      power: d.powerState, battery: d.batteryState(),
    };
  }
}
