/**
 * The relay pool against real NIP-01 relays on loopback (docs/protocol.md §7
 * "Relay envelopes"): several relays at once, some down, slow, refusing or
 * lying, and forged events.
 */
import { createHash, randomBytes } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { finalizeEvent, generateSecretKey, type EventTemplate, type NostrEvent } from 'nostr-tools/pure';
import {
  buildAttestationEvent,
  buildEnvelope,
  createRelayPool,
  parseIdentity,
  type AttestationEnvelope,
  type RelayPool,
  type RelayPoolOptions,
} from '../src/relay/index.js';
import { startNostrRelay, type NostrRelay, type RelayMode } from './support/nostr-relay.js';

// --- a §7 canonical message, written here so these tests do not depend on src/features/attestations
function attestationMessage(address: string, identities: string[], issuedAt: string, nonce: string): string {
  return [
    'orangecheck',
    `identities: ${[...identities].sort().join(',')}`,
    `address: ${address}`,
    'purpose: portable reputation attestation (non-custodial)',
    `nonce: ${nonce}`,
    `issued_at: ${issuedAt}`,
    'ack: I attest control of this address and bind it to my identities.',
    '',
  ].join('\n');
}

const sha256 = (text: string) => createHash('sha256').update(text, 'utf8').digest('hex');

const ALICE_ADDRESS = 'bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq';
const ALICE_SECOND_ADDRESS = 'bc1p5d7rjq7g6rdk2yhzks9smlaqtedr4dekq08ge8ztwac72sfr9rusxg3297';
const BOB_ADDRESS = '1BvBMSEYstWetqTFn5Au4m4GFg7xJaNVN2';
// Signatures are not checked at this layer (the Bitcoin check is a later one).
const SIGNATURE =
  'AkcwRAIgZRfIY3p7/DoVTty6YZbWS71bc5Vct9p9Fia83eRmw2QCICK/ENGfwLtptFluMGs2KsqoNSk89pO7F29zJLUx9a/sASECHTgfQrHpSAzSzYXK9bOn0fd4VxyXm7SoIFQ4aM+/zuY=';
const publisherKey = generateSecretKey();

function attestation(address: string, options: { identities?: string[]; issuedAt?: string } = {}): AttestationEnvelope {
  const identities = options.identities ?? [];
  const issuedAt = options.issuedAt ?? '2026-04-22T12:00:00Z';
  const message = attestationMessage(address, identities, issuedAt, randomBytes(16).toString('hex'));
  return buildEnvelope({
    message,
    signature: SIGNATURE,
    scheme: 'bip322',
    attestationId: sha256(message),
    address,
    identities: identities.map((item) => parseIdentity(item)!),
    issuedAt,
  });
}

function eventOf(envelope: AttestationEnvelope, createdAt = '2026-04-22T12:05:00Z', key = publisherKey): NostrEvent {
  return finalizeEvent(buildAttestationEvent(envelope, new Date(createdAt)), key);
}

/** An event signed by a publisher that wrote its own content and tags. */
function handWritten(content: unknown, tags: string[][]): NostrEvent {
  const template: EventTemplate = { kind: 30078, created_at: 1_776_859_500, tags, content: JSON.stringify(content) };
  return finalizeEvent(template, generateSecretKey());
}

// --- relays and pools started by a test are stopped after it
const running: NostrRelay[] = [];
const pools: RelayPool[] = [];

async function relays(...modes: RelayMode[]): Promise<NostrRelay[]> {
  const started = await Promise.all(modes.map((mode) => startNostrRelay({ mode })));
  running.push(...started);
  return started;
}

function poolOf(list: NostrRelay[], options: Partial<RelayPoolOptions> = {}): RelayPool {
  const pool = createRelayPool({ relays: list.map((relay) => relay.url), timeoutMs: 2000, ...options });
  pools.push(pool);
  return pool;
}

afterEach(async () => {
  await Promise.all(pools.splice(0).map((pool) => pool.close()));
  await Promise.all(running.splice(0).map((relay) => relay.close()));
});

const ids = (envelopes: readonly AttestationEnvelope[]) => envelopes.map((envelope) => envelope.attestation_id);

/** The three ways to ask for alice's attestation `id`: by id, by her address, by her identity. */
function aliceLookups(id: string) {
  return [
    { by: 'id', id },
    { by: 'address', address: ALICE_ADDRESS },
    { by: 'identity', identity: 'github:alice' },
  ] as const;
}

describe('queryAttestations', () => {
  it('finds an attestation by id, address and identity, each through its own tag filter', async () => {
    const [relay] = await relays('normal');
    const mine = attestation(ALICE_ADDRESS, { identities: ['github:alice'] });
    relay!.publishRaw(eventOf(mine));
    relay!.publishRaw(eventOf(attestation(BOB_ADDRESS, { identities: ['github:bob'] })));
    const pool = poolOf([relay!]);

    for (const lookup of aliceLookups(mine.attestation_id)) {
      const result = await pool.queryAttestations(lookup);
      expect(ids(result.envelopes)).toEqual([mine.attestation_id]);
      // The relay honoured the (multi-letter) tag filter: only the match was sent.
      expect(result.outcomes[0]).toMatchObject({ status: 'answered', events: 1 });
    }
  });

  it('returns an attestation stored on several relays once, naming every relay that served it', async () => {
    const list = await relays('normal', 'normal', 'normal');
    const envelope = attestation(ALICE_ADDRESS);
    const event = eventOf(envelope);
    for (const relay of list) relay.publishRaw(event);

    const result = await poolOf(list).queryAttestations({ by: 'address', address: ALICE_ADDRESS });

    expect(result.relaysAnswered).toBe(3);
    expect(result.relaysQueried).toBe(3);
    expect(result.envelopes).toHaveLength(1);
    expect(result.envelopes[0]).toEqual({
      ...envelope,
      event_id: event.id,
      pubkey: event.pubkey,
      created_at: event.created_at,
      relays: list.map((relay) => relay.url),
    });
  });

  it('keeps the newest event when one attestation was published several times', async () => {
    const [first, second] = await relays('normal', 'normal');
    const envelope = attestation(ALICE_ADDRESS);
    const older = eventOf(envelope, '2026-04-22T12:05:00Z', generateSecretKey());
    const newer = eventOf(envelope, '2026-04-23T08:00:00Z', generateSecretKey());
    first!.publishRaw(older);
    second!.publishRaw(newer);
    second!.publishRaw(older);

    const result = await poolOf([first!, second!]).queryAttestations({ by: 'id', id: envelope.attestation_id });

    expect(result.envelopes).toHaveLength(1);
    expect(result.envelopes[0]).toMatchObject({
      attestation_id: envelope.attestation_id,
      event_id: newer.id,
      pubkey: newer.pubkey,
      created_at: newer.created_at,
      relays: [first!.url, second!.url],
    });
  });

  it('skips a relay that is down', async () => {
    const [up, down, alsoUp] = await relays('normal', 'down', 'normal');
    const envelope = attestation(ALICE_ADDRESS);
    up!.publishRaw(eventOf(envelope));

    const result = await poolOf([up!, down!, alsoUp!]).queryAttestations({ by: 'address', address: ALICE_ADDRESS });

    expect(ids(result.envelopes)).toEqual([envelope.attestation_id]);
    expect(result.relaysAnswered).toBe(2);
    expect(result.relaysQueried).toBe(3);
    expect(result.outcomes.map((outcome) => outcome.status)).toEqual(['answered', 'unreachable', 'answered']);
  });

  it('answers within the deadline when a relay never sends EOSE, from the others', async () => {
    const [silent, first, second] = await relays('silent', 'normal', 'normal');
    const envelope = attestation(ALICE_ADDRESS);
    first!.publishRaw(eventOf(envelope));
    silent!.publishRaw(eventOf(envelope));
    const timeoutMs = 500;

    const started = Date.now();
    const result = await poolOf([silent!, first!, second!], { timeoutMs }).queryAttestations({
      by: 'address',
      address: ALICE_ADDRESS,
    });
    const elapsed = Date.now() - started;

    expect(silent!.requestCount).toBe(1);
    expect(elapsed).toBeGreaterThanOrEqual(timeoutMs - 20);
    expect(elapsed).toBeLessThan(timeoutMs + 400);
    expect(ids(result.envelopes)).toEqual([envelope.attestation_id]);
    expect(result.envelopes[0]!.relays).toEqual([first!.url]);
    expect(result.relaysAnswered).toBe(2);
    expect(result.outcomes[0]).toMatchObject({ relay: silent!.url, status: 'timeout', events: 0 });
  });

  it('uses events from a relay that then times out, without counting it as answered', async () => {
    const [slow, empty] = await relays('noEose', 'normal');
    const envelope = attestation(ALICE_ADDRESS);
    slow!.publishRaw(eventOf(envelope));

    const result = await poolOf([slow!, empty!], { timeoutMs: 400 }).queryAttestations({
      by: 'address',
      address: ALICE_ADDRESS,
    });

    expect(ids(result.envelopes)).toEqual([envelope.attestation_id]);
    expect(result.relaysAnswered).toBe(1);
    expect(result.outcomes.map((outcome) => outcome.status)).toEqual(['timeout', 'answered']);
  });

  it('does not count a relay that refuses the subscription (CLOSED) as answered', async () => {
    const [refusing, answering] = await relays('refuse', 'normal');
    const result = await poolOf([refusing!, answering!]).queryAttestations({ by: 'address', address: ALICE_ADDRESS });
    expect(result.envelopes).toEqual([]);
    expect(result.relaysAnswered).toBe(1);
    expect(result.outcomes[0]).toMatchObject({ status: 'refused' });
  });

  it('drops forged events and keeps the genuine one', async () => {
    const [relay] = await relays('normal');
    const genuine = attestation(ALICE_ADDRESS, { identities: ['github:alice'] });
    const genuineEvent = eventOf(genuine);
    const other = attestation(ALICE_ADDRESS);
    const bobs = attestation(BOB_ADDRESS);
    const tags = (envelope: AttestationEnvelope) => buildAttestationEvent(envelope, new Date()).tags;

    const forgeries: NostrEvent[] = [
      // Bad Nostr signature on otherwise valid content.
      { ...eventOf(other), sig: genuineEvent.sig },
      // A message that is not the one its id names.
      handWritten({ ...other, message: bobs.message, message_b64url: bobs.message_b64url }, tags(other)),
      // Bob's attestation tagged with Alice's address.
      handWritten(
        bobs,
        tags(bobs).map((tag) => (tag[0] === 'address' ? ['address', ALICE_ADDRESS] : tag)),
      ),
      // A d tag that is not SHA-256 of the message.
      handWritten(
        other,
        tags(other).map((tag) => (tag[0] === 'd' ? ['d', sha256('something else')] : tag)),
      ),
      // The genuine attestation republished with an identity its message never named.
      handWritten({ ...genuine, identities: [...genuine.identities, { protocol: 'github', identifier: 'victim' }] }, [
        ...tags(genuine),
        ['i', 'github:victim'],
      ]),
      // Bob's untouched attestation, re-tagged with an identity its message never named.
      handWritten(bobs, [...tags(bobs), ['i', 'github:victim']]),
    ];
    for (const event of forgeries) relay!.publishRaw(event);
    relay!.publishRaw(genuineEvent);
    const pool = poolOf([relay!]);

    const byAddress = await pool.queryAttestations({ by: 'address', address: ALICE_ADDRESS });
    expect(byAddress.outcomes[0]).toMatchObject({ status: 'answered', events: 6 });
    expect(byAddress.envelopes.map((envelope) => envelope.event_id)).toEqual([genuineEvent.id]);

    const byForgedId = await pool.queryAttestations({ by: 'id', id: sha256('something else') });
    expect(byForgedId.outcomes[0]).toMatchObject({ events: 1 });
    expect(byForgedId.envelopes).toEqual([]);

    const byVictim = await pool.queryAttestations({ by: 'identity', identity: 'github:victim' });
    expect(byVictim.outcomes[0]).toMatchObject({ events: 2 });
    expect(byVictim.envelopes).toEqual([]);
  });

  it('filters out unrelated attestations from a relay that ignores tag filters', async () => {
    const [liar, honest] = await relays('ignoreTagFilters', 'normal');
    const alices = attestation(ALICE_ADDRESS, { identities: ['github:alice'] });
    const unrelated = [
      attestation(BOB_ADDRESS, { identities: ['github:bob'] }),
      attestation(ALICE_SECOND_ADDRESS, { identities: ['github:alice2'] }),
    ];
    for (const envelope of [alices, ...unrelated]) liar!.publishRaw(eventOf(envelope));
    honest!.publishRaw(eventOf(alices));
    const pool = poolOf([liar!, honest!]);

    for (const lookup of aliceLookups(alices.attestation_id)) {
      const result = await pool.queryAttestations(lookup);
      // The liar sent everything it holds; only the answer to the question is kept.
      expect(result.outcomes[0]).toMatchObject({ status: 'answered', events: 3 });
      expect(result.outcomes[1]).toMatchObject({ status: 'answered', events: 1 });
      expect(ids(result.envelopes)).toEqual([alices.attestation_id]);
    }
  });

  it('orders by newest issued_at, then newest event, then attestation id', async () => {
    const [first, second] = await relays('normal', 'normal');
    const january = attestation(ALICE_ADDRESS, { issuedAt: '2026-01-01T00:00:00Z' });
    const march = attestation(ALICE_ADDRESS, { issuedAt: '2026-03-01T00:00:00Z' });
    const february = attestation(ALICE_ADDRESS, { issuedAt: '2026-02-01T00:00:00.500Z' });
    const tieOlderEvent = attestation(ALICE_ADDRESS, { issuedAt: '2026-02-15T00:00:00Z' });
    const tieNewerEvent = attestation(ALICE_ADDRESS, { issuedAt: '2026-02-15T00:00:00Z' });
    // Event times deliberately disagree with issued_at.
    first!.publishRaw(eventOf(march, '2026-01-02T00:00:00Z'));
    first!.publishRaw(eventOf(tieOlderEvent, '2026-03-01T00:00:00Z'));
    second!.publishRaw(eventOf(january, '2026-04-01T00:00:00Z'));
    second!.publishRaw(eventOf(february, '2026-02-02T00:00:00Z'));
    second!.publishRaw(eventOf(tieNewerEvent, '2026-03-02T00:00:00Z'));

    const result = await poolOf([first!, second!]).queryAttestations({ by: 'address', address: ALICE_ADDRESS });

    expect(ids(result.envelopes)).toEqual(ids([march, tieNewerEvent, tieOlderEvent, february, january]));
  });

  it('finds an identity bound by several addresses, and reads legacy twitter as x', async () => {
    const [first, second] = await relays('normal', 'normal');
    const fromFirst = attestation(ALICE_ADDRESS, { identities: ['github:alice', 'twitter:@alice'] });
    const fromSecond = attestation(ALICE_SECOND_ADDRESS, {
      identities: ['github:alice', 'x:@alice'],
      issuedAt: '2026-05-01T00:00:00Z',
    });
    first!.publishRaw(eventOf(fromFirst));
    second!.publishRaw(eventOf(fromSecond));
    second!.publishRaw(eventOf(attestation(BOB_ADDRESS, { identities: ['github:bob'] })));
    const pool = poolOf([first!, second!]);

    const byGithub = await pool.queryAttestations({ by: 'identity', identity: 'github:alice' });
    expect(byGithub.envelopes.map((envelope) => envelope.address)).toEqual([ALICE_SECOND_ADDRESS, ALICE_ADDRESS]);

    for (const identity of ['x:@alice', 'twitter:@alice']) {
      const result = await pool.queryAttestations({ by: 'identity', identity });
      expect(ids(result.envelopes)).toEqual(ids([fromSecond, fromFirst]));
    }
  });

  it('reads attestations published with the older orangecheck:<id> d tag', async () => {
    const [relay] = await relays('normal');
    const envelope = attestation(ALICE_ADDRESS);
    const template = buildAttestationEvent(envelope, new Date('2026-04-22T12:05:00Z'));
    const legacy = finalizeEvent(
      { ...template, tags: template.tags.map((tag) => (tag[0] === 'd' ? ['d', `orangecheck:${tag[1]}`] : tag)) },
      publisherKey,
    );
    relay!.publishRaw(legacy);
    const pool = poolOf([relay!]);

    const byId = await pool.queryAttestations({ by: 'id', id: envelope.attestation_id.toUpperCase() });
    expect(byId.envelopes.map((found) => found.event_id)).toEqual([legacy.id]);
    const byAddress = await pool.queryAttestations({ by: 'address', address: ALICE_ADDRESS });
    expect(ids(byAddress.envelopes)).toEqual([envelope.attestation_id]);
  });

  it('reports no relay answering, without throwing, when all relays are down', async () => {
    const list = await relays('down', 'down');
    const started = Date.now();
    const result = await poolOf(list).queryAttestations({ by: 'address', address: ALICE_ADDRESS });
    expect(Date.now() - started).toBeLessThan(1000);
    expect(result).toMatchObject({ envelopes: [], relaysAnswered: 0, relaysQueried: 2 });
    expect(result.outcomes.every((outcome) => outcome.status === 'unreachable')).toBe(true);
  });

  it('stops reading a relay that sends more events than allowed, keeping the others', async () => {
    const [flooder, honest] = await relays('flood', 'normal');
    for (let index = 0; index < 20; index += 1) flooder!.publishRaw(eventOf(attestation(BOB_ADDRESS)));
    const envelope = attestation(ALICE_ADDRESS);
    honest!.publishRaw(eventOf(envelope));

    const result = await poolOf([flooder!, honest!], { maxEventsPerRelay: 5 }).queryAttestations({
      by: 'address',
      address: ALICE_ADDRESS,
    });

    expect(result.outcomes[0]).toMatchObject({ status: 'overflow', events: 6 });
    expect(result.relaysAnswered).toBe(1);
    expect(ids(result.envelopes)).toEqual([envelope.attestation_id]);
  });

  it('drops a relay that sends a frame over the size limit', async () => {
    const [bloated, honest] = await relays('normal', 'normal');
    const envelope = attestation(ALICE_ADDRESS);
    const event = eventOf(envelope);
    bloated!.publishRaw({ ...event, tags: [...event.tags, ['padding', 'x'.repeat(20_000)]] });
    honest!.publishRaw(event);

    const result = await poolOf([bloated!, honest!], { maxMessageBytes: 8 * 1024 }).queryAttestations({
      by: 'address',
      address: ALICE_ADDRESS,
    });

    expect(result.outcomes.map((outcome) => outcome.status)).toEqual(['overflow', 'answered']);
    expect(result.envelopes[0]!.relays).toEqual([honest!.url]);
  });

  it('asks each relay for at most `limit` events, split over the look-up filters', async () => {
    const [relay] = await relays('normal');
    const envelopes = ['01', '02', '03', '04', '05'].map((day) => attestation(ALICE_ADDRESS, { issuedAt: `2026-04-${day}T00:00:00Z` }));
    for (const [index, envelope] of envelopes.entries()) relay!.publishRaw(eventOf(envelope, `2026-04-0${index + 1}T01:00:00Z`));

    const result = await poolOf([relay!]).queryAttestations({ by: 'address', address: ALICE_ADDRESS }, { limit: 4 });

    // Two filters (#address and the older #addr), two events each: the two newest.
    expect(ids(result.envelopes)).toEqual(ids([envelopes[4]!, envelopes[3]!]));
  });

  it('lets close() end a query in flight, and refuses queries afterwards', async () => {
    const [silent] = await relays('silent');
    const pool = poolOf([silent!], { timeoutMs: 10_000 });
    const started = Date.now();
    const pending = pool.queryAttestations({ by: 'address', address: ALICE_ADDRESS });
    // In flight once the relay has the subscription.
    await expect.poll(() => silent!.requestCount, { timeout: 5_000, interval: 10 }).toBeGreaterThan(0);
    await pool.close();
    const result = await pending;
    expect(Date.now() - started).toBeLessThan(1000);
    expect(result.relaysAnswered).toBe(0);
    await expect(pool.queryAttestations({ by: 'address', address: ALICE_ADDRESS })).rejects.toThrow(/closed/);
  });

  it('rejects malformed look-ups and relay lists as programming errors', async () => {
    const pool = createRelayPool({ relays: [] });
    await expect(pool.queryAttestations({ by: 'id', id: 'abc' })).rejects.toThrow(TypeError);
    await expect(pool.queryAttestations({ by: 'identity', identity: 'alice' })).rejects.toThrow(TypeError);
    await expect(pool.queryAttestations({ by: 'address', address: '' })).rejects.toThrow(TypeError);
    expect(() => createRelayPool({ relays: ['https://relay.example.com'] })).toThrow(/ws/);
    expect(() => createRelayPool({ relays: ['wss://relay.example.com'], timeoutMs: 0 })).toThrow(/timeoutMs/);
  });
});

describe('publish', () => {
  it('reports which relays accepted the event, one being down', async () => {
    const [up, down] = await relays('normal', 'down');
    const envelope = attestation(ALICE_ADDRESS);
    const event = eventOf(envelope);
    const pool = poolOf([up!, down!]);

    const result = await pool.publish(event);

    expect(result).toEqual({ published: [up!.url], failed: [down!.url] });
    // As stored by the relay (JSON on the wire: nostr-tools' verified mark does not travel).
    expect(up!.events()).toEqual([JSON.parse(JSON.stringify(event))]);
    const found = await pool.queryAttestations({ by: 'id', id: envelope.attestation_id });
    expect(found.envelopes.map((item) => item.event_id)).toEqual([event.id]);
  });

  it('counts a refusal (OK false) and a relay that never acknowledges as failures', async () => {
    const [refusing, silent] = await relays('normal', 'silent');
    const event = eventOf(attestation(ALICE_ADDRESS));
    const tampered = { ...event, content: `${event.content} ` };

    const started = Date.now();
    const result = await poolOf([refusing!, silent!], { timeoutMs: 300 }).publish(tampered);
    const elapsed = Date.now() - started;

    expect(result).toEqual({ published: [], failed: [refusing!.url, silent!.url] });
    expect(elapsed).toBeGreaterThanOrEqual(280);
    expect(elapsed).toBeLessThan(300 + 400);
    expect(refusing!.events()).toEqual([]);
    expect(silent!.events()).toEqual([]);
  });
});
