/**
 * Legacy message signatures: Bitcoin Core `signmessage` / `verifymessage`
 * (BIP-322 §Legacy, BIP-137 for the header byte), P2PKH only.
 *
 * digest = SHA256d(CompactSize(24) || "Bitcoin Signed Message:\n" ||
 * CompactSize(len(m)) || m); the proof is a 65-byte compact recoverable
 * signature, base64: header 27 + recid (+4 when the key is compressed), r, s.
 *
 * Decisions: headers 35..42 (BIP-137's segwit flags) are refused, since this
 * format is restricted to P2PKH (BIP-322 §Legacy); the compression flag in the
 * header chooses which key hash must match the address, as Core does. A high
 * S is accepted, as Core's verifymessage does (public key recovery does not
 * require a normalised signature).
 */
import * as secp from 'tiny-secp256k1';
import { tryDecodeAddress } from './address.js';
import { decodeBase64Strict, equalBytes, hash160, sha256d, utf8, writeCompactSize, compactSizeLength } from './bytes.js';

const MAGIC = utf8('\x18Bitcoin Signed Message:\n');
/** Base64 of 65 bytes. */
const LEGACY_SIGNATURE_LENGTH = 88;

/** SHA256d of the magic prefix and the length-prefixed UTF-8 message. */
export function legacyMessageHash(message: string): Uint8Array {
  const body = utf8(message);
  const data = new Uint8Array(MAGIC.length + compactSizeLength(body.length) + body.length);
  data.set(MAGIC, 0);
  const offset = writeCompactSize(data, MAGIC.length, body.length);
  data.set(body, offset);
  return sha256d(data);
}

/** 88 base64 characters decoding to 65 bytes whose header (27..34) marks a compact P2PKH signature. */
export function looksLikeLegacySignature(signature: string): boolean {
  return decodeLegacySignature(signature) !== null;
}

function decodeLegacySignature(signature: string): Uint8Array | null {
  if (typeof signature !== 'string' || signature.length !== LEGACY_SIGNATURE_LENGTH) return null;
  const bytes = decodeBase64Strict(signature);
  if (bytes?.length !== 65) return null;
  const header = bytes[0]!;
  if (header < 27 || header > 34) return null;
  return bytes;
}

/**
 * A 65-byte compact recoverable signature in base64 with any message-signing
 * header (27..34 for P2PKH, and 35..42, which BIP-137 wallets use for
 * P2SH-P2WPKH and P2WPKH): what a wallet gives when it signs with the
 * legacy method instead of BIP-322.
 */
export function looksLikeCompactSignature(signature: string): boolean {
  if (typeof signature !== 'string' || signature.length !== LEGACY_SIGNATURE_LENGTH) return false;
  const bytes = decodeBase64Strict(signature);
  return bytes !== null && bytes.length === 65 && bytes[0]! >= 27 && bytes[0]! <= 42;
}

/** Verifies a `signmessage` signature for a P2PKH address (any network). Never throws. */
export function verifyLegacy(address: string, message: string, signature: string): boolean {
  try {
    if (typeof message !== 'string') return false;
    const decoded = tryDecodeAddress(address);
    if (decoded?.type !== 'p2pkh') return false;
    const bytes = decodeLegacySignature(signature);
    if (!bytes) return false;
    const header = bytes[0]! - 27;
    const recoveryId = (header & 3) as 0 | 1 | 2 | 3;
    const compressed = (header & 4) !== 0;
    const publicKey = secp.recover(legacyMessageHash(message), bytes.subarray(1), recoveryId, compressed);
    if (!publicKey) return false;
    return equalBytes(hash160(publicKey), decoded.program);
  } catch {
    // recover() throws on r or s of zero or not below n, and on an r that cannot be an x coordinate.
    return false;
  }
}
