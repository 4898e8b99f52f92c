/**
 * API tokens: GUID-shaped (real clients validate `^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`
 * before sending one), made from the CSPRNG, stored only as SHA-256, compared in constant time.
 * SHA-256 without salt is enough here: tokens carry 122 random bits, so there is nothing to brute-force.
 */
import { createHash, randomUUID, timingSafeEqual } from 'node:crypto';

export const API_TOKEN_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** A new token: a random (version 4) UUID from node's CSPRNG, lower-case. */
export function generateApiToken(): string {
  return randomUUID();
}

export function isWellFormedApiToken(token: string): boolean {
  return API_TOKEN_PATTERN.test(token);
}

/** SHA-256 of the token's UTF-8 bytes: what the records keep. */
export function hashToken(token: string): Buffer {
  return createHash('sha256').update(token, 'utf8').digest();
}

/** Constant-time check of a presented token against a stored hash. */
export function tokenMatchesHash(token: string, storedHash: Buffer | null | undefined): boolean {
  if (!storedHash || storedHash.length !== 32) return false;
  return timingSafeEqual(hashToken(token), storedHash);
}
