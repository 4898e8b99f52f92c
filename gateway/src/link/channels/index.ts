/**
 * The link's capabilities on the gateway, one module each. A new capability is a module beside these (see
 * channel.ts) and one line here, with its hub half registered in hub/src/gateways/channels/index.ts.
 */
import { CommandExecutor } from '../command-executor';
import type { HubLinkOptions } from '../hub-link';
import { AccessChannel } from './access';
import { AutomationChannel } from './automation';
import { BlobsChannel } from './blobs';
import type { HubConnection } from './channel';
import { CommandsChannel } from './commands';
import { InventoryChannel } from './inventory';
import { MetricsChannel } from './metrics';
import { UsbHubsChannel } from './usb-hubs';

export function gatewayChannels(link: HubConnection, options: HubLinkOptions) {
  const { drivers, appCache, logger, usbHubs } = options;
  const inventory = new InventoryChannel(link, drivers);
  const blobs = new BlobsChannel(link, options.blobIdleTimeoutMs);
  const automation = new AutomationChannel(link, options.automation, logger);
  const executor = new CommandExecutor(drivers, appCache, (sha, announce) => blobs.fetch(sha, announce), logger,
    (state) => inventory.deviceChanged(state), usbHubs, automation);
  return {
    access: new AccessChannel(link, {
      adbAccess: options.adbAccess, usbmuxAccess: options.usbmuxAccess, logger,
      tunnelServices: { automation: (request, session) => automation.tunnel(request, session) },
    }),
    inventory,
    commands: new CommandsChannel(executor, inventory, logger),
    usbHubs: new UsbHubsChannel(link, usbHubs),
    metrics: new MetricsChannel(link, options.metrics),
    blobs,
    automation,
  };
}

/** The channels by name: what the rest of the gateway calls (`link.channels.access.sync()`, ...). */
export type GatewayChannels = ReturnType<typeof gatewayChannels>;
