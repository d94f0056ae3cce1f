/**
 * GET /api/discover end to end over HTTP (docs/api.md "Attestation routes",
 * docs/protocol.md §7 "Relay envelopes"): real NIP-01 relays on loopback, read on
 * every call, never cached.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { generateSecretKey, type NostrEvent } from 'nostr-tools/pure';
import { addressFromPrivateKey } from './support/bitcoin-signer.js';
import { useRelayHarness } from './support/relay-harness.js';
import { attestationEvent, githubAliceEnvelope, signAttestation, type SignedAttestation } from './support/attestations.js';

const NOW = new Date('2026-06-01T00:00:00Z');
const aliceKey = new Uint8Array(32).fill(41);
const alice = addressFromPrivateKey(aliceKey, 'p2wpkh', 'mainnet');
const aliceLegacy = addressFromPrivateKey(aliceKey, 'p2pkh', 'mainnet');
const publisherKey = generateSecretKey();

function signed(address: string, issuedAt: string, identities: string[] = [], extensions: Record<string, string> = {}): SignedAttestation {
  return signAttestation(aliceKey, address, issuedAt, { identities, extensions });
}

function eventOf(attestation: SignedAttestation, createdAt = NOW): NostrEvent {
  return attestationEvent(attestation, { publisherKey, createdAt, relayHints: ['wss://relay.example.com'] });
}

const { relays, appOver } = useRelayHarness({ deps: () => ({ now: () => NOW }) });

async function discover(app: FastifyInstance, query: string) {
  const response = await app.inject({ method: 'GET', url: `/api/discover?${query}` });
  return { status: response.statusCode, body: response.json(), headers: response.headers };
}

afterEach(async () => {});

describe('GET /api/discover', () => {
  it('answers {count, total, attestations} newest first with the §7 envelope fields, not cached', async () => {
    const [one, two] = await relays('normal', 'normal');
    const older = signed(alice, '2026-01-01T00:00:00Z', ['github:alice']);
    const newer = signed(alice, '2026-04-01T00:00:00Z', ['github:alice'], { expires: '2027-01-01T00:00:00Z' });
    const olderEvent = eventOf(older);
    // The same attestation on both relays: listed once, with both relays.
    one!.publishRaw(olderEvent);
    two!.publishRaw(olderEvent);
    const newerEvent = eventOf(newer, new Date('2026-04-01T00:00:00Z'));
    two!.publishRaw(newerEvent);
    const app = await appOver([one!, two!]);

    const { status, body, headers } = await discover(app, `addr=${alice}`);
    expect(status).toBe(200);
    expect(headers['cache-control']).toBe('no-store');
    expect(headers['access-control-allow-origin']).toBe('*');
    expect(body).toEqual({
      count: 2,
      total: 2,
      relays_answered: 2,
      relays_queried: 2,
      attestations: [
        {
          ...githubAliceEnvelope(newer),
          issued_at: '2026-04-01T00:00:00Z',
          expires_at: '2027-01-01T00:00:00Z',
          relay_hints: ['wss://relay.example.com'],
          verification_url: `http://localhost:8787/api/check?id=${newer.id}`,
          event_id: newerEvent.id,
          created_at: newerEvent.created_at,
          relays: [two!.url],
        },
        {
          ...githubAliceEnvelope(older),
          issued_at: '2026-01-01T00:00:00Z',
          relay_hints: ['wss://relay.example.com'],
          verification_url: `http://localhost:8787/api/check?id=${older.id}`,
          event_id: olderEvent.id,
          created_at: olderEvent.created_at,
          relays: [one!.url, two!.url],
        },
      ],
    });

    // Read from the relays on every call (docs/api.md Limits: no cache).
    await discover(app, `addr=${alice}`);
    expect(one!.requestCount).toBe(2);
    expect(two!.requestCount).toBe(2);
  });

  it('by id and by identity (several addresses for one identity)', async () => {
    const [relay] = await relays('normal');
    const segwit = signed(alice, '2026-02-01T00:00:00Z', ['nostr:npub1alice']);
    const legacy = signed(aliceLegacy, '2026-03-01T00:00:00Z', ['nostr:npub1alice', 'x:alice']);
    relay!.publishRaw(eventOf(segwit));
    relay!.publishRaw(eventOf(legacy));
    const app = await appOver([relay!]);

    const byIdentity = await discover(app, 'identity=nostr:npub1alice');
    expect(byIdentity.body.attestations.map((envelope: { address: string }) => envelope.address)).toEqual([aliceLegacy, alice]);
    const byId = await discover(app, `id=${segwit.id}`);
    expect(byId.body).toMatchObject({ count: 1, total: 1, attestations: [{ attestation_id: segwit.id }] });
    const nobody = await discover(app, 'identity=github:nobody');
    expect(nobody.body).toMatchObject({ count: 0, total: 0, attestations: [] });
    expect(nobody.body).not.toHaveProperty('warnings');
  });

  it('limit bounds count (default 50, max 200); total counts all found', async () => {
    const [relay] = await relays('normal');
    for (let day = 1; day <= 60; day++)
      relay!.publishRaw(
        eventOf(signed(alice, `2026-03-${String((day % 28) + 1).padStart(2, '0')}T${String(day % 24).padStart(2, '0')}:00:00Z`)),
      );
    // Sixty events from one relay that always answers: the 400 ms time-out of
    // the harness, kept for the tests of a mute relay, is too short for them
    // on a loaded machine (a relay that misses it counts as down, count 0).
    const app = await appOver([relay!], {}, { relayTimeoutMs: 10_000 });
    const byDefault = await discover(app, `addr=${alice}`);
    expect(byDefault.body.count).toBe(50);
    expect(byDefault.body.total).toBe(60);
    const issued = byDefault.body.attestations.map((envelope: { issued_at: string }) => Date.parse(envelope.issued_at));
    expect([...issued].sort((a, b) => b - a)).toEqual(issued);
    expect((await discover(app, `addr=${alice}&limit=3`)).body).toMatchObject({ count: 3, total: 60 });
    expect((await discover(app, `addr=${alice}&limit=200`)).body).toMatchObject({ count: 60, total: 60 });
  });

  it('one relay down, one without EOSE, one forging: answers with what verified', async () => {
    const [down, mute, liar, good] = await relays('down', 'noEose', 'normal', 'normal');
    const genuine = signed(alice, '2026-02-01T00:00:00Z');
    good!.publishRaw(eventOf(genuine));
    const forged = eventOf(signed(alice, '2026-05-01T00:00:00Z'));
    liar!.publishRaw({ ...forged, content: forged.content.replace('"bip322"', '"legacy"') });
    const app = await appOver([down!, mute!, liar!, good!]);
    const { status, body } = await discover(app, `addr=${alice}`);
    expect(status).toBe(200);
    expect(body).toMatchObject({ count: 1, total: 1, relays_answered: 2, relays_queried: 4 });
    expect(body.attestations[0].attestation_id).toBe(genuine.id);
  });

  it('200 with count 0, total 0 and warnings ["relays_unavailable"] when no relay answered', async () => {
    const [down, mute] = await relays('down', 'noEose');
    mute!.publishRaw(eventOf(signed(alice, '2026-02-01T00:00:00Z')));
    const app = await appOver([down!, mute!]);
    const { status, body } = await discover(app, `addr=${alice}`);
    expect(status).toBe(200);
    expect(body).toEqual({ count: 0, total: 0, attestations: [], relays_answered: 0, relays_queried: 2, warnings: ['relays_unavailable'] });
  });
});

describe('GET /api/discover: bad input is 400 bad_request', () => {
  const cases: Array<[string, string]> = [
    ['two subjects', `addr=${alice}&identity=github:alice`],
    ['no subject', 'limit=5'],
    ['a bad hex id', `id=${'g'.repeat(64)}`],
    ['a bad identity', 'identity=no-colon'],
    ['a bad address', 'addr=1111111111111111111111111'],
    ['limit=0', `addr=${alice}&limit=0`],
    ['limit=201', `addr=${alice}&limit=201`],
    ['limit=abc', `addr=${alice}&limit=abc`],
    ['limit=-1', `addr=${alice}&limit=-1`],
    ['limit=1000', `addr=${alice}&limit=1000`],
  ];
  it.each(cases)('%s', async (_name, query) => {
    const app = await appOver([]);
    const response = await discover(app, query);
    expect(response.status).toBe(400);
    expect(response.body).toMatchObject({ ok: false, error: 'bad_request', reasons: ['bad_request'] });
  });
});
