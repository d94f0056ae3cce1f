/**
 * The three attestation look-ups of docs/protocol.md §7 ("Look-ups"): the NIP-01
 * filters sent to relays, and the checks that hold the answers to what was
 * asked. Relays may ignore tag filters, above all multi-letter ones such as
 * `#address` (NIP-01 only expects single-letter tags to be indexed), so every
 * answer is filtered again on our side: a relay can withhold, never inject.
 */
import type { NostrEvent } from 'nostr-tools/pure';
import { ATTESTATION_KIND, LEGACY_D_PREFIX, addressTagValue, firstTagValue, type AttestationEnvelope } from './envelope.js';
import { identityKey, parseIdentityItem as parseIdentity } from '../format/index.js';

export type AttestationLookup =
  | { readonly by: 'id'; readonly id: string }
  | { readonly by: 'address'; readonly address: string }
  | { readonly by: 'identity'; readonly identity: string };

/** A NIP-01 REQ filter: `kinds`, one `#<tag>` list and `limit` (only what we send). */
export type RelayFilter = Readonly<Record<string, readonly (number | string)[] | number>>;

/**
 * A look-up checked and brought to the form that is compared: the id in
 * lowercase, the identity split and keyed (`twitter` read as `x`).
 * Malformed input throws a TypeError: routes validate subjects before they
 * reach the pool, so getting here with garbage is a programming error.
 */
export type NormalizedLookup =
  | { readonly by: 'id'; readonly id: string }
  | { readonly by: 'address'; readonly address: string }
  | { readonly by: 'identity'; readonly key: string; readonly tagValues: readonly string[] };

export function normalizeLookup(lookup: AttestationLookup): NormalizedLookup {
  switch (lookup.by) {
    case 'id': {
      if (typeof lookup.id !== 'string' || !/^[0-9a-fA-F]{64}$/.test(lookup.id)) {
        throw new TypeError('relay: id must be 64 hex characters');
      }
      return { by: 'id', id: lookup.id.toLowerCase() };
    }
    case 'address': {
      const address = lookup.address;
      if (typeof address !== 'string' || address === '' || address.length > 128 || /[\s,]/.test(address)) {
        throw new TypeError('relay: address must be a non-empty address without spaces');
      }
      return { by: 'address', address };
    }
    case 'identity': {
      const identity = typeof lookup.identity === 'string' ? parseIdentity(lookup.identity) : null;
      if (identity === null) throw new TypeError('relay: identity must be <protocol>:<identifier>');
      // `twitter` is legacy for `x` (docs/protocol.md §7): one subject, two tag spellings.
      const tagValues =
        identity.protocol === 'x' || identity.protocol === 'twitter'
          ? [`x:${identity.identifier}`, `twitter:${identity.identifier}`]
          : [`${identity.protocol}:${identity.identifier}`];
      if (identity.protocol === 'twitter') tagValues.reverse();
      return { by: 'identity', key: identityKey(identity), tagValues };
    }
    default:
      throw new TypeError('relay: unknown look-up');
  }
}

/**
 * The REQ filters of a look-up. The first filter is the one docs/protocol.md §7
 * names; the others read older publishers: `d` = `orangecheck:<id>`
 * (docs/protocol.md §7), an `addr` tag instead of `address` and `twitter:` for `x:`
 * (docs/protocol.md §7 "Relay envelopes"). `limit` is split between them so that an honest
 * relay never sends more than `limit` events in all.
 */
export function lookupFilters(lookup: NormalizedLookup, limit: number): RelayFilter[] {
  const tagged: [`#${string}`, string][] =
    lookup.by === 'id'
      ? [
          ['#d', lookup.id],
          ['#d', `${LEGACY_D_PREFIX}${lookup.id}`],
        ]
      : lookup.by === 'address'
        ? [
            ['#address', lookup.address],
            ['#addr', lookup.address],
          ]
        : lookup.tagValues.map((value): [`#${string}`, string] => ['#i', value]);
  const perFilter = Math.max(1, Math.floor(limit / tagged.length));
  return tagged.map(([tag, value]) => {
    const filter: Record<string, readonly (number | string)[] | number> = { kinds: [ATTESTATION_KIND] };
    filter[tag] = [value];
    filter.limit = perFilter;
    return filter;
  });
}

/**
 * Cheap pre-check on an event's tags, before the expensive verification:
 * drops what a relay that ignores tag filters sends us. It is not the
 * authority ({@link envelopeMatches} is), only a way not to spend a
 * signature check on an event that cannot match.
 */
export function tagsMayMatch(event: NostrEvent, lookup: NormalizedLookup): boolean {
  if (event.kind !== ATTESTATION_KIND || !Array.isArray(event.tags)) return false;
  switch (lookup.by) {
    case 'id': {
      const d = firstTagValue(event.tags, 'd');
      return d === lookup.id || d === `${LEGACY_D_PREFIX}${lookup.id}`;
    }
    case 'address':
      return addressTagValue(event.tags) === lookup.address;
    case 'identity':
      // Some publishers put several identities in one `i` tag (docs/protocol.md
      // §7 "Relay envelopes"), so look at every value, not just the first.
      return event.tags.some(
        (tag) => Array.isArray(tag) && tag[0] === 'i' && tag.slice(1).some((value) => lookup.tagValues.includes(value)),
      );
    default:
      return false;
  }
}

/**
 * The authoritative check that a verified envelope is an answer to the
 * look-up. The identity is matched against the signed message's identities
 * (which {@link parseEnvelopeEvent} put in the envelope), never against tags.
 */
export function envelopeMatches(envelope: AttestationEnvelope, lookup: NormalizedLookup): boolean {
  switch (lookup.by) {
    case 'id':
      return envelope.attestation_id === lookup.id;
    case 'address':
      return envelope.address === lookup.address;
    case 'identity':
      return envelope.identities.some((identity) => identityKey(identity) === lookup.key);
    default:
      return false;
  }
}
