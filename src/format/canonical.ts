/**
 * The canonical OrangeCheck attestation message (docs/protocol.md §7 "Canonical
 * message"): building it, parsing it strictly, and its id.
 *
 * The parser is deliberately strict. The message is what the wallet signed, so
 * any second reading of it (a tolerated CR, a blank line, an unsorted list)
 * would let two verifiers disagree about what was attested. Every deviation is
 * `decode_error`; the parser never throws.
 */
import { createHash } from 'node:crypto';
import type { BitcoinNetwork } from '../platform/config.js';
import { compareCodeUnits, formatIdentity, isValidIdentifier, isValidProtocol, parseIdentityItem, type Identity } from './identities.js';

const MESSAGE_HEADER = 'orangecheck';
const MESSAGE_PURPOSE = 'portable reputation attestation (non-custodial)';
const MESSAGE_ACK = 'I attest control of this address and bind it to my identities.';

/** The six `key: value` core lines after the header, in their fixed order (docs/protocol.md §7). */
const CORE_KEYS = ['identities', 'address', 'purpose', 'nonce', 'issued_at', 'ack'] as const;

const EXTENSION_KEY_PATTERN = /^[a-z][a-z0-9_]*$/;
const NONCE_PATTERN = /^[0-9a-f]{32}$/;
/** docs/protocol.md §7: `issued_at` is RFC 3339 in UTC with `Z`, to the second or the millisecond. */
const ISSUED_AT_PATTERN = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(?:\.(\d{3}))?Z$/;
/** The `expires` extension is any RFC 3339 date-time (§5.6 of the RFC): fraction and offset allowed. */
const RFC3339_PATTERN = /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(?:\.(\d+))?(?:([Zz])|([+-])(\d{2}):(\d{2}))$/;
/** Addresses are base58 or bech32: ASCII letters and digits only. */
const ADDRESS_PATTERN = /^[A-Za-z0-9]+$/;
/** Base-10 sats without sign or leading zeros, so one bond has one spelling. */
const BOND_PATTERN = /^(?:0|[1-9][0-9]*)$/;

/**
 * Sanity bound of the `bond` extension: 21 million BTC in sats. Below 2^53, so
 * the value is exact as a JavaScript number.
 */
export const MAX_BOND_SATS = 2_100_000_000_000_000;

/**
 * Values of the `network` extension. docs/protocol.md §7 names mainnet, testnet and
 * signet; regtest is accepted as well because the service itself can run on
 * regtest (docs/protocol.md §1 `BITCOIN_NETWORK`).
 */
type AttestationNetwork = BitcoinNetwork;
const NETWORKS: readonly AttestationNetwork[] = ['mainnet', 'testnet', 'signet', 'regtest'];

export interface ParsedAttestation {
  readonly address: string;
  /** Legacy `twitter` is read as `x`; exact duplicates are dropped; message order otherwise. */
  readonly identities: readonly Identity[];
  readonly nonce: string;
  /** As written in the message. */
  readonly issuedAt: string;
  readonly issuedAtMs: number;
  /** Every extension line, in message order (sorted by key), values as written. Unknown keys are kept, not interpreted. */
  readonly extensions: Readonly<Record<string, string>>;
  readonly aud: string | undefined;
  readonly bond: number | undefined;
  /** As written in the message. */
  readonly expires: string | undefined;
  readonly expiresAtMs: number | undefined;
  /** `mainnet` when the extension is absent (docs/protocol.md §7). */
  readonly network: AttestationNetwork;
}

export type ParseResult =
  | { readonly ok: true; readonly value: ParsedAttestation }
  | { readonly ok: false; readonly code: 'decode_error'; readonly detail: string };

type ExtensionValue = string | number | bigint;

export interface AttestationFields {
  readonly address: string;
  /** Items as objects or as `protocol:identifier` strings; sorted and de-duplicated when built. */
  readonly identities: readonly (Identity | string)[];
  readonly nonce: string;
  /** RFC 3339 UTC string (`Z`, seconds or milliseconds) or a Date (written with milliseconds). */
  readonly issuedAt: string | Date;
  /** Sorted by key when built; `undefined` values are left out. */
  readonly extensions?: Readonly<Record<string, ExtensionValue | undefined>>;
}

/** `attestation_id`: lowercase hex SHA-256 of the message's UTF-8 bytes, trailing LF included (docs/protocol.md §7). */
export function attestationId(message: string): string {
  return createHash('sha256').update(message, 'utf8').digest('hex');
}

/**
 * Builds the canonical message. Invalid fields are a programmer error here
 * (the caller chose them), so this throws a TypeError starting `attest:`.
 */
export function buildAttestationMessage(fields: AttestationFields): string {
  if (!ADDRESS_PATTERN.test(fields.address)) throw new TypeError('attest: address must be a base58 or bech32 string');
  if (!NONCE_PATTERN.test(fields.nonce)) throw new TypeError('attest: nonce must be 32 lowercase hex characters');
  const issuedAt = fields.issuedAt instanceof Date ? fields.issuedAt.toISOString() : fields.issuedAt;
  if (parseIssuedAt(issuedAt) === null) {
    throw new TypeError('attest: issuedAt must be RFC 3339 UTC with Z, to the second or the millisecond');
  }

  const items = new Set<string>();
  for (const entry of fields.identities) {
    const identity = typeof entry === 'string' ? parseIdentityItem(entry) : entry;
    if (identity === null || !isValidProtocol(identity.protocol) || !isValidIdentifier(identity.identifier)) {
      throw new TypeError(`attest: invalid identity ${JSON.stringify(typeof entry === 'string' ? entry : formatIdentity(entry))}`);
    }
    items.add(formatIdentity(identity));
  }
  const list = [...items].sort(compareCodeUnits).join(',');

  const extensionLines: string[] = [];
  const entries = Object.entries(fields.extensions ?? {})
    .filter((entry): entry is [string, ExtensionValue] => entry[1] !== undefined)
    .sort(([left], [right]) => compareCodeUnits(left, right));
  for (const [key, raw] of entries) {
    const value = String(raw);
    const problem = extensionProblem(key, value);
    if (problem !== null) throw new TypeError(`attest: extension ${JSON.stringify(key)}: ${problem}`);
    extensionLines.push(`${key}: ${value}`);
  }

  const lines = [
    MESSAGE_HEADER,
    `identities: ${list}`,
    `address: ${fields.address}`,
    `purpose: ${MESSAGE_PURPOSE}`,
    `nonce: ${fields.nonce}`,
    `issued_at: ${issuedAt}`,
    `ack: ${MESSAGE_ACK}`,
    ...extensionLines,
  ];
  return `${lines.join('\n')}\n`;
}

function fail(detail: string): ParseResult {
  return { ok: false, code: 'decode_error', detail };
}

/**
 * Parses a canonical message strictly (docs/protocol.md §7). Every malformed case
 * the section lists (wrong header or literals, missing or reordered core
 * lines, unsorted extensions, a bad nonce, a CR, a missing trailing LF), and
 * every bad value of a typed extension, gives `decode_error` with a detail
 * for logs. Never throws.
 */
export function parseAttestationMessage(message: string): ParseResult {
  if (typeof message !== 'string') return fail('message is not a string');
  if (message.includes('\r')) return fail('carriage return in message');
  if (!message.endsWith('\n')) return fail('missing trailing LF');
  // "Exactly one trailing LF" and "no blank lines": after removing the one
  // final LF, no line may be empty.
  const lines = message.slice(0, -1).split('\n');
  const blank = lines.indexOf('');
  if (blank !== -1) return fail(`blank line ${blank + 1}`);
  if (lines[0] !== MESSAGE_HEADER) return fail(`line 1 must be "${MESSAGE_HEADER}"`);
  if (lines.length < 1 + CORE_KEYS.length) return fail('missing core lines');

  const core: Record<(typeof CORE_KEYS)[number], string> = {
    identities: '',
    address: '',
    purpose: '',
    nonce: '',
    issued_at: '',
    ack: '',
  };
  for (const [index, key] of CORE_KEYS.entries()) {
    const line = lines[index + 1]!;
    const prefix = `${key}: `;
    if (!line.startsWith(prefix)) return fail(`line ${index + 2} must start with "${prefix}"`);
    core[key] = line.slice(prefix.length);
  }

  const identities = parseIdentityList(core.identities);
  if (identities === null) return fail('malformed identities list');
  if (!ADDRESS_PATTERN.test(core.address)) return fail('malformed address');
  if (core.purpose !== MESSAGE_PURPOSE) return fail('wrong purpose line');
  if (!NONCE_PATTERN.test(core.nonce)) return fail('nonce must be 32 lowercase hex characters');
  const issuedAtMs = parseIssuedAt(core.issued_at);
  if (issuedAtMs === null) return fail('issued_at must be RFC 3339 UTC with Z');
  if (core.ack !== MESSAGE_ACK) return fail('wrong ack line');

  const extensions: Record<string, string> = {};
  let previousKey: string | undefined;
  for (let index = 1 + CORE_KEYS.length; index < lines.length; index++) {
    const line = lines[index]!;
    const separator = line.indexOf(': ');
    if (separator === -1) return fail(`line ${index + 1} is not "key: value"`);
    const key = line.slice(0, separator);
    const value = line.slice(separator + 2);
    const problem = extensionProblem(key, value);
    if (problem !== null) return fail(`line ${index + 1}: ${problem}`);
    // Strictly ascending: sorted (docs/protocol.md §7) and without duplicates,
    // which would leave two readings of one key.
    if (previousKey !== undefined && !(previousKey < key)) return fail(`line ${index + 1}: extensions not sorted by key`);
    previousKey = key;
    extensions[key] = value;
  }

  const expires = Object.hasOwn(extensions, 'expires') ? extensions.expires : undefined;
  const bondText = Object.hasOwn(extensions, 'bond') ? extensions.bond : undefined;
  const networkText = Object.hasOwn(extensions, 'network') ? extensions.network : undefined;
  return {
    ok: true,
    value: {
      address: core.address,
      identities,
      nonce: core.nonce,
      issuedAt: core.issued_at,
      issuedAtMs,
      extensions,
      aud: Object.hasOwn(extensions, 'aud') ? extensions.aud : undefined,
      // extensionProblem has validated these three already.
      bond: bondText === undefined ? undefined : Number(bondText),
      expires,
      expiresAtMs: expires === undefined ? undefined : (parseRfc3339(expires) ?? undefined),
      network: (networkText ?? 'mainnet') as AttestationNetwork,
    },
  };
}

/**
 * The `identities:` value: empty, or items joined by `,` without spaces and
 * sorted by the whole item string. Sorting is checked on the items as
 * written (that is what the signer sorted); `twitter` is renamed afterwards.
 */
function parseIdentityList(value: string): Identity[] | null {
  if (value === '') return [];
  const items = value.split(',');
  const identities: Identity[] = [];
  const seen = new Set<string>();
  for (const [index, item] of items.entries()) {
    const identity = parseIdentityItem(item);
    if (identity === null) return null;
    // Non-decreasing: an exact repeat is harmless and keeps one reading; it is dropped below.
    if (index > 0 && compareCodeUnits(items[index - 1]!, item) > 0) return null;
    // Echoed as signed (`twitter` stays `twitter`, as the conformance vectors
    // require); only a look-up by identity treats `x` and `twitter` as one
    // subject (docs/protocol.md §7 "Canonical message").
    if (seen.has(item)) continue;
    seen.add(item);
    identities.push(identity);
  }
  return identities;
}

/** Checks one extension key and value, shared by the builder and the parser; null when fine. */
function extensionProblem(key: string, value: string): string | null {
  if (!EXTENSION_KEY_PATTERN.test(key)) return 'extension key must match ^[a-z][a-z0-9_]*$';
  // A core key repeated as an extension would give a naive reader a second
  // value for it (e.g. a second `address`); refuse it outright.
  if ((CORE_KEYS as readonly string[]).includes(key)) return `"${key}" is a core key`;
  if (/[\r\n]/.test(value)) return 'extension value holds CR or LF';
  switch (key) {
    case 'bond':
      if (!BOND_PATTERN.test(value) || value.length > 16 || BigInt(value) > BigInt(MAX_BOND_SATS)) {
        return `bond must be base-10 sats between 0 and ${MAX_BOND_SATS}`;
      }
      return null;
    case 'expires':
      return parseRfc3339(value) === null ? 'expires must be an RFC 3339 date-time' : null;
    case 'network':
      return (NETWORKS as readonly string[]).includes(value) ? null : `network must be one of ${NETWORKS.join(', ')}`;
    default:
      return null;
  }
}

/** Milliseconds since the epoch of a valid `issued_at`, or null. */
function parseIssuedAt(text: string): number | null {
  const match = ISSUED_AT_PATTERN.exec(text);
  if (match === null) return null;
  const [, year, month, day, hour, minute, second, millis] = match;
  return utcMillis(+year!, +month!, +day!, +hour!, +minute!, +second!, millis === undefined ? 0 : +millis, 0);
}

/** Milliseconds since the epoch of an RFC 3339 date-time, or null. Fractions beyond milliseconds are truncated. */
export function parseRfc3339(text: string): number | null {
  const match = RFC3339_PATTERN.exec(text);
  if (match === null) return null;
  const [, year, month, day, hour, minute, second, fraction, zulu, sign, offsetHours, offsetMinutes] = match;
  let offset = 0;
  if (zulu === undefined) {
    if (+offsetHours! > 23 || +offsetMinutes! > 59) return null;
    offset = (sign === '-' ? -1 : 1) * (+offsetHours! * 60 + +offsetMinutes!);
  }
  const millis = fraction === undefined ? 0 : +fraction.slice(0, 3).padEnd(3, '0');
  return utcMillis(+year!, +month!, +day!, +hour!, +minute!, +second!, millis, offset);
}

/**
 * Builds a UTC instant and rejects calendar overflow (31 April, hour 24,
 * second 60) by reading the fields back. `setUTCFullYear` avoids Date.UTC's
 * mapping of years 0–99 to 1900–1999.
 */
function utcMillis(
  year: number,
  month: number,
  day: number,
  hour: number,
  minute: number,
  second: number,
  millis: number,
  offsetMinutes: number,
): number | null {
  const date = new Date(0);
  date.setUTCFullYear(year, month - 1, day);
  date.setUTCHours(hour, minute, second, millis);
  if (
    date.getUTCFullYear() !== year ||
    date.getUTCMonth() !== month - 1 ||
    date.getUTCDate() !== day ||
    date.getUTCHours() !== hour ||
    date.getUTCMinutes() !== minute ||
    date.getUTCSeconds() !== second
  ) {
    return null;
  }
  return date.getTime() - offsetMinutes * 60_000;
}
