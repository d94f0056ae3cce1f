/**
 * Properties of the canonical message and the verifier (docs/protocol.md §7):
 * build → parse round-trips, and hostile input (random strings, random byte
 * mutations of a signed message or of its signature) never throws and never
 * verifies.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  attestationId,
  buildAttestationMessage,
  MAX_BOND_SATS,
  parseAttestationMessage,
  type AttestationFields,
} from '../src/format/canonical.js';
import { codesPass } from '../src/features/attestations/codes.js';
import { formatIdentity, type Identity } from '../src/format/identities.js';
import { verifyAttestation, type VerifyAttestationDeps } from '../src/features/attestations/verify.js';
import { addressFromPrivateKey, signBip322 } from './support/bitcoin-signer.js';
import { loadEsploraFixture, startEsploraFake, type EsploraFake, verifyDepsOver } from './support/esplora-fake.js';

const CORE_KEYS = new Set(['identities', 'address', 'purpose', 'nonce', 'issued_at', 'ack']);
const TYPED_KEYS = new Set(['bond', 'expires', 'network']);

const noLineBreak = (text: string): boolean => !/[\r\n]/.test(text);

const protocolArb = fc.oneof(fc.constantFrom('nostr', 'dns', 'x', 'twitter', 'github'), fc.stringMatching(/^[a-z][a-z0-9_-]{0,12}$/));
const identifierArb = fc
  .oneof(fc.string({ minLength: 1, maxLength: 20 }), fc.string({ unit: 'binary', minLength: 1, maxLength: 20 }))
  .filter((text) => !/[\r\n,]/.test(text));
const identityArb: fc.Arbitrary<Identity> = fc.record({ protocol: protocolArb, identifier: identifierArb });
const valueArb = fc.oneof(fc.string({ maxLength: 30 }), fc.string({ unit: 'binary', maxLength: 30 })).filter(noLineBreak);
const extensionKeyArb = fc.stringMatching(/^[a-z][a-z0-9_]{0,12}$/).filter((key) => !CORE_KEYS.has(key) && !TYPED_KEYS.has(key));
const hexArb = (bytes: number) => fc.uint8Array({ minLength: bytes, maxLength: bytes }).map((array) => Buffer.from(array).toString('hex'));
const instantArb = fc.date({ min: new Date('0000-01-01T00:00:00Z'), max: new Date('9999-12-31T23:59:59.999Z'), noInvalidDate: true });
const issuedAtArb = fc
  .tuple(instantArb, fc.boolean())
  .map(([date, millis]) => (millis ? date.toISOString() : date.toISOString().replace(/\.\d{3}Z$/, 'Z')));

const fieldsArb = fc.record({
  address: fc.stringMatching(/^[A-Za-z0-9]{1,90}$/),
  identities: fc.array(identityArb, { maxLength: 6 }),
  nonce: hexArb(16),
  issuedAt: issuedAtArb,
  free: fc.dictionary(extensionKeyArb, valueArb, { maxKeys: 5 }),
  bond: fc.option(fc.integer({ min: 0, max: MAX_BOND_SATS }), { nil: undefined }),
  network: fc.option(fc.constantFrom('mainnet', 'testnet', 'signet', 'regtest'), { nil: undefined }),
  expires: fc.option(
    instantArb.map((date) => date.toISOString()),
    { nil: undefined },
  ),
});

describe('build → parse round-trips', () => {
  it('gives back every field, identities sorted and renamed, extensions sorted', () => {
    fc.assert(
      fc.property(fieldsArb, (fields) => {
        const extensions = { ...fields.free, bond: fields.bond, network: fields.network, expires: fields.expires };
        const input: AttestationFields = {
          address: fields.address,
          identities: fields.identities,
          nonce: fields.nonce,
          issuedAt: fields.issuedAt,
          extensions,
        };
        const message = buildAttestationMessage(input);
        const result = parseAttestationMessage(message);
        if (!result.ok) throw new Error(`round trip failed: ${result.detail}\n${message}`);
        const parsed = result.value;

        expect(parsed.address).toBe(fields.address);
        expect(parsed.nonce).toBe(fields.nonce);
        expect(parsed.issuedAt).toBe(fields.issuedAt);
        expect(parsed.issuedAtMs).toBe(new Date(fields.issuedAt).getTime());

        const sortedItems = [...new Set(fields.identities.map(formatIdentity))].sort();
        // Identities are echoed as signed: no renaming, exact repeats read once.
        const expectedIdentities: Identity[] = sortedItems.map((item) => {
          const colon = item.indexOf(':');
          return { protocol: item.slice(0, colon), identifier: item.slice(colon + 1) };
        });
        expect(parsed.identities).toEqual(expectedIdentities);

        const expectedExtensions = Object.entries(extensions)
          .filter(([, value]) => value !== undefined)
          .map(([key, value]) => [key, String(value)])
          .sort(([left], [right]) => (left! < right! ? -1 : 1));
        expect(Object.entries(parsed.extensions)).toEqual(expectedExtensions);
        expect(parsed.bond).toBe(fields.bond);
        expect(parsed.network).toBe(fields.network ?? 'mainnet');
        expect(parsed.expiresAtMs).toBe(fields.expires === undefined ? undefined : new Date(fields.expires).getTime());

        // Canonical: building from the parsed fields gives the same bytes.
        expect(
          buildAttestationMessage({
            address: parsed.address,
            identities: message
              .split('\n')[1]!
              .slice('identities: '.length)
              .split(',')
              .filter((item) => item !== ''),
            nonce: parsed.nonce,
            issuedAt: parsed.issuedAt,
            extensions: parsed.extensions,
          }),
        ).toBe(message);
      }),
      { numRuns: 300 },
    );
  });
});

describe('hostile input', () => {
  const NOW = new Date('2026-04-22T12:00:00Z');
  const privateKey = new Uint8Array(32).fill(9);
  const address = addressFromPrivateKey(privateKey, 'p2wpkh', 'mainnet');
  const message = buildAttestationMessage({
    address,
    identities: ['nostr:npub1example', 'x:alice'],
    nonce: '00112233445566778899aabbccddeeff',
    issuedAt: '2026-04-01T00:00:00Z',
    extensions: { aud: 'https://example.com', bond: 1000, scope: 'tést ✓' },
  });
  const signature = signBip322({ privateKey, address, message });
  let esplora: EsploraFake;
  let deps: VerifyAttestationDeps;

  beforeAll(async () => {
    const fixture = loadEsploraFixture();
    esplora = await startEsploraFake({ tipHeight: fixture.tipHeight, utxosByAddress: { [address]: fixture.utxoSets.mixed! } });
    deps = verifyDepsOver(esplora, NOW);
  });

  afterAll(async () => {
    await esplora.close();
  });

  it('the unmutated attestation verifies (so the properties below can fail)', async () => {
    const result = await verifyAttestation({ addr: address, msg: message, sig: signature }, deps);
    expect(result.codes).toEqual(['sig_ok_bip322', 'bond_confirmed']);
  });

  const mutationArb = fc.array(
    fc.oneof(
      fc.record({ kind: fc.constant('set' as const), at: fc.nat(), byte: fc.integer({ min: 0, max: 255 }) }),
      fc.record({ kind: fc.constant('insert' as const), at: fc.nat(), byte: fc.integer({ min: 0, max: 255 }) }),
      fc.record({ kind: fc.constant('delete' as const), at: fc.nat(), byte: fc.constant(0) }),
    ),
    { minLength: 1, maxLength: 4 },
  );

  function mutate(bytes: Uint8Array, mutations: { kind: 'set' | 'insert' | 'delete'; at: number; byte: number }[]): Uint8Array {
    const out = [...bytes];
    for (const { kind, at, byte } of mutations) {
      const index = out.length === 0 ? 0 : at % (out.length + (kind === 'insert' ? 1 : 0));
      if (kind === 'set' && out.length > 0) out[index] = byte;
      else if (kind === 'insert') out.splice(index, 0, byte);
      else if (kind === 'delete' && out.length > 0) out.splice(index, 1);
    }
    return Uint8Array.from(out);
  }

  it('byte mutations of the message never throw out of parse or verify and never verify', async () => {
    const original = new TextEncoder().encode(message);
    await fc.assert(
      fc.asyncProperty(mutationArb, async (mutations) => {
        const mutated = new TextDecoder().decode(mutate(original, mutations));
        fc.pre(mutated !== message);
        const parsed = parseAttestationMessage(mutated);
        expect(typeof parsed.ok).toBe('boolean');
        const result = await verifyAttestation({ addr: address, msg: mutated, sig: signature }, deps);
        expect(result.ok).toBe(false);
        expect(result.codes).not.toContain('sig_ok_bip322');
        expect(result.attestation_id).toBe(attestationId(mutated));
      }),
      { numRuns: 300 },
    );
  });

  it('byte mutations of the signature never verify', async () => {
    const original = Buffer.from(signature, 'base64');
    await fc.assert(
      fc.asyncProperty(mutationArb, async (mutations) => {
        const mutated = Buffer.from(mutate(original, mutations));
        fc.pre(!mutated.equals(original));
        for (const sig of [mutated.toString('base64'), mutated.toString('hex')]) {
          const result = await verifyAttestation({ addr: address, msg: message, sig }, deps);
          expect(result.ok).toBe(false);
          expect(codesPass(result.codes)).toBe(false);
        }
      }),
      { numRuns: 300 },
    );
  });

  it('arbitrary strings never throw, and ok always agrees with the codes', async () => {
    const stringArb = fc.oneof(fc.string({ maxLength: 80 }), fc.string({ unit: 'binary', maxLength: 80 }), fc.constant(message));
    await fc.assert(
      fc.asyncProperty(
        fc.record({
          addr: fc.oneof(stringArb, fc.constant(address)),
          msg: stringArb,
          sig: fc.oneof(stringArb, fc.constant(signature)),
          scheme: fc.option(fc.oneof(fc.string({ maxLength: 8 }), fc.constantFrom('bip322', 'legacy')), { nil: undefined }),
          attestationId: fc.option(fc.oneof(fc.string({ maxLength: 70 }), fc.constant(attestationId(message))), { nil: undefined }),
        }),
        async (input) => {
          const result = await verifyAttestation(input, deps);
          expect(result.codes.length).toBeGreaterThan(0);
          expect(new Set(result.codes).size).toBe(result.codes.length);
          expect(result.ok).toBe(codesPass(result.codes));
          expect(result.address).toBe(input.addr);
          expect(result.attestation_id).toBe(attestationId(input.msg));
          expect(result.sats).toBeGreaterThanOrEqual(0);
          if (result.ok) {
            expect(input.msg).toBe(message);
            expect(input.addr).toBe(address);
          }
        },
      ),
      { numRuns: 300 },
    );
  });
});
