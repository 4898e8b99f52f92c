/**
 * Tunnels: a relayed byte stream into a device's access endpoint. The hub asks the device's gateway to open one
 * (OpenTunnel on its session) and waits for the gateway's Tunnel call, whose first frame names it. The gateway's
 * half is its access channel (gateway/src/link/channels/access.ts): a tunnel is admitted by the same tickets.
 */
import { randomUUID } from 'node:crypto';
import * as grpc from '@grpc/grpc-js';
import type { TunnelFrame } from '@devicelab/proto';
import { GatewayUnavailableError, type DeviceTunnel } from '../gateway-directory';
import type { ChannelContext, HubChannel } from '../link/channel';

interface PendingTunnel {
  gatewayName: string;
  resolve(tunnel: DeviceTunnel): void;
  reject(err: Error): void;
  timer: NodeJS.Timeout;
}

export function tunnelsChannel({ sessions, authenticate, logger }: ChannelContext): HubChannel {
  /** Tunnels asked for (OpenTunnel sent), waiting for their gateway's Tunnel call. */
  const pending = new Map<string, PendingTunnel>();

  /** GatewayLink.Tunnel: the gateway's answer to OpenTunnel; its first frame names the tunnel. */
  const tunnel = (call: grpc.ServerDuplexStream<TunnelFrame, TunnelFrame>): void => {
    call.on('error', () => undefined);
    const refuse = (code: grpc.status, details: string) => call.emit('error', { code, details });
    // Paused at the first frame; the consumer resumes once it listens, so no frame is lost in between.
    const firstFrame = new Promise<TunnelFrame>((resolve) => call.once('data', (frame: TunnelFrame) => {
      call.pause();
      resolve(frame);
    }));
    void Promise.all([authenticate(call.metadata), firstFrame]).then(([gateway, frame]) => {
      const waiting = pending.get(frame.tunnelId ?? '');
      if (!gateway || !waiting || waiting.gatewayName !== gateway.name) {
        refuse(grpc.status.PERMISSION_DENIED, 'no such tunnel for this gateway');
        return;
      }
      pending.delete(frame.tunnelId ?? '');
      clearTimeout(waiting.timer);
      if (frame.error) {
        waiting.reject(new GatewayUnavailableError(frame.error));
        call.end();
        return;
      }
      waiting.resolve(call as unknown as DeviceTunnel);
    }, (err: unknown) => {
      logger.error({ err }, 'tunnel authentication failed');
      refuse(grpc.status.UNAVAILABLE, 'hub could not check credentials');
    });
  };

  return {
    methods: { Tunnel: tunnel },
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
          pending.set(tunnelId, { gatewayName: session.gatewayName, resolve, reject, timer });
          session.write({ body: 'openTunnel', openTunnel: { ...request, tunnelId } });
        });
      },
    },
  };
}
