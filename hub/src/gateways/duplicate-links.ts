/**
 * Two gateway processes started with the same name and token: each new link replaced the other's, which then
 * reconnected and replaced it back, several times a second, forever (and device commands failed meanwhile). A new
 * link is refused while the gateway's current session still hears from its gateway, which sends a heartbeat every
 * interval while it runs; the refused process is told why (ALREADY_EXISTS, as when another hub replica owns the
 * link) and backs off. A session silent for longer than LIVE_SILENCE_INTERVALS intervals is a hung process or a
 * half-open connection: a new link replaces it, as a gateway reconnecting after a network break needs.
 */
import * as grpc from '@grpc/grpc-js';
import type { Logger } from '@devicelab/shared';
import type { ConnectCall, GatewaySession } from './gateway-session';

/** More than one interval (a heartbeat may come a little late), well under the three that end a session. */
export const LIVE_SILENCE_INTERVALS = 1.5;

/** Refuses `call` when `current` (the gateway's session on this hub) is live; true when it did. */
export function refuseSecondLiveLink(
  current: GatewaySession | undefined, call: ConnectCall, heartbeatIntervalMs: number, logger: Logger,
): boolean {
  if (!current || current.silentForMs > LIVE_SILENCE_INTERVALS * heartbeatIntervalMs) return false;
  logger.warn({ gateway: current.gatewayName, peer: call.getPeer() }, 'second link of a connected gateway refused: two processes share its name and token');
  call.emit('error', {
    code: grpc.status.ALREADY_EXISTS,
    details: `gateway ${current.gatewayName} is already connected (since ${current.connectedAt.toISOString()}) and answering: `
      + 'another gateway process runs with this name and token; stop one of them',
  });
  return true;
}
