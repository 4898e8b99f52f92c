/**
 * The link's capabilities on the hub, one module each. A new capability is a module beside these (see
 * link/channel.ts) and one line here, with its gateway half registered in gateway/src/link/channels/index.ts.
 */
import type { ChannelContext, HubChannel } from '../link/channel';
import { accessChannel } from './access';
import { AUTOMATION_TUNNEL_TIMEOUT_MS, automationChannel } from './automation';
import { blobsChannel } from './blobs';
import { commandsChannel } from './commands';
import { inventoryChannel } from './inventory';
import { metricsChannel } from './metrics';
import { tunnelsChannel } from './tunnels';
import { usbHubsChannel } from './usb-hubs';

export function hubChannels(ctx: ChannelContext): HubChannel[] {
  const commands = commandsChannel(ctx);
  const tunnels = tunnelsChannel(ctx);
  return [
    inventoryChannel(ctx),
    commands,
    // Before metrics: Retentions held back until Welcome go out right behind it, ahead of MetricsSettings.
    accessChannel(ctx),
    tunnels,
    automationChannel(ctx, commands, (vendorUniqueIdentifier) => tunnels.directory!.openTunnel!(
      { vendorUniqueIdentifier, remoteAddress: '', userLogin: '', service: 'automation' }, AUTOMATION_TUNNEL_TIMEOUT_MS)),
    usbHubsChannel(ctx, commands),
    metricsChannel(ctx),
    blobsChannel(ctx),
  ];
}
