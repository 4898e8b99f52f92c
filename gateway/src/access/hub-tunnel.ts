/**
 * The gateway end of a hub-relayed device connection: the hub asked for it with OpenTunnel;
 * this calls `GatewayLink.Tunnel`, names the tunnel in the first frame, and hands the call to the device's access
 * endpoint: for Android its adb endpoint serves the call in process (tunnel-socket.ts) and authenticates the client
 * exactly as a direct connection; for iOS the call is one usbmux client connection to the filtering proxy
 * (usbmux-filter.ts). Refusals here become access events, and so do iOS client sessions (usbmux has no key of its
 * own to report; usbmux-sessions.ts).
 */
import type * as grpc from '@grpc/grpc-js';
import type { DeviceAccessEvent, OpenTunnel, TunnelFrame } from '@devicelab/proto';
import { frameStreamEnd, type Logger } from '@devicelab/shared';
import type { TicketVerifier } from '../tickets/ticket-verifier';
import type { AdbAccessEndpoints } from './adb-access-endpoints';
import { TunnelSocket } from './tunnel-socket';
import type { UsbmuxAccess } from './usbmux-filter';

/** iOS devices: a tunnel is one usbmux client connection to the filtering proxy (usbmux-filter.ts). */
export interface IosTunnels {
  access: UsbmuxAccess;
  isIos(vendorUniqueIdentifier: string): boolean;
}

export type TunnelCall = grpc.ClientDuplexStream<TunnelFrame, TunnelFrame>;

export interface TunnelRelayOptions {
  openCall(): TunnelCall;
  endpoints?: AdbAccessEndpoints;
  tickets: TicketVerifier;
  ios?: IosTunnels;
  /** Becomes a Note event on the device at the hub. */
  report(event: DeviceAccessEvent): void;
  logger: Logger;
}

/** Refuses a tunnel: its first frame says why, then the call ends. */
export function refuseTunnel(call: TunnelCall, tunnelId: string, reason: string): void {
  call.write({ tunnelId, error: `The gateway refuses the connection: ${reason}.` });
  call.end();
}

export function relayTunnel(request: OpenTunnel, options: TunnelRelayOptions): void {
  const { tickets, ios, endpoints } = options;
  const vuid = request.vendorUniqueIdentifier;
  const call = options.openCall();
  call.on('error', () => undefined); // the hub ended it; the far end is closed by the pump
  const kind = ios?.isIos(vuid) ? 'usbmux' : 'adb';
  const who = `${request.userLogin || '?'} from ${request.remoteAddress} (through the hub)`;
  const report = (accepted: boolean, message: string) => options.report({
    vendorUniqueIdentifier: vuid, accepted, message, remoteAddress: request.remoteAddress, fingerprint: '',
    userLogin: accepted ? request.userLogin : '', atMs: Date.now(),
  });
  const refuse = (reason: string) => {
    report(false, `${kind} connection of ${who} refused: ${reason}`);
    refuseTunnel(call, request.tunnelId, reason);
  };
  if (request.authenticator) {
    const verdict = tickets.verifyDeviceTicket(request.authenticator, vuid);
    if (!verdict.valid) return refuse(`the ticket does not open the device (${verdict.reason})`);
  }
  if (ios && kind === 'usbmux') {
    const retainId = tickets.retainOf(vuid);
    if (!retainId) return refuse('the device is not retained');
    call.write({ tunnelId: request.tunnelId });
    const client = frameStreamEnd(call, () => call.cancel());
    ios.access.serve(vuid, retainId, {
      ...client,
      end: () => {
        call.end();
        // A dropped connection must not linger half-open at the hub.
        setTimeout(() => call.cancel(), 200).unref();
      },
      refused: (what) => report(false, `usbmux connection of ${who} refused: ${what}`),
    }, { userLogin: request.userLogin, remoteAddress: request.remoteAddress, who });
    return;
  }
  const serveTunnel = endpoints?.tunnelServer(vuid);
  if (!serveTunnel) return refuse('the device has no adb endpoint on its gateway (not retained, or not served)');
  call.write({ tunnelId: request.tunnelId });
  // The endpoint reports the connection (opened or refused at AUTH) as coming from the hub's client.
  serveTunnel(new TunnelSocket(call, `${request.remoteAddress} (${request.userLogin}, through the hub)`));
}
