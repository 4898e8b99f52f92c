/**
 * The one device-driver contract every platform implements (Android over adb, iOS over usbmuxd, ...).
 * A driver tracks its devices and reports `DeviceState`s (the link's wire shape); commands take the device's
 * vendor unique identifier (adb serial / UDID) and fail with `DeviceCommandError` carrying a user-facing text.
 */
import type { DeviceState } from '@devicelab/proto';

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

export interface DeviceDriver {
  readonly operatingSystem: string;
  /** Starts tracking; every add/change/removal is reported to `listener`. Resolves once tracking runs. */
  start(listener: DeviceListener): Promise<void>;
  /** The states of every device currently known (for a full inventory snapshot). */
  snapshot(): DeviceState[];
  /** Reads the device's facts, full properties list and installed packages now. */
  describe(id: string): Promise<DeviceState>;
  install(id: string, appPath: string, options?: InstallOptions): Promise<void>;
  uninstall(id: string, packageId: string, options?: UninstallOptions): Promise<void>;
  /** Launches the app; resolves with the platform's launch output text. */
  launch(id: string, packageId: string, options?: LaunchOptions): Promise<string>;
  reboot(id: string): Promise<void>;
  /** The last `maxLines` lines of the device log as text. */
  readLog(id: string, maxLines: number): Promise<string>;
  stop(): Promise<void>;
}

/** A command failed; `message` is meant for the user (it ends up in the API's errorMessage). */
export class DeviceCommandError extends Error {
  constructor(message: string, readonly code?: string) {
    super(message);
    this.name = 'DeviceCommandError';
  }
}
