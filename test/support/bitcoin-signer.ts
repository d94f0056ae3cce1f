/**
 * Signing, for tests and tooling only: the service itself never holds user
 * keys. Produces BIP-322 simple and full proofs and legacy signmessage
 * signatures with libsecp256k1 (RFC 6979 nonces for ECDSA, fresh auxiliary
 * randomness for BIP-340 as its §Default Signing recommends).
 *
 * Programmer errors (a key that does not belong to the address, an
 * unsupported address type or form) throw, with messages starting "signer:".
 */
import { randomBytes } from 'node:crypto';
import { createBase58check } from '@scure/base';
import * as secp from 'tiny-secp256k1';
import type { BitcoinNetwork } from '../../src/platform/config.js';
import { decodeAddress, encodeAddress } from '../../src/bitcoin/address.js';
import { concatBytes, equalBytes, hash160, sha256, taggedHash, toBase64, toHex } from '../../src/bitcoin/bytes.js';
import { encodeDer } from '../../src/bitcoin/ecdsa.js';
import { legacyMessageHash } from '../../src/bitcoin/legacy.js';
import {
  SIGHASH_ALL,
  SIGHASH_DEFAULT,
  bip143Sighash,
  bip341Sighash,
  legacySighash,
  messageHashBip322,
  serializeToSign,
  serializeWitnessStack,
  toSpendTxid,
  type WitnessStack,
} from '../../src/bitcoin/tx.js';

export type SignerAddressType = 'p2pkh' | 'p2sh-p2wpkh' | 'p2wpkh' | 'p2tr';

function assertPrivateKey(privateKey: Uint8Array): void {
  if (!(privateKey instanceof Uint8Array) || !secp.isPrivate(privateKey)) throw new Error('signer: invalid private key');
}

function publicKeyOf(privateKey: Uint8Array, compressed: boolean): Uint8Array {
  const key = secp.pointFromScalar(privateKey, compressed);
  if (!key) throw new Error('signer: invalid private key');
  return key;
}

/** BIP-86 / BIP-341 key-path output key and the matching secret: tweak with an empty script tree. */
function taprootKeyPair(privateKey: Uint8Array): { outputKey: Uint8Array; tweakedPrivateKey: Uint8Array } {
  const internal = publicKeyOf(privateKey, true);
  // BIP-340 keys are x-only with even Y: negate the secret when Y is odd.
  const evenSecret = internal[0] === 0x03 ? secp.privateNegate(privateKey) : privateKey;
  const xOnly = internal.subarray(1);
  const tweak = taggedHash('TapTweak', xOnly); // BIP-341: t = hashTapTweak(P) when there is no script tree
  const tweaked = secp.xOnlyPointAddTweak(xOnly, tweak);
  const tweakedPrivateKey = secp.privateAdd(evenSecret, tweak);
  if (!tweaked || !tweakedPrivateKey) throw new Error('signer: taproot tweak failed');
  return { outputKey: tweaked.xOnlyPubkey, tweakedPrivateKey };
}

function nestedRedeemScript(publicKey: Uint8Array): Uint8Array {
  return concatBytes(Uint8Array.of(0x00, 0x14), hash160(publicKey));
}

export function addressFromPrivateKey(
  privateKey: Uint8Array,
  type: SignerAddressType,
  network: BitcoinNetwork,
  options: { compressed?: boolean } = {},
): string {
  assertPrivateKey(privateKey);
  const compressed = options.compressed ?? true;
  if (!compressed && type !== 'p2pkh') throw new Error('signer: only P2PKH may use an uncompressed key (BIP-143)');
  switch (type) {
    case 'p2pkh':
      return encodeAddress('p2pkh', hash160(publicKeyOf(privateKey, compressed)), network);
    case 'p2sh-p2wpkh':
      return encodeAddress('p2sh', hash160(nestedRedeemScript(publicKeyOf(privateKey, true))), network);
    case 'p2wpkh':
      return encodeAddress('p2wpkh', hash160(publicKeyOf(privateKey, true)), network);
    case 'p2tr':
      return encodeAddress('p2tr', taprootKeyPair(privateKey).outputKey, network);
    default:
      throw new Error(`signer: unknown address type ${String(type)}`);
  }
}

function ecdsaSignature(sighash: Uint8Array, privateKey: Uint8Array): Uint8Array {
  // libsecp256k1 always produces a low-S signature (BIP-146).
  return concatBytes(encodeDer(secp.sign(sighash, privateKey)), Uint8Array.of(SIGHASH_ALL));
}

function pushData(data: Uint8Array): Uint8Array {
  if (data.length > 75) throw new Error('signer: push too long');
  return concatBytes(Uint8Array.of(data.length), data);
}

/**
 * A BIP-322 proof for `address`. Default form: simple, except P2PKH which
 * only has the full form. `prefix` adds the BIP's variant tag (`smp`/`ful`)
 * to base64 output; off by default because deployed verifiers predate it.
 */
export function signBip322(input: {
  privateKey: Uint8Array;
  address: string;
  message: string;
  form?: 'simple' | 'full';
  taprootSighashAll?: boolean;
  encoding?: 'base64' | 'hex';
  prefix?: boolean;
  /** Full form only (BIP-322 §Full: "as appropriate … for time locks"): to_sign nVersion (0 or 2), nLockTime, nSequence. */
  version?: number;
  lockTime?: number;
  sequence?: number;
}): string {
  const { privateKey, message } = input;
  assertPrivateKey(privateKey);
  const address = decodeAddress(input.address);
  const form = input.form ?? (address.type === 'p2pkh' ? 'full' : 'simple');
  const version = input.version ?? 0;
  const lockTime = input.lockTime ?? 0;
  const sequence = input.sequence ?? 0;
  if (form === 'simple' && (version !== 0 || lockTime !== 0 || sequence !== 0)) {
    throw new Error('signer: version, lockTime and sequence must be 0 in the simple form (BIP-322 §Simple)');
  }
  const txid = toSpendTxid(messageHashBip322(message), address.scriptPubKey);
  let witness: WitnessStack = [];
  let scriptSig: Uint8Array = new Uint8Array(0);

  switch (address.type) {
    case 'p2wpkh': {
      const publicKey = publicKeyOf(privateKey, true);
      if (!equalBytes(hash160(publicKey), address.program)) throw new Error('signer: key does not match the address');
      witness = [ecdsaSignature(bip143Sighash(txid, address.program, version, sequence, lockTime), privateKey), publicKey];
      break;
    }
    case 'p2sh': {
      const publicKey = publicKeyOf(privateKey, true);
      const redeemScript = nestedRedeemScript(publicKey);
      if (!equalBytes(hash160(redeemScript), address.program)) throw new Error('signer: key does not match the address (P2SH-P2WPKH only)');
      witness = [ecdsaSignature(bip143Sighash(txid, hash160(publicKey), version, sequence, lockTime), privateKey), publicKey];
      scriptSig = pushData(redeemScript);
      break;
    }
    case 'p2tr': {
      const { outputKey, tweakedPrivateKey } = taprootKeyPair(privateKey);
      if (!equalBytes(outputKey, address.program)) throw new Error('signer: key does not match the address');
      const hashType = input.taprootSighashAll ? SIGHASH_ALL : SIGHASH_DEFAULT;
      const sighash = bip341Sighash(txid, address.scriptPubKey, hashType, version, sequence, lockTime);
      const signature = secp.signSchnorr(sighash, tweakedPrivateKey, randomBytes(32));
      witness = [hashType === SIGHASH_ALL ? concatBytes(signature, Uint8Array.of(SIGHASH_ALL)) : signature];
      break;
    }
    case 'p2pkh': {
      if (form !== 'full') throw new Error('signer: P2PKH has only the full form (BIP-322 §Signing)');
      let publicKey = publicKeyOf(privateKey, true);
      if (!equalBytes(hash160(publicKey), address.program)) publicKey = publicKeyOf(privateKey, false);
      if (!equalBytes(hash160(publicKey), address.program)) throw new Error('signer: key does not match the address');
      const signature = ecdsaSignature(legacySighash(txid, address.program, version, sequence, lockTime), privateKey);
      scriptSig = concatBytes(pushData(signature), pushData(publicKey));
      break;
    }
    default:
      throw new Error(`signer: cannot sign for ${address.type} addresses`);
  }

  const bytes =
    form === 'simple'
      ? serializeWitnessStack(witness)
      : serializeToSign({ toSpendTxid: txid, scriptSig, witness, version, sequence, lockTime });
  if ((input.encoding ?? 'base64') === 'hex') {
    if (input.prefix) throw new Error('signer: the variant prefix applies to base64 only');
    return toHex(bytes);
  }
  return (input.prefix ? (form === 'simple' ? 'smp' : 'ful') : '') + toBase64(bytes);
}

/** Bitcoin Core `signmessage`: 65-byte compact recoverable signature, base64. */
export function signLegacy(privateKey: Uint8Array, message: string, options: { compressed?: boolean } = {}): string {
  assertPrivateKey(privateKey);
  const compressed = options.compressed ?? true;
  const { signature, recoveryId } = secp.signRecoverable(legacyMessageHash(message), privateKey);
  const out = new Uint8Array(65);
  out[0] = 27 + recoveryId + (compressed ? 4 : 0);
  out.set(signature, 1);
  return toBase64(out);
}

const base58check = createBase58check(sha256);

/** Decodes a WIF private key (mainnet 0x80 or test 0xef prefix). Throws on anything else. */
export function privateKeyFromWif(wif: string): { privateKey: Uint8Array; compressed: boolean; network: 'mainnet' | 'test' } {
  let payload: Uint8Array;
  try {
    payload = base58check.decode(wif);
  } catch {
    throw new Error('signer: invalid WIF');
  }
  const network = payload[0] === 0x80 ? 'mainnet' : payload[0] === 0xef ? 'test' : null;
  if (!network) throw new Error('signer: unknown WIF version');
  let compressed: boolean;
  if (payload.length === 34 && payload[33] === 0x01) compressed = true;
  else if (payload.length === 33) compressed = false;
  else throw new Error('signer: bad WIF length');
  const privateKey = payload.slice(1, 33);
  assertPrivateKey(privateKey);
  return { privateKey, compressed, network };
}

/** Encodes a private key as WIF (0x80 mainnet, 0xef for every test network). */
export function wifFromPrivateKey(privateKey: Uint8Array, network: BitcoinNetwork, options: { compressed?: boolean } = {}): string {
  assertPrivateKey(privateKey);
  const compressed = options.compressed ?? true;
  const payload = new Uint8Array(compressed ? 34 : 33);
  payload[0] = network === 'mainnet' ? 0x80 : 0xef;
  payload.set(privateKey, 1);
  if (compressed) payload[33] = 0x01;
  return base58check.encode(payload);
}
