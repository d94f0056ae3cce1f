/**
 * Small shared crypto helpers on `node:crypto`, and the strict base64url
 * decoder. Kept in one place so that every area hashes, MACs, compares secrets
 * and reads base64url the same way (docs/architecture.md: prefer node's crypto).
 */
import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

/** Hex of `bytes` bytes from the operating system's CSPRNG. */
export function randomHex(bytes: number): string {
  if (!Number.isSafeInteger(bytes) || bytes <= 0) {
    throw new RangeError(`crypto: randomHex needs a positive whole number of bytes, got ${bytes}`);
  }
  return randomBytes(bytes).toString('hex');
}

/** Lowercase hex SHA-256. Strings are hashed as UTF-8. */
export function sha256Hex(input: string | Uint8Array): string {
  return createHash('sha256').update(input).digest('hex');
}

/** HMAC-SHA256 of `data` under `key`; strings are taken as UTF-8. 32 bytes. */
export function hmacSha256(key: string | Uint8Array, data: string | Uint8Array): Uint8Array {
  return new Uint8Array(createHmac('sha256', key).update(data).digest());
}

/**
 * Compares two strings without a timing signal about where they differ.
 * `timingSafeEqual` needs equal lengths and would throw otherwise; hashing both
 * sides first gives fixed-length inputs, so neither the content nor the length
 * of the secret side leaks through an early exit. The length check runs after
 * the constant-time comparison and only decides the result.
 */
export function timingSafeEqualString(a: string, b: string): boolean {
  if (typeof a !== 'string' || typeof b !== 'string') return false;
  const digestA = createHash('sha256').update(a, 'utf8').digest();
  const digestB = createHash('sha256').update(b, 'utf8').digest();
  return timingSafeEqual(digestA, digestB) && a.length === b.length;
}

/**
 * A new account id: 32 lowercase hex, 128 random bits (docs/protocol.md §2:
 * `did_oc` is `did:oc:` + this, and `sub` is this).
 */
export function newAccountId(): string {
  return randomHex(16);
}

/** Value of each base64url character (RFC 4648 §5), -1 for every other code unit below 128. */
const BASE64URL_VALUES = new Int8Array(128).fill(-1);
for (const [index, character] of [...'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_'].entries()) {
  BASE64URL_VALUES[character.charCodeAt(0)] = index;
}

/**
 * Strict base64url without padding (RFC 4648 §5; RFC 7515 §2 for JWS): null
 * for any other character, for a length no encoding produces, and for unused
 * trailing bits that are not zero (RFC 4648 §3.5), so every value has exactly
 * one accepted spelling. `Buffer.from(text, 'base64url')` skips invalid
 * characters and ignores trailing bits; besides, its vectorised decoder made
 * the Ed25519 verification right after it about 8% slower on the project's
 * AVX-512 machines (measured for bench/jwt.bench.ts: the decode itself is
 * cheap, the slowdown lands on the next operation). Empty input gives null.
 */
export function decodeBase64url(text: string): Uint8Array | null {
  const length = text.length;
  if (length === 0 || length % 4 === 1) return null;
  const bytes = new Uint8Array((length * 3) >> 2);
  let pending = 0;
  let pendingBits = 0;
  let offset = 0;
  for (let index = 0; index < length; index += 1) {
    const code = text.charCodeAt(index);
    const value = code < 128 ? BASE64URL_VALUES[code]! : -1;
    if (value < 0) return null;
    // At most 12 bits are ever pending: 6 left over plus 6 new.
    pending = ((pending << 6) | value) & 0xfff;
    pendingBits += 6;
    if (pendingBits >= 8) {
      pendingBits -= 8;
      bytes[offset++] = pending >> pendingBits;
    }
  }
  return (pending & ((1 << pendingBits) - 1)) === 0 ? bytes : null;
}
