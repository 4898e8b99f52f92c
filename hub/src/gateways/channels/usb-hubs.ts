/**
 * USB hubs: the gateway's hub reports (port states for the records and the event stream, telemetry kept live
 * for GET /Gateway), their device events, and port commands routed to the gateway reporting the hub.
 */
import type { UsbHubReport } from '@devicelab/proto';
import { recordGatewayDeviceEvent } from '../../domain/gateway-device-events';
import { noteChange } from '../../events/change-feed';
import { setGatewayUsbHubs } from '../device-inventory';
import { GatewayUnavailableError } from '../gateway-directory';
import type { ChannelContext, HubChannel } from '../link/channel';
import type { CommandsChannel } from './commands';

export function usbHubsChannel({ db, sessions }: ChannelContext, commands: CommandsChannel): HubChannel {
  return {
    open: (session) => ({
      messages: {
        usbHubs: (report) => {
          const hubs = report.hubs ?? [];
          const changed = portStates(hubs) !== portStates(session.usbHubs);
          session.usbHubs = hubs;
          // Port states are recorded for the other replicas, and the event stream hears of them here (telemetry
          // alone is no change).
          if (changed) {
            void session.recordWrite(async () => {
              await setGatewayUsbHubs(db, session.gatewayId, hubs);
              await noteChange(db, 'usbHub', session.gatewayId);
            });
          }
        },
        usbHubEvent: (event) => {
          void session.recordWrite(() => recordGatewayDeviceEvent(db, session.gatewayId, event));
        },
      },
    }),
    directory: {
      sendUsbHubCommand(hubSerialNumber, action, timeoutMs) {
        const session = sessions.holdingUsbHub(hubSerialNumber);
        if (!session) return Promise.reject(new GatewayUnavailableError(`No connected gateway reports USB hub ${hubSerialNumber}.`));
        return commands.send(session, '', action, timeoutMs);
      },
    },
  };
}

/** What of a USB hub report the dashboard shows as state: which ports, their modes and flags (not currents). */
function portStates(hubs: readonly UsbHubReport[]): string {
  return JSON.stringify(hubs.map((hub) => [hub.serialNumber, hub.isErrored,
    (hub.ports ?? []).map((port) => [port.portNumber, port.state, port.flags, port.deviceSerialNumber])]));
}
