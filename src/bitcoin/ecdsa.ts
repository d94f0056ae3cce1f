/**
 * Signature encodings and the libsecp256k1 checks (tiny-secp256k1, the WASM
 * build; docs/performance.md). The wrappers here never throw: tiny-secp256k1
 * throws on malformed points and out-of-range scalars, and a verifier must
 * answer false to hostile input instead.
 */
import * as secp from 'tiny-secp256k1';

/** secp256k1 group order n, big-endian. */
const CURVE_ORDER = Uint8Array.from(Buffer.from('fffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141', 'hex'));
/** floor(n / 2): the LOW_S bound (BIP-146 §LOW_S). */
const HALF_CURVE_ORDER = Uint8Array.from(Buffer.from('7fffffffffffffffffffffffffffffff5d576e7357a4501ddfe92f46681b20a0', 'hex'));

/** Compares the 32-byte big-endian integer at `a[offset..offset+32]` with `b`. */
function compare32(a: Uint8Array, offset: number, b: Uint8Array): number {
  for (let i = 0; i < 32; i++) {
    const x = a[offset + i]!;
    const y = b[i]!;
    if (x !== y) return x < y ? -1 : 1;
  }
  return 0;
}

function isZero32(a: Uint8Array, offset: number): boolean {
  for (let i = 0; i < 32; i++) if (a[offset + i] !== 0) return false;
  return true;
}

/**
 * Strict DER (BIP-66 IsValidSignatureEncoding, applied to the signature
 * without its sighash byte) to 64-byte compact r||s, or null.
 *
 * Also refuses r or s of zero or not below n, and a high S: BIP-322
 * §Verification lists LOW_S among the required rules (a high-S signature is
 * invalid, not merely non-standard). Bitcoin Core's BIP-322 branch verifies
 * with its standard policy flags (LOW_S included), and bip322-js 3.0 refuses
 * a high-S twin as well (checked when this was written).
 */
export function parseStrictDer(der: Uint8Array): Uint8Array | null {
  const length = der.length;
  // 0x30 len 0x02 lenR R 0x02 lenS S, each integer 1..33 bytes.
  if (length < 8 || length > 72) return null;
  if (der[0] !== 0x30 || der[1] !== length - 2) return null;
  if (der[2] !== 0x02) return null;
  const lengthR = der[3]!;
  if (lengthR === 0 || 4 + lengthR + 2 > length) return null;
  if (der[4 + lengthR] !== 0x02) return null;
  const lengthS = der[5 + lengthR]!;
  if (lengthS === 0 || 6 + lengthR + lengthS !== length) return null;
  // Positive and minimally encoded: no sign bit, no needless leading zero.
  if (der[4]! & 0x80) return null;
  if (lengthR > 1 && der[4] === 0x00 && !(der[5]! & 0x80)) return null;
  const startS = 6 + lengthR;
  if (der[startS]! & 0x80) return null;
  if (lengthS > 1 && der[startS] === 0x00 && !(der[startS + 1]! & 0x80)) return null;

  const compact = new Uint8Array(64);
  if (!copyInteger(der, 4, lengthR, compact, 0)) return null;
  if (!copyInteger(der, startS, lengthS, compact, 32)) return null;
  if (isZero32(compact, 0) || isZero32(compact, 32)) return null;
  if (compare32(compact, 0, CURVE_ORDER) >= 0) return null;
  if (compare32(compact, 32, HALF_CURVE_ORDER) > 0) return null;
  return compact;
}

/** Right-aligns a DER integer into 32 bytes; false if it does not fit. */
function copyInteger(der: Uint8Array, start: number, length: number, out: Uint8Array, outOffset: number): boolean {
  let begin = start;
  let size = length;
  if (der[begin] === 0x00) {
    begin++;
    size--;
  }
  if (size > 32) return false;
  out.set(der.subarray(begin, begin + size), outOffset + 32 - size);
  return true;
}

/** DER-encodes a 64-byte compact signature (minimal positive integers). */
export function encodeDer(compact: Uint8Array): Uint8Array {
  const r = derInteger(compact.subarray(0, 32));
  const s = derInteger(compact.subarray(32, 64));
  const out = new Uint8Array(6 + r.length + s.length);
  out[0] = 0x30;
  out[1] = 4 + r.length + s.length;
  out[2] = 0x02;
  out[3] = r.length;
  out.set(r, 4);
  out[4 + r.length] = 0x02;
  out[5 + r.length] = s.length;
  out.set(s, 6 + r.length);
  return out;
}

function derInteger(value: Uint8Array): Uint8Array {
  let start = 0;
  while (start < value.length - 1 && value[start] === 0) start++;
  const trimmed = value.subarray(start);
  if (trimmed[0]! & 0x80) {
    const padded = new Uint8Array(trimmed.length + 1);
    padded.set(trimmed, 1);
    return padded;
  }
  return trimmed.slice();
}

/** A compressed SEC1 key (BIP-143 / WITNESS_PUBKEYTYPE: segwit v0 keys must be compressed). */
export function isCompressedPublicKey(key: Uint8Array): boolean {
  return key.length === 33 && (key[0] === 0x02 || key[0] === 0x03);
}

/** STRICTENC public key: compressed (02/03, 33 bytes) or uncompressed (04, 65 bytes); no hybrid keys. */
export function isStrictPublicKey(key: Uint8Array): boolean {
  return isCompressedPublicKey(key) || (key.length === 65 && key[0] === 0x04);
}

/** ECDSA check of a low-S compact signature; false on any malformed input. */
export function verifyEcdsa(hash: Uint8Array, publicKey: Uint8Array, compact: Uint8Array): boolean {
  if (!isStrictPublicKey(publicKey) || compact.length !== 64 || hash.length !== 32) return false;
  try {
    // strict = true: libsecp256k1 refuses high S instead of normalising it.
    return secp.verify(hash, publicKey, compact, true);
  } catch {
    return false;
  }
}

/** BIP-340 check against an x-only key; false on any malformed input. */
export function verifySchnorr(hash: Uint8Array, xOnlyKey: Uint8Array, signature: Uint8Array): boolean {
  if (xOnlyKey.length !== 32 || signature.length !== 64 || hash.length !== 32) return false;
  try {
    return secp.verifySchnorr(hash, xOnlyKey, signature);
  } catch {
    return false;
  }
}
