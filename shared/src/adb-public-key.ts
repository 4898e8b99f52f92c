/**
 * adb public keys as `~/.android/adbkey.pub` holds them: `base64(RSAPublicKey struct) comment`. The struct is
 * Android's (system/core/libcrypto_utils): `uint32 len` (modulus words, 64 for RSA-2048), `uint32 n0inv`
 * (-1 / n[0] mod 2^32), `n[len]` and `rr[len]` (R^2 mod n, R = 2^(32*len)) as little-endian words, `uint32 e`.
 * Parsed strictly: every field is checked against the modulus, so a key that adbd would not accept is refused.
 * The hub validates registrations with it; the gateway matches the key a client offers at AUTH against it.
 */
import { createHash } from 'node:crypto';

/** adb keys are RSA-2048 (adb's RSANUMBYTES is 256). */
const MODULUS_WORDS = 64;
const STRUCT_BYTES = 4 + 4 + MODULUS_WORDS * 4 * 2 + 4;
const MAX_COMMENT_CHARS = 200;

export interface AdbPublicKeyInfo {
  /** The 524-byte struct. */
  struct: Buffer;
  /** MD5 of the struct as colon-separated lowercase hex: the fingerprint adbkit and STF show. */
  fingerprint: string;
  /** The modulus, lowercase hex without leading zeros (as `BigInt#toString(16)` writes it). */
  modulusHex: string;
  exponent: number;
  /** The text after the key (usually `user@host`); '' when none. */
  comment: string;
}

export class InvalidAdbPublicKeyError extends Error {
  constructor(reason: string) {
    super(`Not an adb public key (the text of ~/.android/adbkey.pub): ${reason}.`);
    this.name = 'InvalidAdbPublicKeyError';
  }
}

/** Parses the text of adbkey.pub; throws InvalidAdbPublicKeyError saying what is wrong. */
export function parseAdbPublicKey(text: string): AdbPublicKeyInfo {
  const trimmed = text.replace(/\0+$/, '').trim();
  if (trimmed === '') throw new InvalidAdbPublicKeyError('the key is empty');
  if (trimmed.length > 2000) throw new InvalidAdbPublicKeyError('the text is too long');
  const match = /^([A-Za-z0-9+/]+={0,2})(?:[ \t]+([^\r\n]*))?$/.exec(trimmed);
  if (!match) throw new InvalidAdbPublicKeyError('expected base64 followed by an optional comment on one line');
  const base64 = match[1];
  if (base64.length % 4 !== 0) throw new InvalidAdbPublicKeyError('the base64 part has a wrong length');
  const comment = (match[2] ?? '').trim();
  if (comment.length > MAX_COMMENT_CHARS) throw new InvalidAdbPublicKeyError(`the comment is longer than ${MAX_COMMENT_CHARS} characters`);
  if (/[\u0000-\u001f\u007f]/.test(comment)) throw new InvalidAdbPublicKeyError('the comment holds control characters');
  const struct = Buffer.from(base64, 'base64');
  return { ...readAdbPublicKeyStruct(struct), comment };
}

/** Checks the RSAPublicKey struct itself. */
export function readAdbPublicKeyStruct(struct: Buffer): Omit<AdbPublicKeyInfo, 'comment'> {
  if (struct.length !== STRUCT_BYTES) {
    throw new InvalidAdbPublicKeyError(`the key is ${struct.length} bytes, an RSA-2048 adb key is ${STRUCT_BYTES}`);
  }
  const words = struct.readUInt32LE(0);
  if (words !== MODULUS_WORDS) throw new InvalidAdbPublicKeyError(`the modulus length is ${words} words, expected ${MODULUS_WORDS}`);
  const n0inv = BigInt(struct.readUInt32LE(4));
  const n = littleEndianWords(struct.subarray(8, 8 + MODULUS_WORDS * 4));
  const rr = littleEndianWords(struct.subarray(8 + MODULUS_WORDS * 4, 8 + MODULUS_WORDS * 8));
  const exponent = struct.readUInt32LE(STRUCT_BYTES - 4);
  const bits = BigInt(MODULUS_WORDS * 32);
  if (n >> (bits - 1n) !== 1n) throw new InvalidAdbPublicKeyError('the modulus is not 2048 bits long');
  if ((n & 1n) === 0n) throw new InvalidAdbPublicKeyError('the modulus is even');
  if (exponent !== 3 && exponent !== 65537) throw new InvalidAdbPublicKeyError(`the exponent ${exponent} is neither 3 nor 65537`);
  const word = 1n << 32n;
  if (((n % word) * n0inv) % word !== word - 1n) throw new InvalidAdbPublicKeyError('n0inv does not match the modulus');
  if ((1n << (2n * bits)) % n !== rr) throw new InvalidAdbPublicKeyError('rr does not match the modulus');
  return {
    struct: Buffer.from(struct),
    fingerprint: adbKeyFingerprint(struct),
    modulusHex: n.toString(16),
    exponent,
  };
}

export function adbKeyFingerprint(struct: Buffer): string {
  return createHash('md5').update(struct).digest('hex').match(/../g)!.join(':');
}

function littleEndianWords(bytes: Buffer): bigint {
  const bigEndian = Buffer.from(bytes).reverse();
  return BigInt(`0x${bigEndian.toString('hex')}`);
}
