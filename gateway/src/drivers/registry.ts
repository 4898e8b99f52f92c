/**
 * The gateway's platform drivers behind one front: each tracks its own devices; the registry learns which driver
 * reported a device and sends every command for it there, merges their snapshots, passes on the events of all,
 * and offers the optional capabilities (sampling, battery, USB location) of whichever driver owns the device.
 * It also counts the device operations that failed, by platform and error code (the adb or usbmux step that failed:
 * `DEVICE_UNREACHABLE`, `INSTALL_FAILED_...`), for the gateway's Prometheus series.
 */
import type { DeviceState } from '@devicelab/proto';
import type { BatteryReader } from '../usbhubs/battery-reader';
import type { UsbLocationSource } from '../usbhubs/usb-locations';
import {
  type ArrivingApp, DeviceCommandError, type DeviceAutomation, type DeviceDriver, type DeviceListener, type DeviceSampling, type InstallOptions,
  type LaunchOptions, type UninstallOptions,
} from './device-driver';

export class DriverRegistry {
  /** Which driver reported each device last. */
  private readonly owners = new Map<string, DeviceDriver>();
  /** Failed device operations since start, by `platform` and `code`. */
  readonly failures = new Map<string, { platform: string; code: string; count: number }>();

  constructor(readonly drivers: readonly DeviceDriver[]) {
    const platforms = drivers.map((driver) => driver.kind ?? driver.operatingSystem);
    const twice = platforms.find((kind, i) => platforms.indexOf(kind) !== i);
    if (twice) throw new Error(`Two drivers for ${twice}: the registry holds one driver per platform`);
    this.sampling = drivers.some((driver) => driver.sampling) ? {
      sample: (id) => this.counted(id, () => this.samplingOf(id).sample(id)),
      probe: (id, timeoutMs) => this.counted(id, () => this.samplingOf(id).probe(id, timeoutMs)),
      followLog: (id, follower) => this.samplingOf(id).followLog(id, follower),
    } : undefined;
  }

  /** Starts every driver; resolves once all track their devices. */
  async start(listener: DeviceListener): Promise<void> {
    await Promise.all(this.drivers.map((driver) => driver.start({
      deviceChanged: (state) => {
        this.owners.set(state.vendorUniqueIdentifier, driver);
        listener.deviceChanged(state);
      },
      deviceRemoved: (id) => {
        if (this.owners.get(id) === driver) this.owners.delete(id);
        listener.deviceRemoved(id);
      },
    })));
  }

  snapshot(): DeviceState[] {
    return this.drivers.flatMap((driver) => driver.snapshot());
  }

  /** The driver that owns the device; a clear DEVICE_NOT_CONNECTED failure when none does (commands reject with it). */
  ownerOf(id: string): DeviceDriver {
    const driver = this.owners.get(id);
    if (!driver) throw new DeviceCommandError(`Device ${id} is not connected to this gateway`, 'DEVICE_NOT_CONNECTED');
    return driver;
  }

  /** The platform (`operatingSystem`) of the driver that reported the device; undefined for a device not seen. */
  platformOf(id: string): string | undefined {
    return this.owners.get(id)?.operatingSystem;
  }

  /** The app cache file type for the device's platform. */
  appFileExtension(id: string): string {
    return this.ownerOf(id).appFileExtension;
  }

  /** Installs a binary still arriving: followed as it downloads where the driver can, else installed once complete. */
  async installArriving(id: string, app: ArrivingApp, options?: InstallOptions): Promise<DeviceState> {
    const driver = this.ownerOf(id);
    if (driver.installArriving) return this.counted(id, () => driver.installArriving!(id, app, options));
    const file = await app.complete;
    return this.counted(id, () => driver.install(id, file, options));
  }

  async uninstall(id: string, packageId: string, options?: UninstallOptions): Promise<DeviceState> {
    return this.counted(id, () => this.ownerOf(id).uninstall(id, packageId, options));
  }

  async readPackages(id: string): Promise<DeviceState> {
    return this.counted(id, () => this.ownerOf(id).readPackages(id));
  }

  async launch(id: string, packageId: string, options?: LaunchOptions): Promise<string> {
    return this.counted(id, () => this.ownerOf(id).launch(id, packageId, options));
  }

  async reboot(id: string): Promise<void> {
    return this.counted(id, () => this.ownerOf(id).reboot(id));
  }

  async readLog(id: string, maxLines: number): Promise<string> {
    return this.counted(id, () => this.ownerOf(id).readLog(id, maxLines));
  }

  /** The automation part of the driver that owns the device; undefined when it has none or the device is unknown. */
  automationOf(id: string): DeviceAutomation | undefined {
    return this.owners.get(id)?.automation;
  }

  /** The automation parts of every driver (configuration checks). */
  automations(): DeviceAutomation[] {
    return this.drivers.flatMap((driver) => (driver.automation ? [driver.automation] : []));
  }

  /** True when the device's driver can sample it (devices of other drivers are not sampled). */
  canSample(id: string): boolean {
    return this.owners.get(id)?.sampling !== undefined;
  }

  /** Sampling of whichever driver owns the device; undefined when no driver samples. */
  readonly sampling: DeviceSampling | undefined;

  readonly battery: BatteryReader = {
    read: async (id) => this.owners.get(id)?.readBattery?.(id),
  };

  readonly usbLocations: UsbLocationSource = {
    lookup: async (id) => this.owners.get(id)?.usbLocation?.(id),
  };

  async stop(): Promise<void> {
    await Promise.all(this.drivers.map((driver) => driver.stop()));
  }

  /** Runs a device operation, counting it under its platform and code when it fails with a DeviceCommandError. */
  private async counted<T>(id: string, operation: () => Promise<T>): Promise<T> {
    // Taken before the operation: a device unplugged meanwhile has no platform any more when its command fails.
    const platform = this.platformOf(id) ?? 'unknown';
    try {
      return await operation();
    } catch (err) {
      if (err instanceof DeviceCommandError) {
        const code = err.code ?? 'UNKNOWN';
        const key = `${platform}\0${code}`;
        const entry = this.failures.get(key) ?? { platform, code, count: 0 };
        entry.count += 1;
        this.failures.set(key, entry);
      }
      throw err;
    }
  }

  private samplingOf(id: string): DeviceSampling {
    const sampling = this.ownerOf(id).sampling;
    if (!sampling) throw new DeviceCommandError(`Device ${id} cannot be sampled by this gateway`, 'UNSUPPORTED_COMMAND');
    return sampling;
  }
}
