/**
 * BIP-322 generic signed messages: verification of the simple and full forms
 * for single-key outputs (P2WPKH, P2SH-P2WPKH, P2TR key path; P2PKH in the
 * full form only).
 *
 * This is a purpose-built checker, not a script interpreter. BIP-322
 * §Verification step 2 lets a validator without a full interpreter answer
 * "inconclusive" for scripts it does not understand; here that is the
 * `unsupported` outcome (P2WSH, P2SH wrapping anything but P2WPKH, taproot
 * script paths), which callers report as an unsupported script, never as a
 * valid proof.
 *
 * Signature encodings accepted (decisions where the BIP leaves room):
 * - base64 (RFC 4648, padded, canonical) or hex of the proof;
 * - the BIP's variant prefix `smp` (simple) or `ful` (full) before base64
 *   (BIP-322 §Types of Signatures, 2026); `pof` (proof of funds) needs the
 *   UTXO set and is refused;
 * - without a prefix, the bytes are tried as a simple witness stack and then
 *   as a full transaction (BIP-322 lets a verifier assume simple in the
 *   absence of a prefix; full proofs from before the prefix existed carry
 *   none, and a real to_sign never parses as a complete witness stack).
 *
 * Full form (BIP-322 §Verification): exactly one input, spending
 * to_spend:0, exactly one output of value 0 paying to the bare OP_RETURN
 * script; nVersion 0 or 2 (else inconclusive per the upgradeable rules);
 * nLockTime and the input's nSequence are not checked but enter the sighash,
 * as the BIP says ("valid at time T and age S"). Additional inputs (proof of
 * funds) need the UTXO set and are refused.
 *
 * Required rules enforced (BIP-322 §Verification step 3): SIGHASH_ALL only
 * (for P2TR also SIGHASH_DEFAULT, its 64-byte equivalent), strict DER, LOW_S,
 * minimal pushes, clean stack, compressed keys in segwit v0.
 */
import { decodeAddress, type DecodedAddress } from './address.js';
import { decodeBase64Strict, decodeHexStrict, equalBytes, hash160, ParseError, sha256, taggedHash } from './bytes.js';
import { isCompressedPublicKey, isStrictPublicKey, parseStrictDer, verifyEcdsa, verifySchnorr } from './ecdsa.js';
import * as secp from 'tiny-secp256k1';
import {
  SIGHASH_ALL,
  SIGHASH_DEFAULT,
  bip143Sighash,
  bip341Sighash,
  legacySighash,
  messageHashBip322,
  parseTransaction,
  parseWitnessStack,
  toSpendTxid,
  type Transaction,
  type WitnessStack,
} from './tx.js';

export { messageHashBip322 } from './tx.js';

/** valid; invalid; unsupported = BIP-322 "inconclusive" for a script kind this verifier does not evaluate. */
export type Bip322Outcome = 'valid' | 'invalid' | 'unsupported';

/**
 * Decoded proofs above this size are refused before any parsing. A
 * single-key full proof is under 300 bytes; the cap only bounds the work a
 * hostile caller can cause.
 */
const MAX_BIP322_SIGNATURE_BYTES = 4096;
const MAX_SIGNATURE_TEXT = 3 + 2 * MAX_BIP322_SIGNATURE_BYTES;

type Form = 'simple' | 'full' | 'any';

interface Candidate {
  bytes: Uint8Array;
  form: Form;
}

/**
 * Verifies a BIP-322 simple or full proof for an address. Never throws: any
 * malformed address, signature or message gives false.
 */
export function verifyBip322(address: string, message: string, signature: string): boolean {
  return checkBip322(address, message, signature) === 'valid';
}

/** As {@link verifyBip322}, but tells "unsupported script kind" apart from "invalid". */
export function checkBip322(address: string, message: string, signature: string): Bip322Outcome {
  try {
    if (typeof message !== 'string') return 'invalid';
    const decoded = decodeAddress(address);
    return checkBip322Decoded(decoded, message, signature);
  } catch {
    return 'invalid';
  }
}

/** For callers that already decoded the address (verify.ts). Never throws. */
export function checkBip322Decoded(decoded: DecodedAddress, message: string, signature: string): Bip322Outcome {
  try {
    if (decoded.type === 'p2wsh') return 'unsupported';
    const candidates = decodeSignatureText(signature);
    if (candidates.length === 0) return 'invalid';
    const context = new ProofContext(decoded, message);
    let best: Bip322Outcome = 'invalid';
    for (const candidate of candidates) {
      const outcome = checkCandidate(context, candidate);
      if (outcome === 'valid') return outcome;
      if (outcome === 'unsupported') best = outcome;
    }
    return best;
  } catch {
    return 'invalid';
  }
}

/**
 * The byte strings a signature text may stand for. Hex is tried before
 * base64 because every even-length hex string of length 4k is also valid
 * base64; only the right reading can verify, so trying both is safe.
 */
function decodeSignatureText(signature: string): Candidate[] {
  if (typeof signature !== 'string' || signature.length === 0 || signature.length > MAX_SIGNATURE_TEXT) return [];
  const candidates: Candidate[] = [];
  const hex = decodeHexStrict(signature);
  if (hex && hex.length <= MAX_BIP322_SIGNATURE_BYTES) candidates.push({ bytes: hex, form: 'any' });
  const base64 = decodeBase64Strict(signature);
  if (base64 && base64.length <= MAX_BIP322_SIGNATURE_BYTES) candidates.push({ bytes: base64, form: 'any' });
  if (candidates.length === 0 && signature.length > 3) {
    const prefix = signature.slice(0, 3);
    if (prefix === 'smp' || prefix === 'ful') {
      const bytes = decodeBase64Strict(signature.slice(3));
      if (bytes && bytes.length <= MAX_BIP322_SIGNATURE_BYTES) candidates.push({ bytes, form: prefix === 'smp' ? 'simple' : 'full' });
    }
  }
  return candidates;
}

/** What every check of one (address, message) pair shares; to_spend is computed once, lazily. */
class ProofContext {
  private txid: Uint8Array | undefined;
  constructor(
    readonly address: DecodedAddress,
    readonly message: string,
  ) {}

  get toSpendTxid(): Uint8Array {
    if (!this.txid) this.txid = toSpendTxid(messageHashBip322(this.message), this.address.scriptPubKey);
    return this.txid;
  }
}

function checkCandidate(context: ProofContext, candidate: Candidate): Bip322Outcome {
  let best: Bip322Outcome = 'invalid';
  if (candidate.form !== 'full') {
    const stack = tryParse(() => parseWitnessStack(candidate.bytes));
    if (stack) {
      best = checkSimple(context, stack);
      if (best === 'valid') return best;
    }
  }
  if (candidate.form !== 'simple') {
    const tx = tryParse(() => parseTransaction(candidate.bytes));
    if (tx) {
      const outcome = checkFull(context, tx);
      if (outcome !== 'invalid') return outcome;
    }
  }
  return best;
}

function tryParse<T>(parse: () => T): T | null {
  try {
    return parse();
  } catch (error) {
    if (error instanceof ParseError) return null;
    throw error;
  }
}

/** BIP-322 §Simple: to_sign with all defaults and the witness from the proof. */
function checkSimple(context: ProofContext, witness: WitnessStack): Bip322Outcome {
  const { address } = context;
  switch (address.type) {
    case 'p2wpkh':
      return checkWitnessV0KeyHash(context, witness, address.program, 0, 0, 0);
    case 'p2sh':
      // Nested segwit: the simple form carries only the witness; the
      // scriptSig (a push of the redeem script 0014<hash160(pubkey)>) is
      // implied by it, as Sparrow and bip322-js produce and expect.
      return checkNestedKeyHash(context, witness, null, 0, 0, 0);
    case 'p2tr':
      return checkTaproot(context, witness, 0, 0, 0);
    default:
      // P2PKH has no witness: BIP-322 §Signing allows only the full form.
      return 'invalid';
  }
}

/** BIP-322 §Full and §Verification step 1: the shape of to_sign, then the input's script. */
function checkFull(context: ProofContext, tx: Transaction): Bip322Outcome {
  // Upgradeable rule: nVersion must be 0 or 2 (otherwise inconclusive, reported invalid).
  if (tx.version !== 0 && tx.version !== 2) return 'invalid';
  // Proof of funds (extra inputs) needs the UTXO set: refused.
  if (tx.inputs.length !== 1 || tx.outputs.length !== 1) return 'invalid';
  const output = tx.outputs[0]!;
  if (!isZeroAmount(output.value) || output.script.length !== 1 || output.script[0] !== 0x6a) return 'invalid';
  const input = tx.inputs[0]!;
  if (input.prevIndex !== 0 || !equalBytes(input.prevTxid, context.toSpendTxid)) return 'invalid';
  const { version, lockTime } = tx;
  const { sequence, scriptSig, witness } = input;
  switch (context.address.type) {
    case 'p2wpkh':
      // BIP-141: a native witness spend must have an empty scriptSig.
      if (scriptSig.length !== 0) return 'invalid';
      return checkWitnessV0KeyHash(context, witness, context.address.program, version, sequence, lockTime);
    case 'p2tr':
      if (scriptSig.length !== 0) return 'invalid';
      return checkTaproot(context, witness, version, sequence, lockTime);
    case 'p2sh':
      return checkNestedKeyHash(context, witness, scriptSig, version, sequence, lockTime);
    case 'p2pkh':
      if (witness.length !== 0) return 'invalid'; // consensus: no witness for a non-witness spend
      return checkPayToPublicKeyHash(context, scriptSig, version, sequence, lockTime);
    default:
      return 'unsupported';
  }
}

function isZeroAmount(value: Uint8Array): boolean {
  for (let i = 0; i < value.length; i++) if (value[i] !== 0) return false;
  return true;
}

/**
 * Witness v0 key hash (BIP-141 P2WPKH): witness exactly [signature, pubkey],
 * pubkey compressed and hashing to the program, signature strict DER + low S
 * with SIGHASH_ALL, checked against the BIP-143 sighash.
 */
function checkWitnessV0KeyHash(
  context: ProofContext,
  witness: WitnessStack,
  keyHash: Uint8Array,
  version: number,
  sequence: number,
  lockTime: number,
): Bip322Outcome {
  if (witness.length !== 2) return 'invalid';
  const signature = witness[0]!;
  const publicKey = witness[1]!;
  if (!isCompressedPublicKey(publicKey)) return 'invalid';
  if (signature.length < 9 || signature[signature.length - 1] !== SIGHASH_ALL) return 'invalid';
  const compact = parseStrictDer(signature.subarray(0, signature.length - 1));
  if (!compact) return 'invalid';
  if (!equalBytes(hash160(publicKey), keyHash)) return 'invalid';
  const sighash = bip143Sighash(context.toSpendTxid, keyHash, version, sequence, lockTime);
  return verifyEcdsa(sighash, publicKey, compact) ? 'valid' : 'invalid';
}

/**
 * P2SH-P2WPKH (BIP-141 §P2WPKH nested in BIP16 P2SH). `scriptSig` is null
 * in the simple form, where the redeem script is derived from the witness
 * key; in the full form it must be exactly the minimal push of that script.
 */
function checkNestedKeyHash(
  context: ProofContext,
  witness: WitnessStack,
  scriptSig: Uint8Array | null,
  version: number,
  sequence: number,
  lockTime: number,
): Bip322Outcome {
  const scriptHash = context.address.program;
  if (scriptSig !== null) {
    // BIP-16: the last push of the scriptSig is the redeem script.
    const pushes = parsePushOnly(scriptSig);
    if (!pushes || pushes.length === 0) return 'invalid';
    const redeemScript = pushes[pushes.length - 1]!;
    if (!equalBytes(hash160(redeemScript), scriptHash)) return 'invalid';
    const isNestedKeyHash = redeemScript.length === 22 && redeemScript[0] === 0x00 && redeemScript[1] === 0x14;
    // The address commits to some other redeem script (P2SH-P2WSH, multisig, …).
    if (!isNestedKeyHash) return 'unsupported';
    // BIP-141 §P2WPKH nested in P2SH: the scriptSig must be exactly one minimal push of it.
    if (pushes.length !== 1 || scriptSig.length !== 23 || scriptSig[0] !== 22) return 'invalid';
    const keyHash = redeemScript.subarray(2);
    return checkWitnessV0KeyHash(context, witness, keyHash, version, sequence, lockTime);
  }
  if (witness.length === 2 && witness[1]!.length === 33) {
    const keyHash = hash160(witness[1]!);
    if (!equalBytes(hash160(nestedRedeemScript(keyHash)), scriptHash)) return 'invalid';
    return checkWitnessV0KeyHash(context, witness, keyHash, version, sequence, lockTime);
  }
  // A P2SH-P2WSH simple proof ends with the witness script: recognise it so
  // the answer is "unsupported" rather than "invalid".
  if (witness.length >= 1) {
    const witnessScript = witness[witness.length - 1]!;
    const redeemScript = new Uint8Array(34);
    redeemScript[1] = 0x20;
    redeemScript.set(sha256(witnessScript), 2);
    if (equalBytes(hash160(redeemScript), scriptHash)) return 'unsupported';
  }
  return 'invalid';
}

/**
 * The data pushed by a push-only script (OP_0, direct pushes, PUSHDATA1/2/4,
 * OP_1NEGATE, OP_1..OP_16), or null if it holds any other opcode or is
 * truncated. Only used to find a P2SH redeem script.
 */
function parsePushOnly(script: Uint8Array): Uint8Array[] | null {
  const pushes: Uint8Array[] = [];
  let offset = 0;
  while (offset < script.length) {
    const opcode = script[offset++]!;
    let length: number;
    if (opcode <= 0x4b) length = opcode;
    else if (opcode === 0x4c) length = script[offset++] ?? -1;
    else if (opcode === 0x4d) {
      length = offset + 2 <= script.length ? script[offset]! | (script[offset + 1]! << 8) : -1;
      offset += 2;
    } else if (opcode === 0x4e) {
      length =
        offset + 4 <= script.length
          ? (script[offset]! | (script[offset + 1]! << 8) | (script[offset + 2]! << 16) | (script[offset + 3]! << 24)) >>> 0
          : -1;
      offset += 4;
    } else if (opcode === 0x4f || (opcode >= 0x51 && opcode <= 0x60)) {
      pushes.push(Uint8Array.of(opcode === 0x4f ? 0x81 : opcode - 0x50));
      continue;
    } else return null;
    if (length < 0 || offset + length > script.length) return null;
    pushes.push(script.subarray(offset, offset + length));
    offset += length;
  }
  return pushes;
}

function nestedRedeemScript(keyHash: Uint8Array): Uint8Array {
  const script = new Uint8Array(22);
  script[1] = 0x14;
  script.set(keyHash, 2);
  return script;
}

/**
 * Taproot key path (BIP-341 §Script validation rules): the witness is one
 * 64-byte signature (SIGHASH_DEFAULT) or 65 bytes ending in 0x01
 * (SIGHASH_ALL), checked with BIP-340 against the output key itself; the
 * signer tweaked its key, the verifier needs nothing but the program. An
 * annex (last item starting 0x50) is refused. A witness that is a valid
 * script-path spend of this output is reported unsupported.
 */
function checkTaproot(context: ProofContext, witness: WitnessStack, version: number, sequence: number, lockTime: number): Bip322Outcome {
  const outputKey = context.address.program;
  if (witness.length !== 1) {
    return isTaprootScriptPath(witness, outputKey) ? 'unsupported' : 'invalid';
  }
  const signature = witness[0]!;
  let hashType: number;
  if (signature.length === 64) hashType = SIGHASH_DEFAULT;
  else if (signature.length === 65 && signature[64] === SIGHASH_ALL) hashType = SIGHASH_ALL;
  else return 'invalid';
  const sighash = bip341Sighash(context.toSpendTxid, context.address.scriptPubKey, hashType, version, sequence, lockTime);
  return verifySchnorr(sighash, outputKey, signature.subarray(0, 64)) ? 'valid' : 'invalid';
}

/**
 * Whether a witness is a script-path spend whose control block really commits
 * to this output key (BIP-341 §Script validation rules, steps 3-5).
 */
function isTaprootScriptPath(witness: WitnessStack, outputKey: Uint8Array): boolean {
  let items = witness.length;
  if (items >= 2 && witness[items - 1]!.length > 0 && witness[items - 1]![0] === 0x50) items--; // annex
  if (items < 2) return false;
  const control = witness[items - 1]!;
  const script = witness[items - 2]!;
  if (control.length < 33 || (control.length - 33) % 32 !== 0 || control.length > 33 + 128 * 32) return false;
  const leafVersion = control[0]! & 0xfe;
  const internalKey = control.subarray(1, 33);
  const scriptLengthPrefix = compactSizeBytes(script.length);
  let node = taggedHash('TapLeaf', Uint8Array.of(leafVersion), scriptLengthPrefix, script);
  for (let offset = 33; offset < control.length; offset += 32) {
    const sibling = control.subarray(offset, offset + 32);
    node = Buffer.compare(node, sibling) <= 0 ? taggedHash('TapBranch', node, sibling) : taggedHash('TapBranch', sibling, node);
  }
  const tweak = taggedHash('TapTweak', internalKey, node);
  try {
    return secp.xOnlyPointAddTweakCheck(internalKey, tweak, outputKey, (control[0]! & 1) as 0 | 1);
  } catch {
    return false;
  }
}

function compactSizeBytes(value: number): Uint8Array {
  if (value < 0xfd) return Uint8Array.of(value);
  if (value <= 0xffff) return Uint8Array.of(0xfd, value & 0xff, value >>> 8);
  return Uint8Array.of(0xfe, value & 0xff, (value >>> 8) & 0xff, (value >>> 16) & 0xff, value >>> 24);
}

/**
 * P2PKH in the full form: scriptSig exactly <sig> <pubkey> as two minimal
 * direct pushes (SIGPUSHONLY, MINIMALDATA, CLEANSTACK), key STRICTENC and
 * hashing to the address, legacy sighash with SIGHASH_ALL.
 */
function checkPayToPublicKeyHash(
  context: ProofContext,
  scriptSig: Uint8Array,
  version: number,
  sequence: number,
  lockTime: number,
): Bip322Outcome {
  const signatureLength = scriptSig[0];
  if (signatureLength === undefined || signatureLength < 9 || signatureLength > 73) return 'invalid';
  const keyOffset = 1 + signatureLength;
  const keyLength = scriptSig[keyOffset];
  if (keyLength === undefined || keyOffset + 1 + keyLength !== scriptSig.length) return 'invalid';
  const signature = scriptSig.subarray(1, keyOffset);
  const publicKey = scriptSig.subarray(keyOffset + 1);
  if (!isStrictPublicKey(publicKey)) return 'invalid';
  if (signature[signature.length - 1] !== SIGHASH_ALL) return 'invalid';
  const compact = parseStrictDer(signature.subarray(0, signature.length - 1));
  if (!compact) return 'invalid';
  const keyHash = context.address.program;
  if (!equalBytes(hash160(publicKey), keyHash)) return 'invalid';
  const sighash = legacySighash(context.toSpendTxid, keyHash, version, sequence, lockTime);
  return verifyEcdsa(sighash, publicKey, compact) ? 'valid' : 'invalid';
}
