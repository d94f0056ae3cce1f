/**
 * The check/discover service (src/features/attestations/lookup.ts) against real NIP-01
 * relays and a real Esplora fake on loopback (docs/protocol.md §7 "Relay
 * envelopes" and "Chain metrics"): relays down, silent or lying, forged
 * events, several addresses per identity, expiry, and the cache.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { finalizeEvent, generateSecretKey, type NostrEvent } from 'nostr-tools/pure';
import {
  createAttestationLookup,
  createLruCache,
  createSingleFlight,
  parseSubject,
  subjectKey,
  type AttestationLookupService,
  type CheckOutcome,
  type CheckSubject,
} from '../src/features/attestations/index.js';
import { addressFromPrivateKey } from './support/bitcoin-signer.js';
import { createEsploraClient } from '../src/chain/index.js';
import { createRelayPool, type RelayPool } from '../src/relay/index.js';
import { agedUtxo, closedPortUrl, startEsploraFake, type EsploraFake } from './support/esplora-fake.js';
import { startNostrRelay, type NostrRelay, type RelayMode } from './support/nostr-relay.js';
import { attestationEvent, signAttestation, type SignedAttestation } from './support/attestations.js';

const NOW = new Date('2026-06-01T00:00:00Z');
const nowSeconds = Math.floor(NOW.getTime() / 1000);
const aliceKey = new Uint8Array(32).fill(21);
const bobKey = new Uint8Array(32).fill(22);
const alice = addressFromPrivateKey(aliceKey, 'p2wpkh', 'mainnet');
const aliceTaproot = addressFromPrivateKey(aliceKey, 'p2tr', 'mainnet');
const bob = addressFromPrivateKey(bobKey, 'p2wpkh', 'mainnet');
const publisherKey = generateSecretKey();

function eventOf(attestation: SignedAttestation, options: { signature?: string; createdAt?: Date } = {}): NostrEvent {
  return attestationEvent(attestation, {
    publisherKey,
    createdAt: options.createdAt ?? NOW,
    ...(options.signature === undefined ? {} : { signature: options.signature }),
  });
}

const utxo = (txid: string, value: number, ageDays: number) => agedUtxo(NOW, txid, value, ageDays);

let esplora: EsploraFake;
const running: NostrRelay[] = [];
const pools: RelayPool[] = [];
let clock = NOW;

async function relays(...modes: RelayMode[]): Promise<NostrRelay[]> {
  const started = await Promise.all(modes.map((mode) => startNostrRelay({ mode })));
  running.push(...started);
  return started;
}

function service(relayList: NostrRelay[], options: { esploraUrl?: string; cacheTtlMs?: number } = {}): AttestationLookupService {
  const pool = createRelayPool({ relays: relayList.map((relay) => relay.url), timeoutMs: 400 });
  pools.push(pool);
  return createAttestationLookup({
    relays: pool,
    chain: createEsploraClient({ bases: [options.esploraUrl ?? esplora.url], timeoutMs: 1000 }),
    network: 'mainnet',
    minConfirmations: 1,
    now: () => clock,
    cache: createLruCache<CheckOutcome>({ now: () => clock.getTime() }),
    singleFlight: createSingleFlight(),
    cacheTtlMs: options.cacheTtlMs ?? 60_000,
  });
}

const byAddress = (address: string): CheckSubject => ({ by: 'address', address });
const byIdentity = (protocol: string, identifier: string): CheckSubject => ({ by: 'identity', identity: { protocol, identifier } });

beforeAll(async () => {
  esplora = await startEsploraFake({ tipHeight: 1000 });
});
afterEach(async () => {
  clock = NOW;
  esplora.setUtxos(alice, []);
  esplora.setUtxos(aliceTaproot, []);
  esplora.setUtxos(bob, []);
  esplora.setMode('ok');
  esplora.resetRequests();
  await Promise.all(pools.splice(0).map((pool) => pool.close()));
  await Promise.all(running.splice(0).map((relay) => relay.close()));
});
afterAll(async () => {
  await esplora.close();
});

describe('parseSubject', () => {
  it('reads exactly one of addr, id, identity', () => {
    expect(parseSubject({ addr: alice })).toEqual({ ok: true, subject: { by: 'address', address: alice } });
    expect(parseSubject({ addr: alice.toUpperCase() })).toEqual({ ok: true, subject: { by: 'address', address: alice } });
    expect(parseSubject({ id: 'AB'.repeat(32) })).toEqual({ ok: true, subject: { by: 'id', id: 'ab'.repeat(32) } });
    expect(parseSubject({ identity: 'twitter:@alice' })).toEqual({
      ok: true,
      subject: { by: 'identity', identity: { protocol: 'x', identifier: '@alice' } },
    });
    // Any network (docs/api.md names no restriction).
    expect(parseSubject({ addr: addressFromPrivateKey(aliceKey, 'p2wpkh', 'testnet') }).ok).toBe(true);
  });

  it('refuses none, two, and each malformed subject with a detail naming the field', () => {
    expect(parseSubject({})).toEqual({ ok: false, detail: 'query: give exactly one of addr, id, identity' });
    expect(parseSubject({ addr: alice, id: 'ab'.repeat(32) }).ok).toBe(false);
    expect(parseSubject({ addr: 'bc1qnotanaddress' })).toMatchObject({ ok: false, detail: expect.stringMatching(/^query\.addr/) });
    expect(parseSubject({ addr: '' }).ok).toBe(false);
    expect(parseSubject({ id: 'ab'.repeat(31) })).toMatchObject({ ok: false, detail: expect.stringMatching(/^query\.id/) });
    expect(parseSubject({ id: 'zz'.repeat(32) }).ok).toBe(false);
    for (const identity of ['alice', ':alice', 'GitHub:alice', 'github:', 'github:a,b']) {
      expect(parseSubject({ identity })).toMatchObject({ ok: false, detail: expect.stringMatching(/^query\.identity/) });
    }
  });

  it('gives one cache key per subject', () => {
    expect(subjectKey(byIdentity('x', '@a'))).toBe('identity:x:@a');
    expect(subjectKey(byAddress(alice))).toBe(`addr:${alice}`);
  });
});

describe('check', () => {
  it('takes the newest envelope that verifies, with chain metrics', async () => {
    const [relay] = await relays('normal');
    esplora.setUtxos(alice, [utxo('aa'.repeat(32), 250_000, 45)]);
    const older = signAttestation(aliceKey, alice, '2026-03-01T00:00:00Z', { identities: ['github:alice'] });
    const newer = signAttestation(aliceKey, alice, '2026-05-01T00:00:00Z', { identities: ['github:alice', 'nostr:npub1alice'] });
    relay!.publishRaw(eventOf(newer, { createdAt: new Date('2026-05-01T00:00:00Z') }));
    relay!.publishRaw(eventOf(older, { createdAt: new Date('2026-05-02T00:00:00Z') }));

    const answer = await service([relay!]).check(byAddress(alice));
    expect(answer.cache).toBe('miss');
    expect(answer.expiresAtMs).toBe(NOW.getTime() + 60_000);
    expect(answer.outcome).toEqual({
      status: 'verified',
      result: {
        ok: true,
        codes: ['sig_ok_bip322', 'bond_confirmed'],
        sats: 250_000,
        days: 45,
        score: expect.any(Number),
        attestation_id: newer.id,
        address: alice,
        identities: [
          { protocol: 'github', identifier: 'alice' },
          { protocol: 'nostr', identifier: 'npub1alice' },
        ],
        network: 'mainnet',
        issued_at: '2026-05-01T00:00:00Z',
      },
    });
  });

  it('skips a newer expired attestation for an older valid one, without a chain query for it', async () => {
    const [relay] = await relays('normal');
    esplora.setUtxos(alice, [utxo('aa'.repeat(32), 10_000, 10)]);
    const valid = signAttestation(aliceKey, alice, '2026-01-01T00:00:00Z');
    const expired = signAttestation(aliceKey, alice, '2026-05-01T00:00:00Z', { extensions: { expires: '2026-05-31T00:00:00Z' } });
    relay!.publishRaw(eventOf(valid));
    relay!.publishRaw(eventOf(expired));
    const answer = await service([relay!]).check(byAddress(alice));
    expect(answer.outcome).toMatchObject({ status: 'verified', result: { attestation_id: valid.id } });
    expect(esplora.requests.utxo).toBe(1);
  });

  it('not_found lists the attestations that did not verify, with their codes', async () => {
    const [relay] = await relays('normal');
    const expired = signAttestation(aliceKey, alice, '2026-05-01T00:00:00Z', { extensions: { expires: '2026-05-02T00:00:00Z' } });
    // A signature made by alice's key, but over another message.
    const forgedSignature = signAttestation(aliceKey, alice, '2026-04-01T00:00:00Z');
    const unrelatedSignature = signAttestation(aliceKey, alice, '2026-03-01T00:00:00Z').sig;
    relay!.publishRaw(eventOf(expired));
    relay!.publishRaw(eventOf(forgedSignature, { signature: unrelatedSignature }));
    const answer = await service([relay!]).check(byAddress(alice));
    expect(answer.outcome).toEqual({
      status: 'not_found',
      rejected: [
        { attestation_id: expired.id, address: alice, codes: ['expired'] },
        { attestation_id: forgedSignature.id, address: alice, codes: ['sig_invalid'] },
      ],
    });
    expect(esplora.requests.utxo).toBe(0);
    // Short lifetime for anything but a verified result.
    expect(answer.expiresAtMs).toBe(NOW.getTime() + 5_000);
  });

  it('not_found with nothing rejected when the relays hold nothing for the subject', async () => {
    const [relay] = await relays('normal');
    const answer = await service([relay!]).check(byAddress(bob));
    expect(answer.outcome).toEqual({ status: 'not_found', rejected: [] });
  });

  it('ignores forged events: bad Nostr signature, message not matching its id, address not matching', async () => {
    const [honest, liar] = await relays('normal', 'normal');
    esplora.setUtxos(alice, [utxo('aa'.repeat(32), 50_000, 5)]);
    const genuine = signAttestation(aliceKey, alice, '2026-01-01T00:00:00Z');
    honest!.publishRaw(eventOf(genuine));

    // 1. A valid-looking event whose Nostr signature was altered.
    const newer = signAttestation(aliceKey, alice, '2026-05-01T00:00:00Z');
    const tampered = eventOf(newer);
    liar!.publishRaw({ ...tampered, sig: (tampered.sig[0] === 'a' ? 'b' : 'a') + tampered.sig.slice(1) });
    // 2. Nostr-signed, but the message is not the one the id names.
    const other = signAttestation(aliceKey, alice, '2026-05-02T00:00:00Z');
    const content = {
      ...JSON.parse(eventOf(other).content),
      message: newer.msg,
      message_b64url: Buffer.from(newer.msg).toString('base64url'),
    };
    liar!.publishRaw(
      finalizeEvent(
        {
          kind: 30078,
          created_at: nowSeconds,
          tags: [
            ['d', other.id],
            ['address', alice],
          ],
          content: JSON.stringify(content),
        },
        generateSecretKey(),
      ),
    );
    // 3. Nostr-signed, tagged and labelled with alice's address, but bob's message.
    const bobs = signAttestation(bobKey, bob, '2026-05-03T00:00:00Z');
    const bobContent = { ...JSON.parse(eventOf(bobs).content), address: alice };
    liar!.publishRaw(
      finalizeEvent(
        {
          kind: 30078,
          created_at: nowSeconds,
          tags: [
            ['d', bobs.id],
            ['address', alice],
          ],
          content: JSON.stringify(bobContent),
        },
        generateSecretKey(),
      ),
    );

    const lookup = service([honest!, liar!]);
    const answer = await lookup.check(byAddress(alice));
    expect(answer.outcome).toMatchObject({ status: 'verified', result: { attestation_id: genuine.id, address: alice } });
    const listed = await lookup.discover(byAddress(alice), 50);
    expect(listed.attestations.map((envelope) => envelope.attestation_id)).toEqual([genuine.id]);
  });

  it('answers from the relays that answered: one down, one that never sends EOSE', async () => {
    const [down, mute, good] = await relays('down', 'noEose', 'normal');
    esplora.setUtxos(alice, [utxo('aa'.repeat(32), 50_000, 5)]);
    const attestation = signAttestation(aliceKey, alice, '2026-02-01T00:00:00Z');
    good!.publishRaw(eventOf(attestation));
    const started = Date.now();
    const answer = await service([down!, mute!, good!]).check(byAddress(alice));
    expect(answer.outcome).toMatchObject({ status: 'verified', result: { attestation_id: attestation.id } });
    // Bounded by the per-relay deadline (400 ms here), not by the silent relay.
    expect(Date.now() - started).toBeLessThan(3_000);
  });

  it('relays_unavailable when no relay answered, even if a relay without EOSE sent events', async () => {
    const [down, mute] = await relays('down', 'noEose');
    const attestation = signAttestation(aliceKey, alice, '2026-02-01T00:00:00Z');
    mute!.publishRaw(eventOf(attestation));
    const lookup = service([down!, mute!]);
    const answer = await lookup.check(byAddress(alice));
    expect(answer.outcome).toEqual({ status: 'relays_unavailable' });
    expect(answer.expiresAtMs).toBe(NOW.getTime() + 5_000);
    expect(esplora.requests.utxo).toBe(0);
    const listed = await lookup.discover(byAddress(alice), 50);
    expect(listed).toEqual({
      count: 0,
      total: 0,
      attestations: [],
      relays_answered: 0,
      relays_queried: 2,
      warnings: ['relays_unavailable'],
    });
  });

  it('an identity bound by several addresses: the newest verifying one wins, discover lists all', async () => {
    const [relay] = await relays('normal');
    esplora.setUtxos(alice, [utxo('aa'.repeat(32), 10_000, 100)]);
    esplora.setUtxos(aliceTaproot, [utxo('bb'.repeat(32), 900_000, 3)]);
    const first = signAttestation(aliceKey, alice, '2026-01-01T00:00:00Z', { identities: ['github:alice'] });
    const second = signAttestation(aliceKey, aliceTaproot, '2026-03-01T00:00:00Z', { identities: ['github:alice', 'x:alice'] });
    const unrelated = signAttestation(bobKey, bob, '2026-04-01T00:00:00Z', { identities: ['github:bob'] });
    for (const attestation of [first, second, unrelated]) relay!.publishRaw(eventOf(attestation));

    const lookup = service([relay!]);
    const answer = await lookup.check(byIdentity('github', 'alice'));
    expect(answer.outcome).toMatchObject({
      status: 'verified',
      result: { attestation_id: second.id, address: aliceTaproot, sats: 900_000 },
    });
    const listed = await lookup.discover(byIdentity('github', 'alice'), 50);
    expect(listed.attestations.map((envelope) => envelope.address)).toEqual([aliceTaproot, alice]);
    expect(listed.total).toBe(2);
  });

  it('asks the chain once per address even when several envelopes of it are tried', async () => {
    const [relay] = await relays('normal');
    esplora.setUtxos(alice, [utxo('aa'.repeat(32), 10_000, 10)]);
    const bonded = signAttestation(aliceKey, alice, '2026-05-01T00:00:00Z', { extensions: { bond: '20000' } });
    const plain = signAttestation(aliceKey, alice, '2026-04-01T00:00:00Z');
    relay!.publishRaw(eventOf(bonded));
    relay!.publishRaw(eventOf(plain));
    const answer = await service([relay!]).check(byAddress(alice));
    // The newest one claims a bond of 20,000 on a balance of 10,000: bond_insufficient, skipped.
    expect(answer.outcome).toMatchObject({ status: 'verified', result: { attestation_id: plain.id, sats: 10_000 } });
    expect(esplora.requests.utxo).toBe(1);
  });

  it('chain_unavailable for the newest signature-valid envelope stops the check (no stale fallback)', async () => {
    const [relay] = await relays('normal');
    const older = signAttestation(aliceKey, alice, '2026-01-01T00:00:00Z');
    const newer = signAttestation(aliceKey, alice, '2026-05-01T00:00:00Z');
    relay!.publishRaw(eventOf(older));
    relay!.publishRaw(eventOf(newer));
    const answer = await service([relay!], { esploraUrl: await closedPortUrl() }).check(byAddress(alice));
    expect(answer.outcome).toMatchObject({
      status: 'chain_unavailable',
      result: { attestation_id: newer.id, ok: false, codes: ['sig_ok_bip322', 'chain_unavailable'], sats: 0, days: 0 },
    });
    expect(answer.expiresAtMs).toBe(NOW.getTime() + 5_000);
  });

  it('caches per subject; a verified result is never served past its own expiry', async () => {
    const [relay] = await relays('normal');
    esplora.setUtxos(alice, [utxo('aa'.repeat(32), 10_000, 10)]);
    const soon = signAttestation(aliceKey, alice, '2026-05-01T00:00:00Z', { extensions: { expires: '2026-06-01T00:00:20Z' } });
    relay!.publishRaw(eventOf(soon));
    const lookup = service([relay!]);
    const first = await lookup.check(byAddress(alice));
    expect(first.expiresAtMs).toBe(Date.parse('2026-06-01T00:00:20Z'));
    const second = await lookup.check(byAddress(alice));
    expect(second.cache).toBe('hit');
    expect(relay!.requestCount).toBe(1);
    clock = new Date('2026-06-01T00:00:20Z');
    const third = await lookup.check(byAddress(alice));
    expect(third.cache).toBe('miss');
    expect(third.outcome).toMatchObject({ status: 'not_found', rejected: [{ codes: ['expired'] }] });
  });

  it('caching off (TTL 0) still shares one look-up between concurrent callers', async () => {
    const [relay] = await relays('normal');
    const lookup = service([relay!], { cacheTtlMs: 0 });
    await Promise.all(Array.from({ length: 20 }, () => lookup.check(byAddress(bob))));
    expect(relay!.requestCount).toBe(1);
    await lookup.check(byAddress(bob));
    expect(relay!.requestCount).toBe(2);
  });
});

describe('discover', () => {
  it('lists one envelope per attestation, newest first, with every relay that served it', async () => {
    const [one, two] = await relays('normal', 'normal');
    const shared = signAttestation(aliceKey, alice, '2026-02-01T00:00:00Z');
    const newest = signAttestation(aliceKey, alice, '2026-04-01T00:00:00Z', { identities: ['github:alice'] });
    const event = eventOf(shared);
    one!.publishRaw(event);
    two!.publishRaw(event);
    two!.publishRaw(eventOf(newest));
    const listed = await service([one!, two!]).discover(byAddress(alice), 50);
    expect(listed.count).toBe(2);
    expect(listed.total).toBe(2);
    expect(listed.relays_answered).toBe(2);
    expect(listed.attestations.map((envelope) => envelope.attestation_id)).toEqual([newest.id, shared.id]);
    expect(listed.attestations[1]).toEqual({
      attestation_id: shared.id,
      scheme: 'bip322',
      address: alice,
      identities: [],
      message: shared.msg,
      message_b64url: Buffer.from(shared.msg).toString('base64url'),
      signature: shared.sig,
      issued_at: '2026-02-01T00:00:00Z',
      event_id: event.id,
      created_at: event.created_at,
      relays: [one!.url, two!.url],
    });
    expect(listed.attestations[1]).not.toHaveProperty('pubkey');
  });

  it('limit bounds count, total counts all found', async () => {
    const [relay] = await relays('normal');
    for (let month = 1; month <= 5; month++) relay!.publishRaw(eventOf(signAttestation(aliceKey, alice, `2026-0${month}-01T00:00:00Z`)));
    const listed = await service([relay!]).discover(byAddress(alice), 2);
    expect(listed.count).toBe(2);
    expect(listed.total).toBe(5);
    expect(listed.attestations.map((envelope) => envelope.issued_at)).toEqual(['2026-05-01T00:00:00Z', '2026-04-01T00:00:00Z']);
  });

  it('reads the relays on every call', async () => {
    const [relay] = await relays('normal');
    const lookup = service([relay!]);
    await lookup.discover(byAddress(alice), 10);
    await lookup.discover(byAddress(alice), 10);
    expect(relay!.requestCount).toBe(2);
  });
});
