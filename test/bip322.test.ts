/**
 * BIP-322: the BIP's own vectors (test/vectors/bip322.json, one test each),
 * cross-checks against an independent implementation (bip322-js, which signs
 * and verifies through bitcoinjs-lib and @bitcoinerlab/secp256k1), and the
 * verifier's refusals.
 */
import { Signer as PeerSigner, Verifier as PeerVerifier } from 'bip322-js';
import * as secp from 'tiny-secp256k1';
import { describe, expect, it } from 'vitest';
import { decodeAddress, encodeAddress } from '../src/bitcoin/address.js';
import { checkBip322, messageHashBip322, verifyBip322 } from '../src/bitcoin/bip322.js';
import { hash160, sha256, toBase64 } from '../src/bitcoin/bytes.js';
import { encodeDer, parseStrictDer } from '../src/bitcoin/ecdsa.js';
import {
  addressFromPrivateKey,
  privateKeyFromWif,
  signBip322,
  signLegacy,
  wifFromPrivateKey,
  type SignerAddressType,
} from './support/bitcoin-signer.js';
import { parseTransaction, parseWitnessStack, serializeToSign, serializeWitnessStack, toSignTxid, toSpendTxid } from '../src/bitcoin/tx.js';
import { verifySignature } from '../src/bitcoin/verify.js';
import vectors from './vectors/bip322.json' with { type: 'json' };

const hex = (bytes: Uint8Array): string => Buffer.from(bytes).toString('hex');
const displayTxid = (bytes: Uint8Array): string => Buffer.from(bytes).reverse().toString('hex');
const fromBase64 = (text: string): Uint8Array => new Uint8Array(Buffer.from(text, 'base64'));

describe('BIP-322 vectors: message hashes', () => {
  for (const vector of vectors.messageHashes) {
    it(`${JSON.stringify(vector.message)} (${vector.source.split(' (')[0]})`, () => {
      expect(hex(messageHashBip322(vector.message))).toBe(vector.messageHash);
    });
  }
});

describe('BIP-322 vectors: to_spend and to_sign txids', () => {
  for (const vector of vectors.txHashes) {
    it(`${JSON.stringify(vector.message)} for ${vector.address}`, () => {
      const toSpend = toSpendTxid(messageHashBip322(vector.message), decodeAddress(vector.address).scriptPubKey);
      expect(displayTxid(toSpend)).toBe(vector.toSpendTxid);
      expect(displayTxid(toSignTxid(toSpend))).toBe(vector.toSignTxid);
    });
  }
});

describe('BIP-322 vectors: signatures', () => {
  for (const vector of vectors.signatures) {
    it(`${vector.description} [${vector.source.split(' (')[0]}]`, () => {
      expect(verifySignature(vector)).toBe(vector.expected);
      expect(verifyBip322(vector.address, vector.message, vector.signature)).toBe(vector.expected === 'sig_ok_bip322');
      expect(checkBip322(vector.address, vector.message, vector.signature)).toBe(
        vector.expected === 'sig_ok_bip322' ? 'valid' : 'unsupported',
      );
    });
  }
});

describe('BIP-322 vectors: errors', () => {
  for (const vector of vectors.errors) {
    it(`${vector.description} [${vector.source.split(' (')[0]}]`, () => {
      expect(verifySignature(vector)).toBe(vector.expected);
      expect(verifyBip322(vector.address, vector.message, vector.signature)).toBe(false);
    });
  }
});

describe('BIP-322 vectors: our signer against the BIP', () => {
  const singleKey = vectors.signatures.filter((vector) => vector.privateKeys?.length === 1);

  for (const vector of singleKey) {
    it(`derives ${vector.address} from its private key (${vector.type})`, () => {
      const { privateKey } = privateKeyFromWif(vector.privateKeys![0]!);
      expect(addressFromPrivateKey(privateKey, vector.type as SignerAddressType, 'mainnet')).toBe(vector.address);
    });
  }

  // RFC 6979 makes ECDSA deterministic, so our signer must reproduce the
  // libsecp256k1-made vectors byte for byte (one of the two P2WPKH
  // signatures per message in the BIP came from another signer).
  const ecdsaVectors = singleKey.filter((vector) => vector.type !== 'p2tr' && !vector.signature.startsWith('smp'));
  const reproduced = ecdsaVectors.filter((vector) => !vector.description.endsWith('signature 1'));
  for (const vector of reproduced) {
    it(`reproduces "${vector.description}" byte for byte`, () => {
      const { privateKey } = privateKeyFromWif(vector.privateKeys![0]!);
      const timelock = vector.form === 'full' ? { version: 2, lockTime: 2016, sequence: 2016 } : {};
      const signature = signBip322({
        privateKey,
        address: vector.address,
        message: vector.message,
        form: vector.form as 'simple' | 'full',
        ...timelock,
      });
      expect(signature).toBe(vector.signature);
    });
  }
});

// Fixed test keys (never used for funds).
const KEY_A = Uint8Array.from(Buffer.from('0c28fca386c7a227600b2fe50b7cae11ec86d3bf1fbe471be89827e19d72aa1d', 'hex'));
const KEY_B = Uint8Array.from(Buffer.from('e8f32e723decf4051aefac8e2c93c9c5b214313817cdb01a1494b917c8436b35', 'hex'));
const MESSAGE = [
  'orangecheck',
  'identities: nostr:npub1example',
  'address: (varies)',
  'purpose: portable reputation attestation (non-custodial)',
  'nonce: 0011223344556677889900aabbccddee',
  'issued_at: 2026-04-22T12:00:00Z',
  'ack: I attest control of this address and bind it to my identities.',
  '',
].join('\n');

const SEGWIT_TYPES = ['p2wpkh', 'p2sh-p2wpkh', 'p2tr'] as const;

describe('signatures made by bip322-js verify with ours', () => {
  for (const type of SEGWIT_TYPES) {
    for (const network of ['mainnet', 'testnet', 'regtest'] as const) {
      it(`${type} on ${network}`, () => {
        const address = addressFromPrivateKey(KEY_A, type, network);
        const signature = PeerSigner.sign(wifFromPrivateKey(KEY_A, network), address, MESSAGE) as string;
        expect(verifyBip322(address, MESSAGE, signature)).toBe(true);
        expect(verifySignature({ address, message: MESSAGE, signature })).toBe('sig_ok_bip322');
        expect(verifyBip322(address, `${MESSAGE}x`, signature)).toBe(false);
      });
    }
  }

  it('p2tr from bip322-js carries a 65-byte SIGHASH_ALL signature, which we accept', () => {
    const address = addressFromPrivateKey(KEY_B, 'p2tr', 'mainnet');
    const signature = PeerSigner.sign(wifFromPrivateKey(KEY_B, 'mainnet'), address, 'hi') as string;
    const stack = parseWitnessStack(fromBase64(signature));
    expect(stack).toHaveLength(1);
    expect(stack[0]).toHaveLength(65);
    expect(stack[0]![64]).toBe(0x01);
    expect(verifyBip322(address, 'hi', signature)).toBe(true);
  });

  for (const compressed of [true, false]) {
    it(`p2pkh (bip322-js signs it in the legacy format, ${compressed ? 'compressed' : 'uncompressed'} key)`, () => {
      const address = addressFromPrivateKey(KEY_A, 'p2pkh', 'mainnet', { compressed });
      const signature = PeerSigner.sign(wifFromPrivateKey(KEY_A, 'mainnet', { compressed }), address, MESSAGE) as string;
      expect(verifySignature({ address, message: MESSAGE, signature })).toBe('sig_ok_legacy');
      expect(verifySignature({ address, message: MESSAGE, signature, scheme: 'bip322' })).toBe('sig_ok_legacy');
      expect(verifyBip322(address, MESSAGE, signature)).toBe(false); // not a simple or full proof
    });
  }
});

describe('signatures made by ours verify with bip322-js', () => {
  for (const type of SEGWIT_TYPES) {
    for (const network of ['mainnet', 'testnet'] as const) {
      it(`${type} on ${network}, simple form`, () => {
        const address = addressFromPrivateKey(KEY_B, type, network);
        const signature = signBip322({ privateKey: KEY_B, address, message: MESSAGE });
        expect(PeerVerifier.verifySignature(address, MESSAGE, signature)).toBe(true);
        expect(PeerVerifier.verifySignature(address, `${MESSAGE}x`, signature)).toBe(false);
        expect(verifyBip322(address, MESSAGE, signature)).toBe(true);
      });
    }
  }

  it('p2tr with the explicit SIGHASH_ALL byte (65-byte signature)', () => {
    const address = addressFromPrivateKey(KEY_B, 'p2tr', 'mainnet');
    const signature = signBip322({ privateKey: KEY_B, address, message: MESSAGE, taprootSighashAll: true });
    expect(parseWitnessStack(fromBase64(signature))[0]).toHaveLength(65);
    expect(PeerVerifier.verifySignature(address, MESSAGE, signature)).toBe(true);
    expect(verifyBip322(address, MESSAGE, signature)).toBe(true);
  });

  it('p2pkh legacy signature', () => {
    const address = addressFromPrivateKey(KEY_B, 'p2pkh', 'mainnet');
    expect(PeerVerifier.verifySignature(address, MESSAGE, signLegacy(KEY_B, MESSAGE))).toBe(true);
  });
});

describe('full form, signed by ours', () => {
  for (const type of ['p2wpkh', 'p2sh-p2wpkh', 'p2tr', 'p2pkh'] as const) {
    for (const compressed of type === 'p2pkh' ? [true, false] : [true]) {
      it(`${type}${compressed ? '' : ' (uncompressed key)'}: verifies, and binds message and address`, () => {
        const address = addressFromPrivateKey(KEY_A, type, 'mainnet', { compressed });
        const signature = signBip322({ privateKey: KEY_A, address, message: MESSAGE, form: 'full' });
        const tx = parseTransaction(fromBase64(signature));
        expect(tx.inputs).toHaveLength(1);
        expect(verifySignature({ address, message: MESSAGE, signature })).toBe('sig_ok_bip322');
        expect(verifyBip322(address, MESSAGE, signature)).toBe(true);
        expect(verifyBip322(address, MESSAGE.replace('nostr', 'nostR'), signature)).toBe(false);
        const other = addressFromPrivateKey(KEY_B, type, 'mainnet', { compressed });
        expect(verifyBip322(other, MESSAGE, signature)).toBe(false);
      });
    }
  }

  it('with time locks: version 2, nLockTime and nSequence enter the sighash', () => {
    const address = addressFromPrivateKey(KEY_A, 'p2wpkh', 'mainnet');
    const signature = signBip322({ privateKey: KEY_A, address, message: 'm', form: 'full', version: 2, lockTime: 800_000, sequence: 144 });
    expect(verifyBip322(address, 'm', signature)).toBe(true);
    // Re-serialise with another nLockTime: the signature no longer matches.
    const tx = parseTransaction(fromBase64(signature));
    const input = tx.inputs[0]!;
    const changed = serializeToSign({
      toSpendTxid: input.prevTxid,
      scriptSig: input.scriptSig,
      witness: input.witness,
      version: 2,
      lockTime: 800_001,
      sequence: 144,
    });
    expect(verifyBip322(address, 'm', toBase64(changed))).toBe(false);
  });

  it('refuses nVersion other than 0 or 2 (BIP-322 upgradeable rules)', () => {
    const address = addressFromPrivateKey(KEY_A, 'p2wpkh', 'mainnet');
    const signature = signBip322({ privateKey: KEY_A, address, message: 'm', form: 'full', version: 1 });
    expect(verifyBip322(address, 'm', signature)).toBe(false);
  });

  it('refuses a second output or a non-OP_RETURN output', () => {
    const address = addressFromPrivateKey(KEY_A, 'p2wpkh', 'mainnet');
    const bytes = fromBase64(signBip322({ privateKey: KEY_A, address, message: 'm', form: 'full' }));
    // Output script 0x6a (OP_RETURN) sits just before the witness; flip it to OP_NOP.
    const opReturnAt = 4 + 2 + 1 + 36 + 1 + 4 + 1 + 8 + 1;
    expect(bytes[opReturnAt]).toBe(0x6a);
    const patched = bytes.slice();
    patched[opReturnAt] = 0x61;
    expect(verifyBip322(address, 'm', toBase64(patched))).toBe(false);
  });

  it('refuses a simple form for P2PKH, which has no witness (BIP-322 §Signing)', () => {
    const address = addressFromPrivateKey(KEY_A, 'p2pkh', 'mainnet');
    expect(() => signBip322({ privateKey: KEY_A, address, message: 'm', form: 'simple' })).toThrow(/^signer:/);
    const p2wpkh = addressFromPrivateKey(KEY_A, 'p2wpkh', 'mainnet');
    const simple = signBip322({ privateKey: KEY_A, address: p2wpkh, message: 'm' });
    expect(verifyBip322(address, 'm', simple)).toBe(false);
  });
});

describe('encodings', () => {
  const address = addressFromPrivateKey(KEY_A, 'p2wpkh', 'mainnet');

  it('accepts hex, either case', () => {
    const signature = signBip322({ privateKey: KEY_A, address, message: 'm', encoding: 'hex' });
    expect(signature).toMatch(/^[0-9a-f]+$/);
    expect(verifyBip322(address, 'm', signature)).toBe(true);
    expect(verifyBip322(address, 'm', signature.toUpperCase())).toBe(true);
  });

  it('accepts the smp and ful variant prefixes and refuses a wrong or unknown one', () => {
    const simple = signBip322({ privateKey: KEY_A, address, message: 'm', prefix: true });
    const full = signBip322({ privateKey: KEY_A, address, message: 'm', form: 'full', prefix: true });
    expect(simple.startsWith('smp')).toBe(true);
    expect(full.startsWith('ful')).toBe(true);
    expect(verifyBip322(address, 'm', simple)).toBe(true);
    expect(verifyBip322(address, 'm', full)).toBe(true);
    expect(verifyBip322(address, 'm', `ful${simple.slice(3)}`)).toBe(false);
    expect(verifyBip322(address, 'm', `smp${full.slice(3)}`)).toBe(false);
    expect(verifyBip322(address, 'm', `pof${simple.slice(3)}`)).toBe(false);
    expect(verifyBip322(address, 'm', `SMP${simple.slice(3)}`)).toBe(false);
  });

  it('refuses non-canonical base64 (non-zero padding bits), whitespace and URL-safe base64', () => {
    // A message whose proof length is not a multiple of 3, so the base64 text has padding.
    let message = 'm';
    let signature = signBip322({ privateKey: KEY_A, address, message });
    for (let i = 0; !signature.endsWith('='); i++) {
      message = `m${i}`;
      signature = signBip322({ privateKey: KEY_A, address, message });
    }
    expect(verifyBip322(address, message, signature)).toBe(true);
    expect(verifyBip322(address, message, ` ${signature}`)).toBe(false);
    expect(verifyBip322(address, message, `${signature}\n`)).toBe(false);
    expect(verifyBip322(address, message, signature.replace(/=+$/, ''))).toBe(false);
    const urlSafe = signature.replaceAll('+', '-').replaceAll('/', '_');
    if (urlSafe !== signature) expect(verifyBip322(address, message, urlSafe)).toBe(false);
    // Same bytes, different text: set an unused low bit of the last symbol.
    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
    const lastIndex = signature.replace(/=+$/, '').length - 1;
    const bent = signature.slice(0, lastIndex) + alphabet[alphabet.indexOf(signature[lastIndex]!) ^ 1]! + signature.slice(lastIndex + 1);
    expect(Buffer.from(bent, 'base64').equals(Buffer.from(signature, 'base64'))).toBe(true);
    expect(verifyBip322(address, message, bent)).toBe(false);
  });
});

/** n - s for a 32-byte big-endian s. */
function negateScalar(s: Uint8Array): Uint8Array {
  const order = BigInt('0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141');
  const value = order - BigInt(`0x${hex(s)}`);
  return Uint8Array.from(Buffer.from(value.toString(16).padStart(64, '0'), 'hex'));
}

describe('ECDSA encoding rules (BIP-322 required rules)', () => {
  const address = addressFromPrivateKey(KEY_A, 'p2wpkh', 'mainnet');
  const publicKey = secp.pointFromScalar(KEY_A, true)!;

  function proofWith(signatureBytes: Uint8Array, key: Uint8Array = publicKey): string {
    return toBase64(serializeWitnessStack([signatureBytes, key]));
  }
  function goodCompact(): Uint8Array {
    const der = parseWitnessStack(fromBase64(signBip322({ privateKey: KEY_A, address, message: 'm' })))[0]!;
    return parseStrictDer(der.subarray(0, der.length - 1))!;
  }
  /** BIP-143 sighash written out independently of src/, for a chosen key hash and nHashType. */
  function independentBip143(message: string, scriptPubKey: Uint8Array, keyHash: Uint8Array, hashType: number): Uint8Array {
    const u32 = (n: number): Buffer => {
      const b = Buffer.alloc(4);
      b.writeUInt32LE(n);
      return b;
    };
    const dsha = (b: Uint8Array): Buffer => Buffer.from(sha256(sha256(b)));
    const tag = sha256(Buffer.from('BIP0322-signed-message'));
    const messageHash = sha256(Buffer.concat([tag, tag, Buffer.from(message)]));
    const toSpend = Buffer.concat([
      u32(0),
      Buffer.of(1),
      Buffer.alloc(32),
      u32(0xffffffff),
      Buffer.of(34, 0x00, 0x20),
      messageHash,
      u32(0),
      Buffer.of(1),
      Buffer.alloc(8),
      Buffer.of(scriptPubKey.length),
      scriptPubKey,
      u32(0),
    ]);
    const outpoint = Buffer.concat([dsha(toSpend), u32(0)]);
    const preimage = Buffer.concat([
      u32(0),
      dsha(outpoint),
      dsha(u32(0)),
      outpoint,
      Buffer.of(0x19, 0x76, 0xa9, 0x14),
      keyHash,
      Buffer.of(0x88, 0xac),
      Buffer.alloc(8),
      u32(0),
      dsha(Buffer.of(0, 0, 0, 0, 0, 0, 0, 0, 1, 0x6a)),
      u32(0),
      u32(hashType),
    ]);
    return dsha(preimage);
  }

  it('the independent sighash reproduces our proof (control for the tests below)', () => {
    const spk = decodeAddress(address).scriptPubKey;
    const sighash = independentBip143('m', spk, spk.subarray(2), 0x01);
    const signature = Uint8Array.of(...encodeDer(secp.sign(sighash, KEY_A)), 0x01);
    expect(proofWith(signature)).toBe(signBip322({ privateKey: KEY_A, address, message: 'm' }));
    expect(verifyBip322(address, 'm', proofWith(signature))).toBe(true);
  });

  it('refuses a high-S signature (LOW_S), though it is valid ECDSA', () => {
    const compact = goodCompact();
    const high = new Uint8Array(64);
    high.set(compact.subarray(0, 32));
    high.set(negateScalar(compact.subarray(32)), 32);
    const spk = decodeAddress(address).scriptPubKey;
    expect(secp.verify(independentBip143('m', spk, spk.subarray(2), 0x01), publicKey, high, false)).toBe(true);
    const proof = proofWith(Uint8Array.of(...encodeDer(high), 0x01));
    expect(verifyBip322(address, 'm', proof)).toBe(false);
    expect(PeerVerifier.verifySignature(address, 'm', proof)).toBe(false); // bip322-js agrees
  });

  it('refuses non-strict DER (BIP-66): padded integer, wrong length byte, trailing garbage', () => {
    const der = encodeDer(goodCompact());
    const lengthR = der[3]!;
    const r = der.subarray(4, 4 + lengthR);
    const paddedR = Uint8Array.of(0x30, der[1]! + 1, 0x02, lengthR + 1, 0x00, ...r, ...der.subarray(4 + lengthR));
    expect(verifyBip322(address, 'm', proofWith(Uint8Array.of(...paddedR, 0x01)))).toBe(false);
    const wrongLength = der.slice();
    wrongLength[1] = wrongLength[1]! + 1;
    expect(verifyBip322(address, 'm', proofWith(Uint8Array.of(...wrongLength, 0x01)))).toBe(false);
    expect(verifyBip322(address, 'm', proofWith(Uint8Array.of(...der, 0x00, 0x01)))).toBe(false);
  });

  it('refuses nHashType 0, although the signature over its sighash is valid ECDSA (SIGHASH_ALL only)', () => {
    const spk = decodeAddress(address).scriptPubKey;
    const sighash = independentBip143('m', spk, spk.subarray(2), 0x00);
    const compact = secp.sign(sighash, KEY_A);
    expect(secp.verify(sighash, publicKey, compact, true)).toBe(true);
    expect(verifyBip322(address, 'm', proofWith(Uint8Array.of(...encodeDer(compact), 0x00)))).toBe(false);
  });

  it('refuses an uncompressed key in a segwit v0 witness (WITNESS_PUBKEYTYPE), though the signature is valid', () => {
    const uncompressed = secp.pointFromScalar(KEY_A, false)!;
    const keyHash = hash160(uncompressed);
    const uncompressedAddress = encodeAddress('p2wpkh', keyHash, 'mainnet');
    const sighash = independentBip143('m', decodeAddress(uncompressedAddress).scriptPubKey, keyHash, 0x01);
    const signature = Uint8Array.of(...encodeDer(secp.sign(sighash, KEY_A)), 0x01);
    expect(verifyBip322(uncompressedAddress, 'm', proofWith(signature, uncompressed))).toBe(false);
  });
});

describe('taproot rules (BIP-341)', () => {
  const address = addressFromPrivateKey(KEY_A, 'p2tr', 'mainnet');

  it('refuses a 65-byte signature whose hash type is not 0x01', () => {
    const signature = signBip322({ privateKey: KEY_A, address, message: 'm', taprootSighashAll: true });
    const item = parseWitnessStack(fromBase64(signature))[0]!;
    for (const hashType of [0x00, 0x02, 0x03, 0x81]) {
      const changed = Uint8Array.of(...item.subarray(0, 64), hashType);
      expect(verifyBip322(address, 'm', toBase64(serializeWitnessStack([changed])))).toBe(false);
    }
  });

  it('refuses a 64-byte signature made with SIGHASH_ALL (the hash type is committed)', () => {
    const signature = signBip322({ privateKey: KEY_A, address, message: 'm', taprootSighashAll: true });
    const item = parseWitnessStack(fromBase64(signature))[0]!;
    expect(verifyBip322(address, 'm', toBase64(serializeWitnessStack([item.subarray(0, 64)])))).toBe(false);
  });

  it('refuses an annex and extra stack items', () => {
    const signature = signBip322({ privateKey: KEY_A, address, message: 'm' });
    const item = parseWitnessStack(fromBase64(signature))[0]!;
    expect(verifyBip322(address, 'm', toBase64(serializeWitnessStack([item, Uint8Array.of(0x50)])))).toBe(false);
    expect(verifyBip322(address, 'm', toBase64(serializeWitnessStack([item, item])))).toBe(false);
  });

  it('a signature by the untweaked internal key does not verify', () => {
    const signature = signBip322({ privateKey: KEY_A, address, message: 'm' });
    const stack = parseWitnessStack(fromBase64(signature));
    const internal = secp.xOnlyPointFromScalar(KEY_A);
    // Same proof checked against an address whose program is the internal key.
    const internalAddress = encodeAddress('p2tr', internal, 'mainnet');
    expect(verifyBip322(internalAddress, 'm', toBase64(serializeWitnessStack(stack)))).toBe(false);
  });
});

describe('unsupported script kinds', () => {
  it('P2SH wrapping a P2WSH script: sig_unsupported_script, not sig_invalid', () => {
    const witnessScript = Uint8Array.of(0x51); // OP_TRUE
    const redeemScript = Uint8Array.of(0x00, 0x20, ...sha256(witnessScript));
    const address = encodeAddress('p2sh', hash160(redeemScript), 'mainnet');
    const signature = toBase64(serializeWitnessStack([witnessScript]));
    expect(verifySignature({ address, message: 'm', signature })).toBe('sig_unsupported_script');
    expect(verifyBip322(address, 'm', signature)).toBe(false);
  });

  it('full form, P2SH whose scriptSig reveals a non-P2WPKH redeem script: sig_unsupported_script', () => {
    const redeemScript = Uint8Array.of(0x51); // OP_TRUE
    const address = encodeAddress('p2sh', hash160(redeemScript), 'mainnet');
    const txid = toSpendTxid(messageHashBip322('m'), decodeAddress(address).scriptPubKey);
    const proof = serializeToSign({ toSpendTxid: txid, scriptSig: Uint8Array.of(0x01, 0x51), witness: [] });
    expect(verifySignature({ address, message: 'm', signature: toBase64(proof) })).toBe('sig_unsupported_script');
    // The same script revealed for another message is no proof for this one.
    expect(verifySignature({ address, message: 'n', signature: toBase64(proof) })).toBe('sig_invalid');
  });

  it('full form, P2SH-P2WPKH with a non-minimal push of the redeem script: sig_invalid (MINIMALDATA)', () => {
    const address = addressFromPrivateKey(KEY_A, 'p2sh-p2wpkh', 'mainnet');
    const tx = parseTransaction(fromBase64(signBip322({ privateKey: KEY_A, address, message: 'm', form: 'full' })));
    const input = tx.inputs[0]!;
    expect(input.scriptSig[0]).toBe(22);
    const control = serializeToSign({ toSpendTxid: input.prevTxid, scriptSig: input.scriptSig, witness: input.witness });
    expect(verifyBip322(address, 'm', toBase64(control))).toBe(true);
    const pushData1 = Uint8Array.of(0x4c, ...input.scriptSig);
    const changed = serializeToSign({ toSpendTxid: input.prevTxid, scriptSig: pushData1, witness: input.witness });
    expect(verifySignature({ address, message: 'm', signature: toBase64(changed) })).toBe('sig_invalid');
  });

  it('any P2WSH address: sig_unsupported_script', () => {
    const address = encodeAddress('p2wsh', sha256(Uint8Array.of(0x51)), 'mainnet');
    expect(verifySignature({ address, message: 'm', signature: 'AA==' })).toBe('sig_unsupported_script');
  });

  it('a P2SH address whose redeem script is not P2WPKH gets sig_invalid for a P2WPKH-shaped proof', () => {
    const address = encodeAddress('p2sh', hash160(Uint8Array.of(0x51)), 'mainnet');
    const p2wpkh = addressFromPrivateKey(KEY_A, 'p2wpkh', 'mainnet');
    const signature = signBip322({ privateKey: KEY_A, address: p2wpkh, message: 'm' });
    expect(verifySignature({ address, message: 'm', signature })).toBe('sig_invalid');
  });
});

describe('negative cases: false, quickly, never a throw', () => {
  const address = addressFromPrivateKey(KEY_A, 'p2wpkh', 'mainnet');
  const signature = signBip322({ privateKey: KEY_A, address, message: MESSAGE });

  it('control: the untouched proof verifies', () => {
    expect(verifyBip322(address, MESSAGE, signature)).toBe(true);
  });

  it('tampered message', () => {
    expect(verifyBip322(address, MESSAGE.replace('nonce: 00', 'nonce: 01'), signature)).toBe(false);
    expect(verifyBip322(address, MESSAGE.slice(0, -1), signature)).toBe(false);
    expect(verifyBip322(address, `${MESSAGE}\n`, signature)).toBe(false);
  });

  it('wrong key', () => {
    const other = signBip322({ privateKey: KEY_B, address: addressFromPrivateKey(KEY_B, 'p2wpkh', 'mainnet'), message: MESSAGE });
    expect(verifyBip322(address, MESSAGE, other)).toBe(false);
  });

  it('wrong address (another key, and the same key as another type)', () => {
    expect(verifyBip322(addressFromPrivateKey(KEY_B, 'p2wpkh', 'mainnet'), MESSAGE, signature)).toBe(false);
    for (const type of ['p2sh-p2wpkh', 'p2tr', 'p2pkh'] as const) {
      expect(verifyBip322(addressFromPrivateKey(KEY_A, type, 'mainnet'), MESSAGE, signature)).toBe(false);
    }
  });

  it('right key, other network: the proof commits to the scriptPubKey, not the address string', () => {
    // BIP-322 §Full: message_challenge is the scriptPubKey, which is the same
    // on every network, so the same proof is valid for tb1…/bcrt1… of the key.
    // Binding to a network is the caller's job: the attested message names
    // the address, and addressMatchesNetwork() gates the configured network.
    const testnet = addressFromPrivateKey(KEY_A, 'p2wpkh', 'testnet');
    expect(verifyBip322(testnet, MESSAGE, signature)).toBe(true);
    // A proof for a message naming the mainnet address is not one for a message naming the testnet address.
    const naming = (a: string): string => MESSAGE.replace('address: (varies)', `address: ${a}`);
    const forMainnet = signBip322({ privateKey: KEY_A, address, message: naming(address) });
    expect(verifyBip322(testnet, naming(testnet), forMainnet)).toBe(false);
  });

  it('truncated signature (every length)', () => {
    const bytes = fromBase64(signature);
    for (let length = 0; length < bytes.length; length++) {
      expect(verifyBip322(address, MESSAGE, toBase64(bytes.subarray(0, length)))).toBe(false);
    }
  });

  it('garbage, empty, and non-string inputs', () => {
    for (const garbage of ['', '=', '====', '!!!!', 'AAAA', 'AA==', '00', 'zz', '\u0000', 'smp', 'ful', '😀😀😀😀']) {
      expect(verifyBip322(address, MESSAGE, garbage)).toBe(false);
      expect(verifySignature({ address, message: MESSAGE, signature: garbage })).toBe('sig_invalid');
    }
    expect(verifyBip322('', MESSAGE, signature)).toBe(false);
    expect(verifyBip322('not an address', MESSAGE, signature)).toBe(false);
    const untyped = verifyBip322 as unknown as (...args: unknown[]) => boolean;
    expect(untyped(undefined, MESSAGE, signature)).toBe(false);
    expect(untyped(address, null, signature)).toBe(false);
    expect(untyped(address, MESSAGE, 42)).toBe(false);
    const untypedVerify = verifySignature as unknown as (input: unknown) => string;
    expect(untypedVerify({ address, message: MESSAGE, signature, scheme: 'bip137' })).toBe('sig_invalid');
    expect(untypedVerify({ address: 1, message: MESSAGE, signature })).toBe('sig_invalid');
    expect(untypedVerify(null)).toBe('sig_invalid');
  });

  it('huge inputs (1 MB) are refused fast', () => {
    const huge = 'A'.repeat(1 << 20);
    const started = performance.now();
    expect(verifyBip322(address, MESSAGE, huge)).toBe(false);
    expect(verifyBip322(huge, MESSAGE, signature)).toBe(false);
    expect(verifyBip322(address, huge, signature)).toBe(false); // a 1 MB message is hashed, then fails
    expect(verifySignature({ address: huge, message: huge, signature: huge })).toBe('sig_invalid');
    expect(verifySignature({ address: addressFromPrivateKey(KEY_A, 'p2pkh', 'mainnet'), message: huge, signature: huge })).toBe(
      'sig_invalid',
    );
    expect(performance.now() - started).toBeLessThan(500);
  });
});

describe('verifySignature scheme rules (docs/protocol.md §7)', () => {
  const p2pkh = addressFromPrivateKey(KEY_A, 'p2pkh', 'mainnet');
  const p2wpkh = addressFromPrivateKey(KEY_A, 'p2wpkh', 'mainnet');
  const legacy = signLegacy(KEY_A, 'm');

  it('no scheme, P2PKH, legacy-looking signature: legacy', () => {
    expect(verifySignature({ address: p2pkh, message: 'm', signature: legacy })).toBe('sig_ok_legacy');
  });

  it('no scheme, P2PKH, BIP-322 full proof: bip322', () => {
    const full = signBip322({ privateKey: KEY_A, address: p2pkh, message: 'm' });
    expect(verifySignature({ address: p2pkh, message: 'm', signature: full })).toBe('sig_ok_bip322');
    expect(verifySignature({ address: p2pkh, message: 'm', signature: full, scheme: 'bip322' })).toBe('sig_ok_bip322');
    expect(verifySignature({ address: p2pkh, message: 'm', signature: full, scheme: 'legacy' })).toBe('sig_invalid');
  });

  it('legacy on a non-P2PKH address: sig_unsupported_script', () => {
    for (const type of ['p2wpkh', 'p2sh-p2wpkh', 'p2tr'] as const) {
      const address = addressFromPrivateKey(KEY_A, type, 'mainnet');
      expect(verifySignature({ address, message: 'm', signature: legacy, scheme: 'legacy' })).toBe('sig_unsupported_script');
    }
  });

  it('a legacy signature on a segwit address without a scheme is sig_unsupported_script: the wallet used the legacy method', () => {
    expect(verifySignature({ address: p2wpkh, message: 'm', signature: legacy })).toBe('sig_unsupported_script');
  });

  it('legacy, explicit, P2PKH', () => {
    expect(verifySignature({ address: p2pkh, message: 'm', signature: legacy, scheme: 'legacy' })).toBe('sig_ok_legacy');
    expect(verifySignature({ address: p2pkh, message: 'n', signature: legacy, scheme: 'legacy' })).toBe('sig_invalid');
  });
});
