/** Wires one gateway: the Android driver (adb server), the app cache, the hub link and the metrics samplers. */
import { createLogger, type Logger } from '@devicelab/shared';
import { AppCache } from './apps/app-cache';
import { AndroidDriver } from './drivers/android/android-driver';
import type { DeviceDriver, DeviceListener } from './drivers/device-driver';
import { HubLink, type HubLinkTls } from './link/hub-link';
import type { BackoffOptions } from './link/backoff';
import { MetricsUplink, type MetricsUplinkOptions } from './link/metrics-uplink';
import { DeviceSamplers } from './samplers/device-samplers';
import { DEFAULT_SAMPLING, type SamplingOptions } from './samplers/sampling-options';
import { AndroidBatteryReader } from './usbhubs/battery-reader';
import { withUsbPorts } from './usbhubs/port-mapped-driver';
import { AdbUsbLocations } from './usbhubs/usb-locations';
import { createUsbHubs, type UsbHubs } from './usbhubs/usb-hubs';
import type { UsbHubsConfig } from './usbhubs/usb-hubs-config';

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
  /** Metrics intervals per table (0 turns a table off); `false` turns device sampling off entirely. */
  sampling?: Partial<SamplingOptions> | false;
  /** Batching, backpressure and buffer bound of the metrics uplink. */
  metricsUplink?: Partial<MetricsUplinkOptions>;
  /** USB hubs of this host (Cambrionix, uhubctl), port mapping, battery care, recovery, telemetry. */
  usbHubs?: UsbHubsConfig;
}

export interface RunningGateway {
  readonly link: HubLink;
  readonly driver: DeviceDriver;
  /** Where every metric row goes (device samplers, USB hub telemetry). */
  readonly metrics: MetricsUplink;
  /** Undefined when sampling is off or the driver cannot sample. */
  readonly samplers?: DeviceSamplers;
  /** Undefined when no USB hubs are configured. */
  readonly usbHubs?: UsbHubs;
  stop(): Promise<void>;
}

export async function startGateway(options: GatewayOptions): Promise<RunningGateway> {
  const logger = options.logger ?? createLogger('gateway');
  const deviceDriver = options.driver ?? new AndroidDriver({
    adbPort: options.adbPort, adbBin: options.adbBin, logger: logger.child({ component: 'android' }),
  });
  const metrics = new MetricsUplink(options.metricsUplink);
  const usbHubs = options.usbHubs ? createUsbHubs(options.usbHubs, {
    logger: logger.child({ component: 'usbhubs' }), metrics,
    battery: new AndroidBatteryReader({ adbPort: options.adbPort, adbBin: options.adbBin }),
  }) : undefined;
  // Device states carry the hub port the device hangs from.
  const driver = usbHubs
    ? withUsbPorts(deviceDriver, usbHubs.service, new AdbUsbLocations({ adbPort: options.adbPort, adbBin: options.adbBin }))
    : deviceDriver;
  const samplers = options.sampling !== false && driver.sampling
    ? new DeviceSamplers(driver.sampling, metrics, { ...DEFAULT_SAMPLING, ...options.sampling }, logger.child({ component: 'samplers' }))
    : undefined;
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
    metrics,
    usbHubs: usbHubs?.service,
  });
  if (samplers) link.on('metricsSettings', (settings) => samplers.applySettings(settings));
  // Device changes go to the hub and to the samplers (which sample Ready devices only).
  const listener: DeviceListener = samplers ? {
    deviceChanged: (state) => {
      link.deviceChanged(state);
      samplers.deviceChanged(state);
    },
    deviceRemoved: (id) => {
      link.deviceRemoved(id);
      samplers.deviceRemoved(id);
    },
  } : link;
  // Hubs first (port numbers), then devices, so the first snapshot is as complete as adb allows; then dial the hub.
  await usbHubs?.start();
  await driver.start(listener);
  link.start();
  let stopping: Promise<void> | undefined;
  return {
    link,
    driver,
    metrics,
    samplers,
    usbHubs,
    stop: () => {
      stopping ??= (async () => {
        await samplers?.stop();
        metrics.stop();
        await usbHubs?.stop();
        await link.stop();
        await driver.stop();
      })();
      return stopping;
    },
  };
}
