/**
 * `GET /apiv1/Device/Connect?id=<device>` upgraded to a WebSocket: one WebSocket is one raw
 * TCP byte stream into the device's access endpoint on its gateway (binary messages both ways; closing either
 * end closes the other), relayed over the gateway link's Tunnel call. Authenticated by Basic credentials of the
 * retainer or `Authorization: Bearer <DeviceAccessTicket authenticator>` (README "Device connections"). On a hub
 * replica whose link does not hold the device's gateway, it is forwarded to the one that does (device-connect-forward.ts).
 */
import { ApiFailure, frameStreamEnd, pumpBytes, type ByteEnd, type Logger } from '@devicelab/shared';
import type { DeviceUseNotes } from '../domain/device-use';
import { authorizeDeviceConnection } from '../domain/device-connection';
import type { TicketKeys } from '../domain/device-ticket';
import { DeviceOnOtherReplicaError } from '../fleet/replica-directory';
import { GatewayUnavailableError, type GatewayDirectory } from '../gateways/gateway-directory';
import type { UpgradeDecision, UpgradeRequest, WebSocketRoute } from '../http/websocket-upgrade';
import type { Db } from '../store/database';
import { webSocketEnd } from '../tunnel/websocket-end';
import { forwardDeviceConnection } from './device-connect-forward';

export const DEVICE_CONNECT_PATH = '/apiv1/device/connect';
const TUNNEL_OPEN_TIMEOUT_MS = 10_000;
/** Names what the tunnel carries: `adb` or `usbmux`. */
export const ENDPOINT_HEADER = 'DeviceLab-Endpoint';

interface DeviceConnectDeps {
  db: Db;
  gateways: GatewayDirectory;
  ticketKeys: TicketKeys;
  logger: Logger;
  deviceUse?: DeviceUseNotes;
}

/** The end with each chunk it delivers also reported to `used`. */
function usedOnData(end: ByteEnd, used: () => void): ByteEnd {
  return { ...end, onData: (listener) => end.onData((data) => { used(); listener(data); }) };
}

export function deviceConnectSocket(deps: DeviceConnectDeps): WebSocketRoute {
  return {
    acceptsBearer: true,
    async decide(request: UpgradeRequest): Promise<UpgradeDecision> {
      const params = new Map([...request.url.searchParams].map(([key, value]) => [key.toLowerCase(), value]));
      const identifier = params.get('id') || params.get('deviceid');
      if (!identifier) return { status: 400, message: "Parameter 'id' is required." };
      let headers: Record<string, string> = {};
      try {
        const caller = request.user ? { user: request.user } : { authenticator: request.bearer ?? '' };
        const grant = await authorizeDeviceConnection(deps.db, deps.ticketKeys, caller, identifier, request.clientAddress);
        // The client prints `adb connect` or USBMUXD_SOCKET_ADDRESS by it (a ticket holder knows no more).
        headers = { [ENDPOINT_HEADER]: grant.endpoint };
        const tunnel = await deps.gateways.openTunnel({
          vendorUniqueIdentifier: grant.vendorUniqueIdentifier, remoteAddress: request.clientAddress, userLogin: grant.userLogin,
          authenticator: request.user ? '' : request.bearer ?? '',
        }, TUNNEL_OPEN_TIMEOUT_MS);
        // Bytes either way are use of the device by its holder (coalesced by deviceUse).
        const used = () => deps.deviceUse?.note(grant.vendorUniqueIdentifier);
        return { headers, accept: (ws) => pumpBytes(usedOnData(webSocketEnd(ws), used), usedOnData(frameStreamEnd(tunnel, () => tunnel.cancel()), used)) };
      } catch (err) {
        if (err instanceof ApiFailure) return { status: 403, message: err.message };
        if (err instanceof DeviceOnOtherReplicaError) return forwardDeviceConnection(request, err, headers, TUNNEL_OPEN_TIMEOUT_MS);
        if (err instanceof GatewayUnavailableError) return { status: 503, message: err.message };
        throw err;
      }
    },
  };
}
