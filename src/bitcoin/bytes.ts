/**
 * Byte helpers for the Bitcoin code: hashes, strict text encodings and a
 * bounds-checked reader for consensus serialisation. Internal to
 * `src/bitcoin`; nothing here does I/O.
 *
 * SHA-256 goes through `node:crypto`'s one-shot `hash()`: for the 36-240 byte
 * inputs of the BIP-322 hot path it measured ~1.0 µs per call on Node 20,
 * against ~1.1-2.2 µs for @noble/hashes and ~1.3 µs for `createHash()`
 * (docs/performance.md asks for the measurement; see bench/bip322.bench.ts).
 * RIPEMD-160 also goes through OpenSSL (~1 µs against ~1.4 µs), with
 * @noble/hashes as the fallback for OpenSSL 3 builds that lack it.
 */
import { hash } from 'node:crypto';
import { ripemd160 as nobleRipemd160 } from '@noble/hashes/legacy.js';

export function sha256(data: Uint8Array): Uint8Array {
  return hash('sha256', data, 'buffer');
}

/** Double SHA-256, the hash of txids and legacy/BIP-143 sighashes. */
export function sha256d(data: Uint8Array): Uint8Array {
  return hash('sha256', hash('sha256', data, 'buffer'), 'buffer');
}

const ripemd160: (data: Uint8Array) => Uint8Array = (() => {
  try {
    hash('ripemd160', new Uint8Array(0), 'buffer');
    return (data: Uint8Array) => hash('ripemd160', data, 'buffer');
  } catch {
    return nobleRipemd160;
  }
})();

/** RIPEMD-160(SHA-256(data)): the key and script hash of P2PKH, P2SH and P2WPKH. */
export function hash160(data: Uint8Array): Uint8Array {
  return ripemd160(hash('sha256', data, 'buffer'));
}

const textEncoder = new TextEncoder();

export function utf8(text: string): Uint8Array {
  return textEncoder.encode(text);
}

/** SHA256(tag) || SHA256(tag): the 64-byte prefix of a BIP-340 tagged hash. */
export function taggedHashPrefix(tag: string): Uint8Array {
  const tagHash = sha256(utf8(tag));
  const prefix = new Uint8Array(64);
  prefix.set(tagHash, 0);
  prefix.set(tagHash, 32);
  return prefix;
}

/** BIP-340 §Design: tagged_hash(tag, x) = SHA256(SHA256(tag) || SHA256(tag) || x). */
export function taggedHash(tag: string, ...parts: Uint8Array[]): Uint8Array {
  return sha256(concatBytes(taggedHashPrefix(tag), ...parts));
}

export function concatBytes(...parts: Uint8Array[]): Uint8Array {
  let length = 0;
  for (const part of parts) length += part.length;
  const out = new Uint8Array(length);
  let offset = 0;
  for (const part of parts) {
    out.set(part, offset);
    offset += part.length;
  }
  return out;
}

export function equalBytes(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

export function toHex(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('hex');
}

export function toBase64(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('base64');
}

const HEX_PATTERN = /^(?:[0-9a-fA-F]{2})*$/;

/** Strict hex (either case, even length) or null. `Buffer.from(_, 'hex')` alone stops silently at the first bad digit. */
export function decodeHexStrict(text: string): Uint8Array | null {
  if (!HEX_PATTERN.test(text)) return null;
  return Buffer.from(text, 'hex');
}

/** RFC 4648 §4 alphabet: symbol value by character code, -1 for anything else. */
const BASE64_VALUES = new Int8Array(128).fill(-1);
for (const [index, character] of [...'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/'].entries()) {
  BASE64_VALUES[character.charCodeAt(0)] = index;
}

function base64Value(text: string, index: number): number {
  const code = text.charCodeAt(index);
  return code < 128 ? BASE64_VALUES[code]! : -1;
}

/**
 * Strict, canonical base64 (RFC 4648 §4: standard alphabet, mandatory
 * padding, no whitespace) or null. `Buffer.from(_, 'base64')` skips foreign
 * characters and ignores the unused bits of the last symbol; accepting those
 * would let several strings stand for one signature, so this decoder refuses
 * both (RFC 4648 §3.5: pad bits must be zero). Written out by hand because it
 * is also cheaper than a validating regex followed by Buffer.from.
 */
export function decodeBase64Strict(text: string): Uint8Array | null {
  const length = text.length;
  if (length % 4 !== 0) return null;
  let padding = 0;
  if (length > 0 && text.charCodeAt(length - 1) === 0x3d /* = */) padding = text.charCodeAt(length - 2) === 0x3d ? 2 : 1;
  const out = new Uint8Array((length / 4) * 3 - padding);
  const fullGroupsEnd = padding === 0 ? length : length - 4;
  let offset = 0;
  for (let i = 0; i < fullGroupsEnd; i += 4) {
    const a = base64Value(text, i);
    const b = base64Value(text, i + 1);
    const c = base64Value(text, i + 2);
    const d = base64Value(text, i + 3);
    if ((a | b | c | d) < 0) return null;
    out[offset++] = (a << 2) | (b >> 4);
    out[offset++] = ((b & 0x0f) << 4) | (c >> 2);
    out[offset++] = ((c & 0x03) << 6) | d;
  }
  if (padding !== 0) {
    const i = length - 4;
    const a = base64Value(text, i);
    const b = base64Value(text, i + 1);
    if ((a | b) < 0) return null;
    out[offset++] = (a << 2) | (b >> 4);
    if (padding === 2) {
      if ((b & 0x0f) !== 0) return null;
    } else {
      const c = base64Value(text, i + 2);
      if (c < 0 || (c & 0x03) !== 0) return null;
      out[offset++] = ((b & 0x0f) << 4) | (c >> 2);
    }
  }
  return out;
}

export class ParseError extends Error {
  readonly code = 'parse_error';
  constructor(message: string) {
    super(`bitcoin: ${message}`);
    this.name = 'ParseError';
  }
}

/**
 * Reader for Bitcoin consensus serialisation. Every read is bounds-checked and
 * throws {@link ParseError}; callers that must never throw catch it once.
 */
export class ByteReader {
  offset = 0;
  constructor(readonly bytes: Uint8Array) {}

  get remaining(): number {
    return this.bytes.length - this.offset;
  }

  readByte(): number {
    if (this.offset >= this.bytes.length) throw new ParseError('unexpected end of data');
    return this.bytes[this.offset++]!;
  }

  readUint32LE(): number {
    const b = this.readBytes(4);
    return (b[0]! | (b[1]! << 8) | (b[2]! << 16) | (b[3]! << 24)) >>> 0;
  }

  /** A view (no copy) of the next `length` bytes. */
  readBytes(length: number): Uint8Array {
    if (length > this.bytes.length - this.offset) throw new ParseError('unexpected end of data');
    const view = this.bytes.subarray(this.offset, this.offset + length);
    this.offset += length;
    return view;
  }

  /**
   * CompactSize, canonical form only: Bitcoin Core's ReadCompactSize rejects
   * a value written with more bytes than needed ("non-canonical
   * ReadCompactSize()"), so a signature cannot be re-encoded into a second
   * valid string. Values above 2^32 are never meaningful here and are refused.
   */
  readCompactSize(): number {
    const first = this.readByte();
    if (first < 0xfd) return first;
    if (first === 0xfd) {
      const b = this.readBytes(2);
      const value = b[0]! | (b[1]! << 8);
      if (value < 0xfd) throw new ParseError('non-canonical compact size');
      return value;
    }
    if (first === 0xfe) {
      const value = this.readUint32LE();
      if (value <= 0xffff) throw new ParseError('non-canonical compact size');
      return value;
    }
    throw new ParseError('compact size too large');
  }

  /** A CompactSize length followed by that many bytes. */
  readVarBytes(): Uint8Array {
    return this.readBytes(this.readCompactSize());
  }
}

export function compactSizeLength(value: number): number {
  return value < 0xfd ? 1 : value <= 0xffff ? 3 : 5;
}

/** Writes a CompactSize at `offset` and returns the offset after it. */
export function writeCompactSize(target: Uint8Array, offset: number, value: number): number {
  if (value < 0xfd) {
    target[offset] = value;
    return offset + 1;
  }
  if (value <= 0xffff) {
    target[offset] = 0xfd;
    target[offset + 1] = value & 0xff;
    target[offset + 2] = value >>> 8;
    return offset + 3;
  }
  target[offset] = 0xfe;
  writeUint32LE(target, offset + 1, value);
  return offset + 5;
}

export function writeUint32LE(target: Uint8Array, offset: number, value: number): void {
  target[offset] = value & 0xff;
  target[offset + 1] = (value >>> 8) & 0xff;
  target[offset + 2] = (value >>> 16) & 0xff;
  target[offset + 3] = (value >>> 24) & 0xff;
}
