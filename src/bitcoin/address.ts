/**
 * Bitcoin addresses: decoding to a typed program and scriptPubKey, encoding
 * from a program, and the network check.
 *
 * Base58Check (P2PKH, P2SH) and segwit addresses: Bech32 for witness v0
 * (BIP-173), Bech32m for v1 (BIP-350). Only the five output types the
 * verifier knows are accepted; any other valid-but-unknown witness program
 * (v1 with a non-32-byte program, v2..v16) is refused with AddressError,
 * because nothing downstream could check a signature for it.
 */
import { bech32, bech32m, createBase58check } from '@scure/base';
import type { BitcoinNetwork } from '../platform/config.js';
import { sha256 } from './bytes.js';

export type AddressType = 'p2pkh' | 'p2sh' | 'p2wpkh' | 'p2wsh' | 'p2tr';
/** testnet and signet share encodings, so an address can only say 'test'. */
type AddressNetwork = 'mainnet' | 'test' | 'regtest';

export interface DecodedAddress {
  /** The address in canonical form (segwit addresses lowercased, BIP-173 §Uppercase/lowercase). */
  address: string;
  type: AddressType;
  network: AddressNetwork;
  /** 20-byte key or script hash, or the 32-byte witness program. */
  program: Uint8Array;
  scriptPubKey: Uint8Array;
}

export class AddressError extends Error {
  readonly code = 'invalid_address';
  constructor(message: string) {
    super(`address: ${message}`);
    this.name = 'AddressError';
  }
}

const base58check = createBase58check(sha256);

/** Base58Check version bytes (Bitcoin Core chainparams). Regtest reuses the test prefixes. */
const BASE58_VERSIONS: Readonly<Record<number, { type: 'p2pkh' | 'p2sh'; network: AddressNetwork }>> = {
  0: { type: 'p2pkh', network: 'mainnet' },
  5: { type: 'p2sh', network: 'mainnet' },
  111: { type: 'p2pkh', network: 'test' },
  196: { type: 'p2sh', network: 'test' },
};

const SEGWIT_HRPS: Readonly<Record<string, AddressNetwork>> = { bc: 'mainnet', tb: 'test', bcrt: 'regtest' };

/** BIP-173: a segwit address is at most 90 characters; Base58 ones of ours at most 35. */
const MAX_ADDRESS_LENGTH = 90;

export function decodeAddress(address: string): DecodedAddress {
  if (typeof address !== 'string') throw new AddressError('not a string');
  if (address.length === 0) throw new AddressError('empty');
  // Checked before any decoding: Base58 decoding is quadratic in the length.
  if (address.length > MAX_ADDRESS_LENGTH) throw new AddressError('too long');
  const lower = address.toLowerCase();
  const separator = lower.lastIndexOf('1');
  if (separator > 0 && Object.hasOwn(SEGWIT_HRPS, lower.slice(0, separator))) return decodeSegwit(address);
  return decodeBase58(address);
}

export function tryDecodeAddress(address: string): DecodedAddress | null {
  try {
    return decodeAddress(address);
  } catch {
    return null;
  }
}

function decodeBase58(address: string): DecodedAddress {
  if (address.length < 26 || address.length > 35) throw new AddressError('bad length');
  let payload: Uint8Array;
  try {
    payload = base58check.decode(address);
  } catch {
    throw new AddressError('invalid base58check (character or checksum)');
  }
  if (payload.length !== 21) throw new AddressError('bad base58 payload length');
  const version = BASE58_VERSIONS[payload[0]!];
  if (!version) throw new AddressError('unknown base58 version byte');
  const program = payload.slice(1);
  return {
    address,
    type: version.type,
    network: version.network,
    program,
    scriptPubKey: scriptPubKeyFor(version.type, program),
  };
}

function decodeSegwit(address: string): DecodedAddress {
  // BIP-350 §Decoding: the checksum constant must match the witness version,
  // Bech32 for v0 and Bech32m for v1+. The version is the first data
  // character ('q' = 0), so the right checksum is tried first and the other
  // one only to tell a mismatch from a typo.
  const text = address as `${string}1${string}`;
  const versionCharacter = address[address.lastIndexOf('1') + 1]?.toLowerCase();
  const [first, second] = versionCharacter === 'q' ? [bech32, bech32m] : [bech32m, bech32];
  let decoded: { prefix: string; words: number[] };
  let isBech32m: boolean;
  // BIP-173: all lowercase or all uppercase. Checked here rather than read
  // from the decoder's error text, which is not an interface.
  if (address !== address.toLowerCase() && address !== address.toUpperCase()) throw new AddressError('mixed case');
  try {
    decoded = first.decode(text);
    isBech32m = first === bech32m;
  } catch {
    try {
      decoded = second.decode(text);
      isBech32m = second === bech32m;
    } catch {
      throw new AddressError('invalid bech32 checksum or character');
    }
  }
  const network = SEGWIT_HRPS[decoded.prefix];
  if (network === undefined) throw new AddressError('unknown human-readable part');
  if (decoded.words.length === 0) throw new AddressError('empty data section');
  const version = decoded.words[0]!;
  if (version > 16) throw new AddressError('invalid witness version');
  if (version === 0 && isBech32m) throw new AddressError('witness v0 must use bech32 (BIP-350)');
  if (version !== 0 && !isBech32m) throw new AddressError('witness v1+ must use bech32m (BIP-350)');
  let program: Uint8Array;
  try {
    // fromWords enforces BIP-173's padding rule: at most 4 zero bits.
    program = bech32.fromWords(decoded.words.slice(1));
  } catch {
    throw new AddressError('invalid padding');
  }
  if (program.length < 2 || program.length > 40) throw new AddressError('invalid witness program length');
  let type: AddressType;
  if (version === 0) {
    // BIP-141 §Witness program: v0 programs are 20 (P2WPKH) or 32 (P2WSH) bytes.
    if (program.length === 20) type = 'p2wpkh';
    else if (program.length === 32) type = 'p2wsh';
    else throw new AddressError('invalid witness v0 program length');
  } else if (version === 1 && program.length === 32) {
    type = 'p2tr'; // BIP-341 §Script validation rules
  } else {
    throw new AddressError(`unsupported witness version ${version} with ${program.length}-byte program`);
  }
  return { address: address.toLowerCase(), type, network, program, scriptPubKey: scriptPubKeyFor(type, program) };
}

/** The scriptPubKey (output script) of each type, from its program. */
function scriptPubKeyFor(type: AddressType, program: Uint8Array): Uint8Array {
  const expected = type === 'p2wsh' || type === 'p2tr' ? 32 : 20;
  if (program.length !== expected) throw new AddressError(`${type} program must be ${expected} bytes`);
  switch (type) {
    case 'p2pkh': {
      // OP_DUP OP_HASH160 <20> OP_EQUALVERIFY OP_CHECKSIG
      const script = new Uint8Array(25);
      script.set([0x76, 0xa9, 0x14]);
      script.set(program, 3);
      script[23] = 0x88;
      script[24] = 0xac;
      return script;
    }
    case 'p2sh': {
      // OP_HASH160 <20> OP_EQUAL (BIP-16)
      const script = new Uint8Array(23);
      script.set([0xa9, 0x14]);
      script.set(program, 2);
      script[22] = 0x87;
      return script;
    }
    case 'p2wpkh':
    case 'p2wsh':
    case 'p2tr': {
      // OP_n <program> (BIP-141): OP_0 for v0, OP_1 (0x51) for v1.
      const script = new Uint8Array(2 + program.length);
      script[0] = type === 'p2tr' ? 0x51 : 0x00;
      script[1] = program.length;
      script.set(program, 2);
      return script;
    }
  }
}

/** Encodes a program as an address of the given type for the given network. */
export function encodeAddress(type: AddressType, program: Uint8Array, network: BitcoinNetwork): string {
  scriptPubKeyFor(type, program); // validates the program length
  if (type === 'p2pkh' || type === 'p2sh') {
    const mainnet = network === 'mainnet';
    const version = type === 'p2pkh' ? (mainnet ? 0x00 : 0x6f) : mainnet ? 0x05 : 0xc4;
    const payload = new Uint8Array(21);
    payload[0] = version;
    payload.set(program, 1);
    return base58check.encode(payload);
  }
  const hrp = network === 'mainnet' ? 'bc' : network === 'regtest' ? 'bcrt' : 'tb';
  const words = [type === 'p2tr' ? 1 : 0, ...bech32.toWords(program)];
  return type === 'p2tr' ? bech32m.encode(hrp, words) : bech32.encode(hrp, words);
}

/**
 * Whether an address belongs to a configured network. Testnet and signet
 * share all encodings; regtest has its own segwit HRP (`bcrt`) but reuses the
 * test Base58 prefixes, so those are accepted for regtest too.
 */
export function addressMatchesNetwork(decoded: DecodedAddress, network: BitcoinNetwork): boolean {
  switch (network) {
    case 'mainnet':
      return decoded.network === 'mainnet';
    case 'testnet':
    case 'signet':
      return decoded.network === 'test';
    case 'regtest':
      return decoded.network === 'regtest' || (decoded.network === 'test' && (decoded.type === 'p2pkh' || decoded.type === 'p2sh'));
    default:
      return false;
  }
}
