/**
 * The attestation envelope and its Nostr wrapper (docs/protocol.md §7 "Relay
 * envelopes"): building the kind-30078 event we publish, and deciding whether
 * an event read from a relay carries an envelope we may keep.
 *
 * Trust model. A relay is an untrusted cache. The only things that bind an
 * envelope are the signed attestation message (its SHA-256 is the attestation
 * id) and, later, the Bitcoin signature over it (checked in src/features/attestations, not
 * here). So every envelope field that restates the message (address,
 * identities, issued_at, expires_at) must agree with the message, and the
 * event's Nostr signature must verify so that a relay cannot alter an event in
 * transit. The event pubkey is a transport key and is trusted for nothing
 * else (docs/protocol.md §7 "Relay envelopes").
 */
import { isJsonObject } from '../platform/json.js';
import { verifyEvent } from 'nostr-tools/pure';
import type { EventTemplate, NostrEvent } from 'nostr-tools/pure';
import { decodeBase64url } from '../platform/crypto.js';
import { attestationId as attestationIdOf, identityKey, parseIdentityItem, type Identity } from '../format/index.js';

// The format layer owns identities, their comparison key and the id; relay
// callers keep reading them from here.
export { attestationIdOf, identityKey, parseIdentityItem as parseIdentity };

/** NIP-78 application data, parameterized replaceable (NIP-01 "Kinds"). */
export const ATTESTATION_KIND = 30078;

/** The older `d` tag form, still accepted when reading (docs/protocol.md §7). */
export const LEGACY_D_PREFIX = 'orangecheck:';

/**
 * Upper bound on an event's `content` (UTF-8 bytes). A real envelope is a
 * couple of KiB; the bound keeps a hostile relay from making us hold or hash
 * large blobs. 64 KiB matches the service's request body limit (docs/protocol.md §4).
 */
export const MAX_CONTENT_BYTES = 64 * 1024;

const MAX_TAGS = 512;
const MAX_SIGNATURE_CHARS = 8192;
const MAX_RELAY_HINTS = 16;
const MAX_RELAY_HINT_CHARS = 512;

/** The envelope JSON carried in the event's `content` (docs/protocol.md §7). */
export interface AttestationEnvelope {
  readonly attestation_id: string;
  readonly scheme: string;
  readonly address: string;
  readonly identities: readonly Identity[];
  readonly message: string;
  readonly message_b64url: string;
  readonly signature: string;
  readonly issued_at: string;
  readonly expires_at?: string;
  readonly relay_hints?: readonly string[];
  /** Where a person can check the attestation; unsigned advice like the hints. */
  readonly verification_url?: string;
  /**
   * The other fields the publisher put in the content (`publish_targets` and
   * any unknown one), passed on as they came: they are not part of the signed
   * message, so nothing here vouches for them.
   */
  readonly extra?: Readonly<Record<string, unknown>>;
}

/** The content fields the envelope checks or rebuilds; every other one is kept in `extra`. */
const ENVELOPE_FIELDS: ReadonlySet<string> = new Set([
  'attestation_id',
  'scheme',
  'address',
  'identities',
  'message',
  'message_b64url',
  'signature',
  'issued_at',
  'expires_at',
  'relay_hints',
  'verification_url',
]);

export interface BuildEnvelopeInput {
  readonly message: string;
  readonly signature: string;
  readonly scheme: string;
  readonly attestationId: string;
  readonly address: string;
  readonly identities: readonly Identity[];
  readonly issuedAt: string;
  readonly expiresAt?: string | undefined;
  readonly relayHints?: readonly string[] | undefined;
  readonly verificationUrl?: string;
}

const HEX64 = /^[0-9a-f]{64}$/;
const SCHEME_NAME = /^[a-z0-9_-]{1,32}$/;
// RFC 3339 UTC with `Z`, seconds or fractional seconds (docs/protocol.md §7 issued_at).
const RFC3339_UTC = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d{1,9})?Z$/;

/** The fields of the signed message that an envelope restates. */
interface SignedFields {
  readonly identities: readonly Identity[];
  readonly address: string;
  readonly issuedAt: string;
  readonly expires: string | undefined;
}

// Key of each of the seven core lines, in order (docs/protocol.md §7 "Canonical message").
const CORE_KEYS = ['identities', 'address', 'purpose', 'nonce', 'issued_at', 'ack'] as const;

/**
 * Reads the fields an envelope restates from a §7 canonical message. This is
 * deliberately not the full canonical parser (src/features/attestations owns that, and the
 * Bitcoin-signature layer runs it before anything is trusted): it checks only
 * the frame (header, LF endings, one trailing LF, core keys in order) and the
 * values we compare against the envelope and its tags.
 */
function readSignedFields(message: string): SignedFields | null {
  if (!message.endsWith('\n') || message.includes('\r')) return null;
  const lines = message.slice(0, -1).split('\n');
  if (lines.length < 1 + CORE_KEYS.length || lines[0] !== 'orangecheck') return null;
  const values: string[] = [];
  for (const [index, key] of CORE_KEYS.entries()) {
    const line = lines[index + 1] as string;
    if (!line.startsWith(`${key}: `)) return null;
    values.push(line.slice(key.length + 2));
  }
  const [identityList, address, , , issuedAt] = values as [string, string, string, string, string, string];

  const identities: Identity[] = [];
  if (identityList !== '') {
    for (const item of identityList.split(',')) {
      const identity = parseIdentityItem(item);
      if (identity === null) return null;
      identities.push(identity);
    }
  }
  if (address === '' || /\s/.test(address)) return null;
  if (!isRfc3339Utc(issuedAt)) return null;

  let expires: string | undefined;
  for (const line of lines.slice(1 + CORE_KEYS.length)) {
    if (line.startsWith('expires: ')) {
      expires = line.slice('expires: '.length);
      if (!isRfc3339Utc(expires)) return null;
    }
  }
  return { identities, address, issuedAt, expires };
}

function isRfc3339Utc(value: string): boolean {
  return RFC3339_UTC.test(value) && Number.isFinite(Date.parse(value));
}

/** Two RFC 3339 strings name the same instant (a publisher may write ms or not). */
function sameInstant(a: string, b: string): boolean {
  return isRfc3339Utc(a) && isRfc3339Utc(b) && Date.parse(a) === Date.parse(b);
}

function sameIdentities(a: readonly Identity[], b: readonly Identity[]): boolean {
  if (a.length !== b.length) return false;
  const left = a.map(identityKey).sort();
  const right = b.map(identityKey).sort();
  return left.every((key, index) => key === right[index]);
}

function isWebSocketUrl(value: string): boolean {
  if (value.length > MAX_RELAY_HINT_CHARS) return false;
  try {
    const url = new URL(value);
    return url.protocol === 'wss:' || url.protocol === 'ws:';
  } catch {
    return false;
  }
}

/**
 * Builds the envelope of docs/protocol.md §7 for an attestation this service
 * publishes. The inputs must describe the message they come with: a caller
 * that passes a wrong id or an address that is not the message's is a
 * programming error, so this throws rather than publish an envelope that
 * every reader (including {@link parseEnvelopeEvent}) would drop.
 */
export function buildEnvelope(input: BuildEnvelopeInput): AttestationEnvelope {
  const signed = readSignedFields(input.message);
  if (signed === null) throw new TypeError('relay: message is not an OrangeCheck attestation message');
  if (attestationIdOf(input.message) !== input.attestationId) {
    throw new TypeError('relay: attestationId is not the SHA-256 of the message');
  }
  if (input.address !== signed.address) throw new TypeError('relay: address differs from the message');
  if (!sameIdentities(input.identities, signed.identities)) {
    throw new TypeError('relay: identities differ from the message');
  }
  if (!sameInstant(input.issuedAt, signed.issuedAt)) throw new TypeError('relay: issuedAt differs from the message');
  if (input.expiresAt !== undefined && (signed.expires === undefined || !sameInstant(input.expiresAt, signed.expires))) {
    throw new TypeError('relay: expiresAt differs from the message');
  }
  if (!SCHEME_NAME.test(input.scheme)) throw new TypeError('relay: scheme is not a scheme name');
  if (input.signature === '' || input.signature.length > MAX_SIGNATURE_CHARS) {
    throw new TypeError('relay: signature is empty or too long');
  }
  if (input.relayHints !== undefined) {
    if (input.relayHints.length > MAX_RELAY_HINTS || !input.relayHints.every(isWebSocketUrl)) {
      throw new TypeError('relay: relayHints must be at most 16 ws:// or wss:// URLs');
    }
  }

  const envelope: AttestationEnvelope = {
    attestation_id: input.attestationId,
    scheme: input.scheme,
    address: input.address,
    identities: signed.identities.map(({ protocol, identifier }) => ({ protocol, identifier })),
    message: input.message,
    message_b64url: Buffer.from(input.message, 'utf8').toString('base64url'),
    signature: input.signature,
    issued_at: signed.issuedAt,
    ...(signed.expires !== undefined ? { expires_at: signed.expires } : {}),
    ...(input.relayHints !== undefined ? { relay_hints: [...input.relayHints] } : {}),
    ...(input.verificationUrl !== undefined ? { verification_url: input.verificationUrl } : {}),
  };
  if (Buffer.byteLength(JSON.stringify(envelope), 'utf8') > MAX_CONTENT_BYTES) {
    throw new TypeError('relay: envelope exceeds 64 KiB');
  }
  return envelope;
}

/**
 * The unsigned kind-30078 event for an envelope (docs/protocol.md §7): `d` = the
 * attestation id (so relays keep one event per publisher and attestation,
 * NIP-01 parameterized replaceable), `address`, `scheme`, `issued_at` (as in
 * the message), one `i` tag per identity, and `expires` as unix seconds when
 * the message has an expiry (docs/protocol.md §7 "Relay envelopes": `["expires",
 * "<unix_timestamp>"]`). Tags are only an index for relay look-ups; readers
 * re-derive everything from the content.
 */
export function buildAttestationEvent(envelope: AttestationEnvelope, createdAt: Date): EventTemplate {
  const seconds = Math.floor(createdAt.getTime() / 1000);
  if (!Number.isSafeInteger(seconds) || seconds < 0) throw new TypeError('relay: createdAt is not a valid date');
  const tags: string[][] = [
    ['d', envelope.attestation_id],
    ['address', envelope.address],
    ['scheme', envelope.scheme],
    ['issued_at', envelope.issued_at],
    ...envelope.identities.map(({ protocol, identifier }) => ['i', `${protocol}:${identifier}`]),
  ];
  if (envelope.expires_at !== undefined) {
    tags.push(['expires', String(Math.floor(Date.parse(envelope.expires_at) / 1000))]);
  }
  return { kind: ATTESTATION_KIND, created_at: seconds, tags, content: JSON.stringify(envelope) };
}

/** The value of the first tag named `name` (NIP-01: a `d` tag's first value is what relays index). */
export function firstTagValue(tags: readonly (readonly string[])[], name: string): string | undefined {
  // Also called on unverified events straight off the wire, so tolerate any shape.
  for (const tag of tags as readonly unknown[]) {
    if (Array.isArray(tag) && tag[0] === name) return typeof tag[1] === 'string' ? tag[1] : undefined;
  }
  return undefined;
}

/**
 * The address an event's tags claim: the `address` tag of docs/protocol.md §7, or,
 * when it has none, the `addr` tag that older OrangeCheck publishers wrote
 * (docs/protocol.md §7 "Relay envelopes"). Only ever compared with the signed message.
 */
export function addressTagValue(tags: readonly (readonly string[])[]): string | undefined {
  return firstTagValue(tags, 'address') ?? firstTagValue(tags, 'addr');
}

/**
 * Checks the wire shape of a NIP-01 event before anything else touches it, so
 * that hashing and signature checks only ever see well-formed values.
 */
function isEventShape(value: unknown): value is NostrEvent {
  if (!isJsonObject(value)) return false;
  const event = value;
  if (typeof event.id !== 'string' || !HEX64.test(event.id)) return false;
  if (typeof event.pubkey !== 'string' || !HEX64.test(event.pubkey)) return false;
  if (typeof event.sig !== 'string' || !/^[0-9a-f]{128}$/.test(event.sig)) return false;
  if (typeof event.created_at !== 'number' || !Number.isSafeInteger(event.created_at) || event.created_at < 0) {
    return false;
  }
  if (typeof event.kind !== 'number' || !Number.isInteger(event.kind)) return false;
  if (typeof event.content !== 'string') return false;
  if (!Array.isArray(event.tags) || event.tags.length > MAX_TAGS) return false;
  return event.tags.every((tag) => Array.isArray(tag) && tag.every((item) => typeof item === 'string'));
}

function stringField(record: Record<string, unknown>, key: string): string | undefined {
  const value = record[key];
  return typeof value === 'string' ? value : undefined;
}

function readIdentities(value: unknown): Identity[] | null {
  if (!Array.isArray(value)) return null;
  const identities: Identity[] = [];
  for (const item of value) {
    if (!isJsonObject(item)) return null;
    const { protocol, identifier } = item;
    if (typeof protocol !== 'string' || typeof identifier !== 'string') return null;
    const identity = parseIdentityItem(`${protocol}:${identifier}`);
    if (identity === null || identity.protocol !== protocol) return null;
    identities.push(identity);
  }
  return identities;
}

/**
 * Relay hints are unsigned advice (they are not part of the message), so a
 * malformed list costs the hints, not the attestation: keep at most 16
 * ws(s) URLs, accept the comma-separated string some publishers write.
 */
function readRelayHints(value: unknown): string[] | undefined {
  const items = typeof value === 'string' ? value.split(',').map((item) => item.trim()) : value;
  if (!Array.isArray(items)) return undefined;
  const hints = items.filter((item): item is string => typeof item === 'string' && isWebSocketUrl(item));
  return hints.length === 0 ? undefined : hints.slice(0, MAX_RELAY_HINTS);
}

/** `message_b64url` as text; some publishers pad it, so up to two `=` are dropped first. */
function decodeMessageB64url(value: string): string | null {
  const bytes = decodeBase64url(value.replace(/={1,2}$/, ''));
  if (bytes === null) return null;
  // Fatal decoding rejects byte sequences that are not UTF-8 text.
  try {
    return new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(bytes);
  } catch {
    return null;
  }
}

/**
 * Keeps an event's envelope only when all of docs/protocol.md §7 holds:
 *
 * - kind 30078, content at most {@link MAX_CONTENT_BYTES}, valid JSON of the
 *   envelope's shape;
 * - SHA-256(message) = `attestation_id` = the `d` tag (or `orangecheck:<id>`);
 * - the `address` tag (`addr` for older publishers) = `address` = the
 *   message's `address:` line;
 * - identities, issued_at and expires_at restate the message (else a relay
 *   could bind someone's identity to an attestation that never named it, or
 *   make an old attestation look newest);
 * - `message_b64url`, when present, decodes to `message`;
 * - the event's own Nostr signature verifies (checked last: it is the
 *   expensive step, so junk is dropped before it).
 *
 * Returns the envelope rebuilt from the checked values (unknown fields are
 * dropped, `message_b64url` is filled in when absent), or null. It never
 * says which check failed: a reader can only keep or drop (docs/architecture.md Errors).
 * The pubkey is not consulted.
 */
export function parseEnvelopeEvent(event: unknown): AttestationEnvelope | null {
  if (!isEventShape(event)) return null;
  if (event.kind !== ATTESTATION_KIND) return null;
  if (Buffer.byteLength(event.content, 'utf8') > MAX_CONTENT_BYTES) return null;

  const dTag = firstTagValue(event.tags, 'd');
  if (dTag === undefined) return null;
  const taggedId = dTag.startsWith(LEGACY_D_PREFIX) ? dTag.slice(LEGACY_D_PREFIX.length) : dTag;
  if (!HEX64.test(taggedId)) return null;
  const taggedAddress = addressTagValue(event.tags);
  if (taggedAddress === undefined) return null;

  let parsed: unknown;
  try {
    parsed = JSON.parse(event.content);
  } catch {
    return null;
  }
  if (!isJsonObject(parsed)) return null;
  const content = parsed;

  const attestationId = stringField(content, 'attestation_id');
  const scheme = stringField(content, 'scheme');
  const address = stringField(content, 'address');
  const message = stringField(content, 'message');
  const signature = stringField(content, 'signature');
  const issuedAt = stringField(content, 'issued_at');
  const identities = readIdentities(content.identities);
  if (
    attestationId === undefined ||
    scheme === undefined ||
    address === undefined ||
    message === undefined ||
    signature === undefined ||
    issuedAt === undefined ||
    identities === null
  ) {
    return null;
  }
  if (!SCHEME_NAME.test(scheme) || signature === '' || signature.length > MAX_SIGNATURE_CHARS) return null;

  // The binding of docs/protocol.md §7: SHA-256(message) = attestation_id = d tag.
  if (attestationId !== taggedId || attestationIdOf(message) !== attestationId) return null;

  const signed = readSignedFields(message);
  if (signed === null) return null;
  if (address !== taggedAddress || address !== signed.address) return null;
  if (!sameIdentities(identities, signed.identities)) return null;
  if (!sameInstant(issuedAt, signed.issuedAt)) return null;

  const expiresAt = content.expires_at;
  if (expiresAt !== undefined && expiresAt !== null) {
    if (typeof expiresAt !== 'string' || signed.expires === undefined || !sameInstant(expiresAt, signed.expires)) {
      return null;
    }
  }

  const messageB64url = content.message_b64url;
  if (messageB64url !== undefined && messageB64url !== null) {
    if (typeof messageB64url !== 'string' || decodeMessageB64url(messageB64url) !== message) return null;
  }

  if (!verifyNostrSignature(event)) return null;

  const relayHints = readRelayHints(content.relay_hints);
  const verificationUrl = stringField(content, 'verification_url');
  const extraEntries = Object.entries(content).filter(([key]) => !ENVELOPE_FIELDS.has(key));
  return {
    attestation_id: attestationId,
    scheme,
    address,
    // The signed values, not the envelope's restatement of them.
    identities: signed.identities,
    message,
    message_b64url: Buffer.from(message, 'utf8').toString('base64url'),
    signature,
    issued_at: signed.issuedAt,
    ...(signed.expires !== undefined ? { expires_at: signed.expires } : {}),
    ...(relayHints !== undefined ? { relay_hints: relayHints } : {}),
    ...(verificationUrl !== undefined ? { verification_url: verificationUrl } : {}),
    ...(extraEntries.length > 0 ? { extra: Object.fromEntries(extraEntries) } : {}),
  };
}

/**
 * NIP-01 id and Schnorr signature check. It runs on a fresh copy because
 * nostr-tools caches the verdict on the object it is given, and the object
 * here came off the network.
 */
function verifyNostrSignature(event: NostrEvent): boolean {
  const copy: NostrEvent = {
    id: event.id,
    pubkey: event.pubkey,
    created_at: event.created_at,
    kind: event.kind,
    tags: event.tags,
    content: event.content,
    sig: event.sig,
  };
  try {
    return verifyEvent(copy);
  } catch {
    return false;
  }
}
