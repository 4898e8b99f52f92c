/** Wires one gateway: its platform drivers (drivers/index.ts), the app cache, the hub link and the metrics samplers. */
import Adb from '@devicefarmer/adbkit';
import { gatewayMetricsRegistry, startMetricsServer } from './observability/gateway-metrics';
import { createLogger, type Logger } from '@devicelab/shared';
import { AdbAccessEndpoints, DEFAULT_ADB_ACCESS_PORTS, type PortRange } from './access/adb-access-endpoints';
import { AppCache } from './apps/app-cache';
import type { DeviceDriver, DeviceListener } from './drivers/device-driver';
import { createPlatformDrivers, type PlatformConfig } from './drivers/index';
import { DriverRegistry } from './drivers/registry';
import { DeviceScreens, type DeviceScreensOptions } from './screen/device-screens';
import { HubLink, type HubLinkTls } from './link/hub-link';
import type { BackoffOptions } from './link/backoff';
import { MetricsUplink, type MetricsUplinkOptions } from './link/metrics-uplink';
import { DeviceSamplers } from './samplers/device-samplers';
import { DEFAULT_SAMPLING, type SamplingOptions } from './samplers/sampling-options';
import { withUsbPorts } from './usbhubs/port-mapped-driver';
import { createUsbHubs, type UsbHubs } from './usbhubs/usb-hubs';
import type { UsbHubsConfig } from './usbhubs/usb-hubs-config';
import { UsbmuxAccess } from './access/usbmux-filter';
import { UsbmuxClient } from './drivers/ios/usbmux';
import { AutomationServers, DEFAULT_AUTOMATION, type AutomationOptions } from './automation/automation-servers';

export interface GatewayOptions extends PlatformConfig {
  name: string;
  token: string;
  /** `host:port` of the hub's link server, or of each hub replica's (tried in turn; see HubLinkOptions). */
  hubAddress: string | readonly string[];
  cacheDir: string;
  publicAddress: string;
  publicPort: number;
  logger?: Logger;
  tls?: HubLinkTls;
  backoff?: BackoffOptions;
  /** The live screen: how long a capture without viewers keeps running. */
  screen?: Pick<DeviceScreensOptions, 'lingerMs'>;
  /** Replaces the registered platform drivers (tests). */
  drivers?: DeviceDriver[];
  /** Metrics intervals per table (0 turns a table off); `false` turns device sampling off entirely. */
  sampling?: Partial<SamplingOptions> | false;
  /** Batching, backpressure and buffer bound of the metrics uplink. */
  metricsUplink?: Partial<MetricsUplinkOptions>;
  /** USB hubs of this host (Cambrionix, uhubctl), port mapping, battery care, recovery, telemetry. */
  usbHubs?: UsbHubsConfig;
  /** Ports of the retainers' adb endpoints (DEVICELAB_GATEWAY_ADB_PORTS, default 7400-7599); `false`: none. */
  adbAccessPorts?: PortRange | false;
  /** Address the adb endpoints listen on (default every interface). */
  adbAccessHost?: string;
  /** Serve Prometheus `/metrics` on this address (`DEVICELAB_GATEWAY_METRICS_LISTEN`); absent: not served. */
  metricsListen?: { host: string; port: number };
  /** The devices' automation servers (Appium), README "Automation servers on the gateway"; `false`: none. */
  automation?: Partial<AutomationOptions> | false;
}

export interface RunningGateway {
  readonly link: HubLink;
  /** The platform drivers; commands for a device go to the one that reported it. */
  readonly drivers: DriverRegistry;
  /** Where every metric row goes (device samplers, USB hub telemetry). */
  readonly metrics: MetricsUplink;
  /** Undefined when sampling is off or the driver cannot sample. */
  readonly samplers?: DeviceSamplers;
  /** Undefined when no USB hubs are configured. */
  readonly usbHubs?: UsbHubs;
  /** The retainers' adb endpoints; undefined when turned off. */
  readonly adbAccess?: AdbAccessEndpoints;
  /** The live screens of its devices (one capture each, shared by the viewers). */
  readonly screens: DeviceScreens;
  /** The Prometheus endpoint's URL when `metricsListen` was given. */
  readonly metricsUrl?: string;
  /** The devices' automation servers; undefined when turned off. */
  readonly automation?: AutomationServers;
  stop(): Promise<void>;
}

export async function startGateway(options: GatewayOptions): Promise<RunningGateway> {
  const logger = options.logger ?? createLogger('gateway');
  const registry = new DriverRegistry(options.drivers ?? createPlatformDrivers(options, logger));
  const metrics = new MetricsUplink(options.metricsUplink);
  const usbHubs = options.usbHubs ? createUsbHubs(options.usbHubs, {
    logger: logger.child({ component: 'usbhubs' }), metrics, battery: registry.battery,
  }) : undefined;
  // Device states carry the hub port the device hangs from.
  const drivers = usbHubs ? withUsbPorts(registry, usbHubs.service, registry.usbLocations) : registry;
  const samplers = options.sampling !== false && drivers.sampling
    ? new DeviceSamplers(drivers.sampling, metrics, { ...DEFAULT_SAMPLING, ...options.sampling }, logger.child({ component: 'samplers' }))
    : undefined;
  let link: HubLink | undefined;
  // An access client may have installed or removed apps: read them again and report the device.
  const packagesChanged = (id: string) => {
    drivers.readPackages(id).then((state) => listener.deviceChanged(state), (err: unknown) =>
      logger.warn({ err, device: id }, 'could not read packages after an access client changed them'));
  };
  const adbAccess = options.adbAccessPorts === false ? undefined : new AdbAccessEndpoints({
    adb: Adb.createClient({ port: options.adbPort, bin: options.adbBin }),
    ports: options.adbAccessPorts ?? DEFAULT_ADB_ACCESS_PORTS,
    host: options.adbAccessHost,
    logger: logger.child({ component: 'access' }),
    // A device not seen yet may still turn out to be Android; a known device of another platform gets no adb.
    ownsAndroidDevice: (id) => (registry.platformOf(id) ?? 'Android') === 'Android',
    report: (event) => link?.channels.access.event(event),
    used: (id) => link?.channels.access.used(id),
    endpointClosed: (endpoint) => link?.channels.access.endpointClosed(endpoint),
    sync: () => link?.channels.access.sync() ?? Promise.resolve(),
    packagesChanged,
  });
  const automation = options.automation === false ? undefined
    : new AutomationServers(registry, { ...DEFAULT_AUTOMATION, ...options.automation }, logger.child({ component: 'automation' }));
  // One capture per device, whatever the number of its viewers (screen/device-screens.ts).
  const screens = new DeviceScreens((id) => registry.screenOf(id), { logger: logger.child({ component: 'screen' }), ...options.screen });
  // A capture watching a device while an Appium session runs reads the session's own screen stream.
  automation?.onSessionChange((id, running) => screens.automationChanged(id, running));
  link = new HubLink({
    name: options.name,
    token: options.token,
    hubAddress: options.hubAddress,
    publicAddress: options.publicAddress,
    publicPort: options.publicPort,
    drivers,
    appCache: new AppCache(options.cacheDir),
    logger: logger.child({ component: 'link' }),
    tls: options.tls,
    backoff: options.backoff,
    metrics,
    usbHubs: usbHubs?.service,
    adbAccess,
    automation,
    screens,
    usbmuxAccess: options.usbmuxdAddress ? {
      access: new UsbmuxAccess(new UsbmuxClient(options.usbmuxdAddress), logger.child({ component: 'usbmux-access' }),
        { servicesUsed: packagesChanged, report: (event) => link?.channels.access.event(event),
          used: (udid) => link?.channels.access.used(udid) }),
      isIos: (id) => registry.platformOf(id) === 'iOS',
    } : undefined,
  });
  const hubLink = link;
  if (samplers) link.on('metricsSettings', (settings) => samplers.applySettings(settings));
  // Device changes go to the hub, the samplers (Ready devices of drivers that can sample) and the adb endpoints
  // (a device that left drops its connections).
  const listener: DeviceListener = {
    deviceChanged: (state) => {
      hubLink.channels.inventory.deviceChanged(state);
      if (state.readiness !== 'Ready') adbAccess?.deviceGone(state.vendorUniqueIdentifier);
      else adbAccess?.deviceReady(state.vendorUniqueIdentifier);
      if (samplers && drivers.canSample(state.vendorUniqueIdentifier)) samplers.deviceChanged(state);
      automation?.deviceChanged(state);
    },
    deviceRemoved: (id) => {
      hubLink.channels.inventory.deviceRemoved(id);
      adbAccess?.deviceGone(id);
      samplers?.deviceRemoved(id);
      automation?.deviceRemoved(id);
    },
  };
  // Hubs first (port numbers), then devices, so the first snapshot is as complete as adb allows; then dial the hub.
  await usbHubs?.start();
  await drivers.start(listener);
  hubLink.start();
  const metricsServer = options.metricsListen ? await startMetricsServer(
    gatewayMetricsRegistry({ drivers: registry, uplink: metrics, samplers, usbHubs: usbHubs?.service }), options.metricsListen, logger,
  ) : undefined;
  let stopping: Promise<void> | undefined;
  return {
    link: hubLink,
    drivers,
    adbAccess,
    screens,
    metrics,
    samplers,
    usbHubs,
    metricsUrl: metricsServer?.url,
    automation,
    stop: () => {
      stopping ??= (async () => {
        await automation?.stop();
        await metricsServer?.stop();
        await samplers?.stop();
        metrics.stop();
        await usbHubs?.stop();
        await adbAccess?.stop();
        await screens.stop();
        await hubLink.stop();
        await drivers.stop();
      })();
      return stopping;
    },
  };
}
