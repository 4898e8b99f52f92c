/**
 * Mutual authentication of the link (proto header comment): the gateway's Hello carries a random nonce and the
 * hub answers with HMAC-SHA256(key = SHA-256(token) as raw 32 bytes, nonce). Only a hub holding this gateway's
 * token hash can compute it.
 */
import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

const NONCE_BYTES = 32;

export function newNonce(): Buffer {
  return randomBytes(NONCE_BYTES);
}

export function hubProof(token: string, nonce: Buffer): Buffer {
  const key = createHash('sha256').update(token, 'utf8').digest();
  return createHmac('sha256', key).update(nonce).digest();
}

/** Constant-time check of Welcome.hub_proof. */
export function verifyHubProof(token: string, nonce: Buffer, proof: Buffer | Uint8Array | undefined): boolean {
  if (!proof) return false;
  const expected = hubProof(token, nonce);
  const actual = Buffer.from(proof);
  return actual.length === expected.length && timingSafeEqual(actual, expected);
}
