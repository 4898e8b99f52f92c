/**
 * The platforms this gateway can drive: one line each. A registration builds its driver from the gateway's
 * configuration, or returns undefined when the host is not set up for that platform.
 */
import type { Logger } from '@devicelab/shared';
import { AndroidDriver } from './android/android-driver';
import type { DeviceDriver } from './device-driver';
import { IosDriver } from './ios/ios-driver';
import { simulatorDriver } from './ios-simulator';
import type { SimulatorOffer } from './ios-simulator/simulator-offers';

/** What the platform drivers take from the gateway's configuration (read in main.ts). */
export interface PlatformConfig {
  /** adb server port (default 5037). */
  adbPort?: number;
  adbBin?: string;
  /** usbmuxd address (`UNIX:/path` or `host:port`); the iOS driver runs only when set. */
  usbmuxdAddress?: string;
  /** Where the host lists USB devices (default `/sys/bus/usb/devices`): iOS USB locations are read there. */
  usbSysfsDir?: string;
  /** The xcrun executable (full path) when the host has one; iOS simulators run only with it and `simulators`. */
  xcrunBinary?: string;
  /** The iOS simulators this gateway offers (DEVICELAB_SIMULATORS). */
  simulators?: SimulatorOffer[];
}

type PlatformRegistration = (config: PlatformConfig, logger: Logger) => DeviceDriver | undefined;

const PLATFORMS: PlatformRegistration[] = [
  (config, logger) => new AndroidDriver({ adbPort: config.adbPort, adbBin: config.adbBin, logger: logger.child({ component: 'android' }) }),
  (config, logger) => (config.usbmuxdAddress
    ? new IosDriver({ usbmuxdAddress: config.usbmuxdAddress, usbSysfsDir: config.usbSysfsDir, logger: logger.child({ component: 'ios' }) })
    : undefined),
  (config, logger) => simulatorDriver(config, logger.child({ component: 'ios-simulator' })),
];

export function createPlatformDrivers(config: PlatformConfig, logger: Logger): DeviceDriver[] {
  return PLATFORMS.map((register) => register(config, logger)).filter((driver): driver is DeviceDriver => driver !== undefined);
}
