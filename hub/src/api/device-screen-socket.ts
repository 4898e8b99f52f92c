/**
 * `GET /apiv1/Device/Screen?id=<device>[&viewOnly=true][&share=<token>]` upgraded to a WebSocket: the device's live
 * screen (README "Live screen"), one screen message per binary WebSocket message (shared/screen-protocol.ts),
 * relayed over a screen tunnel to the device's gateway, which fans its one capture out to every viewer.
 * Authenticated by Basic credentials or the dashboard's session cookie (same-origin only); who may watch and who
 * controls is domain/screen-access.ts, and the gateway checks the retain again. A view-only viewer who joins is a
 * SharedViewOnlySessionCreated event.
 */
import { ApiFailure, type Logger } from '@devicelab/shared';
import type { DeviceUseNotes } from '../domain/device-use';
import { authorizeScreen, recordViewOnlyJoin } from '../domain/screen-access';
import type { ScreenViewers } from '../domain/screen-viewers';
import { DeviceOnOtherReplicaError } from '../fleet/replica-directory';
import { GatewayUnavailableError, type GatewayDirectory } from '../gateways/gateway-directory';
import type { UpgradeDecision, UpgradeRequest, WebSocketRoute } from '../http/websocket-upgrade';
import type { Db } from '../store/database';
import { relayScreen } from '../tunnel/screen-relay';
import { vouchForOrigin } from '../fleet/forwarded-origin';
import { thisReplica } from '../fleet/replica';
import { forwardDeviceConnection } from './device-connect-forward';

export const DEVICE_SCREEN_PATH = '/apiv1/device/screen';
const TUNNEL_OPEN_TIMEOUT_MS = 10_000;
/** A share token is base64url of 24 bytes; anything much longer is not one. */
const MAX_SHARE_TOKEN_CHARS = 200;

interface DeviceScreenDeps {
  db: Db;
  gateways: GatewayDirectory;
  viewers: ScreenViewers;
  logger: Logger;
  /** A controller's input is use of the device by its holder (idle release; coalesced there). */
  deviceUse?: DeviceUseNotes;
}

export function deviceScreenSocket(deps: DeviceScreenDeps): WebSocketRoute {
  return {
    acceptsSessionCookie: true,
    async decide(request: UpgradeRequest): Promise<UpgradeDecision> {
      const params = new Map([...request.url.searchParams].map(([key, value]) => [key.toLowerCase(), value]));
      const identifier = params.get('id') || params.get('deviceid');
      if (!identifier) return { status: 400, message: "Parameter 'id' is required." };
      const viewOnlyText = (params.get('viewonly') ?? '').toLowerCase();
      if (viewOnlyText && viewOnlyText !== 'true' && viewOnlyText !== 'false') return { status: 400, message: "Parameter 'viewOnly' must be true or false." };
      const shareToken = params.get('share') || undefined;
      if (shareToken && shareToken.length > MAX_SHARE_TOKEN_CHARS) return { status: 400, message: "Parameter 'share' is not a share token." };
      const user = request.user;
      if (!user) return { status: 401, message: 'Authentication required.' };
      try {
        const grant = await authorizeScreen(deps.db, user, identifier, { viewOnly: viewOnlyText === 'true', shareToken });
        const tunnel = await deps.gateways.openTunnel({
          vendorUniqueIdentifier: grant.vendorUniqueIdentifier, remoteAddress: request.clientAddress, userLogin: user.login,
          service: 'screen', viewOnly: grant.viewOnly, retainId: grant.retainId,
        }, TUNNEL_OPEN_TIMEOUT_MS);
        tunnel.pause();
        return {
          accept: (ws) => {
            let forget = (): void => undefined;
            const relay = relayScreen(ws, tunnel, grant.viewOnly, () => forget(), () => deps.deviceUse?.note(grant.deviceId));
            forget = deps.viewers.add(grant.deviceId, {
              login: user.login, displayName: user.displayName, remoteAddress: request.clientAddress, viewOnly: grant.viewOnly,
              since: new Date(), ...(grant.through && 'shareId' in grant.through ? { shareId: grant.through.shareId } : {}),
            }, (reason) => relay.end(reason));
            if (grant.through) {
              recordViewOnlyJoin(deps.db, grant, user, request.clientAddress)
                .catch((err: unknown) => deps.logger.warn({ err }, 'could not record a view-only screen viewer'));
            }
          },
        };
      } catch (err) {
        if (err instanceof ApiFailure) return { status: 403, message: err.message };
        if (err instanceof DeviceOnOtherReplicaError) {
          if (!request.cookie) return forwardDeviceConnection(request, err, {}, TUNNEL_OPEN_TIMEOUT_MS, '/apiv1/Device/Screen');
          // The browser's own cookie goes on, for the owner to authenticate its session itself; the Origin check made
          // here is vouched for by a signature of the replicas' shared key (fleet/forwarded-origin.ts).
          const { cookie, origin = '', host = '' } = request;
          return forwardDeviceConnection(request, err, {}, TUNNEL_OPEN_TIMEOUT_MS, '/apiv1/Device/Screen', async (path) => ({
            cookie, origin, ...await vouchForOrigin(deps.db, { by: thisReplica.id, host, origin, path, cookie: cookie.slice(cookie.indexOf('=') + 1) }),
          }));
        }
        if (err instanceof GatewayUnavailableError) return { status: 503, message: err.message };
        throw err;
      }
    },
  };
}
