/** The gRPC clients of the link: one per hub replica, with the transport settings every call to it uses. */
import * as grpc from '@grpc/grpc-js';
import { GatewayLinkClient } from '@devicelab/proto';
import type { LinkClient } from './channels/channel';

export interface HubLinkTls {
  /** PEM root certificate(s) to verify the hub; system roots when omitted. */
  ca?: Buffer;
  /** Client certificate and key (mutual TLS), optional. */
  cert?: Buffer;
  key?: Buffer;
  /** Name to verify in the hub's certificate when it differs from the dialled host (e.g. dialling an IP). */
  serverName?: string;
}

/** How much the hub may send ahead of what the gateway has read (per stream and per connection). */
const RECEIVE_WINDOW_BYTES = 8 * 1024 * 1024;

/** A client per address, in the order given; TLS when `tls` is set, an insecure channel otherwise. */
export function createLinkClients(addresses: readonly string[], tls: HubLinkTls | undefined): Map<string, LinkClient> {
  const credentials = tls
    ? grpc.credentials.createSsl(tls.ca ?? null, tls.key ?? null, tls.cert ?? null)
    : grpc.credentials.createInsecure();
  return new Map(addresses.map((address) => [address, new GatewayLinkClient(address, credentials, {
    'grpc.keepalive_time_ms': 15_000,
    'grpc.keepalive_timeout_ms': 10_000,
    'grpc.keepalive_permit_without_calls': 1,
    'grpc.initial_reconnect_backoff_ms': 250,
    'grpc.max_reconnect_backoff_ms': 10_000,
    // HTTP/2's default 64 KiB receive window lets the hub send 64 KiB per round trip: on a loaded host (each
    // round trip waits for both processes to be scheduled) that, not PostgreSQL, bounded app downloads.
    'grpc-node.flow_control_window': RECEIVE_WINDOW_BYTES,
    ...(tls?.serverName ? { 'grpc.ssl_target_name_override': tls.serverName } : {}),
  }) as unknown as LinkClient]));
}
