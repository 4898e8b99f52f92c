/** Inventory: a full snapshot once a hub is verified (and whenever it asks), then each device change as it happens. */
import type { DeviceState, MessageHandlers } from '@devicelab/proto';
import type { DeviceListener } from '../../drivers/device-driver';
import type { DriverRegistry } from '../../drivers/registry';
import type { ChannelHubMessage, GatewayChannel, HubConnection, LinkSession } from './channel';

export class InventoryChannel implements GatewayChannel, DeviceListener {
  constructor(private readonly link: HubConnection, private readonly drivers: DriverRegistry) {}

  open(session: LinkSession): MessageHandlers<ChannelHubMessage> {
    const sendSnapshot = () => session.send({ body: 'snapshot', snapshot: { devices: this.drivers.snapshot() } });
    sendSnapshot();
    return { inventoryRequest: sendSnapshot };
  }

  // Deltas go out only on a verified session (a reconnect sends a fresh snapshot anyway).
  deviceChanged(state: DeviceState): void {
    this.link.send({ body: 'deviceUpdate', deviceUpdate: state });
  }

  deviceRemoved(vendorUniqueIdentifier: string): void {
    this.link.send({ body: 'deviceRemoved', deviceRemoved: { vendorUniqueIdentifier } });
  }
}
