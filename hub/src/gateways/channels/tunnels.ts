/**
 * Tunnels: a relayed byte stream into a device's access endpoint (or its automation server, or screen). The hub asks
 * the device's gateway to open one (OpenTunnel on its session) and waits for the gateway's tunnel connection
 * (link/link-listener.ts), whose hello names it. The gateway's half is its access channel
 * (gateway/src/link/channels/access.ts): a tunnel is admitted by the same tickets.
 */
import { randomUUID } from 'node:crypto';
import type { Duplex } from 'node:stream';
import { MESSAGE_TUNNEL_SERVICES, TunnelFrames, type TunnelHello } from '@devicelab/proto';
import { authenticateGateway } from '../gateway-tokens';
import { GatewayUnavailableError, type DeviceTunnel } from '../gateway-directory';
import type { ChannelContext, HubChannel } from '../link/channel';

interface PendingTunnel {
  gatewayName: string;
  /** Its connection carries messages (MESSAGE_TUNNEL_SERVICES). */
  messages: boolean;
  resolve(tunnel: DeviceTunnel): void;
  reject(err: Error): void;
  timer: NodeJS.Timeout;
}

export function tunnelsChannel({ db, sessions, logger }: ChannelContext): HubChannel {
  /** Tunnels asked for (OpenTunnel sent), waiting for their gateway's connection. */
  const pending = new Map<string, PendingTunnel>();

  /**
   * A tunnel connection after its hello: the tunnel it names, if this gateway (proven by its token) was asked for
   * it, gets the connection, or the gateway's refusal. Any other connection is dropped.
   */
  const tunnelConnection = (socket: Duplex, hello: TunnelHello): void => {
    void authenticateGateway(db, hello.gateway, hello.token).then((gateway) => {
      const waiting = pending.get(hello.tunnelId);
      if (!gateway || !waiting || waiting.gatewayName !== gateway.name) {
        logger.warn({ gateway: hello.gateway.slice(0, 100) }, 'tunnel connection for no tunnel of this gateway dropped');
        socket.destroy();
        return;
      }
      pending.delete(hello.tunnelId);
      clearTimeout(waiting.timer);
      if (hello.error) {
        waiting.reject(new GatewayUnavailableError(hello.error));
        socket.end();
        return;
      }
      const frames = new TunnelFrames(socket, { messages: waiting.messages });
      frames.on('error', () => undefined);
      waiting.resolve(frames as unknown as DeviceTunnel);
    }, (err: unknown) => {
      logger.error({ err }, 'tunnel authentication failed');
      socket.destroy();
    });
  };

  return {
    tunnelConnection,
    directory: {
      openTunnel(request, timeoutMs): Promise<DeviceTunnel> {
        const session = sessions.holding(request.vendorUniqueIdentifier);
        if (!session) {
          return Promise.reject(new GatewayUnavailableError(`No connected gateway holds device ${request.vendorUniqueIdentifier}.`));
        }
        const tunnelId = randomUUID();
        return new Promise<DeviceTunnel>((resolve, reject) => {
          const timer = setTimeout(() => {
            pending.delete(tunnelId);
            reject(new GatewayUnavailableError(`Gateway ${session.gatewayName} did not open the tunnel within ${timeoutMs} ms.`));
          }, timeoutMs);
          pending.set(tunnelId, {
            gatewayName: session.gatewayName, messages: MESSAGE_TUNNEL_SERVICES.has(request.service ?? ''), resolve, reject, timer,
          });
          session.write({ body: 'openTunnel', openTunnel: { ...request, tunnelId } });
        });
      },
    },
  };
}
