/**
 * Identity bindings of an attestation: `protocol:identifier` items
 * (docs/protocol.md §7 "Canonical message", the `identities:` line). The same
 * format names a subject in `?identity=` look-ups (docs/api.md
 * "Attestation routes") and in the Nostr `i` tags (docs/protocol.md §7 "Relay
 * envelopes").
 */
export interface Identity {
  readonly protocol: string;
  readonly identifier: string;
}

/** docs/protocol.md §7: protocol names are lowercase ASCII, hyphen and underscore allowed. */
const IDENTITY_PROTOCOL_PATTERN = /^[a-z][a-z0-9_-]*$/;

/**
 * Older messages name X by its former name; docs/protocol.md §7 says `twitter` is
 * read as `x`. The message still carries what was signed.
 */
const LEGACY_PROTOCOL_ALIASES: Readonly<Record<string, string>> = { twitter: 'x' };

export function isValidProtocol(protocol: string): boolean {
  return IDENTITY_PROTOCOL_PATTERN.test(protocol);
}

/** docs/protocol.md §7: non-empty, no CR, LF or comma (the comma separates items). */
export function isValidIdentifier(identifier: string): boolean {
  return identifier.length > 0 && !/[\r\n,]/.test(identifier);
}

/** Maps a legacy protocol name to its current one (`twitter` → `x`). */
export function canonicalProtocol(protocol: string): string {
  return Object.hasOwn(LEGACY_PROTOCOL_ALIASES, protocol) ? LEGACY_PROTOCOL_ALIASES[protocol]! : protocol;
}

/**
 * The comparison key of an identity: its current protocol name and the
 * identifier, so `twitter:@a` and `x:@a` name the same subject.
 */
export function identityKey(identity: Identity): string {
  return `${canonicalProtocol(identity.protocol)}:${identity.identifier}`;
}

/** `protocol:identifier`, exactly as it appears in the message and in `i` tags. */
export function formatIdentity(identity: Identity): string {
  return `${identity.protocol}:${identity.identifier}`;
}

/**
 * Splits one item at its FIRST colon (identifiers may hold colons, e.g.
 * URLs) and validates both halves, without renaming legacy protocols.
 * Returns null for anything malformed; hostile input is an expected outcome.
 */
export function parseIdentityItem(item: string): Identity | null {
  const colon = item.indexOf(':');
  if (colon <= 0) return null;
  const protocol = item.slice(0, colon);
  const identifier = item.slice(colon + 1);
  if (!isValidProtocol(protocol) || !isValidIdentifier(identifier)) return null;
  return { protocol, identifier };
}

/**
 * Parses a `protocol:identifier` subject (e.g. `?identity=x:alice`) and reads
 * a legacy protocol as its current name, as the message parser does. Returns
 * null when malformed.
 */
export function parseIdentity(text: string): Identity | null {
  const item = parseIdentityItem(text);
  if (item === null) return null;
  return { protocol: canonicalProtocol(item.protocol), identifier: item.identifier };
}

/**
 * Every `protocol:identifier` string under which an identity may have been
 * signed: an `x` identity may sit in older messages and tags as `twitter`.
 * Look-ups by identity (docs/protocol.md §7 "Relay envelopes") query all of them.
 */
export function identityLookupKeys(identity: Identity): string[] {
  const current = canonicalProtocol(identity.protocol);
  const keys = [formatIdentity({ protocol: current, identifier: identity.identifier })];
  for (const [legacy, alias] of Object.entries(LEGACY_PROTOCOL_ALIASES)) {
    if (alias === current) keys.push(formatIdentity({ protocol: legacy, identifier: identity.identifier }));
  }
  return keys;
}

/** Code-unit order of the whole item string, as docs/protocol.md §7 sorts the list. */
export function compareCodeUnits(left: string, right: string): number {
  return left < right ? -1 : left > right ? 1 : 0;
}
