/**
 * The one device-driver contract every platform implements (Android over adb, iOS over usbmuxd, ...).
 * A driver tracks its devices and reports `DeviceState`s (the link's wire shape); commands take the device's
 * vendor unique identifier (adb serial / UDID) and fail with `DeviceCommandError` carrying a user-facing text.
 */
import type { DeviceState } from '@devicelab/proto';
import type { DeviceBatteryStatus, FailureCode } from '@devicelab/shared';
import type { AutomationPorts } from '../automation/port-blocks';

export interface DeviceListener {
  /** A device appeared or its state/facts changed. The state is complete (not a patch). */
  deviceChanged(state: DeviceState): void;
  /** The device is gone from the host (unplugged / disconnected). */
  deviceRemoved(vendorUniqueIdentifier: string): void;
}

export interface InstallOptions {
  /** Uninstall (with data) first; needs `packageId`. */
  force?: boolean;
  /** The package / bundle id inside the binary, when known (required for `force`). */
  packageId?: string;
  /** Prepared for native automation (the API's nativeAutomation): see DeviceAutomation.installedForAutomation. */
  forAutomation?: boolean;
  /** Told how far the install is, in percent (0..99; the install's end is 100): bytes sent, or the device's count. */
  onProgress?: (percent: number) => void;
}

/**
 * An app binary that may still be downloading into the app cache: its size is known, its bytes can be read as they
 * arrive. A driver that streams an install can start before the download ends (a cold cache costs no extra wait).
 */
export interface ArrivingApp {
  /** The binary's size in bytes. */
  readonly size: number;
  /**
   * The bytes from the start, in pieces of at most `pieceBytes`, waiting for those not downloaded yet. The last byte
   * comes only once the whole binary is verified; a failed download or a wrong digest makes the iteration throw.
   */
  read(pieceBytes: number): AsyncIterable<Buffer>;
  /** The finished, verified file in the cache (rejects when the download fails). */
  readonly complete: Promise<string>;
}

export interface UninstallOptions {
  /** Keep the app's data and caches (Android `pm uninstall -k`). */
  keepData?: boolean;
}

export interface LaunchOptions {
  /**
   * Extra text appended to the platform's start command (Android: `am start` extras such as
   * `--es key value`). It is parsed by the device's shell, as in the original service; only the package
   * and the component are quoted by the driver.
   */
  arguments?: string;
  /** Do not wait for the launch to complete (Android: no `-W`). */
  startOnly?: boolean;
}

/** A device's battery read now. */
export interface BatteryReading {
  percent: number;
  status: DeviceBatteryStatus;
  /** Degrees Celsius, when the device reports it. */
  temperatureC?: number;
}

export interface DeviceDriver {
  readonly operatingSystem: string;
  /** Tells two drivers of one operating system apart (`iOS Simulator` beside the iOS devices); default: the OS. */
  readonly kind?: string;
  /** The file type of this platform's app binaries in the app cache (`.apk`, `.ipa`). */
  readonly appFileExtension: string;
  /** Starts tracking; every add/change/removal is reported to `listener`. Resolves once tracking runs. */
  start(listener: DeviceListener): Promise<void>;
  /** The states of every device currently known (for a full inventory snapshot). */
  snapshot(): DeviceState[];
  /**
   * Install and uninstall resolve with the device's state after the change, its installed packages read again,
   * so that whoever reports the outcome reports the new state with it (not reported to the listener).
   */
  install(id: string, appPath: string, options?: InstallOptions): Promise<DeviceState>;
  /** Installs a binary still arriving, streaming it as it downloads; drivers without this get the finished file. */
  installArriving?(id: string, app: ArrivingApp, options?: InstallOptions): Promise<DeviceState>;
  uninstall(id: string, packageId: string, options?: UninstallOptions): Promise<DeviceState>;
  /** Reads the device's installed packages now; resolves with its state (not reported to the listener). */
  readPackages(id: string): Promise<DeviceState>;
  /** Launches the app; resolves with the platform's launch output text. */
  launch(id: string, packageId: string, options?: LaunchOptions): Promise<string>;
  reboot(id: string): Promise<void>;
  /** The last `maxLines` lines of the device log as text. */
  readLog(id: string, maxLines: number): Promise<string>;
  /** Metrics sampling (spec 2.5); a driver without it is not sampled. */
  readonly sampling?: DeviceSampling;
  /** Battery care and USB telemetry read the battery through this; undefined when it cannot be read now. */
  readBattery?(id: string): Promise<BatteryReading | undefined>;
  /** The device's USB location (`1-1.4.2`) where the host shows one, to find its hub port. */
  usbLocation?(id: string): Promise<string | undefined>;
  /** What this platform's automation server (Appium) needs; a driver without it has no automation. */
  readonly automation?: DeviceAutomation;
  stop(): Promise<void>;
}

/**
 * A platform's part in its devices' automation servers: which Appium driver, the capabilities every session starts
 * with, the environment the server runs in, what has to run beside it, and what is wrong with the host.
 */
export interface DeviceAutomation {
  /** The Appium driver's name (`appium driver list`): `uiautomator2`, `xcuitest`. */
  readonly appiumDriver: string;
  /** Default capabilities of the device's server: `platformName`, `appium:automationName`, `appium:udid`, its ports. */
  capabilities(id: string, ports: AutomationPorts): Record<string, unknown>;
  /** Environment of the device's server (Android: the SDK root whose platform-tools/adb is the gateway's adb). */
  environment?(): Promise<Record<string, string>>;
  /** Starts what the server needs beside it (iOS: the WebDriverAgent forward); resolves with how to stop it. */
  prepare?(id: string, ports: AutomationPorts): Promise<() => Promise<void>>;
  /** What an install prepared for native automation does on this platform, said in the install's Result. */
  readonly installedForAutomation: string;
  /** What keeps this platform's automation from working on this host (`adb` missing), or undefined. */
  check?(): Promise<string | undefined>;
}

/** One `sample` row read from a device: spec 2.5 field names (design.md units) to values. */
export interface DeviceSample {
  /** Epoch milliseconds of the read. */
  time: number;
  /** Fields the device cannot provide are absent, never zero. */
  fields: Record<string, number>;
}

export interface LogFollower {
  /** One device log line (no line end). */
  line(text: string): void;
  /** The stream ended (device gone, stream dropped); not called after `stop()`. */
  end(error?: Error): void;
}

export interface LogStream {
  stop(): void;
}

/** The sampling capability of a driver. Every call targets a Ready device and fails with DeviceCommandError. */
export interface DeviceSampling {
  /**
   * Reads the `sample` fields now, in one round trip to the device. Loads and rates are computed against the
   * previous read of the same device, so the first read after start or reboot has totals only.
   */
  sample(id: string): Promise<DeviceSample>;
  /** A short liveness probe of the device's system services; throws when the device does not answer in time. */
  probe(id: string, timeoutMs: number): Promise<void>;
  /** Follows the device log from now on, line by line, until `stop()` or the stream ends. */
  followLog(id: string, follower: LogFollower): LogStream;
}

/**
 * A command failed; `message` is meant for the user (it ends up in the API's errorMessage), `code` (one of the
 * catalog's, `@devicelab/shared` failure-codes) is for programs: the device's own (`INSTALL_FAILED_...`) or the
 * gateway's (`DEVICE_TIMEOUT`, `DEVICE_NOT_READY`, ...). It reaches the API's Result as `errorCode`.
 */
export class DeviceCommandError extends Error {
  constructor(message: string, readonly code: FailureCode) {
    super(message);
    this.name = 'DeviceCommandError';
  }
}
