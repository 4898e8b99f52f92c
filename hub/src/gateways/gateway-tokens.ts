/**
 * Gateway credentials: one token per gateway name, kept as SHA-256 (like API tokens). The stored hash is also
 * the key of the hub's proof in Welcome, so only a hub holding this gateway's record can answer its Hello.
 */
import { createHmac } from 'node:crypto';
import { generateApiToken, hashToken, tokenMatchesHash } from '../auth/api-tokens';
import type { Db } from '../store/database';
import type { GatewayRow } from '../store/schema';

export class InvalidGatewayNameError extends Error {
  constructor(name: string) {
    super(`Invalid gateway name '${name}': use 1-64 letters, digits, '.', '_' or '-'.`);
    this.name = 'InvalidGatewayNameError';
  }
}

/** Names travel in gRPC metadata and logs; keep them plain. */
const GATEWAY_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

/**
 * Creates the gateway, or gives an existing one a new token (the old one stops working; a connected gateway
 * keeps its current stream until it reconnects). Returns the token, which is not stored anywhere.
 */
export async function registerGateway(db: Db, name: string): Promise<string> {
  if (!GATEWAY_NAME.test(name)) throw new InvalidGatewayNameError(name);
  const token = generateApiToken();
  const tokenHash = hashToken(token);
  await db
    .insertInto('gateways')
    .values({ name, token_sha256: tokenHash })
    .onConflict((oc) => oc.column('name').doUpdateSet({ token_sha256: tokenHash }))
    .execute();
  return token;
}

/** The gateway's record when `token` is its current token (constant-time compare), else undefined. */
export async function authenticateGateway(db: Db, name: string, token: string): Promise<GatewayRow | undefined> {
  if (!GATEWAY_NAME.test(name)) return undefined;
  const row = await db.selectFrom('gateways').selectAll().where('name', '=', name).executeTakeFirst();
  return row && tokenMatchesHash(token, row.token_sha256) ? row : undefined;
}

/** HMAC-SHA256(key = SHA-256(token), nonce): the hub's answer to a Hello (see devicelab_link.proto). */
export function hubProof(tokenSha256: Buffer, nonce: Buffer): Buffer {
  return createHmac('sha256', tokenSha256).update(nonce).digest();
}
