/**
 * One simulated iPhone or iPad: identity, lockdown values, host pairings, installed apps, media folder (what AFC
 * sees), system log, power (reboot) and install faults. The usbmux server reaches it through portHandler():
 * 62078 is lockdownd, other ports are services StartService opened.
 */
import { generateKeyPair } from 'node:crypto';
import { EventEmitter } from 'node:events';
import * as fs from 'node:fs';
import type * as net from 'node:net';
import * as path from 'node:path';
import { promisify } from 'node:util';
import { Battery } from '../android/system-services';
import { IosAppRegistry } from './apps';
import { LOCKDOWN_PORT, serveLockdown } from './lockdown';
import { IosBatteryState, batteryDomain, diskUsageDomain, globalDomain, publicValues } from './lockdown-values';
import type { PlistDict, PlistValue } from '@devicelab/shared';
import { IOS_SERVICES, ServiceContext } from './services';
import type { IosDeviceSpec } from './spec';
import { IosScreen } from './ios-screen';
import { IosSyslog } from './syslog';
import type { DeviceTlsIdentity } from './tls-upgrade';
import type { UsbmuxTarget } from './usbmux-server';
import { XctestScreen } from './wda/xctest-screen';
import { WDA_MJPEG_PORT, WDA_PORT, WdaServer } from './wda/wda-server';

export type IosPowerState = 'booted' | 'rebooting';

/**
 * What the device does when a host asks to pair: `trust` (someone taps Trust at once, as in a lab that set the
 * device up), `prompt` (the dialog stays up: Pair fails with PairingDialogResponsePending until trusted), `deny`.
 */
export type IosTrustPolicy = 'trust' | 'prompt' | 'deny';

interface IosPairing {
  hostId: string;
  systemBuid: string;
  deviceCertificate: Buffer;
  hostCertificate: Buffer;
  rootCertificate: Buffer;
}

/** installd failures a test can inject: error name -> [code, description]. */
export const INSTALL_ERRORS: Record<string, [number, string]> = {
  ApplicationVerificationFailed: [0xe8008015, 'Failed to verify code signature of the app : 0xe8008015 (A valid provisioning profile for this executable was not found.)'],
  MismatchedApplicationIdentifierEntitlement: [0xe8008016, 'Upgrade\'s application-identifier entitlement string does not match installed application\'s application-identifier string'],
  DeviceOSVersionTooLow: [0xe8000086, 'The system version is lower than the minimum OS version specified for the app'],
  InsufficientStorage: [0xe8000081, 'Not enough space on the device to install the app'],
};

/** How long a StartService port waits for the host's connection. */
const SERVICE_PORT_TTL_MS = 10_000;
const DOMAINS: Record<string, (d: SimIosDevice) => PlistDict> = {
  'com.apple.mobile.battery': (d) => batteryDomain(d.batteryState()),
  'com.apple.disk_usage': (d) => diskUsageDomain(d.spec, d.apps.userBytes()),
  'com.apple.disk_usage.factory': (d) => ({ ...diskUsageDomain(d.spec, d.apps.userBytes()), CameraUsage: 1_204_019_200, PhotoUsage: 2_331_312_128, MediaCacheUsage: 0 }),
  'com.apple.international': (d) => ({ Locale: 'en_US', Language: 'en', SupportedLocales: ['en_US'], TimeZone: d.spec.timezone }),
  'com.apple.mobile.wireless_lockdown': () => ({ EnableWifiConnections: false }),
  'com.apple.xcode.developerdomain': () => ({ DeveloperStatus: 'Disabled' }),
};

export class SimIosDevice extends EventEmitter implements UsbmuxTarget {
  readonly apps: IosAppRegistry;
  readonly syslog: IosSyslog;
  /** Root of what AFC sees (/private/var/mobile/Media). */
  readonly mediaRoot: string;
  /** The lab's battery model (charges on USB power, drains without; shared with the Android devices). */
  readonly battery: Battery;
  readonly productId: number;
  /** Per-step delay of installation_proxy progress messages. */
  installStepMs = 20;
  rebootMs = 3000;
  trustPolicy: IosTrustPolicy = 'trust';
  /** Whether WebDriverAgent runs (a lab starts it once per boot); when not, its ports refuse connections. */
  wdaRunning = true;
  /**
   * Whether a Developer Disk Image is mounted (its services, screenshotr among them, start only then). A lab's
   * devices are prepared for development once, so it is (a real device also unmounts it on reboot; not modelled).
   */
  developerImageMounted = true;
  /** What the display shows (screenshotr's picture). */
  readonly screen: IosScreen;
  private keys: { publicKey: string; privateKey: string } | null = null;
  private readonly pairings = new Map<string, IosPairing>();
  private readonly servicePorts = new Map<number, { service: string; hostId: string; timer: NodeJS.Timeout }>();
  private readonly connections = new Set<{ destroy(): void }>();
  private nextServicePort = 49152;
  private power: IosPowerState = 'booted';
  private rebootTimer: NodeJS.Timeout | null = null;
  private nextInstallFailure: string | undefined;
  private hostAttached = false;
  /** WebDriverAgent, running on the device as a lab starts it (xcodebuild or go-ios), on port 8100. */
  readonly wda: WdaServer;

  constructor(readonly spec: IosDeviceSpec, readonly stateDir: string, readonly locationId: number) {
    super();
    this.apps = new IosAppRegistry(spec.apps);
    this.battery = new Battery({ level: spec.battery.level, usbPowered: true });
    this.mediaRoot = path.join(stateDir, 'Media');
    this.productId = spec.deviceClass === 'iPad' ? 0x12ab : 0x12a8;
    this.syslog = new IosSyslog(() => this.spec.deviceName.replace(/\s+/g, '-'), spec.timezone);
    this.screen = new IosScreen({
      spec,
      apps: () => this.apps.list('Any').map((a) => ({ bundleId: a.bundleId, name: String(a.attributes.CFBundleDisplayName ?? a.attributes.CFBundleName ?? a.bundleId) })),
      battery: () => this.batteryState(),
    });
    this.wda = new WdaServer(new XctestScreen(spec.productType, this.apps, this.screen), () => this.spec);
  }

  get udid(): string {
    return this.spec.udid;
  }

  get powerState(): IosPowerState {
    return this.power;
  }

  async start(): Promise<void> {
    fs.mkdirSync(path.join(this.mediaRoot, 'PublicStaging'), { recursive: true });
    fs.mkdirSync(path.join(this.mediaRoot, 'DCIM'), { recursive: true });
    fs.mkdirSync(path.join(this.mediaRoot, 'Downloads'), { recursive: true });
    const keys = await promisify(generateKeyPair)('rsa', {
      modulusLength: 2048,
      publicKeyEncoding: { type: 'pkcs1', format: 'pem' },
      privateKeyEncoding: { type: 'pkcs1', format: 'pem' },
    });
    this.keys = keys;
  }

  stop(): void {
    if (this.rebootTimer) clearTimeout(this.rebootTimer);
    this.dropConnections();
    this.syslog.stop();
  }

  /** Whether a host is connected over USB (HostAttached / TrustedHostAttached). */
  setHostAttached(attached: boolean): void {
    this.hostAttached = attached;
  }

  // ---- usbmux side ----

  portHandler(port: number): ((socket: net.Socket) => void) | undefined {
    if (this.power !== 'booted') return undefined;
    if (port === LOCKDOWN_PORT) return (socket) => serveLockdown(this, socket);
    if ((port === WDA_PORT || port === WDA_MJPEG_PORT) && this.wdaRunning) return (socket) => {
      this.track(socket);
      if (port === WDA_PORT) this.wda.accept(socket);
      else this.wda.acceptMjpeg(socket);
    };
    const opened = this.servicePorts.get(port);
    const service = opened && IOS_SERVICES[opened.service];
    if (!opened || !service) return undefined;
    // A service port takes one connection, like the device's.
    clearTimeout(opened.timer);
    this.servicePorts.delete(port);
    const pairing = this.pairings.get(opened.hostId);
    return (socket) => service.serve(this.serviceContext(pairing), socket);
  }

  /** Connections to drop when the device reboots (they die with the USB link). */
  track(connection: { destroy(): void; on(event: 'close', listener: () => void): unknown }): void {
    this.connections.add(connection);
    connection.on('close', () => this.connections.delete(connection));
  }

  // ---- lockdown side ----

  lockdownValue(domain: string | undefined, key: string | undefined, inSession: boolean): PlistValue | undefined {
    let values: PlistDict;
    if (domain) {
      const read = DOMAINS[domain];
      if (!read || !inSession) return undefined;
      values = read(this);
    } else {
      const all = globalDomain(this.spec, {
        battery: this.batteryState(), appBytes: this.apps.userBytes(), devicePublicKey: Buffer.from(this.requireKeys().publicKey),
        hostAttached: this.hostAttached, trustedHostAttached: this.hostAttached && this.pairings.size > 0,
      });
      values = inSession ? all : publicValues(all);
    }
    return key === undefined ? values : values[key];
  }

  /** The battery as lockdown reports it: charging while on USB power and not full. */
  batteryState(): IosBatteryState {
    const { level, usbPowered } = this.battery.get();
    return { level, charging: usbPowered && level < 100, externalConnected: usbPowered };
  }

  rename(name: string): void {
    this.spec.deviceName = name;
  }

  /** Records the host's pairing, or the lockdown error the trust dialog gives. */
  pair(pairing: IosPairing): string | undefined {
    if (this.trustPolicy === 'prompt') return 'PairingDialogResponsePending';
    if (this.trustPolicy === 'deny') return 'UserDeniedPairing';
    this.pairings.set(pairing.hostId, pairing);
    return undefined;
  }

  pairing(hostId: string): IosPairing | undefined {
    return this.pairings.get(hostId);
  }

  unpair(hostId: string): boolean {
    return this.pairings.delete(hostId);
  }

  /** Forgets every trusted host, as Settings > Reset Location & Privacy does (hosts must pair again). */
  resetTrust(): void {
    this.pairings.clear();
  }

  tlsIdentity(pairing: IosPairing): DeviceTlsIdentity {
    return { certificate: pairing.deviceCertificate, privateKey: this.requireKeys().privateKey };
  }

  /** Opens a port for a lockdown service; undefined for a service this device does not offer. */
  startService(service: string, hostId: string): { port: number; ssl: boolean } | undefined {
    const spec = IOS_SERVICES[service];
    if (!spec || (spec.developer && !this.developerImageMounted)) return undefined;
    const port = this.nextServicePort;
    this.nextServicePort = port >= 65000 ? 49152 : port + 1;
    const timer = setTimeout(() => this.servicePorts.delete(port), SERVICE_PORT_TTL_MS);
    timer.unref();
    this.servicePorts.set(port, { service, hostId, timer });
    return { port, ssl: spec.ssl };
  }

  // ---- faults and power ----

  failNextInstall(errorName: string): void {
    if (!INSTALL_ERRORS[errorName]) throw new Error(`unknown install error ${errorName} (known: ${Object.keys(INSTALL_ERRORS).join(', ')})`);
    this.nextInstallFailure = errorName;
  }

  /** The armed install failure, consumed. */
  takeInstallFailure(): string | undefined {
    const name = this.nextInstallFailure;
    this.nextInstallFailure = undefined;
    return name;
  }

  /** Restarts: connections drop and the device leaves the bus ('power' rebooting), then returns ('power' booted). */
  reboot(): void {
    if (this.power === 'rebooting') return;
    this.power = 'rebooting';
    this.emit('power', this.power);
    this.dropConnections();
    this.rebootTimer = setTimeout(() => {
      this.rebootTimer = null;
      this.power = 'booted';
      this.emit('power', this.power);
      this.syslog.log({ process: 'kernel', pid: 0, level: 'Notice', message: `Darwin Kernel Version 23.2.0: boot completed (${this.spec.productType})` });
    }, this.rebootMs);
  }

  dropConnections(): void {
    this.wda.stop();
    for (const c of [...this.connections]) c.destroy();
    this.connections.clear();
    for (const { timer } of this.servicePorts.values()) clearTimeout(timer);
    this.servicePorts.clear();
  }

  private serviceContext(pairing: IosPairing | undefined): ServiceContext {
    return { device: this, tlsIdentity: pairing ? this.tlsIdentity(pairing) : undefined };
  }

  private requireKeys(): { publicKey: string; privateKey: string } {
    if (!this.keys) throw new Error(`iOS device ${this.udid} not started`);
    return this.keys;
  }
}
