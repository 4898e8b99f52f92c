/** Who a link call comes from: every gRPC call of a gateway names and proves itself in its metadata. */
import type * as grpc from '@grpc/grpc-js';
import { AUTHORIZATION_METADATA, GATEWAY_NAME_METADATA } from '@devicelab/proto';
import type { Db } from '../../store/database';
import type { GatewayRow } from '../../store/schema';
import { authenticateGateway } from '../gateway-tokens';

/** The gateway named and proven by `authorization: Bearer <token>` and `x-devicelab-gateway: <name>`. */
export async function authenticateCall(db: Db, metadata: grpc.Metadata): Promise<GatewayRow | undefined> {
  const name = metadata.get(GATEWAY_NAME_METADATA)[0];
  const authorization = metadata.get(AUTHORIZATION_METADATA)[0];
  if (typeof name !== 'string' || typeof authorization !== 'string') return undefined;
  const token = /^Bearer\s+(\S+)$/i.exec(authorization.trim())?.[1];
  return token ? authenticateGateway(db, name, token) : undefined;
}
