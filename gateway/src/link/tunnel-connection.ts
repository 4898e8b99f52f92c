/**
 * The gateway's end of a tunnel connection (@devicelab/proto tunnel-connection.ts): a connection of its own to the
 * hub replica whose session asked for the tunnel, on its link port, TLS as the link is, read and written as the
 * TunnelFrame stream the tunnel's users expect. The first frame written (`{ tunnelId }`, or `{ tunnelId, error }`
 * to refuse) becomes the hello, which names and proves this gateway as the link's metadata does.
 */
import net from 'node:net';
import tls from 'node:tls';
import { encodeTunnelHello, TUNNEL_MAGIC, TunnelFrames } from '@devicelab/proto';
import type { HubLinkTls } from './link-clients';

export interface TunnelConnectionOptions {
  /** The replica's link address as dialled (`host:port`, `[v6]:port`). */
  address: string;
  tls?: HubLinkTls;
  gatewayName: string;
  token: string;
  /** The tunnel carries messages (MESSAGE_TUNNEL_SERVICES), not a byte stream. */
  messages: boolean;
}

export function openTunnelConnection(options: TunnelConnectionOptions): TunnelFrames {
  const { host, port } = splitAddress(options.address);
  const socket = options.tls
    ? tls.connect({
      host, port, ca: options.tls.ca, cert: options.tls.cert, key: options.tls.key,
      servername: options.tls.serverName ?? (net.isIP(host) ? undefined : host),
    })
    : net.connect({ host, port });
  socket.setNoDelay(true);
  socket.write(TUNNEL_MAGIC);
  return new TunnelFrames(socket, {
    messages: options.messages,
    firstFrame: (first) => encodeTunnelHello({
      gateway: options.gatewayName, token: options.token, tunnelId: first.tunnelId ?? '', ...(first.error ? { error: first.error } : {}),
    }),
  });
}

/** `host:port` as gRPC takes it (an optional `dns:` scheme, brackets around IPv6) to what net.connect takes. */
function splitAddress(address: string): { host: string; port: number } {
  const bare = address.replace(/^dns:(\/\/[^/]*\/)?/, '');
  const colon = bare.lastIndexOf(':');
  const host = bare.slice(0, colon).replace(/^\[(.*)\]$/, '$1');
  return { host: host || 'localhost', port: Number(bare.slice(colon + 1)) };
}
