/**
 * The platforms this gateway can drive: one line each. A registration builds its driver from the gateway's
 * configuration, or returns undefined when the host is not set up for that platform.
 */
import type { Logger } from '@devicelab/shared';
import { AndroidDriver } from './android/android-driver';
import type { DeviceDriver } from './device-driver';

/** What the platform drivers take from the gateway's configuration (read in main.ts). */
export interface PlatformConfig {
  /** adb server port (default 5037). */
  adbPort?: number;
  adbBin?: string;
}

type PlatformRegistration = (config: PlatformConfig, logger: Logger) => DeviceDriver | undefined;

const PLATFORMS: PlatformRegistration[] = [
  (config, logger) => new AndroidDriver({ adbPort: config.adbPort, adbBin: config.adbBin, logger: logger.child({ component: 'android' }) }),
];

export function createPlatformDrivers(config: PlatformConfig, logger: Logger): DeviceDriver[] {
  return PLATFORMS.map((register) => register(config, logger)).filter((driver): driver is DeviceDriver => driver !== undefined);
}
