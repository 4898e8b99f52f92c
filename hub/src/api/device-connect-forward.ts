/**
 * `/Device/Connect` on a replica whose link does not hold the device's gateway: the WebSocket is forwarded to the
 * owning replica's recorded API address (`hub_replicas.api_address`) and the two WebSockets are joined. The owner
 * authenticates the client's own Authorization header again (Basic credentials or ticket), exactly as if the
 * client had come straight to it; nothing this replica adds is trusted for authentication. The forwarded request
 * carries `DeviceLab-Forwarded-By`, and a forwarded request is never forwarded again (no loops while a gateway moves).
 */
import WebSocket from 'ws';
import { pumpBytes } from '@devicelab/shared';
import type { DeviceOnOtherReplicaError } from '../fleet/replica-directory';
import { thisReplica } from '../fleet/replica';
import { FORWARDED_BY_HEADER, type UpgradeDecision, type UpgradeRequest } from '../http/websocket-upgrade';
import { webSocketEnd } from '../tunnel/websocket-end';

/** The owner's refusal body is read up to this size. */
const MAX_REFUSAL_BYTES = 16 * 1024;

export function forwardDeviceConnection(
  request: UpgradeRequest, owner: DeviceOnOtherReplicaError, headers: Record<string, string>, timeoutMs: number,
  path = '/apiv1/Device/Connect',
  /** What authenticates the client at the owner: its Authorization header unless given (a browser's cookie, vouched). */
  credentials?: (pathAndQuery: string) => Promise<Record<string, string>>,
): Promise<UpgradeDecision> {
  if (request.forwardedBy !== undefined || !owner.apiAddress) {
    return Promise.resolve({ status: 503, message: `${owner.message} The connection cannot be forwarded there; try again.` });
  }
  const target = new URL(`${path}${request.url.search}`, owner.apiAddress);
  target.protocol = target.protocol === 'https:' ? 'wss:' : 'ws:';
  const sent = credentials ? credentials(`${target.pathname}${target.search}`) : Promise.resolve({ authorization: request.authorization });
  return sent.then((authentication) => new Promise((resolve) => {
    const upstream = new WebSocket(target, {
      headers: { ...authentication, [FORWARDED_BY_HEADER]: thisReplica.id },
      handshakeTimeout: timeoutMs, maxPayload: 1024 * 1024, perMessageDeflate: false,
    });
    const unreachable = (reason: string): { status: number; message: string } => ({
      status: 502, message: `${owner.message} Forwarding the connection to it failed: ${reason}`,
    });
    upstream.once('unexpected-response', (_req, res) => {
      let body = '';
      res.on('data', (chunk: Buffer) => { if (body.length < MAX_REFUSAL_BYTES) body += chunk.toString('utf8'); });
      res.on('end', () => resolve({ status: res.statusCode ?? 502, message: refusalMessage(body) ?? unreachable(`HTTP ${res.statusCode}`).message }));
      res.on('error', () => resolve(unreachable(`HTTP ${res.statusCode}`)));
    });
    upstream.on('error', (err) => resolve(unreachable(err.message))); // after the open, the pump's close handling ends it
    upstream.once('open', () => {
      // Held until the client's WebSocket is accepted, so no byte of the device is read before it can be passed on.
      upstream.pause();
      // A client that went away before its upgrade completed is never accepted: let the owner's side go too.
      const abandoned = setTimeout(() => upstream.terminate(), timeoutMs);
      abandoned.unref();
      resolve({
        headers,
        accept: (ws) => {
          clearTimeout(abandoned);
          if (upstream.readyState !== WebSocket.OPEN) {
            ws.close(1011, 'the device connection ended');
            return;
          }
          pumpBytes(webSocketEnd(ws), webSocketEnd(upstream));
          upstream.resume();
        },
      });
    });
  }));
}

function refusalMessage(body: string): string | undefined {
  try {
    const parsed = JSON.parse(body) as { errorMessage?: unknown };
    return typeof parsed.errorMessage === 'string' ? parsed.errorMessage : undefined;
  } catch {
    return undefined;
  }
}
