/** Wires one gateway: the Android driver (adb server), the app cache and the hub link. */
import { createLogger, type Logger } from '@devicelab/shared';
import { AppCache } from './apps/app-cache';
import { AndroidDriver } from './drivers/android/android-driver';
import type { DeviceDriver } from './drivers/device-driver';
import { HubLink, type HubLinkTls } from './link/hub-link';
import type { BackoffOptions } from './link/backoff';

export interface GatewayOptions {
  name: string;
  token: string;
  /** `host:port` of the hub's link server. */
  hubAddress: string;
  cacheDir: string;
  /** adb server port (default `ANDROID_ADB_SERVER_PORT` or 5037). */
  adbPort?: number;
  adbBin?: string;
  publicAddress: string;
  publicPort: number;
  logger?: Logger;
  tls?: HubLinkTls;
  backoff?: BackoffOptions;
  /** Replaces the Android driver (tests, other platforms). */
  driver?: DeviceDriver;
}

export interface RunningGateway {
  readonly link: HubLink;
  readonly driver: DeviceDriver;
  stop(): Promise<void>;
}

export async function startGateway(options: GatewayOptions): Promise<RunningGateway> {
  const logger = options.logger ?? createLogger('gateway');
  const driver = options.driver ?? new AndroidDriver({
    adbPort: options.adbPort, adbBin: options.adbBin, logger: logger.child({ component: 'android' }),
  });
  const link = new HubLink({
    name: options.name,
    token: options.token,
    hubAddress: options.hubAddress,
    publicAddress: options.publicAddress,
    publicPort: options.publicPort,
    driver,
    appCache: new AppCache(options.cacheDir),
    logger: logger.child({ component: 'link' }),
    tls: options.tls,
    backoff: options.backoff,
  });
  // Track devices first so the first snapshot is as complete as adb allows, then dial the hub.
  await driver.start(link);
  link.start();
  let stopping: Promise<void> | undefined;
  return {
    link,
    driver,
    stop: () => {
      stopping ??= (async () => {
        await link.stop();
        await driver.stop();
      })();
      return stopping;
    },
  };
}
