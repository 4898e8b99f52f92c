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
import type { TicketVerifier } from '../tickets/ticket-verifier';
import type { AdbAccessEndpoints } from './adb-access-endpoints';
import type { UsbmuxAccess } from './usbmux-filter';

/** iOS devices: a tunnel is one usbmux client connection to the filtering proxy (usbmux-filter.ts). */
export interface IosTunnels {
  access: UsbmuxAccess;
  isIos(vendorUniqueIdentifier: string): boolean;
  isRetained(vendorUniqueIdentifier: string): boolean;
}

export type TunnelCall = grpc.ClientDuplexStream<TunnelFrame, TunnelFrame>;

export function relayTunnel(
  request: OpenTunnel, openCall: () => TunnelCall, endpoints: AdbAccessEndpoints | undefined, tickets: TicketVerifier,
  logger: Logger, ios?: IosTunnels,
): void {
  const call = openCall();
  call.on('error', () => undefined); // the hub ended it; the socket is closed below
  const refuse = (error: string) => {
    call.write({ tunnelId: request.tunnelId, error });
    call.end();
  };
  if (request.authenticator) {
    const verdict = tickets.verifyDeviceTicket(request.authenticator, request.vendorUniqueIdentifier);
    if (!verdict.valid) return refuse(`The gateway refuses the ticket: ${verdict.reason}.`);
  }
  if (ios?.isIos(request.vendorUniqueIdentifier)) {
    if (!ios.isRetained(request.vendorUniqueIdentifier)) return refuse('The device is not retained.');
    call.write({ tunnelId: request.tunnelId });
    return serveUsbmux(request, call, ios.access);
  }
  const port = endpoints?.portOf(request.vendorUniqueIdentifier);
  if (!endpoints || port === undefined) return refuse('The device has no access endpoint on its gateway (not retained, or not served).');
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

function serveUsbmux(request: OpenTunnel, call: TunnelCall, access: UsbmuxAccess): void {
  const client = access.serve(request.vendorUniqueIdentifier, {
    write: (data) => call.write({ data }),
    onDrain: (resume) => call.once('drain', resume),
    pause: () => call.pause(),
    resume: () => call.resume(),
    end: () => {
      call.end();
      // A dropped connection must not linger half-open at the hub.
      setTimeout(() => call.cancel(), 200).unref();
    },
  });
  call.on('data', (frame: TunnelFrame) => {
    if (frame.data && frame.data.length > 0) client.data(frame.data);
  });
  call.on('end', () => client.end());
  call.on('error', () => client.end());
}
