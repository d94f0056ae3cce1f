/**
 * Legacy signmessage signatures (BIP-322 §Legacy, Bitcoin Core
 * signmessage/verifymessage), cross-checked with bitcoinjs-message.
 */
import * as bitcoinMessage from 'bitcoinjs-message';
import * as secp from 'tiny-secp256k1';
import { describe, expect, it } from 'vitest';
import { legacyMessageHash, looksLikeLegacySignature, verifyLegacy } from '../src/bitcoin/legacy.js';
import { addressFromPrivateKey, signLegacy } from './support/bitcoin-signer.js';
import { verifySignature } from '../src/bitcoin/verify.js';

const KEY = Uint8Array.from(Buffer.from('c3a3b7c4b5d84b8f1d6f0e0a2b5c7d9e1f2a3b4c5d6e7f8091a2b3c4d5e6f708', 'hex'));
const OTHER_KEY = Uint8Array.from(Buffer.from('2b5c7d9e1f2a3b4c5d6e7f8091a2b3c4d5e6f708c3a3b7c4b5d84b8f1d6f0e0a', 'hex'));
const MESSAGE = 'I attest control of this address.\n';

const p2pkh = (compressed: boolean, key = KEY): string => addressFromPrivateKey(key, 'p2pkh', 'mainnet', { compressed });

describe('message digest', () => {
  it('matches bitcoinjs-message magicHash (including a >252-byte message: 3-byte CompactSize)', () => {
    for (const message of ['', 'Hello World', MESSAGE, 'é'.repeat(200), 'x'.repeat(70_000)]) {
      expect(Buffer.from(legacyMessageHash(message)).equals(bitcoinMessage.magicHash(message))).toBe(true);
    }
  });
});

describe('signatures made by bitcoinjs-message verify with ours', () => {
  for (const compressed of [true, false]) {
    it(`${compressed ? 'compressed' : 'uncompressed'} key`, () => {
      const signature = bitcoinMessage.sign(MESSAGE, Buffer.from(KEY), compressed).toString('base64');
      expect(looksLikeLegacySignature(signature)).toBe(true);
      expect(verifyLegacy(p2pkh(compressed), MESSAGE, signature)).toBe(true);
      expect(verifySignature({ address: p2pkh(compressed), message: MESSAGE, signature })).toBe('sig_ok_legacy');
      // The header's compression flag selects the key hash: the other P2PKH address of the same key fails.
      expect(verifyLegacy(p2pkh(!compressed), MESSAGE, signature)).toBe(false);
      expect(verifyLegacy(p2pkh(compressed), `${MESSAGE} `, signature)).toBe(false);
      expect(verifyLegacy(p2pkh(compressed, OTHER_KEY), MESSAGE, signature)).toBe(false);
    });
  }
});

describe('signatures made by ours verify with bitcoinjs-message', () => {
  for (const compressed of [true, false]) {
    it(`${compressed ? 'compressed' : 'uncompressed'} key, mainnet and testnet`, () => {
      const signature = signLegacy(KEY, MESSAGE, { compressed });
      expect(bitcoinMessage.verify(MESSAGE, p2pkh(compressed), signature)).toBe(true);
      const testnet = addressFromPrivateKey(KEY, 'p2pkh', 'testnet', { compressed });
      expect(bitcoinMessage.verify(MESSAGE, testnet, signature)).toBe(true);
      expect(verifyLegacy(testnet, MESSAGE, signature)).toBe(true);
      expect(verifyLegacy(p2pkh(compressed), MESSAGE, signature)).toBe(true);
    });
  }
});

describe('refusals', () => {
  const signature = signLegacy(KEY, MESSAGE);
  const bytes = Buffer.from(signature, 'base64');

  it('control: the untouched signature verifies', () => {
    expect(verifyLegacy(p2pkh(true), MESSAGE, signature)).toBe(true);
  });

  it('non-P2PKH addresses, even of the same key', () => {
    for (const type of ['p2sh-p2wpkh', 'p2wpkh', 'p2tr'] as const) {
      const address = addressFromPrivateKey(KEY, type, 'mainnet');
      expect(verifyLegacy(address, MESSAGE, signature)).toBe(false);
      expect(verifySignature({ address, message: MESSAGE, signature, scheme: 'legacy' })).toBe('sig_unsupported_script');
    }
  });

  it('without a scheme, a legacy signature for a segwit or taproot address is sig_unsupported_script (BIP-137 headers too), a wrong one on P2PKH stays sig_invalid', () => {
    for (const type of ['p2sh-p2wpkh', 'p2wpkh', 'p2tr'] as const) {
      const address = addressFromPrivateKey(KEY, type, 'mainnet');
      expect(verifySignature({ address, message: MESSAGE, signature }), type).toBe('sig_unsupported_script');
      const segwitHeader = Buffer.from(bytes);
      segwitHeader[0] = 39 + ((segwitHeader[0]! - 27) % 4);
      expect(verifySignature({ address, message: MESSAGE, signature: segwitHeader.toString('base64') }), `${type} BIP-137`).toBe(
        'sig_unsupported_script',
      );
      const outside = Buffer.from(bytes);
      outside[0] = 43;
      expect(verifySignature({ address, message: MESSAGE, signature: outside.toString('base64') }), `${type} header 43`).toBe(
        'sig_invalid',
      );
    }
    expect(verifySignature({ address: p2pkh(true), message: 'another message', signature })).toBe('sig_invalid');
  });

  it('headers outside 27..34, including the BIP-137 segwit headers 35..42', () => {
    for (const header of [0, 26, 35, 39, 42, 43, 255]) {
      const changed = Buffer.from(bytes);
      changed[0] = header;
      const text = changed.toString('base64');
      expect(looksLikeLegacySignature(text)).toBe(false);
      expect(verifyLegacy(p2pkh(true), MESSAGE, text)).toBe(false);
    }
  });

  it('a wrong recovery id', () => {
    const changed = Buffer.from(bytes);
    changed[0] = 31 + ((changed[0]! - 31 + 1) & 3);
    expect(verifyLegacy(p2pkh(true), MESSAGE, changed.toString('base64'))).toBe(false);
  });

  it('r or s zero or out of range (recover() would throw)', () => {
    for (const fill of [0x00, 0xff]) {
      const changed = Buffer.from(bytes);
      changed.fill(fill, 1, 33);
      expect(verifyLegacy(p2pkh(true), MESSAGE, changed.toString('base64'))).toBe(false);
      const changedS = Buffer.from(bytes);
      changedS.fill(fill, 33, 65);
      expect(verifyLegacy(p2pkh(true), MESSAGE, changedS.toString('base64'))).toBe(false);
    }
  });

  it('wrong lengths and encodings', () => {
    expect(verifyLegacy(p2pkh(true), MESSAGE, '')).toBe(false);
    expect(verifyLegacy(p2pkh(true), MESSAGE, signature.slice(0, -4))).toBe(false);
    expect(verifyLegacy(p2pkh(true), MESSAGE, `${signature}AAAA`)).toBe(false);
    expect(verifyLegacy(p2pkh(true), MESSAGE, bytes.toString('hex'))).toBe(false);
    expect(verifyLegacy(p2pkh(true), MESSAGE, ` ${signature.slice(1)}`)).toBe(false);
    expect(looksLikeLegacySignature('A'.repeat(88))).toBe(false); // decodes, header 0
    expect(looksLikeLegacySignature(undefined as unknown as string)).toBe(false);
  });

  it('a high-S twin is accepted, as Bitcoin Core verifymessage does', () => {
    // Recovery with (r, n - s) and the other parity yields the same key.
    const order = BigInt('0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141');
    const s = BigInt(`0x${bytes.subarray(33).toString('hex')}`);
    const twin = Buffer.from(bytes);
    Buffer.from((order - s).toString(16).padStart(64, '0'), 'hex').copy(twin, 33);
    twin[0] = 31 + ((twin[0]! - 31) ^ 1);
    const recovered = secp.recover(legacyMessageHash(MESSAGE), twin.subarray(1), ((twin[0]! - 31) & 3) as 0 | 1, true);
    expect(Buffer.from(recovered!).equals(Buffer.from(secp.pointFromScalar(KEY, true)!))).toBe(true);
    expect(verifyLegacy(p2pkh(true), MESSAGE, twin.toString('base64'))).toBe(true);
  });

  it('never throws on hostile input', () => {
    const untyped = verifyLegacy as unknown as (...args: unknown[]) => boolean;
    expect(untyped(null, MESSAGE, signature)).toBe(false);
    expect(untyped(p2pkh(true), 7, signature)).toBe(false);
    expect(untyped(p2pkh(true), MESSAGE, {})).toBe(false);
    expect(verifyLegacy('x'.repeat(1 << 20), MESSAGE, signature)).toBe(false);
  });
});
