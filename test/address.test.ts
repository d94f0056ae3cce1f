/**
 * Address decoding: BIP-173 / BIP-350 vectors (bitcoin/bips
 * bip-0173.mediawiki and bip-0350.mediawiki §Test vectors), Base58Check on
 * every network, and cross-checks against @scure/btc-signer's encoder.
 */
import { createBase58check } from '@scure/base';
import * as btc from '@scure/btc-signer';
import * as secp from 'tiny-secp256k1';
import { describe, expect, it } from 'vitest';
import {
  AddressError,
  addressMatchesNetwork,
  decodeAddress,
  encodeAddress,
  tryDecodeAddress,
  type AddressType,
} from '../src/bitcoin/address.js';
import { sha256 } from '../src/bitcoin/bytes.js';
import { addressFromPrivateKey } from './support/bitcoin-signer.js';
import type { BitcoinNetwork } from '../src/platform/config.js';

const hex = (bytes: Uint8Array): string => Buffer.from(bytes).toString('hex');

describe('BIP-350 valid segwit addresses (the types we support)', () => {
  // [address, scriptPubKey hex, type, network]
  const valid: [string, string, AddressType, string][] = [
    ['BC1QW508D6QEJXTDG4Y5R3ZARVARY0C5XW7KV8F3T4', '0014751e76e8199196d454941c45d1b3a323f1433bd6', 'p2wpkh', 'mainnet'],
    [
      'tb1qrp33g0q5c5txsp9arysrx4k6zdkfs4nce4xj0gdcccefvpysxf3q0sl5k7',
      '00201863143c14c5166804bd19203356da136c985678cd4d27a1b8c6329604903262',
      'p2wsh',
      'test',
    ],
    [
      'tb1qqqqqp399et2xygdj5xreqhjjvcmzhxw4aywxecjdzew6hylgvsesrxh6hy',
      '0020000000c4a5cad46221b2a187905e5266362b99d5e91c6ce24d165dab93e86433',
      'p2wsh',
      'test',
    ],
    [
      'tb1pqqqqp399et2xygdj5xreqhjjvcmzhxw4aywxecjdzew6hylgvsesf3hn0c',
      '5120000000c4a5cad46221b2a187905e5266362b99d5e91c6ce24d165dab93e86433',
      'p2tr',
      'test',
    ],
    [
      'bc1p0xlxvlhemja6c4dqv22uapctqupfhlxm9h8z3k2e72q4k9hcz7vqzk5jj0',
      '512079be667ef9dcbbac55a06295ce870b07029bfcdb2dce28d959f2815b16f81798',
      'p2tr',
      'mainnet',
    ],
  ];
  for (const [address, scriptPubKey, type, network] of valid) {
    it(address, () => {
      const decoded = decodeAddress(address);
      expect(hex(decoded.scriptPubKey)).toBe(scriptPubKey);
      expect(decoded.type).toBe(type);
      expect(decoded.network).toBe(network);
      expect(decoded.address).toBe(address.toLowerCase());
      expect(hex(decoded.program)).toBe(scriptPubKey.slice(4));
    });
  }
});

describe('BIP-350 valid segwit addresses of versions we do not handle are refused', () => {
  // Valid per BIP-350, but no signature can be checked for them here.
  for (const address of [
    'bc1pw508d6qejxtdg4y5r3zarvary0c5xw7kw508d6qejxtdg4y5r3zarvary0c5xw7kt5nd6y', // v1, 40-byte program
    'BC1SW50QGDZ25J', // v16, 2 bytes
    'bc1zw508d6qejxtdg4y5r3zarvaryvaxxpcs', // v2, 16 bytes
  ]) {
    it(address, () => {
      expect(() => decodeAddress(address)).toThrow(AddressError);
      expect(() => decodeAddress(address)).toThrow(/^address: unsupported witness version/);
    });
  }
});

describe('BIP-350 invalid segwit addresses', () => {
  const invalid: [string, string][] = [
    ['tc1p0xlxvlhemja6c4dqv22uapctqupfhlxm9h8z3k2e72q4k9hcz7vq5zuyut', 'invalid human-readable part'],
    ['bc1p0xlxvlhemja6c4dqv22uapctqupfhlxm9h8z3k2e72q4k9hcz7vqh2y7hd', 'bech32 instead of bech32m'],
    ['tb1z0xlxvlhemja6c4dqv22uapctqupfhlxm9h8z3k2e72q4k9hcz7vqglt7rf', 'bech32 instead of bech32m'],
    ['BC1S0XLXVLHEMJA6C4DQV22UAPCTQUPFHLXM9H8Z3K2E72Q4K9HCZ7VQ54WELL', 'bech32 instead of bech32m'],
    ['bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kemeawh', 'bech32m instead of bech32'],
    ['tb1q0xlxvlhemja6c4dqv22uapctqupfhlxm9h8z3k2e72q4k9hcz7vq24jc47', 'bech32m instead of bech32'],
    ['bc1p38j9r5y49hruaue7wxjce0updqjuyyx0kh56v8s25huc6995vvpql3jow4', 'invalid character in checksum'],
    ['BC130XLXVLHEMJA6C4DQV22UAPCTQUPFHLXM9H8Z3K2E72Q4K9HCZ7VQ7ZWS8R', 'invalid witness version'],
    ['bc1pw5dgrnzv', 'program length 1'],
    ['bc1p0xlxvlhemja6c4dqv22uapctqupfhlxm9h8z3k2e72q4k9hcz7v8n0nx0muaewav253zgeav', 'program length 41'],
    ['BC1QR508D6QEJXTDG4Y5R3ZARVARYV98GJ9P', 'v0 program length 16 (BIP-141)'],
    ['tb1p0xlxvlhemja6c4dqv22uapctqupfhlxm9h8z3k2e72q4k9hcz7vq47Zagq', 'mixed case'],
    ['bc1p0xlxvlhemja6c4dqv22uapctqupfhlxm9h8z3k2e72q4k9hcz7v07qwwzcrf', 'zero padding of more than 4 bits'],
    ['tb1p0xlxvlhemja6c4dqv22uapctqupfhlxm9h8z3k2e72q4k9hcz7vpggkg4j', 'non-zero padding'],
    ['bc1gmk9yu', 'empty data section'],
  ];
  for (const [address, reason] of invalid) {
    it(`${address} (${reason})`, () => {
      expect(() => decodeAddress(address)).toThrow(AddressError);
      expect(() => decodeAddress(address)).toThrow(/^address: /);
      expect(tryDecodeAddress(address)).toBeNull();
    });
  }
});

describe('BIP-173 invalid segwit addresses', () => {
  const invalid: [string, string][] = [
    ['tc1qw508d6qejxtdg4y5r3zarvary0c5xw7kg3g4ty', 'invalid human-readable part'],
    ['bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t5', 'invalid checksum'],
    ['BC13W508D6QEJXTDG4Y5R3ZARVARY0C5XW7KN40WF2', 'invalid witness version'],
    ['bc1rw5uspcuh', 'invalid program length'],
    ['bc10w508d6qejxtdg4y5r3zarvary0c5xw7kw508d6qejxtdg4y5r3zarvary0c5xw7kw5rljs90', 'invalid program length'],
    ['tb1qrp33g0q5c5txsp9arysrx4k6zdkfs4nce4xj0gdcccefvpysxf3q0sL5k7', 'mixed case'],
    ['bc1zw508d6qejxtdg4y5r3zarvaryvqyzf3du', 'zero padding of more than 4 bits'],
    ['tb1qrp33g0q5c5txsp9arysrx4k6zdkfs4nce4xj0gdcccefvpysxf3pjxtptv', 'non-zero padding in 8-to-5 conversion'],
    ['bc1gmk9yu', 'empty data section'],
  ];
  for (const [address, reason] of invalid) {
    it(`${address} (${reason})`, () => {
      expect(() => decodeAddress(address)).toThrow(AddressError);
    });
  }
});

describe('Base58Check addresses', () => {
  const cases: [string, AddressType, string, string][] = [
    // Well-known: the genesis coinbase key's P2PKH address, and BIP-16 examples.
    ['1A1zP1eP5QGefi2DMPTfTL5SLmv7DivfNa', 'p2pkh', 'mainnet', '76a91462e907b15cbf27d5425399ebf6f0fb50ebb88f1888ac'],
    ['3J98t1WpEZ73CNmQviecrnyiWrnqRhWNLy', 'p2sh', 'mainnet', 'a914b472a266d0bd89c13706a4132ccfb16f7c3b9fcb87'],
  ];
  for (const [address, type, network, scriptPubKey] of cases) {
    it(address, () => {
      const decoded = decodeAddress(address);
      expect(decoded.type).toBe(type);
      expect(decoded.network).toBe(network);
      expect(hex(decoded.scriptPubKey)).toBe(scriptPubKey);
    });
  }

  it('refuses a bad checksum, a bad character, a bad version and bad lengths', () => {
    expect(() => decodeAddress('1A1zP1eP5QGefi2DMPTfTL5SLmv7DivfNb')).toThrow(/^address: /); // checksum
    expect(() => decodeAddress('1A1zP1eP5QGefi2DMPTfTL5SLmv7DivfN0')).toThrow(AddressError); // '0' is not base58
    expect(() => decodeAddress('1A1zP1eP5QGefi2DMPTfTL5SLmv7DivfNaa')).toThrow(AddressError);
    // Payloads of the wrong length, correctly checksummed.
    const base58check = createBase58check(sha256);
    expect(() => decodeAddress(base58check.encode(new Uint8Array(20)))).toThrow(/^address: bad/);
    expect(() => decodeAddress(base58check.encode(new Uint8Array(22)))).toThrow(/^address: bad/);
    // 21 zero bytes is a valid P2PKH (the all-zero key hash).
    expect(hex(decodeAddress('1111111111111111111114oLvT2').program)).toBe('00'.repeat(20));
    // A valid Base58Check string with an unknown version: a WIF private key.
    expect(() => decodeAddress('5HueCGU8rMjxEXxiPuD5BDku4MkFqeZyd4dZ1jvhTVqvbTLvyTJ')).toThrow(AddressError);
  });
});

describe('all types on all networks, cross-checked with @scure/btc-signer', () => {
  const key = Uint8Array.from(Buffer.from('1e99423a4ed27608a15a2616a2b0e9e52ced330ac530edcc32c8ffc6a526aedd', 'hex'));
  const compressed = secp.pointFromScalar(key, true)!;
  const scureNetworks: Record<BitcoinNetwork, typeof btc.NETWORK> = {
    mainnet: btc.NETWORK,
    testnet: btc.TEST_NETWORK,
    signet: btc.TEST_NETWORK,
    regtest: { ...btc.TEST_NETWORK, bech32: 'bcrt' },
  };
  const expectedNetwork: Record<BitcoinNetwork, string> = { mainnet: 'mainnet', testnet: 'test', signet: 'test', regtest: 'regtest' };

  for (const network of ['mainnet', 'testnet', 'signet', 'regtest'] as const) {
    const net = scureNetworks[network];
    const expected: [string, string, AddressType][] = [
      ['p2pkh', btc.p2pkh(compressed, net).address!, 'p2pkh'],
      ['p2sh-p2wpkh', btc.p2sh(btc.p2wpkh(compressed, net), net).address!, 'p2sh'],
      ['p2wpkh', btc.p2wpkh(compressed, net).address!, 'p2wpkh'],
      ['p2tr', btc.p2tr(compressed.subarray(1), undefined, net).address!, 'p2tr'],
    ];
    for (const [signerType, scureAddress, type] of expected) {
      it(`${signerType} on ${network}`, () => {
        const ours = addressFromPrivateKey(key, signerType as 'p2pkh', network);
        expect(ours).toBe(scureAddress);
        const decoded = decodeAddress(ours);
        expect(decoded.type).toBe(type);
        expect(decoded.network).toBe(
          type === 'p2pkh' || type === 'p2sh' ? (network === 'mainnet' ? 'mainnet' : 'test') : expectedNetwork[network],
        );
        expect(hex(decoded.scriptPubKey)).toBe(hex(btc.OutScript.encode(btc.Address(net).decode(scureAddress))));
        expect(addressMatchesNetwork(decoded, network)).toBe(true);
      });
    }

    it(`p2wsh on ${network}`, () => {
      const script = btc.Script.encode(['OP_1']);
      const scureAddress = btc.p2wsh({ type: 'unknown', script }, net).address!;
      const decoded = decodeAddress(scureAddress);
      expect(decoded.type).toBe('p2wsh');
      expect(encodeAddress('p2wsh', decoded.program, network)).toBe(scureAddress);
    });
  }
});

describe('addressMatchesNetwork', () => {
  const key = Uint8Array.from(Buffer.from('0000000000000000000000000000000000000000000000000000000000000003', 'hex'));
  const of = (type: 'p2pkh' | 'p2sh-p2wpkh' | 'p2wpkh' | 'p2tr', network: BitcoinNetwork) =>
    decodeAddress(addressFromPrivateKey(key, type, network));

  it('mainnet addresses only on mainnet', () => {
    for (const type of ['p2pkh', 'p2sh-p2wpkh', 'p2wpkh', 'p2tr'] as const) {
      const decoded = of(type, 'mainnet');
      expect(addressMatchesNetwork(decoded, 'mainnet')).toBe(true);
      expect(addressMatchesNetwork(decoded, 'testnet')).toBe(false);
      expect(addressMatchesNetwork(decoded, 'signet')).toBe(false);
      expect(addressMatchesNetwork(decoded, 'regtest')).toBe(false);
    }
  });

  it('test segwit addresses on testnet and signet, not regtest', () => {
    for (const type of ['p2wpkh', 'p2tr'] as const) {
      const decoded = of(type, 'signet');
      expect(decoded.address.startsWith('tb1')).toBe(true);
      expect(addressMatchesNetwork(decoded, 'testnet')).toBe(true);
      expect(addressMatchesNetwork(decoded, 'signet')).toBe(true);
      expect(addressMatchesNetwork(decoded, 'regtest')).toBe(false);
      expect(addressMatchesNetwork(decoded, 'mainnet')).toBe(false);
    }
  });

  it('test Base58 addresses on testnet, signet and regtest (shared prefixes)', () => {
    for (const type of ['p2pkh', 'p2sh-p2wpkh'] as const) {
      const decoded = of(type, 'regtest');
      expect(decoded.network).toBe('test');
      expect(addressMatchesNetwork(decoded, 'regtest')).toBe(true);
      expect(addressMatchesNetwork(decoded, 'testnet')).toBe(true);
      expect(addressMatchesNetwork(decoded, 'signet')).toBe(true);
      expect(addressMatchesNetwork(decoded, 'mainnet')).toBe(false);
    }
  });

  it('bcrt1 addresses only on regtest', () => {
    for (const type of ['p2wpkh', 'p2tr'] as const) {
      const decoded = of(type, 'regtest');
      expect(decoded.address.startsWith('bcrt1')).toBe(true);
      expect(addressMatchesNetwork(decoded, 'regtest')).toBe(true);
      expect(addressMatchesNetwork(decoded, 'testnet')).toBe(false);
      expect(addressMatchesNetwork(decoded, 'signet')).toBe(false);
    }
  });
});

describe('hostile input', () => {
  it('refuses empty, over-long and non-string input quickly', () => {
    const started = performance.now();
    expect(tryDecodeAddress('')).toBeNull();
    expect(tryDecodeAddress('1'.repeat(1 << 20))).toBeNull();
    expect(tryDecodeAddress(`bc1${'q'.repeat(1 << 20)}`)).toBeNull();
    expect(tryDecodeAddress(undefined as unknown as string)).toBeNull();
    expect(tryDecodeAddress(' bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4')).toBeNull();
    expect(tryDecodeAddress('bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4 ')).toBeNull();
    expect(performance.now() - started).toBeLessThan(100);
  });

  it('AddressError messages start with "address:"', () => {
    try {
      decodeAddress('nonsense');
      expect.unreachable();
    } catch (error) {
      expect(error).toBeInstanceOf(AddressError);
      expect((error as Error).message).toMatch(/^address: /);
    }
  });
});
