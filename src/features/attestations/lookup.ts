/**
 * Attestation look-up over Nostr relays: the service behind GET /api/check
 * and GET /api/discover (docs/api.md "Attestation routes", docs/protocol.md §7
 * "Relay envelopes").
 *
 * check: read the relays for the subject, take the newest envelope that
 * verifies (Bitcoin signature and chain metrics, through
 * {@link verifyAttestation}; "verifies" means the base result is ok), and
 * cache that result per subject. Thresholds are applied by the caller after
 * the cache ({@link checkResultBody}), so every `min_sats`/`min_days` pair
 * shares one entry.
 *
 * Decisions where the specs are silent (also in the route's OpenAPI text):
 * - Subjects are exactly one of address (any network, as the specs do not
 *   restrict it; kept in canonical form, bech32 lowercased), id (64 hex,
 *   lowercased) or identity (`twitter` read as `x`, docs/protocol.md §7).
 * - "No relay answered" (`relays_unavailable`) is decided on the pool's
 *   `relaysAnswered`: only relays that sent EOSE in time count, since a
 *   partial answer may lack the newest attestation (src/relay/client.ts).
 * - Envelopes are tried newest `issued_at` first. One that does not verify
 *   (bad Bitcoin signature, expired, `bond_insufficient`, …) is skipped and
 *   the next older one is tried. An expired one is skipped before any chain
 *   query. At most {@link MAX_CANDIDATES} are tried per check, bounding the
 *   CPU a subject flooded with junk can cost.
 * - When none verifies the answer is `not_found` (404, as docs/api.md has
 *   it). The envelopes that were found but failed are listed, with their
 *   documented codes, in the optional `rejected` field, so an integrator can
 *   tell "nothing published" from "published but expired".
 * - When the chain is unavailable for the newest envelope whose signature
 *   verifies, the check stops there: 200, ok false, reasons
 *   `["chain_unavailable"]` (docs/protocol.md §7: chain failure is a code, never a
 *   5xx). Falling back to an older attestation would answer with stale data
 *   only because of an outage.
 * - Cache lifetimes: a verified result `cacheTtlMs` (`CHECK_CACHE_SECONDS`,
 *   default 60 s) but never past the attestation's own `expires`; every other
 *   outcome (not found, chain or relays unavailable) at most
 *   {@link SHORT_TTL_MS}, so a fresh publication or a recovered dependency
 *   shows within seconds while a burst of look-ups still costs one query.
 * - Within one check the chain is asked at most once per address, however
 *   many envelopes of that address are tried.
 * - A publication through this host forgets the cached results of its
 *   subjects (address, id, each identity) on every instance ({@link
 *   AttestationLookupService.forget}); one published elsewhere shows when the
 *   cached result expires: `cacheTtlMs` after a verified result, 5 s after
 *   any other.
 *
 * discover: read the relays on every call (docs/api.md Limits: not cached)
 * and list the envelopes that passed the relay-level checks of docs/protocol.md §7
 * (SHA-256 binding, address, Nostr signature). Their Bitcoin signatures are
 * not checked here: discover lists, /api/check and /api/verify judge.
 */
import type { ChainSource, AddressUtxos } from '../../chain/index.js';
import type { BitcoinNetwork } from '../../platform/config.js';
import { tryDecodeAddress } from '../../bitcoin/index.js';
import type { AttestationEnvelope, AttestationLookup, AttestationQueryResult, RelayPool, VerifiedEnvelope } from '../../relay/index.js';
import type { CacheEntry, ResultCache, SingleFlight } from '../../platform/cache.js';
import type { VerifyCode } from './codes.js';
import { canonicalProtocol, formatIdentity, parseIdentity, type Identity } from '../../format/index.js';
import { applyThresholds, verifyAttestation, type Thresholds } from './verify.js';

/** Who is being looked up (docs/api.md: exactly one of addr, id, identity). */
export type CheckSubject =
  | { readonly by: 'address'; readonly address: string }
  | { readonly by: 'id'; readonly id: string }
  | { readonly by: 'identity'; readonly identity: Identity };

/** The raw query values a subject is read from. */
export interface SubjectQuery {
  readonly addr?: string | undefined;
  readonly id?: string | undefined;
  readonly identity?: string | undefined;
}

export type SubjectParse = { readonly ok: true; readonly subject: CheckSubject } | { readonly ok: false; readonly detail: string };

/** The verified result of one attestation, as cached (plain JSON data). */
interface CheckedAttestation {
  /** The base result: true when no error-severity code is present. */
  readonly ok: boolean;
  readonly codes: readonly VerifyCode[];
  readonly sats: number;
  readonly days: number;
  readonly score: number;
  readonly attestation_id: string;
  readonly address: string;
  readonly identities: readonly Identity[];
  readonly network: string;
  readonly issued_at?: string;
  readonly expires_at?: string;
}

/** An envelope that was found but did not verify, with the codes that say why. */
interface RejectedAttestation {
  readonly attestation_id: string;
  readonly address: string;
  readonly codes: readonly VerifyCode[];
}

export type CheckOutcome =
  | { readonly status: 'verified'; readonly result: CheckedAttestation }
  | { readonly status: 'chain_unavailable'; readonly result: CheckedAttestation }
  | { readonly status: 'not_found'; readonly rejected: readonly RejectedAttestation[] }
  | { readonly status: 'relays_unavailable' };

interface CheckAnswer {
  readonly outcome: CheckOutcome;
  /** `hit` when served from the cache; callers that shared an in-flight look-up see `miss`. */
  readonly cache: 'hit' | 'miss';
  /** When the cached entry stops being served (ms since the epoch); `now` when not cached. */
  readonly expiresAtMs: number;
}

/** One element of the discover answer: the §7 envelope plus where it was found. */
interface DiscoveredEnvelope extends AttestationEnvelope {
  /** The Nostr event kept for this attestation (the newest copy). */
  readonly event_id: string;
  /** That event's `created_at`, unix seconds. */
  readonly created_at: number;
  /** Configured relays that served it. */
  readonly relays: readonly string[];
}

interface DiscoverAnswer {
  readonly count: number;
  readonly total: number;
  readonly attestations: readonly DiscoveredEnvelope[];
  readonly relays_answered: number;
  readonly relays_queried: number;
  readonly warnings?: readonly string[];
}

/** The body of a 200 check answer (docs/api.md "Check result"). */
export interface CheckResultBody extends Omit<CheckedAttestation, 'ok'> {
  /** True when every threshold is met; else `reasons` says which are not. */
  readonly ok: boolean;
  readonly reasons?: readonly VerifyCode[];
}

export interface AttestationLookupDeps {
  readonly relays: Pick<RelayPool, 'queryAttestations'>;
  readonly chain: ChainSource;
  /** `BITCOIN_NETWORK` (docs/protocol.md §7 "Network"). */
  readonly network: BitcoinNetwork;
  readonly minConfirmations: number;
  readonly now: () => Date;
  readonly cache: ResultCache<CheckOutcome>;
  readonly singleFlight: SingleFlight;
  /** Lifetime of a verified result (`CHECK_CACHE_SECONDS` × 1000). 0 turns caching off. */
  readonly cacheTtlMs: number;
  /** A `verification_url` for envelopes whose publisher gave none (the SDKs require one). */
  readonly verificationUrlOf?: (attestationId: string) => string;
}

export interface AttestationLookupService {
  check(subject: CheckSubject): Promise<CheckAnswer>;
  /**
   * Drops the cached results of `subjects` (on every instance when the cache
   * is shared), so that the next check reads the relays again: an attestation
   * published through this host shows at once (src/features/attestations/publish.ts).
   */
  forget(subjects: readonly CheckSubject[]): Promise<void>;
  discover(subject: CheckSubject, limit: number): Promise<DiscoverAnswer>;
}

/** Lifetime of every outcome other than a verified result (errors are cached only briefly). */
const SHORT_TTL_MS = 5_000;
/** Envelopes tried per check, newest first. */
const MAX_CANDIDATES = 50;
/** Events asked of each relay for a check (the REQ limit, docs/protocol.md §7). */
const CHECK_QUERY_LIMIT = 100;
/** Rejected envelopes reported on a 404. */
const MAX_REJECTED_REPORTED = 10;
/** discover's `limit` (docs/protocol.md §7: default 50, max 200). */
export const DISCOVER_DEFAULT_LIMIT = 50;
export const DISCOVER_MAX_LIMIT = 200;

const ID_PATTERN = /^[0-9a-fA-F]{64}$/;

/**
 * Reads the subject of /api/check and /api/discover. Exactly one of the three
 * must be given (an empty value counts as given, and is malformed). Hostile
 * input is an expected outcome, so this answers a detail naming the field
 * instead of throwing.
 */
export function parseSubject(query: SubjectQuery): SubjectParse {
  const given = (['addr', 'id', 'identity'] as const).filter((name) => query[name] !== undefined);
  if (given.length !== 1) return { ok: false, detail: 'query: give exactly one of addr, id, identity' };
  if (query.addr !== undefined) {
    const decoded = typeof query.addr === 'string' ? tryDecodeAddress(query.addr) : null;
    if (decoded === null) return { ok: false, detail: 'query.addr: not a valid Bitcoin address' };
    // Canonical form (bech32 lowercased, BIP-173): the form messages and tags carry.
    return { ok: true, subject: { by: 'address', address: decoded.address } };
  }
  if (query.id !== undefined) {
    if (typeof query.id !== 'string' || !ID_PATTERN.test(query.id)) {
      return { ok: false, detail: 'query.id: must be 64 hexadecimal characters' };
    }
    return { ok: true, subject: { by: 'id', id: query.id.toLowerCase() } };
  }
  const identity = typeof query.identity === 'string' ? parseIdentity(query.identity) : null;
  if (identity === null) return { ok: false, detail: 'query.identity: must be <protocol>:<identifier>' };
  return { ok: true, subject: { by: 'identity', identity } };
}

/** The cache and single-flight key of a subject; one subject, one key. */
export function subjectKey(subject: CheckSubject): string {
  switch (subject.by) {
    case 'address':
      return `addr:${subject.address}`;
    case 'id':
      return `id:${subject.id}`;
    case 'identity':
      return `identity:${formatIdentity(subject.identity)}`;
  }
}

/**
 * Every subject a check of this attestation can be asked by: its address (in
 * canonical form), its id and each identity (legacy protocol names read as
 * their current ones, as {@link parseSubject} reads them).
 */
export function subjectsOf(attestation: {
  readonly address: string;
  readonly attestation_id: string;
  readonly identities: readonly Identity[];
}): CheckSubject[] {
  const address = tryDecodeAddress(attestation.address)?.address ?? attestation.address;
  return [
    { by: 'address', address },
    { by: 'id', id: attestation.attestation_id.toLowerCase() },
    ...attestation.identities.map(
      (identity): CheckSubject => ({
        by: 'identity',
        identity: { protocol: canonicalProtocol(identity.protocol), identifier: identity.identifier },
      }),
    ),
  ];
}

function relayLookup(subject: CheckSubject): AttestationLookup {
  switch (subject.by) {
    case 'address':
      return { by: 'address', address: subject.address };
    case 'id':
      return { by: 'id', id: subject.id };
    case 'identity':
      return { by: 'identity', identity: formatIdentity(subject.identity) };
  }
}

/** Only the fields of a check result, whatever else `result` carries. */
function checked(result: CheckedAttestation): CheckedAttestation {
  return {
    ok: result.ok,
    codes: result.codes,
    sats: result.sats,
    days: result.days,
    score: result.score,
    attestation_id: result.attestation_id,
    address: result.address,
    identities: result.identities,
    network: result.network,
    ...(result.issued_at !== undefined ? { issued_at: result.issued_at } : {}),
    ...(result.expires_at !== undefined ? { expires_at: result.expires_at } : {}),
  };
}

/**
 * The 200 body of a check for a verified or chain-unavailable outcome, with
 * the thresholds applied (docs/api.md "Check result"): `ok` true without
 * `reasons` when every threshold is met (a value equal to its minimum meets
 * it), else `reasons` with `below_min_sats` and/or `below_min_days`. When the
 * chain was unavailable the metrics are unknown, so the only reason is
 * `chain_unavailable`, whatever the thresholds.
 */
export function checkResultBody(
  outcome: Extract<CheckOutcome, { status: 'verified' | 'chain_unavailable' }>,
  thresholds: Thresholds,
): CheckResultBody {
  const result = outcome.result;
  const reasons: readonly VerifyCode[] =
    outcome.status === 'chain_unavailable' ? ['chain_unavailable'] : applyThresholds(result, thresholds).reasons;
  const body: CheckResultBody = { ...checked(result), ok: reasons.length === 0 };
  return reasons.length === 0 ? body : { ...body, reasons };
}

/** Asks the chain at most once per address within one check. */
function chainOncePerAddress(chain: ChainSource): ChainSource {
  const asked = new Map<string, Promise<AddressUtxos>>();
  return {
    addressUtxos(address) {
      let answer = asked.get(address);
      if (answer === undefined) {
        answer = chain.addressUtxos(address);
        asked.set(address, answer);
      }
      return answer;
    },
  };
}

function discovered(envelope: VerifiedEnvelope, verificationUrlOf?: (attestationId: string) => string): DiscoveredEnvelope {
  // The publisher's other content fields first, so that none of them can
  // stand in for a checked one. The pool's envelope also carries the
  // publisher key, which docs/protocol.md §7 trusts for nothing, so it is not
  // passed on.
  const verificationUrl = envelope.verification_url ?? verificationUrlOf?.(envelope.attestation_id);
  return {
    ...envelope.extra,
    attestation_id: envelope.attestation_id,
    scheme: envelope.scheme,
    address: envelope.address,
    identities: envelope.identities,
    message: envelope.message,
    message_b64url: envelope.message_b64url,
    signature: envelope.signature,
    issued_at: envelope.issued_at,
    ...(envelope.expires_at !== undefined ? { expires_at: envelope.expires_at } : {}),
    ...(envelope.relay_hints !== undefined ? { relay_hints: envelope.relay_hints } : {}),
    ...(verificationUrl !== undefined ? { verification_url: verificationUrl } : {}),
    event_id: envelope.event_id,
    created_at: envelope.created_at,
    relays: envelope.relays,
  };
}

export function createAttestationLookup(deps: AttestationLookupDeps): AttestationLookupService {
  const { relays, chain, network, minConfirmations, now, cache, singleFlight } = deps;
  const cacheTtlMs = deps.cacheTtlMs;
  if (!Number.isFinite(cacheTtlMs) || cacheTtlMs < 0) throw new TypeError('attest: cacheTtlMs must be a non-negative number');
  const shortTtlMs = Math.min(SHORT_TTL_MS, cacheTtlMs);

  async function resolve(subject: CheckSubject): Promise<CheckOutcome> {
    const query: AttestationQueryResult = await relays.queryAttestations(relayLookup(subject), { limit: CHECK_QUERY_LIMIT });
    if (query.relaysAnswered === 0) return { status: 'relays_unavailable' };

    const chainForThisCheck = chainOncePerAddress(chain);
    const verifyDeps = { chain: chainForThisCheck, network, minConfirmations, now };
    const rejected: RejectedAttestation[] = [];
    for (const envelope of query.envelopes.slice(0, MAX_CANDIDATES)) {
      // Expired: it cannot verify (docs/protocol.md §7 `expired`), so spare the chain query.
      if (envelope.expires_at !== undefined && now().getTime() >= Date.parse(envelope.expires_at)) {
        rejected.push({ attestation_id: envelope.attestation_id, address: envelope.address, codes: ['expired'] });
        continue;
      }
      const result = await verifyAttestation(
        {
          addr: envelope.address,
          msg: envelope.message,
          sig: envelope.signature,
          scheme: envelope.scheme,
          attestationId: envelope.attestation_id,
        },
        verifyDeps,
      );
      if (result.ok) return { status: 'verified', result: checked(result) };
      if (result.codes.includes('chain_unavailable')) return { status: 'chain_unavailable', result: checked(result) };
      rejected.push({ attestation_id: result.attestation_id, address: envelope.address, codes: result.codes });
    }
    return { status: 'not_found', rejected: rejected.slice(0, MAX_REJECTED_REPORTED) };
  }

  function lifetimeOf(outcome: CheckOutcome, nowMs: number): number {
    if (outcome.status !== 'verified') return shortTtlMs;
    const expires = outcome.result.expires_at;
    // Never serve an attestation from the cache past its own expiry.
    return expires === undefined ? cacheTtlMs : Math.max(0, Math.min(cacheTtlMs, Date.parse(expires) - nowMs));
  }

  // Results forgotten so far. A look-up that a `forget` overtook answers its
  // result without storing it: the relays may have had the publication
  // after it read them.
  let forgets = 0;

  async function lookUpAndStore(key: string, subject: CheckSubject): Promise<CheckAnswer> {
    // A caller that missed just before another stored the entry finds it here.
    const stored = await cache.get(key);
    if (stored !== undefined) return { outcome: stored.value, cache: 'hit', expiresAtMs: stored.expiresAtMs };
    const forgetsBefore = forgets;
    const outcome = await resolve(subject);
    const nowMs = now().getTime();
    const ttlMs = lifetimeOf(outcome, nowMs);
    if (ttlMs > 0 && forgets === forgetsBefore) await cache.set(key, outcome, ttlMs);
    return { outcome, cache: 'miss', expiresAtMs: nowMs + ttlMs };
  }

  return {
    async check(subject) {
      const key = subjectKey(subject);
      const got = cache.get(key);
      const entry: CacheEntry<CheckOutcome> | undefined = got instanceof Promise ? await got : got;
      if (entry !== undefined) return { outcome: entry.value, cache: 'hit', expiresAtMs: entry.expiresAtMs };
      return singleFlight.run(key, () => lookUpAndStore(key, subject));
    },

    async forget(subjects) {
      if (subjects.length === 0) return;
      forgets += 1;
      await cache.delete(subjects.map(subjectKey));
    },

    async discover(subject, limit) {
      if (!Number.isSafeInteger(limit) || limit < 1 || limit > DISCOVER_MAX_LIMIT) {
        throw new TypeError(`attest: limit must be an integer from 1 to ${DISCOVER_MAX_LIMIT}`);
      }
      // No REQ limit of ours: `total` counts everything the relays hold, up
      // to the pool's per-relay cap, while `limit` bounds `count`.
      const query = await relays.queryAttestations(relayLookup(subject));
      if (query.relaysAnswered === 0) {
        return {
          count: 0,
          total: 0,
          attestations: [],
          relays_answered: 0,
          relays_queried: query.relaysQueried,
          warnings: ['relays_unavailable'],
        };
      }
      const attestations = query.envelopes.slice(0, limit).map((envelope) => discovered(envelope, deps.verificationUrlOf));
      return {
        count: attestations.length,
        total: query.envelopes.length,
        attestations,
        relays_answered: query.relaysAnswered,
        relays_queried: query.relaysQueried,
      };
    },
  };
}

declare module '../../platform/services.js' {
  interface FeatureServices {
    /** The check/discover service with its result cache. */
    readonly attestationLookup: AttestationLookupService;
  }
}
