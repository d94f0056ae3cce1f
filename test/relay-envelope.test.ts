/**
 * The attestation envelope and its kind-30078 event (docs/protocol.md §7 "Relay
 * envelopes"): what we build, and which events a reader keeps.
 */
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { finalizeEvent, generateSecretKey, type EventTemplate, type NostrEvent } from 'nostr-tools/pure';
import {
  MAX_CONTENT_BYTES,
  attestationIdOf,
  buildAttestationEvent,
  buildEnvelope,
  identityKey,
  parseEnvelopeEvent,
  parseIdentity,
  type AttestationEnvelope,
} from '../src/relay/index.js';

// --- a §7 canonical message, written here so these tests do not depend on src/features/attestations
interface MessageFields {
  address: string;
  identities?: string[];
  nonce?: string;
  issuedAt?: string;
  extensions?: Record<string, string>;
}

function attestationMessage(fields: MessageFields): string {
  const lines = [
    'orangecheck',
    `identities: ${[...(fields.identities ?? [])].sort().join(',')}`,
    `address: ${fields.address}`,
    'purpose: portable reputation attestation (non-custodial)',
    `nonce: ${fields.nonce ?? '0011223344556677889900aabbccddee'}`,
    `issued_at: ${fields.issuedAt ?? '2026-04-22T12:00:00Z'}`,
    'ack: I attest control of this address and bind it to my identities.',
  ];
  const extensions = fields.extensions ?? {};
  for (const key of Object.keys(extensions).sort()) lines.push(`${key}: ${extensions[key]}`);
  return `${lines.join('\n')}\n`;
}

const sha256 = (text: string) => createHash('sha256').update(text, 'utf8').digest('hex');

const ADDRESS = 'bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq';
const OTHER_ADDRESS = 'bc1p5d7rjq7g6rdk2yhzks9smlaqtedr4dekq08ge8ztwac72sfr9rusxg3297';
const SIGNATURE =
  'AkcwRAIgZRfIY3p7/DoVTty6YZbWS71bc5Vct9p9Fia83eRmw2QCICK/ENGfwLtptFluMGs2KsqoNSk89pO7F29zJLUx9a/sASECHTgfQrHpSAzSzYXK9bOn0fd4VxyXm7SoIFQ4aM+/zuY=';
const CREATED = new Date('2026-04-22T12:05:00Z');
const key = generateSecretKey();

function envelopeFor(fields: MessageFields & { relayHints?: string[] }): AttestationEnvelope {
  const message = attestationMessage(fields);
  const identities = (fields.identities ?? []).map((item) => parseIdentity(item)!);
  return buildEnvelope({
    message,
    signature: SIGNATURE,
    scheme: 'bip322',
    attestationId: sha256(message),
    address: fields.address,
    identities,
    issuedAt: fields.issuedAt ?? '2026-04-22T12:00:00Z',
    ...(fields.extensions?.expires !== undefined ? { expiresAt: fields.extensions.expires } : {}),
    ...(fields.relayHints !== undefined ? { relayHints: fields.relayHints } : {}),
  });
}

const sign = (template: EventTemplate): NostrEvent => finalizeEvent(template, key);

/** Signs an event whose content and tags we wrote by hand (a publisher that lies). */
function signed(content: unknown, tags: string[][], kind = 30078): NostrEvent {
  return sign({
    kind,
    created_at: Math.floor(CREATED.getTime() / 1000),
    tags,
    content: typeof content === 'string' ? content : JSON.stringify(content),
  });
}

function tagsOf(envelope: AttestationEnvelope): string[][] {
  return buildAttestationEvent(envelope, CREATED).tags;
}

describe('attestation id (docs/protocol.md §7 fixed point)', () => {
  it('is the SHA-256 of the canonical message with its trailing LF', () => {
    const message = attestationMessage({ address: ADDRESS });
    expect(attestationIdOf(message)).toBe('75241b8f222ef029d35c40d7d96d45c3e3bf5480b5c51319844aaae121b3539d');
  });
});

describe('buildEnvelope', () => {
  it('carries every field of the §7 envelope, with message_b64url decoding to the message', () => {
    const fields = { address: ADDRESS, identities: ['nostr:npub1alice', 'github:alice'], extensions: { expires: '2027-04-22T12:00:00Z' } };
    const message = attestationMessage(fields);
    const envelope = envelopeFor({ ...fields, relayHints: ['wss://relay.example.com'] });
    expect(envelope).toEqual({
      attestation_id: sha256(message),
      scheme: 'bip322',
      address: ADDRESS,
      identities: [
        { protocol: 'github', identifier: 'alice' },
        { protocol: 'nostr', identifier: 'npub1alice' },
      ],
      message,
      message_b64url: Buffer.from(message).toString('base64url'),
      signature: SIGNATURE,
      issued_at: '2026-04-22T12:00:00Z',
      expires_at: '2027-04-22T12:00:00Z',
      relay_hints: ['wss://relay.example.com'],
    });
    expect(Buffer.from(envelope.message_b64url, 'base64url').toString('utf8')).toBe(message);
  });

  it('refuses inputs that do not describe the message', () => {
    const message = attestationMessage({ address: ADDRESS, identities: ['github:alice'] });
    const base = {
      message,
      signature: SIGNATURE,
      scheme: 'bip322',
      attestationId: sha256(message),
      address: ADDRESS,
      identities: [{ protocol: 'github', identifier: 'alice' }],
      issuedAt: '2026-04-22T12:00:00Z',
    };
    expect(() => buildEnvelope(base)).not.toThrow();
    expect(() => buildEnvelope({ ...base, attestationId: '0'.repeat(64) })).toThrow(/attestationId/);
    expect(() => buildEnvelope({ ...base, address: OTHER_ADDRESS })).toThrow(/address/);
    expect(() => buildEnvelope({ ...base, identities: [] })).toThrow(/identities/);
    expect(() => buildEnvelope({ ...base, issuedAt: '2026-04-22T12:00:01Z' })).toThrow(/issuedAt/);
    expect(() => buildEnvelope({ ...base, expiresAt: '2027-01-01T00:00:00Z' })).toThrow(/expiresAt/);
    expect(() => buildEnvelope({ ...base, message: 'hello\n' })).toThrow(/not an OrangeCheck/);
    expect(() => buildEnvelope({ ...base, relayHints: ['https://not-a-relay.example'] })).toThrow(/relayHints/);
  });
});

describe('buildAttestationEvent', () => {
  it('is a kind-30078 event with the §7 tags and the envelope as content', () => {
    const envelope = envelopeFor({
      address: ADDRESS,
      identities: ['github:alice', 'x:@alice'],
      extensions: { expires: '2027-04-22T12:00:00Z' },
    });
    const template = buildAttestationEvent(envelope, CREATED);
    expect(template.kind).toBe(30078);
    expect(template.created_at).toBe(Math.floor(CREATED.getTime() / 1000));
    expect(template.tags).toEqual([
      ['d', envelope.attestation_id],
      ['address', ADDRESS],
      ['scheme', 'bip322'],
      ['issued_at', '2026-04-22T12:00:00Z'],
      ['i', 'github:alice'],
      ['i', 'x:@alice'],
      ['expires', String(Date.parse('2027-04-22T12:00:00Z') / 1000)],
    ]);
    expect(JSON.parse(template.content)).toEqual(envelope);
  });

  it('has no expires tag when the message has no expiry', () => {
    const tags = tagsOf(envelopeFor({ address: ADDRESS }));
    expect(tags.map((tag) => tag[0])).toEqual(['d', 'address', 'scheme', 'issued_at']);
  });
});

describe('parseEnvelopeEvent keeps', () => {
  it('a signed event built by buildAttestationEvent, unchanged', () => {
    const envelope = envelopeFor({
      address: ADDRESS,
      identities: ['nostr:npub1alice', 'dns:example.com'],
      extensions: { expires: '2027-04-22T12:00:00Z', bond: '100000' },
      relayHints: ['wss://relay.example.com'],
    });
    expect(parseEnvelopeEvent(sign(buildAttestationEvent(envelope, CREATED)))).toEqual(envelope);
  });

  it('the older d tag form orangecheck:<id>', () => {
    const envelope = envelopeFor({ address: ADDRESS });
    const tags = tagsOf(envelope).map((tag) => (tag[0] === 'd' ? ['d', `orangecheck:${tag[1]}`] : tag));
    expect(parseEnvelopeEvent(signed(envelope, tags))).toEqual(envelope);
  });

  it('an address given in the older addr tag', () => {
    const envelope = envelopeFor({ address: ADDRESS });
    const tags = tagsOf(envelope).map((tag) => (tag[0] === 'address' ? ['addr', ADDRESS] : tag));
    expect(parseEnvelopeEvent(signed(envelope, tags))).toEqual(envelope);
  });

  it('an envelope without message_b64url, which it fills in', () => {
    const envelope = envelopeFor({ address: ADDRESS });
    const { message_b64url: _omitted, ...rest } = envelope;
    expect(parseEnvelopeEvent(signed(rest, tagsOf(envelope)))).toEqual(envelope);
  });

  it('restated values written differently but meaning the same, returning the signed ones', () => {
    const envelope = envelopeFor({ address: ADDRESS, identities: ['twitter:@alice', 'github:alice'] });
    const restated = {
      ...envelope,
      issued_at: '2026-04-22T12:00:00.000Z',
      // Legacy `twitter` read as `x` (docs/protocol.md §7), in another order.
      identities: [
        { protocol: 'x', identifier: '@alice' },
        { protocol: 'github', identifier: 'alice' },
      ],
      verification_url: 'https://example.com/attacker-chosen',
    };
    const parsed = parseEnvelopeEvent(signed(restated, tagsOf(envelope)));
    // The signed values win; the unsigned verification_url is passed on as the publisher wrote it.
    expect(parsed).toEqual({ ...envelope, verification_url: 'https://example.com/attacker-chosen' });
  });

  it('an attestation whose relay hints are malformed, without the hints', () => {
    const envelope = envelopeFor({ address: ADDRESS });
    const content = { ...envelope, relay_hints: ['javascript:alert(1)', 42] };
    expect(parseEnvelopeEvent(signed(content, tagsOf(envelope)))).toEqual(envelope);
  });
});

describe('parseEnvelopeEvent drops', () => {
  const envelope = envelopeFor({ address: ADDRESS, identities: ['github:alice'] });
  const genuine = sign(buildAttestationEvent(envelope, CREATED));
  const other = envelopeFor({ address: ADDRESS, nonce: 'ffeeddccbbaa99887766554433221100' });

  it('is checked against a genuine event that it keeps', () => {
    expect(parseEnvelopeEvent(genuine)).toEqual(envelope);
  });

  it('an event whose Nostr signature does not verify', () => {
    const flipped = genuine.sig.slice(0, -1) + (genuine.sig.endsWith('0') ? '1' : '0');
    expect(parseEnvelopeEvent({ ...genuine, sig: flipped })).toBeNull();
  });

  it('an event whose content was changed after signing', () => {
    const content = JSON.stringify({ ...envelope, signature: 'AAAA' });
    expect(parseEnvelopeEvent({ ...genuine, content })).toBeNull();
  });

  it('an event signed by another key than its pubkey claims', () => {
    const stranger = finalizeEvent(buildAttestationEvent(envelope, CREATED), generateSecretKey());
    expect(parseEnvelopeEvent({ ...stranger, pubkey: genuine.pubkey })).toBeNull();
  });

  it('another kind', () => {
    expect(parseEnvelopeEvent(signed(envelope, tagsOf(envelope), 1))).toBeNull();
    expect(parseEnvelopeEvent(signed(envelope, tagsOf(envelope), 30023))).toBeNull();
  });

  it('content that is not JSON or not an envelope', () => {
    expect(parseEnvelopeEvent(signed('not json', tagsOf(envelope)))).toBeNull();
    expect(parseEnvelopeEvent(signed([envelope], tagsOf(envelope)))).toBeNull();
    const { signature: _dropped, ...unsigned } = envelope;
    expect(parseEnvelopeEvent(signed(unsigned, tagsOf(envelope)))).toBeNull();
    expect(parseEnvelopeEvent(signed({ ...envelope, identities: 'github:alice' }, tagsOf(envelope)))).toBeNull();
  });

  it('content over 64 KiB, even when everything else holds', () => {
    const message = attestationMessage({ address: ADDRESS, extensions: { zz_padding: 'a'.repeat(MAX_CONTENT_BYTES) } });
    const big: AttestationEnvelope = {
      ...envelopeFor({ address: ADDRESS }),
      attestation_id: sha256(message),
      message,
      message_b64url: Buffer.from(message).toString('base64url'),
    };
    const template = buildAttestationEventUnchecked(big);
    expect(Buffer.byteLength(template.content)).toBeGreaterThan(MAX_CONTENT_BYTES);
    expect(parseEnvelopeEvent(sign(template))).toBeNull();
  });

  it('a message that is not the one the id names', () => {
    const content = { ...envelope, message: other.message, message_b64url: other.message_b64url };
    expect(parseEnvelopeEvent(signed(content, tagsOf(envelope)))).toBeNull();
  });

  it('a d tag that is not SHA-256 of the message', () => {
    const tags = tagsOf(envelope).map((tag) => (tag[0] === 'd' ? ['d', other.attestation_id] : tag));
    expect(parseEnvelopeEvent(signed(envelope, tags))).toBeNull();
    const noD = tagsOf(envelope).filter((tag) => tag[0] !== 'd');
    expect(parseEnvelopeEvent(signed(envelope, noD))).toBeNull();
  });

  it('an attestation_id that is not the d tag', () => {
    expect(parseEnvelopeEvent(signed({ ...envelope, attestation_id: other.attestation_id }, tagsOf(envelope)))).toBeNull();
  });

  it('an address tag that is not the envelope address', () => {
    const tags = tagsOf(envelope).map((tag) => (tag[0] === 'address' ? ['address', OTHER_ADDRESS] : tag));
    expect(parseEnvelopeEvent(signed(envelope, tags))).toBeNull();
    const noAddress = tagsOf(envelope).filter((tag) => tag[0] !== 'address');
    expect(parseEnvelopeEvent(signed(envelope, noAddress))).toBeNull();
  });

  it('an envelope address that is not the message address line', () => {
    const tags = tagsOf(envelope).map((tag) => (tag[0] === 'address' ? ['address', OTHER_ADDRESS] : tag));
    expect(parseEnvelopeEvent(signed({ ...envelope, address: OTHER_ADDRESS }, tags))).toBeNull();
  });

  it('identities the message does not name', () => {
    const claimed = {
      ...envelope,
      identities: [...envelope.identities, { protocol: 'nostr', identifier: 'npub1victim' }],
    };
    const tags = [...tagsOf(envelope), ['i', 'nostr:npub1victim']];
    expect(parseEnvelopeEvent(signed(claimed, tags))).toBeNull();
  });

  it('an issued_at or expires_at the message does not carry', () => {
    expect(parseEnvelopeEvent(signed({ ...envelope, issued_at: '2030-01-01T00:00:00Z' }, tagsOf(envelope)))).toBeNull();
    expect(parseEnvelopeEvent(signed({ ...envelope, expires_at: '2030-01-01T00:00:00Z' }, tagsOf(envelope)))).toBeNull();
  });

  it('a message_b64url that is not the message', () => {
    const content = { ...envelope, message_b64url: other.message_b64url };
    expect(parseEnvelopeEvent(signed(content, tagsOf(envelope)))).toBeNull();
    expect(parseEnvelopeEvent(signed({ ...envelope, message_b64url: '!!!' }, tagsOf(envelope)))).toBeNull();
  });

  it('a message that is not an attestation message', () => {
    const message = `orangecheck-auth\naddress: ${ADDRESS}\n`;
    const content = { ...envelope, message, message_b64url: undefined, attestation_id: sha256(message) };
    const tags = tagsOf(envelope).map((tag) => (tag[0] === 'd' ? ['d', sha256(message)] : tag));
    expect(parseEnvelopeEvent(signed(content, tags))).toBeNull();
  });

  it('anything that is not an event, without throwing', () => {
    for (const junk of [null, undefined, 42, 'event', [], {}, { ...genuine, tags: [null] }, { ...genuine, tags: 'd' }]) {
      expect(parseEnvelopeEvent(junk)).toBeNull();
    }
    expect(parseEnvelopeEvent({ ...genuine, created_at: -1 })).toBeNull();
    expect(parseEnvelopeEvent({ ...genuine, id: genuine.id.toUpperCase() })).toBeNull();
  });
});

describe('identities', () => {
  it('parse as protocol:identifier, splitting at the first colon', () => {
    expect(parseIdentity('dns:example.com')).toEqual({ protocol: 'dns', identifier: 'example.com' });
    expect(parseIdentity('web:https://example.com')).toEqual({ protocol: 'web', identifier: 'https://example.com' });
    for (const bad of ['', 'github', ':alice', 'github:', 'GitHub:alice', 'github:a,b', 'github:a\nb']) {
      expect(parseIdentity(bad)).toBeNull();
    }
  });

  it('compare legacy twitter as x (docs/protocol.md §7)', () => {
    expect(identityKey({ protocol: 'twitter', identifier: '@a' })).toBe('x:@a');
    expect(identityKey({ protocol: 'x', identifier: '@a' })).toBe('x:@a');
    expect(identityKey({ protocol: 'github', identifier: 'a' })).toBe('github:a');
  });
});

/** buildEnvelope refuses envelopes over the limit, so build this one by hand. */
function buildAttestationEventUnchecked(envelope: AttestationEnvelope): EventTemplate {
  return {
    kind: 30078,
    created_at: Math.floor(CREATED.getTime() / 1000),
    tags: tagsOf(envelope),
    content: JSON.stringify(envelope),
  };
}
