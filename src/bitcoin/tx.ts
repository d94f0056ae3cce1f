/**
 * The two virtual transactions of BIP-322 and the three signature hashes the
 * verifier needs, written straight into small preallocated buffers: no
 * transaction objects on the hot path (docs/performance.md: the signature check
 * itself must dominate the cost).
 *
 * `to_spend` (BIP-322 §Full):
 *   nVersion 0, nLockTime 0, one input spending 000…000:0xFFFFFFFF with
 *   nSequence 0 and scriptSig OP_0 PUSH32[message_hash], one output of value 0
 *   paying to message_challenge (the address's scriptPubKey).
 * `to_sign`:
 *   one input spending to_spend:0, one output of value 0 with scriptPubKey
 *   OP_RETURN; nVersion, nLockTime and nSequence are 0 in the simple form.
 *
 * All hashes here are in internal byte order (as they appear in serialised
 * outpoints); display txids are the reverse.
 */
import { createHash, hash } from 'node:crypto';
import { ByteReader, ParseError, compactSizeLength, sha256, sha256d, taggedHashPrefix, writeCompactSize, writeUint32LE } from './bytes.js';

export const SIGHASH_DEFAULT = 0x00;
export const SIGHASH_ALL = 0x01;

const MESSAGE_TAG_PREFIX = taggedHashPrefix('BIP0322-signed-message');
/** Tag prefix followed by room for messages up to 1 KiB of UTF-8; longer ones stream through createHash. */
const messageBuffer = Buffer.alloc(64 + 1024);
messageBuffer.set(MESSAGE_TAG_PREFIX, 0);

/**
 * BIP-322 §Full: message_hash = sha256_tag("BIP0322-signed-message", m), m
 * the UTF-8 bytes of the message without length prefix. (A lone surrogate
 * encodes as U+FFFD, as everywhere in JavaScript.)
 */
export function messageHashBip322(message: string): Uint8Array {
  // Three UTF-8 bytes at most per UTF-16 code unit: a short message fits the scratch buffer.
  if (message.length * 3 <= messageBuffer.length - 64) {
    const written = messageBuffer.write(message, 64, 'utf8');
    return hash('sha256', messageBuffer.subarray(0, 64 + written), 'buffer');
  }
  return createHash('sha256').update(MESSAGE_TAG_PREFIX).update(message, 'utf8').digest();
}

// to_spend serialisation without the scriptPubKey and nLockTime:
// version(4) vin-count(1) prevout(32+4) scriptSig-len(1) scriptSig(34) sequence(4) vout-count(1) value(8)
const TO_SPEND_HEAD = 4 + 1 + 36 + 1 + 34 + 4 + 1 + 8;
const TO_SPEND_MESSAGE_HASH_OFFSET = 4 + 1 + 36 + 1 + 2;
const toSpendBuffer = new Uint8Array(TO_SPEND_HEAD + 1 + 40 + 4 + 64);
{
  const b = toSpendBuffer;
  // nVersion 0 (bytes 0..3 stay zero); one input.
  b[4] = 0x01;
  // prevout: 32 zero bytes, then n = 0xFFFFFFFF.
  b.fill(0xff, 37, 41);
  // scriptSig: length 34 = OP_0 PUSH32 <message_hash>.
  b[41] = 0x22;
  b[42] = 0x00;
  b[43] = 0x20;
  // nSequence 0 (76..79), one output (80), value 0 (81..88).
  b[80] = 0x01;
}

/** txid (internal byte order) of to_spend for a message hash and a scriptPubKey. */
export function toSpendTxid(messageHash: Uint8Array, scriptPubKey: Uint8Array): Uint8Array {
  const spkLength = scriptPubKey.length;
  let buffer = toSpendBuffer;
  // Every standard output script fits the shared buffer; anything else gets its own.
  if (TO_SPEND_HEAD + compactSizeLength(spkLength) + spkLength + 4 > buffer.length) {
    buffer = new Uint8Array(TO_SPEND_HEAD + compactSizeLength(spkLength) + spkLength + 4);
    buffer.set(toSpendBuffer.subarray(0, TO_SPEND_HEAD));
  }
  buffer.set(messageHash, TO_SPEND_MESSAGE_HASH_OFFSET);
  let offset = writeCompactSize(buffer, TO_SPEND_HEAD, spkLength);
  buffer.set(scriptPubKey, offset);
  offset += spkLength;
  writeUint32LE(buffer, offset, 0); // nLockTime 0
  return sha256d(buffer.subarray(0, offset + 4));
}

const ZERO_SEQUENCE = new Uint8Array(4);
/** The single output of to_sign: value 0, scriptPubKey OP_RETURN. */
const TO_SIGN_OUTPUT = Uint8Array.of(0, 0, 0, 0, 0, 0, 0, 0, 0x01, 0x6a);
const ZERO_AMOUNT = new Uint8Array(8);

function sequenceBytes(sequence: number): Uint8Array {
  if (sequence === 0) return ZERO_SEQUENCE;
  const bytes = new Uint8Array(4);
  writeUint32LE(bytes, 0, sequence);
  return bytes;
}

// ---------------------------------------------------------------------------
// BIP-143 (segwit v0) signature hash, for P2WPKH and P2SH-P2WPKH.

const BIP143_HASH_SEQUENCE_ZERO = sha256d(ZERO_SEQUENCE);
/** A sighash of to_sign input 0, SIGHASH_ALL, for a key hash (P2WPKH or P2PKH). */
type KeyHashSighash = (toSpendTxid: Uint8Array, keyHash: Uint8Array, version: number, sequence: number, lockTime: number) => Uint8Array;

const BIP143_HASH_OUTPUTS = sha256d(TO_SIGN_OUTPUT);
const bip143Preimage = new Uint8Array(182);
const bip143Outpoint = new Uint8Array(36);
// scriptCode for P2WPKH (BIP-143 §Specification item 5):
// 0x1976a914{20-byte-pubkey-hash}88ac
bip143Preimage.set([0x19, 0x76, 0xa9, 0x14], 104);
bip143Preimage.set([0x88, 0xac], 128);
// amount 0 (130..137) stays zero; hashOutputs at 142.
bip143Preimage.set(BIP143_HASH_OUTPUTS, 142);

/**
 * BIP-143 sighash of to_sign input 0, SIGHASH_ALL, for a P2WPKH-style key
 * hash. Layout: nVersion | hashPrevouts | hashSequence | outpoint |
 * scriptCode | amount | nSequence | hashOutputs | nLockTime | nHashType.
 */
export const bip143Sighash: KeyHashSighash = (toSpendTxid, keyHash, version, sequence, lockTime) => {
  const p = bip143Preimage;
  writeUint32LE(p, 0, version);
  bip143Outpoint.set(toSpendTxid, 0); // vout 0: bytes 32..35 stay zero
  p.set(sha256d(bip143Outpoint), 4); // hashPrevouts
  p.set(sequence === 0 ? BIP143_HASH_SEQUENCE_ZERO : sha256d(sequenceBytes(sequence)), 36);
  p.set(bip143Outpoint, 68);
  p.set(keyHash, 108);
  writeUint32LE(p, 138, sequence);
  writeUint32LE(p, 174, lockTime);
  writeUint32LE(p, 178, SIGHASH_ALL);
  return sha256d(p);
};

// ---------------------------------------------------------------------------
// BIP-341 key-path signature hash, for P2TR.

const TAP_SIGHASH_PREFIX = taggedHashPrefix('TapSighash');
const BIP341_SHA_AMOUNTS = sha256(ZERO_AMOUNT);
const BIP341_SHA_SEQUENCES_ZERO = sha256(ZERO_SEQUENCE);
const BIP341_SHA_OUTPUTS = sha256(TO_SIGN_OUTPUT);
// tagged-hash prefix (64) | epoch 0x00 (1) | SigMsg (174)
const bip341Message = new Uint8Array(64 + 1 + 174);
const bip341ScriptPubKey = new Uint8Array(35);
{
  bip341Message.set(TAP_SIGHASH_PREFIX, 0);
  const m = 65;
  bip341Message.set(BIP341_SHA_AMOUNTS, m + 41);
  bip341Message.set(BIP341_SHA_OUTPUTS, m + 137);
  // spend_type 0 (key path, no annex) at m+169; input_index 0 at m+170..173.
  bip341ScriptPubKey[0] = 34; // CompactSize of the 34-byte P2TR scriptPubKey
}

/**
 * BIP-341 §Common signature message, key path, no annex, input 0 of
 * to_sign: hash_type | nVersion | nLockTime | sha_prevouts | sha_amounts |
 * sha_scriptpubkeys | sha_sequences | sha_outputs | spend_type | input_index,
 * hashed as TapSighash with epoch 0. `hashType` must be DEFAULT or ALL.
 */
export function bip341Sighash(
  toSpendTxid: Uint8Array,
  scriptPubKey: Uint8Array,
  hashType: number,
  version: number,
  sequence: number,
  lockTime: number,
): Uint8Array {
  if (scriptPubKey.length !== 34) throw new Error('bitcoin: BIP-341 sighash needs a 34-byte P2TR scriptPubKey');
  const b = bip341Message;
  const m = 65;
  b[m] = hashType;
  writeUint32LE(b, m + 1, version);
  writeUint32LE(b, m + 5, lockTime);
  bip143Outpoint.set(toSpendTxid, 0);
  b.set(sha256(bip143Outpoint), m + 9); // sha_prevouts
  bip341ScriptPubKey.set(scriptPubKey, 1);
  b.set(sha256(bip341ScriptPubKey), m + 73); // sha_scriptpubkeys
  b.set(sequence === 0 ? BIP341_SHA_SEQUENCES_ZERO : sha256(sequenceBytes(sequence)), m + 105);
  return sha256(b);
}

// ---------------------------------------------------------------------------
// Legacy (pre-segwit) signature hash, for P2PKH in the full form.

const legacyPreimage = new Uint8Array(90);
{
  const p = legacyPreimage;
  p[4] = 0x01; // one input
  // scriptCode = the P2PKH scriptPubKey being spent (no OP_CODESEPARATOR, so
  // FindAndDelete is a no-op; BIP-322 §Verification forbids both anyway).
  p.set([0x19, 0x76, 0xa9, 0x14], 41);
  p.set([0x88, 0xac], 65);
  p[71] = 0x01; // one output
  p.set(TO_SIGN_OUTPUT.subarray(8), 80); // value 0 at 72..79, then 0x01 0x6a
  writeUint32LE(p, 86, SIGHASH_ALL);
}

/** SignatureHash (Bitcoin Core, SIGVERSION_BASE) of to_sign input 0, SIGHASH_ALL, P2PKH. */
export const legacySighash: KeyHashSighash = (toSpendTxid, keyHash, version, sequence, lockTime) => {
  const p = legacyPreimage;
  writeUint32LE(p, 0, version);
  p.set(toSpendTxid, 5); // vout 0 at 37..40 stays zero
  p.set(keyHash, 45);
  writeUint32LE(p, 67, sequence);
  writeUint32LE(p, 82, lockTime);
  return sha256d(p);
};

// ---------------------------------------------------------------------------
// Witness stacks and full transactions.

export type WitnessStack = Uint8Array[];

/** Hard cap on items; no single-key spend needs more than a handful. */
const MAX_WITNESS_ITEMS = 1000;

/**
 * A consensus-encoded witness stack (BIP-322 §Simple: "a vector of vectors of
 * bytes"), which must use every byte. Items are views into `bytes`.
 */
export function parseWitnessStack(bytes: Uint8Array): WitnessStack {
  const reader = new ByteReader(bytes);
  const stack = readWitness(reader);
  if (reader.remaining !== 0) throw new ParseError('trailing bytes after witness stack');
  return stack;
}

function readWitness(reader: ByteReader): WitnessStack {
  const count = reader.readCompactSize();
  if (count > MAX_WITNESS_ITEMS || count > reader.remaining) throw new ParseError('witness item count too large');
  const stack: WitnessStack = new Array(count);
  for (let i = 0; i < count; i++) stack[i] = reader.readVarBytes();
  return stack;
}

export function serializeWitnessStack(stack: WitnessStack): Uint8Array {
  let length = compactSizeLength(stack.length);
  for (const item of stack) length += compactSizeLength(item.length) + item.length;
  const out = new Uint8Array(length);
  let offset = writeCompactSize(out, 0, stack.length);
  for (const item of stack) {
    offset = writeCompactSize(out, offset, item.length);
    out.set(item, offset);
    offset += item.length;
  }
  return out;
}

interface TxInput {
  prevTxid: Uint8Array;
  prevIndex: number;
  scriptSig: Uint8Array;
  sequence: number;
  witness: WitnessStack;
}

interface TxOutput {
  /** The 8-byte little-endian amount, kept raw: only "is it zero" matters here. */
  value: Uint8Array;
  script: Uint8Array;
}

export interface Transaction {
  version: number;
  inputs: TxInput[];
  outputs: TxOutput[];
  lockTime: number;
  /** Serialised with the BIP-144 marker and flag. */
  segwit: boolean;
}

/**
 * Deserialises a transaction the way Bitcoin Core does (BIP-144 extended
 * format when the marker is present): an unknown flag, a witness section
 * whose stacks are all empty ("superfluous witness record") or trailing
 * bytes are errors.
 */
export function parseTransaction(bytes: Uint8Array): Transaction {
  const reader = new ByteReader(bytes);
  const version = reader.readUint32LE();
  let segwit = false;
  if (reader.remaining >= 2 && bytes[reader.offset] === 0x00) {
    reader.readByte();
    if (reader.readByte() !== 0x01) throw new ParseError('unknown transaction flag');
    segwit = true;
  }
  const inputCount = reader.readCompactSize();
  if (inputCount === 0 || inputCount * 41 > reader.remaining) throw new ParseError('bad input count');
  const inputs: TxInput[] = [];
  for (let i = 0; i < inputCount; i++) {
    const prevTxid = reader.readBytes(32);
    const prevIndex = reader.readUint32LE();
    const scriptSig = reader.readVarBytes();
    const sequence = reader.readUint32LE();
    inputs.push({ prevTxid, prevIndex, scriptSig, sequence, witness: [] });
  }
  const outputCount = reader.readCompactSize();
  if (outputCount * 9 > reader.remaining) throw new ParseError('bad output count');
  const outputs: TxOutput[] = [];
  for (let i = 0; i < outputCount; i++) {
    const value = reader.readBytes(8);
    const script = reader.readVarBytes();
    outputs.push({ value, script });
  }
  if (segwit) {
    let anyWitness = false;
    for (const input of inputs) {
      input.witness = readWitness(reader);
      if (input.witness.length > 0) anyWitness = true;
    }
    if (!anyWitness) throw new ParseError('superfluous witness record');
  }
  const lockTime = reader.readUint32LE();
  if (reader.remaining !== 0) throw new ParseError('trailing bytes after transaction');
  return { version, inputs, outputs, lockTime, segwit };
}

/** to_sign for the signer: one input spending to_spend:0, one OP_RETURN output of value 0. */
export function serializeToSign(input: {
  toSpendTxid: Uint8Array;
  scriptSig: Uint8Array;
  witness: WitnessStack;
  version?: number;
  sequence?: number;
  lockTime?: number;
}): Uint8Array {
  const segwit = input.witness.length > 0;
  const witnessBytes = segwit ? serializeWitnessStack(input.witness) : new Uint8Array(0);
  const scriptSigLength = input.scriptSig.length;
  const length =
    4 +
    (segwit ? 2 : 0) +
    1 +
    36 +
    compactSizeLength(scriptSigLength) +
    scriptSigLength +
    4 +
    1 +
    TO_SIGN_OUTPUT.length +
    witnessBytes.length +
    4;
  const out = new Uint8Array(length);
  writeUint32LE(out, 0, input.version ?? 0);
  let offset = 4;
  if (segwit) {
    out[offset++] = 0x00; // BIP-144 marker
    out[offset++] = 0x01; // flag
  }
  out[offset++] = 0x01; // one input
  out.set(input.toSpendTxid, offset);
  offset += 36; // prevout index 0
  offset = writeCompactSize(out, offset, scriptSigLength);
  out.set(input.scriptSig, offset);
  offset += scriptSigLength;
  writeUint32LE(out, offset, input.sequence ?? 0);
  offset += 4;
  out[offset++] = 0x01; // one output
  out.set(TO_SIGN_OUTPUT, offset);
  offset += TO_SIGN_OUTPUT.length;
  out.set(witnessBytes, offset);
  offset += witnessBytes.length;
  writeUint32LE(out, offset, input.lockTime ?? 0);
  return out;
}

/** txid of a transaction given as its parts (the non-witness serialisation). */
export function toSignTxid(toSpendTxidBytes: Uint8Array, scriptSig: Uint8Array = new Uint8Array(0)): Uint8Array {
  return sha256d(serializeToSign({ toSpendTxid: toSpendTxidBytes, scriptSig, witness: [] }));
}
