/**
 * Inventory: the gateway's full snapshot (after Welcome, and whenever the hub asks for one) and its deltas become
 * the device records, in arrival order; the session's held devices follow them, so commands route to the
 * gateway reporting the device now.
 */
import { applyDeviceState, NO_LONGER_REPORTED, takeDevicesOffline } from '../device-inventory';
import type { ChannelContext, HubChannel } from '../link/channel';

export function inventoryChannel({ db }: ChannelContext): HubChannel {
  return {
    open: (session) => ({
      messages: {
        /** A full inventory: upsert every device, then everything else this gateway had goes Offline. */
        snapshot: (snapshot) => {
          const devices = snapshot.devices ?? [];
          const keep = devices.map((d) => d.vendorUniqueIdentifier);
          session.devices.replace(keep);
          void session.recordWrite(async () => {
            for (const device of devices) await applyDeviceState(db, session.gatewayId, device);
            await takeDevicesOffline(db, { gatewayId: session.gatewayId, keep, detail: 'Not reported by its gateway' });
          });
        },
        deviceUpdate: (state) => {
          session.devices.add(state.vendorUniqueIdentifier);
          void session.recordWrite(() => applyDeviceState(db, session.gatewayId, state));
        },
        deviceRemoved: ({ vendorUniqueIdentifier }) => {
          session.devices.delete(vendorUniqueIdentifier);
          void session.recordWrite(() =>
            takeDevicesOffline(db, { gatewayId: session.gatewayId, only: [vendorUniqueIdentifier], detail: NO_LONGER_REPORTED }));
        },
      },
    }),
  };
}
