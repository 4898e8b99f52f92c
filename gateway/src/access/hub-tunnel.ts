/**
 * The gateway end of a hub-relayed device connection (issue 11 part 2): the hub asked for it with OpenTunnel;
 * this calls `GatewayLink.Tunnel`, names the tunnel in the first frame, and joins the call to a local TCP
 * connection into the device's access endpoint, which authenticates the client exactly as a direct connection.
 * Backpressure both ways: a full socket pauses the call, a call that will not take more pauses the socket.
 */
import net from 'node:net';
import type * as grpc from '@grpc/grpc-js';
import type { OpenTunnel, TunnelFrame } from '@devicelab/proto';
import type { Logger } from '@devicelab/shared';
import type { AdbAccessEndpoints } from './adb-access-endpoints';

export type TunnelCall = grpc.ClientDuplexStream<TunnelFrame, TunnelFrame>;

export function relayTunnel(
  request: OpenTunnel, openCall: () => TunnelCall, endpoints: AdbAccessEndpoints, logger: Logger,
): void {
  const call = openCall();
  call.on('error', () => undefined); // the hub ended it; the socket is closed below
  const port = endpoints.portOf(request.vendorUniqueIdentifier);
  if (port === undefined) {
    call.write({ tunnelId: request.tunnelId, error: 'The device has no access endpoint on its gateway (not retained, or not served).' });
    call.end();
    return;
  }
  call.write({ tunnelId: request.tunnelId });
  const socket = net.connect({ host: '127.0.0.1', port, allowHalfOpen: true });
  socket.setNoDelay(true);
  let forget = (): void => undefined;
  socket.once('connect', () => {
    forget = endpoints.markTunnelPeer(socket.localAddress ?? '127.0.0.1', socket.localPort ?? 0,
      `${request.remoteAddress} (${request.userLogin}, through the hub)`);
  });
  const finish = () => {
    forget();
    socket.destroy();
    call.cancel();
  };
  socket.on('data', (data: Buffer) => {
    if (!call.write({ data })) {
      socket.pause();
      call.once('drain', () => socket.resume());
    }
  });
  socket.on('end', () => call.end());
  socket.on('error', (err) => {
    logger.debug({ err, tunnel: request.tunnelId }, 'tunnel socket failed');
    finish();
  });
  socket.on('close', () => {
    forget();
    call.end();
  });
  call.on('data', (frame: TunnelFrame) => {
    if (frame.data && frame.data.length > 0 && !socket.write(frame.data)) {
      call.pause();
      socket.once('drain', () => call.resume());
    }
  });
  call.on('end', () => socket.end());
  call.on('error', finish);
}
