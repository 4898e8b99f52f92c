/**
 * Tunnels: a relayed byte stream into a device's access endpoint. The hub asks the device's gateway to open one
 * (OpenTunnel on its session) and waits for the gateway's Tunnel call, whose first frame names it. The gateway's
 * half is its access channel (gateway/src/link/channels/access.ts): a tunnel is admitted by the same tickets.
 */
import { randomUUID } from 'node:crypto';
import type { Duplex } from 'node:stream';
import * as grpc from '@grpc/grpc-js';
import { MESSAGE_TUNNEL_SERVICES, TunnelFrames, type TunnelFrame, type TunnelHello } from '@devicelab/proto';
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

export function tunnelsChannel({ db, sessions, authenticate, logger }: ChannelContext): HubChannel {
  /** Tunnels asked for (OpenTunnel sent), waiting for their gateway's Tunnel call. */
  const pending = new Map<string, PendingTunnel>();

  /**
   * The gateway's answer to OpenTunnel, named by its first frame (or hello): the tunnel it names, if that is one
   * this gateway was asked for, gets `tunnel`, or the gateway's refusal. False when it names no such tunnel.
   */
  const answer = (gatewayName: string | undefined, first: TunnelFrame, tunnel: DeviceTunnel): boolean => {
    const waiting = pending.get(first.tunnelId ?? '');
    if (!gatewayName || !waiting || waiting.gatewayName !== gatewayName) return false;
    pending.delete(first.tunnelId ?? '');
    clearTimeout(waiting.timer);
    if (first.error) {
      waiting.reject(new GatewayUnavailableError(first.error));
      tunnel.end();
    } else {
      waiting.resolve(tunnel);
    }
    return true;
  };

  /** GatewayLink.Tunnel (gateways before tunnel connections): its first frame names the tunnel. */
  const tunnel = (call: grpc.ServerDuplexStream<TunnelFrame, TunnelFrame>): void => {
    call.on('error', () => undefined);
    const refuse = (code: grpc.status, details: string) => call.emit('error', { code, details });
    // Paused at the first frame; the consumer resumes once it listens, so no frame is lost in between.
    const firstFrame = new Promise<TunnelFrame>((resolve) => call.once('data', (frame: TunnelFrame) => {
      call.pause();
      resolve(frame);
    }));
    void Promise.all([authenticate(call.metadata), firstFrame]).then(([gateway, frame]) => {
      if (!answer(gateway?.name, frame, call as unknown as DeviceTunnel)) refuse(grpc.status.PERMISSION_DENIED, 'no such tunnel for this gateway');
    }, (err: unknown) => {
      logger.error({ err }, 'tunnel authentication failed');
      refuse(grpc.status.UNAVAILABLE, 'hub could not check credentials');
    });
  };

  /** A tunnel connection (link-listener.ts): its hello names the gateway, proves it and names the tunnel. */
  const tunnelConnection = (socket: Duplex, hello: TunnelHello): void => {
    void authenticateGateway(db, hello.gateway, hello.token).then((gateway) => {
      const frames = new TunnelFrames(socket, { messages: pending.get(hello.tunnelId)?.messages ?? false });
      frames.on('error', () => undefined);
      if (!answer(gateway?.name, hello, frames as unknown as DeviceTunnel)) {
        logger.warn({ gateway: hello.gateway.slice(0, 100) }, 'tunnel connection for no tunnel of this gateway dropped');
        socket.destroy();
      }
    }, (err: unknown) => {
      logger.error({ err }, 'tunnel authentication failed');
      socket.destroy();
    });
  };

  return {
    methods: { Tunnel: tunnel },
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
