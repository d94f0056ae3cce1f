/**
 * Property tests (fast-check): byte mutations of valid signatures and of
 * messages never throw out of verifySignature and never verify, unless the
 * mutation left the signed bytes unchanged.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { sha256 as nobleSha256 } from '@noble/hashes/sha2.js';
import { tryDecodeAddress } from '../src/bitcoin/address.js';
import { messageHashBip322 } from '../src/bitcoin/bip322.js';
import { decodeBase64Strict, decodeHexStrict } from '../src/bitcoin/bytes.js';
import { addressFromPrivateKey, signBip322, signLegacy, type SignerAddressType } from './support/bitcoin-signer.js';
import { verifySignature, type SignatureCode } from '../src/bitcoin/verify.js';

const KEY = Uint8Array.from(Buffer.from('7f3a9c2e5b1d4f6a8c0e2b4d6f8a1c3e5b7d9f1a3c5e7b9d1f3a5c7e9b1d3f5a', 'hex'));
const MESSAGE = 'orangecheck\nidentities: \nnonce: 0011223344556677889900aabbccddee\n';
const CODES: SignatureCode[] = ['sig_ok_bip322', 'sig_ok_legacy', 'sig_invalid', 'sig_unsupported_script'];
const RUNS = 250;

interface Fixture {
  name: string;
  address: string;
  signature: string;
  ok: SignatureCode;
}

function fixtures(): Fixture[] {
  const list: Fixture[] = [];
  const add = (name: string, type: SignerAddressType, options: Partial<Parameters<typeof signBip322>[0]> = {}): void => {
    const address = addressFromPrivateKey(KEY, type, 'mainnet');
    list.push({ name, address, signature: signBip322({ privateKey: KEY, address, message: MESSAGE, ...options }), ok: 'sig_ok_bip322' });
  };
  add('p2wpkh simple', 'p2wpkh');
  add('p2sh-p2wpkh simple', 'p2sh-p2wpkh');
  add('p2tr simple (64-byte signature)', 'p2tr');
  add('p2tr simple (65-byte signature)', 'p2tr', { taprootSighashAll: true });
  add('p2wpkh full', 'p2wpkh', { form: 'full' });
  add('p2sh-p2wpkh full', 'p2sh-p2wpkh', { form: 'full' });
  add('p2tr full', 'p2tr', { form: 'full' });
  add('p2pkh full', 'p2pkh', { form: 'full' });
  add('p2wpkh full with time locks', 'p2wpkh', { form: 'full', version: 2, lockTime: 2016, sequence: 2016 });
  list.push({
    name: 'p2pkh legacy',
    address: addressFromPrivateKey(KEY, 'p2pkh', 'mainnet'),
    signature: signLegacy(KEY, MESSAGE),
    ok: 'sig_ok_legacy',
  });
  return list;
}

/** A byte-level edit: flip a bit, set a byte, insert, delete, truncate or extend. */
const mutation = fc.oneof(
  fc.record({ kind: fc.constant('flip' as const), at: fc.nat(), bit: fc.integer({ min: 0, max: 7 }) }),
  fc.record({ kind: fc.constant('set' as const), at: fc.nat(), value: fc.integer({ min: 0, max: 255 }) }),
  fc.record({ kind: fc.constant('insert' as const), at: fc.nat(), value: fc.integer({ min: 0, max: 255 }) }),
  fc.record({ kind: fc.constant('delete' as const), at: fc.nat() }),
  fc.record({ kind: fc.constant('truncate' as const), at: fc.nat() }),
  fc.record({ kind: fc.constant('append' as const), bytes: fc.uint8Array({ minLength: 1, maxLength: 40 }) }),
);
type Mutation = typeof mutation extends fc.Arbitrary<infer T> ? T : never;

function mutate(bytes: Uint8Array, edit: Mutation): Uint8Array {
  const length = bytes.length;
  switch (edit.kind) {
    case 'flip': {
      if (length === 0) return bytes;
      const out = bytes.slice();
      out[edit.at % length]! ^= 1 << edit.bit;
      return out;
    }
    case 'set': {
      if (length === 0) return bytes;
      const out = bytes.slice();
      out[edit.at % length] = edit.value;
      return out;
    }
    case 'insert': {
      const at = edit.at % (length + 1);
      return Uint8Array.of(...bytes.subarray(0, at), edit.value, ...bytes.subarray(at));
    }
    case 'delete': {
      if (length === 0) return bytes;
      const at = edit.at % length;
      return Uint8Array.of(...bytes.subarray(0, at), ...bytes.subarray(at + 1));
    }
    case 'truncate':
      return bytes.subarray(0, edit.at % (length + 1));
    case 'append':
      return Uint8Array.of(...bytes, ...edit.bytes);
  }
}

const sameBytes = (a: Uint8Array, b: Uint8Array): boolean => Buffer.from(a).equals(Buffer.from(b));

describe('mutated signatures never throw and never verify', () => {
  for (const fixture of fixtures()) {
    it(fixture.name, () => {
      expect(verifySignature({ address: fixture.address, message: MESSAGE, signature: fixture.signature })).toBe(fixture.ok);
      const original = new Uint8Array(Buffer.from(fixture.signature, 'base64'));
      fc.assert(
        fc.property(
          fc.array(mutation, { minLength: 1, maxLength: 3 }),
          fc.constantFrom<'base64' | 'hex'>('base64', 'hex'),
          (edits, encoding) => {
            let bytes: Uint8Array = original;
            for (const edit of edits) bytes = mutate(bytes, edit);
            const signature = Buffer.from(bytes).toString(encoding);
            const code = verifySignature({ address: fixture.address, message: MESSAGE, signature });
            expect(CODES).toContain(code);
            if (sameBytes(bytes, original)) return;
            expect(code).not.toBe('sig_ok_bip322');
            expect(code).not.toBe('sig_ok_legacy');
          },
        ),
        { numRuns: RUNS },
      );
    });
  }
});

describe('mutated messages never verify', () => {
  const encoder = new TextEncoder();
  for (const fixture of fixtures()) {
    it(fixture.name, () => {
      fc.assert(
        fc.property(fc.array(mutation, { minLength: 1, maxLength: 3 }), (edits) => {
          let bytes: Uint8Array = encoder.encode(MESSAGE);
          for (const edit of edits) bytes = mutate(bytes, edit);
          // Invalid UTF-8 becomes U+FFFD here; compare what is actually signed, the UTF-8 bytes.
          const message = new TextDecoder().decode(bytes);
          const code = verifySignature({ address: fixture.address, message, signature: fixture.signature });
          expect(CODES).toContain(code);
          if (sameBytes(encoder.encode(message), encoder.encode(MESSAGE))) expect(code).toBe(fixture.ok);
          else expect(code === 'sig_ok_bip322' || code === 'sig_ok_legacy').toBe(false);
        }),
        { numRuns: RUNS },
      );
    });
  }
});

describe('arbitrary input never throws', () => {
  const addresses = fixtures().map((fixture) => fixture.address);

  it('random signature text and bytes against real addresses', () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...addresses),
        fc.oneof(
          fc.string({ maxLength: 300 }),
          fc.uint8Array({ maxLength: 400 }).map((b) => Buffer.from(b).toString('base64')),
        ),
        fc.constantFrom<'bip322' | 'legacy' | undefined>('bip322', 'legacy', undefined),
        (address, signature, scheme) => {
          const code = verifySignature({ address, message: MESSAGE, signature, ...(scheme ? { scheme } : {}) });
          expect(['sig_invalid', 'sig_unsupported_script']).toContain(code);
        },
      ),
      { numRuns: 1000 },
    );
  });

  it('random address text', () => {
    fc.assert(
      fc.property(
        fc.oneof(fc.string({ maxLength: 120 }), fc.stringMatching(/^(bc|tb|bcrt)1[qpzry9x8gf2tvdw0s3jn54khce6mua7l]{6,80}$/)),
        (address) => {
          expect(verifySignature({ address, message: MESSAGE, signature: 'AA==' })).not.toMatch(/^sig_ok/);
          tryDecodeAddress(address);
        },
      ),
      { numRuns: 1000 },
    );
  });
});

describe('encoders and hashes against independent implementations', () => {
  it('strict base64 decodes every canonical encoding (Buffer as the reference) and nothing else', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 200 }), (bytes) => {
        const text = Buffer.from(bytes).toString('base64');
        expect(Buffer.from(decodeBase64Strict(text)!).equals(Buffer.from(bytes))).toBe(true);
        if (text.endsWith('=')) expect(decodeBase64Strict(text.replace(/=+$/, ''))).toBeNull();
      }),
      { numRuns: 500 },
    );
    fc.assert(
      fc.property(fc.string({ maxLength: 40 }), (text) => {
        const decoded = decodeBase64Strict(text);
        // Whatever it accepts must round-trip to the very same text (one text per byte string).
        if (decoded) expect(Buffer.from(decoded).toString('base64')).toBe(text);
      }),
      { numRuns: 2000 },
    );
  });

  it('strict hex round-trips and refuses odd lengths and foreign characters', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 100 }), (bytes) => {
        const text = Buffer.from(bytes).toString('hex');
        expect(Buffer.from(decodeHexStrict(text)!).equals(Buffer.from(bytes))).toBe(true);
        if (text.length > 0) {
          expect(decodeHexStrict(text.slice(1))).toBeNull();
          expect(decodeHexStrict(`${text.slice(0, -1)}g`)).toBeNull();
        }
      }),
    );
  });

  it('the BIP-322 message hash equals a tagged hash computed with @noble/hashes, short and long messages', () => {
    const tag = nobleSha256(new TextEncoder().encode('BIP0322-signed-message'));
    fc.assert(
      fc.property(
        fc.oneof(
          fc.string({ maxLength: 400 }),
          fc.string({ unit: 'binary', maxLength: 400 }),
          fc.string({ minLength: 300, maxLength: 3000, unit: 'grapheme' }),
        ),
        (message) => {
          const body = new TextEncoder().encode(message);
          const expected = nobleSha256(Uint8Array.of(...tag, ...tag, ...body));
          expect(Buffer.from(messageHashBip322(message)).equals(Buffer.from(expected))).toBe(true);
        },
      ),
      { numRuns: 300 },
    );
  });

  it('a lone surrogate hashes as U+FFFD (the UTF-8 every JavaScript encoder produces)', () => {
    for (const message of ['\uD800', 'a\uDC00b', `${'x'.repeat(2000)}\uD83D`]) {
      expect(
        Buffer.from(messageHashBip322(message)).equals(Buffer.from(messageHashBip322(message.replace(/[\uD800-\uDFFF]/g, '\uFFFD')))),
      ).toBe(true);
    }
  });
});
