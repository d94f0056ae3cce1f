/**
 * GET /api/check end to end over HTTP (docs/api.md "Check result" and
 * "Attestation routes", docs/protocol.md §7): real NIP-01 relays and a real
 * Esplora fake on loopback, the clock injected so the cache can be aged.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { generateSecretKey, type NostrEvent } from 'nostr-tools/pure';
import { addressFromPrivateKey } from './support/bitcoin-signer.js';
import { agedUtxo, closedPortUrl, startEsploraFake, type EsploraFake } from './support/esplora-fake.js';
import { useRelayHarness } from './support/relay-harness.js';
import { aliceCheckResult, attestationEvent, signAttestation, type SignedAttestation } from './support/attestations.js';

const NOW = new Date('2026-06-01T00:00:00Z');
const aliceKey = new Uint8Array(32).fill(31);
const bobKey = new Uint8Array(32).fill(32);
const alice = addressFromPrivateKey(aliceKey, 'p2wpkh', 'mainnet');
const bob = addressFromPrivateKey(bobKey, 'p2tr', 'mainnet');
const publisherKey = generateSecretKey();

function eventOf(attestation: SignedAttestation): NostrEvent {
  return attestationEvent(attestation, { publisherKey, createdAt: NOW });
}

const utxo = (txid: string, value: number, ageDays: number) => agedUtxo(NOW, txid, value, ageDays);

let esplora: EsploraFake;
let clock = NOW;
const { relays, appOver } = useRelayHarness({ env: () => ({ ESPLORA_URLS: esplora.url }), deps: () => ({ now: () => clock }) });

/** An app over one normal relay that carries `attestation`, and that relay. */
async function appPublishing(attestation: SignedAttestation) {
  const [relay] = await relays('normal');
  relay!.publishRaw(eventOf(attestation));
  return { relay: relay!, app: await appOver([relay!]) };
}

async function check(app: FastifyInstance, query: string) {
  const response = await app.inject({ method: 'GET', url: `/api/check?${query}` });
  return { status: response.statusCode, body: response.json(), headers: response.headers };
}

beforeAll(async () => {
  esplora = await startEsploraFake({ tipHeight: 1000 });
});
afterEach(async () => {
  clock = NOW;
  esplora.setTip(1000);
  esplora.setUtxos(alice, []);
  esplora.setUtxos(bob, []);
  esplora.resetRequests();
});
afterAll(async () => {
  await esplora.close();
});

describe('GET /api/check: the check result', () => {
  it('answers the docs/api.md check result for an address, cached with public max-age and x-cache', async () => {
    esplora.setUtxos(alice, [utxo('aa'.repeat(32), 250_000, 45)]);
    const attestation = signAttestation(aliceKey, alice, '2026-05-01T00:00:00Z', { identities: ['github:alice', 'nostr:npub1alice'] });
    const { relay, app } = await appPublishing(attestation);

    const first = await check(app, `addr=${alice}`);
    expect(first.status).toBe(200);
    expect(first.body).toEqual({
      ...aliceCheckResult(attestation.id, alice),
      codes: ['sig_ok_bip322', 'bond_confirmed'],
      issued_at: '2026-05-01T00:00:00Z',
    });
    expect(first.body).not.toHaveProperty('reasons');
    expect(first.headers['cache-control']).toBe('public, max-age=60');
    expect(first.headers['x-cache']).toBe('miss');
    expect(first.headers['access-control-allow-origin']).toBe('*');

    clock = new Date(NOW.getTime() + 15_500);
    const second = await check(app, `addr=${alice}`);
    expect(second.body).toEqual(first.body);
    expect(second.headers['x-cache']).toBe('hit');
    expect(second.headers['cache-control']).toBe('public, max-age=44');
    expect(relay!.requestCount).toBe(1);
    expect(esplora.requests.utxo).toBe(1);
  });

  it('by id and by identity: the bound identity is among the identities', async () => {
    esplora.setUtxos(bob, [utxo('bb'.repeat(32), 5_000_000, 400)]);
    const attestation = signAttestation(bobKey, bob, '2026-05-01T00:00:00Z', { identities: ['x:bob', 'dns:bob.example'] });
    const { app } = await appPublishing(attestation);

    const byId = await check(app, `id=${attestation.id.toUpperCase()}`);
    expect(byId.status).toBe(200);
    expect(byId.body).toMatchObject({ ok: true, attestation_id: attestation.id, address: bob, sats: 5_000_000, days: 400 });

    // `twitter` is read as `x` (docs/protocol.md §7).
    const byIdentity = await check(app, 'identity=twitter:bob');
    expect(byIdentity.status).toBe(200);
    expect(byIdentity.body.identities).toContainEqual({ protocol: 'x', identifier: 'bob' });
    expect(byIdentity.body.attestation_id).toBe(attestation.id);
  });

  it('404 {ok: false, reasons: ["not_found"]} when nothing is published, cached briefly', async () => {
    const [relay] = await relays('normal');
    const app = await appOver([relay!]);
    const response = await check(app, `addr=${alice}`);
    expect(response.status).toBe(404);
    expect(response.body).toEqual({ ok: false, reasons: ['not_found'] });
    expect(response.headers['cache-control']).toBe('public, max-age=5');
    const again = await check(app, `addr=${alice}`);
    expect(again.headers['x-cache']).toBe('hit');
    clock = new Date(NOW.getTime() + 5_000);
    const later = await check(app, `addr=${alice}`);
    expect(later.headers['x-cache']).toBe('miss');
    expect(relay!.requestCount).toBe(2);
  });

  it('404 also when envelopes exist but none verifies, listing them in `rejected`', async () => {
    const [relay] = await relays('normal');
    const expired = signAttestation(aliceKey, alice, '2026-05-01T00:00:00Z', { extensions: { expires: '2026-05-15T00:00:00Z' } });
    relay!.publishRaw(eventOf(expired));
    const app = await appOver([relay!]);
    const response = await check(app, `addr=${alice}`);
    expect(response.status).toBe(404);
    expect(response.body).toEqual({
      ok: false,
      reasons: ['not_found'],
      rejected: [{ attestation_id: expired.id, address: alice, codes: ['expired'] }],
    });
  });

  it('skips an expired newest attestation for an older valid one', async () => {
    const [relay] = await relays('normal');
    esplora.setUtxos(alice, [utxo('aa'.repeat(32), 1_000, 2)]);
    const valid = signAttestation(aliceKey, alice, '2026-01-01T00:00:00Z');
    relay!.publishRaw(eventOf(valid));
    relay!.publishRaw(
      eventOf(signAttestation(aliceKey, alice, '2026-05-01T00:00:00Z', { extensions: { expires: '2026-05-15T00:00:00Z' } })),
    );
    const app = await appOver([relay!]);
    const response = await check(app, `addr=${alice}`);
    expect(response.status).toBe(200);
    expect(response.body.attestation_id).toBe(valid.id);
  });

  it('chain unavailable: 200, ok false, reasons ["chain_unavailable"], cached 5 s', async () => {
    const [relay] = await relays('normal');
    relay!.publishRaw(eventOf(signAttestation(aliceKey, alice, '2026-05-01T00:00:00Z')));
    const app = await appOver([relay!], { ESPLORA_URLS: await closedPortUrl() });
    const response = await check(app, `addr=${alice}&min_sats=0`);
    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({ ok: false, reasons: ['chain_unavailable'], sats: 0, days: 0, address: alice });
    expect(response.body.codes).toContain('chain_unavailable');
    expect(response.headers['cache-control']).toBe('public, max-age=5');
  });
});

describe('GET /api/check: thresholds after the cache', () => {
  it('below_min_sats and below_min_days alone and together; ok exactly on the threshold; one shared cache entry', async () => {
    const [relay] = await relays('normal');
    esplora.setUtxos(alice, [utxo('aa'.repeat(32), 250_000, 45)]);
    relay!.publishRaw(eventOf(signAttestation(aliceKey, alice, '2026-05-01T00:00:00Z')));
    const app = await appOver([relay!]);

    const exact = await check(app, `addr=${alice}&min_sats=250000&min_days=45`);
    expect(exact.status).toBe(200);
    expect(exact.body.ok).toBe(true);
    expect(exact.body).not.toHaveProperty('reasons');
    expect(exact.headers['x-cache']).toBe('miss');

    const sats = await check(app, `addr=${alice}&min_sats=250001`);
    expect(sats.status).toBe(200);
    expect(sats.body).toMatchObject({ ok: false, reasons: ['below_min_sats'], sats: 250_000, days: 45 });
    expect(sats.headers['x-cache']).toBe('hit');

    const days = await check(app, `addr=${alice}&min_days=46`);
    expect(days.body).toMatchObject({ ok: false, reasons: ['below_min_days'] });

    const both = await check(app, `addr=${alice}&min_sats=300000&min_days=100`);
    expect(both.body).toMatchObject({ ok: false, reasons: ['below_min_sats', 'below_min_days'] });

    const leadingZeros = await check(app, `addr=${alice}&min_sats=000250000&min_days=0`);
    expect(leadingZeros.body.ok).toBe(true);

    expect(relay!.requestCount).toBe(1);
    expect(esplora.requests.utxo).toBe(1);
  });

  it('a spent bond shows once the cache entry has expired', async () => {
    const [relay] = await relays('normal');
    esplora.setUtxos(alice, [utxo('aa'.repeat(32), 100_000, 30)]);
    esplora.setUtxos(bob, [utxo('bb'.repeat(32), 100_000, 30)]);
    relay!.publishRaw(eventOf(signAttestation(aliceKey, alice, '2026-05-01T00:00:00Z')));
    const bonded = signAttestation(bobKey, bob, '2026-05-01T00:00:00Z', { extensions: { bond: '100000' } });
    relay!.publishRaw(eventOf(bonded));
    const app = await appOver([relay!]);

    expect((await check(app, `addr=${alice}&min_sats=100000`)).body.ok).toBe(true);
    expect((await check(app, `addr=${bob}&min_sats=100000`)).body).toMatchObject({ ok: true, sats: 100_000 });

    // The coins move in a new block; within the TTL the cached answer stands.
    esplora.setUtxos(alice, []);
    esplora.setUtxos(bob, [utxo('cc'.repeat(32), 40_000, 1)]);
    esplora.setTip(1001);
    clock = new Date(NOW.getTime() + 59_000);
    expect((await check(app, `addr=${alice}&min_sats=100000`)).body.ok).toBe(true);

    clock = new Date(NOW.getTime() + 61_000);
    const spent = await check(app, `addr=${alice}&min_sats=100000`);
    expect(spent.status).toBe(200);
    expect(spent.headers['x-cache']).toBe('miss');
    expect(spent.body).toMatchObject({ ok: false, sats: 0, days: 0, reasons: ['below_min_sats'] });
    expect(spent.body.codes).toEqual(['sig_ok_bip322', 'bond_zero']);

    // A declared bond the balance no longer covers does not verify at all.
    const under = await check(app, `addr=${bob}&min_sats=100000`);
    expect(under.status).toBe(404);
    expect(under.body).toEqual({
      ok: false,
      reasons: ['not_found'],
      rejected: [{ attestation_id: bonded.id, address: bob, codes: ['sig_ok_bip322', 'bond_insufficient'] }],
    });
  });
});

describe('GET /api/check: single flight', () => {
  it('100 concurrent cold checks of one subject: one REQ per relay and one chain query', async () => {
    const [one, two, down] = await relays('normal', 'normal', 'down');
    esplora.setUtxos(alice, [utxo('aa'.repeat(32), 70_000, 12)]);
    const event = eventOf(signAttestation(aliceKey, alice, '2026-05-01T00:00:00Z'));
    one!.publishRaw(event);
    two!.publishRaw(event);
    const app = await appOver([one!, two!, down!]);

    const answers = await Promise.all(Array.from({ length: 100 }, (_, index) => check(app, `addr=${alice}&min_sats=${index * 1000}`)));
    expect(answers.every((answer) => answer.status === 200)).toBe(true);
    expect(answers.filter((answer) => answer.body.ok).length).toBe(71); // min_sats 0 … 70,000
    expect(one!.requestCount).toBe(1);
    expect(two!.requestCount).toBe(1);
    expect(esplora.requests.utxo).toBe(1);
    expect(esplora.requests.tipHeight).toBe(1);
  });
});

describe('GET /api/check: relays', () => {
  it('503 relays_unavailable when no relay answered', async () => {
    const [down, mute] = await relays('down', 'noEose');
    const app = await appOver([down!, mute!]);
    const response = await check(app, `addr=${alice}`);
    expect(response.status).toBe(503);
    expect(response.body).toEqual({
      ok: false,
      error: 'relays_unavailable',
      reason: 'relays_unavailable',
      reasons: ['relays_unavailable'],
    });
    expect(response.headers['cache-control']).toBe('no-store');
  });

  it('answers from the relays that did: one down, one without EOSE, one serving forgeries', async () => {
    const [down, mute, liar, good] = await relays('down', 'noEose', 'normal', 'normal');
    esplora.setUtxos(alice, [utxo('aa'.repeat(32), 9_000, 3)]);
    const genuine = signAttestation(aliceKey, alice, '2026-02-01T00:00:00Z');
    good!.publishRaw(eventOf(genuine));
    const newer = eventOf(signAttestation(aliceKey, alice, '2026-05-01T00:00:00Z'));
    liar!.publishRaw({ ...newer, sig: '00'.repeat(64) });
    const app = await appOver([down!, mute!, liar!, good!]);
    const response = await check(app, `addr=${alice}`);
    expect(response.status).toBe(200);
    expect(response.body.attestation_id).toBe(genuine.id);
  });
});

describe('GET /api/check: bad input is 400 bad_request', () => {
  const cases: Array<[string, string]> = [
    ['two subjects', `addr=${alice}&id=${'ab'.repeat(32)}`],
    ['no subject', 'min_sats=1'],
    ['a bad hex id', `id=${'xy'.repeat(32)}`],
    ['a short id', `id=${'ab'.repeat(31)}`],
    ['a bad identity', 'identity=alice'],
    ['an identity with an empty identifier', 'identity=github:'],
    ['a bad address', 'addr=bc1qnotreallyanaddress'],
    ['an empty address', 'addr='],
    ['a repeated address', `addr=${alice}&addr=${alice}`],
    ['min_sats=-1', `addr=${alice}&min_sats=-1`],
    ['min_sats=abc', `addr=${alice}&min_sats=abc`],
    ['min_sats=1.5', `addr=${alice}&min_sats=1.5`],
    ['min_days=-3', `addr=${alice}&min_days=-3`],
    ['min_days empty', `addr=${alice}&min_days=`],
  ];
  it.each(cases)('%s', async (_name, query) => {
    const app = await appOver([]);
    const response = await check(app, query);
    expect(response.status).toBe(400);
    expect(response.body).toMatchObject({ ok: false, error: 'bad_request', reason: 'bad_request', reasons: ['bad_request'] });
    expect(typeof response.body.detail).toBe('string');
  });
});

describe('OpenAPI', () => {
  it('documents the three routes under the attestation tag with their responses', async () => {
    const app = await appOver([]);
    const document = (await app.inject({ method: 'GET', url: '/api/openapi' })).json();
    const check = document.paths['/api/check'].get;
    expect(check.tags).toEqual(['attestation']);
    expect(Object.keys(check.responses).sort()).toEqual(['200', '400', '404', '429', '503']);
    expect(check.parameters.map((parameter: { name: string }) => parameter.name).sort()).toEqual([
      'addr',
      'id',
      'identity',
      'min_days',
      'min_sats',
    ]);
    expect(document.paths['/api/discover'].get.tags).toEqual(['attestation']);
    expect(Object.keys(document.paths['/api/attestations'].post.responses).sort()).toEqual(['200', '400', '413', '415', '429', '503']);
  });
});
