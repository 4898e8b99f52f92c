/**
 * Builds a gateway's USB hub side from its configuration: the controllers, the hub service, and the
 * policies that act on their own (battery care, power-cycle recovery) and the usb_hub telemetry.
 * `create` before the device driver starts (the driver is wrapped to carry port numbers), `start` after.
 */
import type { Logger } from '@devicelab/shared';
import type { MetricsSink } from '../samplers/metrics-sink';
import { BatteryCare } from './battery-care';
import type { BatteryReader } from './battery-reader';
import { CambrionixHub } from './cambrionix/cambrionix-hub';
import { PortMap } from './port-mapping';
import { PowerCycleRecovery } from './power-cycle-recovery';
import { UhubctlHub } from './uhubctl/uhubctl-hub';
import type { UsbHubController } from './usb-hub-controller';
import { UsbHubService } from './usb-hub-service';
import type { UsbHubsConfig } from './usb-hubs-config';
import { UsbTelemetry } from './usb-telemetry';

export interface UsbHubs {
  readonly service: UsbHubService;
  start(): Promise<void>;
  stop(): Promise<void>;
}

export function createUsbHubs(
  config: UsbHubsConfig,
  deps: { logger: Logger; battery: BatteryReader; metrics?: MetricsSink },
): UsbHubs {
  const { logger } = deps;
  const hubLocations = new Map<string, string>();
  const controllers: UsbHubController[] = [
    ...config.cambrionix.map((hub) => {
      const controller = new CambrionixHub({
        path: hub.path, logger: logger.child({ hub: hub.path }), pollIntervalMs: config.pollIntervalMs,
        commandTimeoutMs: config.commandTimeoutMs, reopenDelayMs: config.reopenDelayMs,
      });
      if (hub.usbLocation) {
        const location = hub.usbLocation;
        controller.onStatus((status) => status.serialNumber && hubLocations.set(status.serialNumber, location));
      }
      return controller;
    }),
    ...config.uhubctl.map((location) => {
      hubLocations.set(location, location);
      return new UhubctlHub({ location, logger, bin: config.uhubctlBin, pollIntervalMs: config.pollIntervalMs });
    }),
  ];
  const service = new UsbHubService(controllers, new PortMap(config.portMap, () => hubLocations), logger);
  const batteryCare = config.batteryCare
    ? new BatteryCare(service, deps.battery, config.batteryCare, logger.child({ component: 'battery-care' }))
    : undefined;
  const recovery = config.recovery ? new PowerCycleRecovery(service, config.recovery, logger.child({ component: 'recovery' })) : undefined;
  const telemetry = deps.metrics && config.telemetryIntervalMs > 0
    ? new UsbTelemetry(service, deps.battery, deps.metrics, config.telemetryIntervalMs, logger)
    : undefined;
  return {
    service,
    async start() {
      await service.start();
      batteryCare?.start();
      recovery?.start();
      telemetry?.start();
    },
    async stop() {
      await Promise.all([batteryCare?.stop(), recovery?.stop(), telemetry?.stop()]);
      await service.stop();
    },
  };
}
