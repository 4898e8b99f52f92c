/** The iOS Simulator platform: on when the host has xcrun and the gateway offers simulators, else off (one log line). */
import type { Logger } from '@devicelab/shared';
import type { DeviceDriver } from '../device-driver';
import type { SimulatorOffer } from './simulator-offers';
import { SimulatorDriver } from './simulator-driver';

export function simulatorDriver(config: { xcrunBinary?: string; simulators?: SimulatorOffer[] }, logger: Logger): DeviceDriver | undefined {
  if (!config.xcrunBinary) {
    logger.info('iOS simulators off: this host has no xcrun (install Xcode, or set XCRUN_BINARY)');
    return undefined;
  }
  if (!config.simulators?.length) {
    logger.info({ xcrun: config.xcrunBinary }, 'iOS simulators off: DEVICELAB_SIMULATORS names none (e.g. "iPhone 15:iOS-17-5*2")');
    return undefined;
  }
  return new SimulatorDriver({ xcrun: config.xcrunBinary, offers: config.simulators, logger });
}
