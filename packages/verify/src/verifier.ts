/**
 * Local verification of `oc_session` (docs/api.md Authentication 2): a
 * compact JWS signed with Ed25519 (docs/protocol.md §3), checked against the
 * host's public key with no database and no call back per request.
 *
 * What is pinned: the algorithm (EdDSA only, so `none`, HS* and RS* tokens
 * never reach a key), `typ: JWT`, the issuer, and the claims `exp`, `sub`,
 * `did_oc` (= `did:oc:` + `sub`) and `jti`.
 *
 * Errors (docs/architecture.md): bad options are the integrator's mistake and throw at
 * setup; a bad token is an ordinary outcome and gives null, whichever check
 * failed.
 *
 * A revoked session still verifies here until its `exp` (logouts take effect
 * on the host at once, consumer sites learn of them only at expiry,
 * docs/protocol.md §3), unless the `revocations` option polls the host's
 * feed (revocations.ts). See README.md "Revoked sessions".
 */
import { decodeProtectedHeader, jwtVerify, type JWTVerifyOptions } from 'jose';
import { REQUIRED_CLAIMS, sessionClaimsOf, type OcSessionClaims } from './claims.js';
import { AREA } from './area.js';
import { parsePublicJwk, staticKeySource, type KeySource, type PublicJwkInput } from './keys.js';
import { RemoteKeySet } from './remote-jwks.js';
import { DEFAULT_REVOCATION_INTERVAL_SECONDS, sharedPoller, type RevocationOptions, type RevocationPoller } from './revocations.js';

/** The deploy-time setting that holds the host's public JWK (docs/api.md Authentication 2). */
export const PUBLIC_JWK_ENV = 'OC_AUTH_PUBLIC_JWK';

/** Longest token looked at; the host mints none longer (browsers keep cookies up to about 4 KiB). */
export const MAX_TOKEN_LENGTH = 8192;

export const DEFAULT_JWKS_TIMEOUT_MS = 5000;
export const DEFAULT_JWKS_COOLDOWN_SECONDS = 30;
export const DEFAULT_JWKS_CACHE_MAX_AGE_SECONDS = 600;

export interface VerifySessionOptions {
  /**
   * The host's public key: the JWK of `GET /api/auth/jwks` (`keys[0]`), or
   * the whole JWKS, as an object, JSON text or base64url of the JSON. Give
   * this or `jwksUrl`; with neither, `process.env.OC_AUTH_PUBLIC_JWK` is read.
   */
  readonly publicJwk?: PublicJwkInput | undefined;
  /**
   * The host's JWKS, e.g. `https://auth.example.com/api/auth/jwks`: keys are
   * fetched, cached, and refetched once when a token names an unknown kid
   * (key rotation). Must be https (or http on a loopback address) unless
   * `allowInsecureJwksUrl` is set.
   */
  readonly jwksUrl?: string | URL | undefined;
  /** The host's `PUBLIC_URL`, compared exactly with the token's `iss`. */
  readonly issuer: string;
  /** Slack for `exp` (and `nbf`, `iat` when present) against this site's clock. Default 0. */
  readonly clockToleranceSeconds?: number | undefined;
  /** The time to verify at: a date, or a clock read per verification. Default: the system clock. */
  readonly now?: Date | (() => Date) | undefined;
  /** fetch used for the JWKS; default the global fetch. */
  readonly fetch?: typeof fetch | undefined;
  /** Deadline of one JWKS request, ms. Default 5000. */
  readonly jwksTimeoutMs?: number | undefined;
  /** Least time between two JWKS fetches caused by unknown kids or failures, s. Default 30. */
  readonly jwksCooldownSeconds?: number | undefined;
  /** Age after which the cached JWKS is refreshed, s. Default 600. */
  readonly jwksCacheMaxAgeSeconds?: number | undefined;
  /** Allow an http JWKS URL on a non-loopback host (anyone on the path could then mint sessions). */
  readonly allowInsecureJwksUrl?: boolean | undefined;
  /**
   * Refuse sessions the host revoked, within one interval: polls the host's
   * `GET /api/auth/revocations` (one poller per URL per process). Without it,
   * a revoked session verifies until its `exp`.
   */
  readonly revocations?: RevocationOptions | undefined;
}

export interface SessionVerifier {
  readonly issuer: string;
  /** The claims of a valid session token, else null. Never throws for a bad token. */
  verify(token: unknown): Promise<OcSessionClaims | null>;
  /**
   * Of several presented tokens (every `oc_session` cookie, a Bearer token),
   * the session of the most recently minted one that verifies, else null.
   */
  verifyAny(tokens: readonly string[]): Promise<OcSessionClaims | null>;
}

export const COMPACT_JWS = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/;
/** Candidate tokens looked at per request; more is not a browser. */
const MAX_TOKENS = 8;

export function fail(message: string): never {
  throw new TypeError(`${AREA}: ${message}`);
}

export function optionalNumber(value: unknown, name: string, fallback: number, minimum: number): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isFinite(value) || value < minimum)
    fail(`${name} must be a number ≥ ${minimum}, got ${String(value)}`);
  return value;
}

function isLoopback(hostname: string): boolean {
  return hostname === 'localhost' || hostname === '[::1]' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(hostname);
}

export function checkedUrl(value: string | URL, allowInsecure: boolean, name: string): string {
  let url: URL;
  try {
    url = new URL(String(value));
  } catch {
    fail(`${name} is not a URL: ${String(value)}`);
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') fail(`${name} must be https, got ${url.protocol}`);
  // Whoever can change the keys (or the revocations) in transit can mint sessions (or hide revocations).
  if (url.protocol === 'http:' && !allowInsecure && !isLoopback(url.hostname)) {
    const flag = name === 'jwksUrl' ? 'allowInsecureJwksUrl' : 'revocations.allowInsecureUrl';
    fail(`${name} must be https (http is accepted on loopback only; set ${flag} to override)`);
  }
  return url.href;
}

export function clockOf(now: VerifySessionOptions['now']): () => Date {
  if (now === undefined) return () => new Date();
  if (typeof now === 'function') return now;
  if (!(now instanceof Date) || !Number.isFinite(now.getTime())) fail('now must be a valid Date or a function returning one');
  return () => now;
}

function publicJwkFromEnvironment(): string {
  // Consumer code: reading the deploy-time setting here is the documented convention.
  const environment = (globalThis as { process?: { env?: Record<string, string | undefined> } }).process?.env;
  const text = environment?.[PUBLIC_JWK_ENV];
  if (text === undefined || text.trim() === '') fail(`give publicJwk or jwksUrl, or set ${PUBLIC_JWK_ENV}`);
  return text;
}

export interface ResolvedOptions {
  readonly issuer: string;
  readonly clock: () => Date;
  readonly clockTolerance: number;
  readonly revocations: { readonly poller: RevocationPoller; readonly failClosed: boolean } | undefined;
}

interface RemoteSettings {
  readonly url: string;
  readonly fetch: typeof fetch;
  readonly timeoutMs: number;
  readonly cooldownMs: number;
  readonly cacheMaxAgeMs: number;
}

type KeyOrigin =
  | { readonly kind: 'static'; readonly input: PublicJwkInput; readonly fromEnvironment: boolean }
  | { readonly kind: 'remote'; readonly settings: RemoteSettings };

/** Checks every option; throws a TypeError naming the first bad one. */
function resolve(options: VerifySessionOptions): { resolved: ResolvedOptions; origin: KeyOrigin } {
  if (typeof options !== 'object' || options === null) fail('options are required ({ issuer, publicJwk | jwksUrl })');
  const { issuer } = options;
  if (typeof issuer !== 'string' || issuer.trim() === '') fail("issuer must be the host's PUBLIC_URL, a non-empty string");
  const clockTolerance = optionalNumber(options.clockToleranceSeconds, 'clockToleranceSeconds', 0, 0);
  const clock = clockOf(options.now);
  if (options.publicJwk !== undefined && options.jwksUrl !== undefined) fail('give publicJwk or jwksUrl, not both');

  let origin: KeyOrigin;
  if (options.jwksUrl !== undefined) {
    const fetchImplementation = options.fetch ?? globalThis.fetch;
    if (typeof fetchImplementation !== 'function') fail('fetch must be a function (no global fetch here)');
    origin = {
      kind: 'remote',
      settings: {
        url: checkedUrl(options.jwksUrl, options.allowInsecureJwksUrl === true, 'jwksUrl'),
        fetch: fetchImplementation,
        timeoutMs: optionalNumber(options.jwksTimeoutMs, 'jwksTimeoutMs', DEFAULT_JWKS_TIMEOUT_MS, 1),
        cooldownMs: optionalNumber(options.jwksCooldownSeconds, 'jwksCooldownSeconds', DEFAULT_JWKS_COOLDOWN_SECONDS, 0) * 1000,
        cacheMaxAgeMs:
          optionalNumber(options.jwksCacheMaxAgeSeconds, 'jwksCacheMaxAgeSeconds', DEFAULT_JWKS_CACHE_MAX_AGE_SECONDS, 0) * 1000,
      },
    };
  } else if (options.publicJwk !== undefined) {
    origin = { kind: 'static', input: options.publicJwk, fromEnvironment: false };
  } else {
    origin = { kind: 'static', input: publicJwkFromEnvironment(), fromEnvironment: true };
  }
  return { resolved: { issuer, clock, clockTolerance, revocations: resolveRevocations(options) }, origin };
}

export function resolveRevocations(options: Pick<VerifySessionOptions, 'revocations' | 'fetch'>): ResolvedOptions['revocations'] {
  const revocations = options.revocations;
  if (revocations === undefined) return undefined;
  if (typeof revocations !== 'object' || revocations === null) fail('revocations must be { url, intervalSeconds?, failClosed? }');
  const url = checkedUrl(revocations.url, revocations.allowInsecureUrl === true, 'revocations.url');
  const intervalSeconds = optionalNumber(
    revocations.intervalSeconds,
    'revocations.intervalSeconds',
    DEFAULT_REVOCATION_INTERVAL_SECONDS,
    1,
  );
  const fetchImplementation = options.fetch ?? globalThis.fetch;
  if (typeof fetchImplementation !== 'function') fail('fetch must be a function (no global fetch here)');
  // The shared poller keeps the system clock: it tells when entries lapse, not when a token was minted.
  const poller = sharedPoller(url, fetchImplementation, intervalSeconds * 1000, () => new Date());
  void poller.start();
  return { poller, failClosed: revocations.failClosed === true };
}

function buildKeySource(origin: KeyOrigin): KeySource {
  if (origin.kind === 'remote') {
    const { url, ...settings } = origin.settings;
    return new RemoteKeySet(url, settings);
  }
  return staticKeySource(parsePublicJwk(origin.input, origin.fromEnvironment ? PUBLIC_JWK_ENV : 'publicJwk'));
}

async function verifyWith(token: unknown, keys: KeySource, options: ResolvedOptions): Promise<OcSessionClaims | null> {
  if (typeof token !== 'string' || token.length > MAX_TOKEN_LENGTH || !COMPACT_JWS.test(token)) return null;
  try {
    // The header is read before any key is looked up, so a token that cannot
    // be ours costs no JWKS fetch.
    const header = decodeProtectedHeader(token);
    if (header.alg !== 'EdDSA') return null;
    if (header.kid !== undefined && typeof header.kid !== 'string') return null;
    const candidates = await keys.candidates(header.kid);
    const verifyOptions: JWTVerifyOptions = {
      algorithms: ['EdDSA'],
      typ: 'JWT',
      issuer: options.issuer,
      requiredClaims: [...REQUIRED_CLAIMS],
      currentDate: options.clock(),
      clockTolerance: options.clockTolerance,
    };
    for (const candidate of candidates) {
      let payload: Record<string, unknown>;
      try {
        ({ payload } = await jwtVerify(token, candidate.key, verifyOptions));
      } catch {
        continue; // another key with the same (or no) kid may still match
      }
      const claims = sessionClaimsOf(payload);
      if (
        claims !== null &&
        options.revocations !== undefined &&
        (await options.revocations.poller.refuses(claims.jti, options.revocations.failClosed))
      )
        return null;
      return claims;
    }
    return null;
  } catch {
    return null;
  }
}

async function newest(
  tokens: readonly string[],
  verify: (token: string) => Promise<OcSessionClaims | null>,
): Promise<OcSessionClaims | null> {
  const distinct = [...new Set(tokens)].slice(0, MAX_TOKENS);
  if (distinct.length === 0) return null;
  if (distinct.length === 1) return verify(distinct[0] as string);
  // Every candidate is checked, then the most recently minted wins: a stale
  // cookie that still verifies (logged out, or another account) must not
  // shadow the current one merely by coming first in the header.
  const results = await Promise.all(distinct.map(verify));
  let best: OcSessionClaims | null = null;
  for (const claims of results) {
    if (claims !== null && (best === null || (claims.iat ?? Number.NEGATIVE_INFINITY) > (best.iat ?? Number.NEGATIVE_INFINITY)))
      best = claims;
  }
  return best;
}

/**
 * A verifier for middleware and for sites that check many tokens: options are
 * checked once here (throws on a bad one), keys are parsed or fetched once
 * and cached for the verifier's life.
 */
export function createSessionVerifier(options: VerifySessionOptions): SessionVerifier {
  const { resolved, origin } = resolve(options);
  const keys = buildKeySource(origin);
  const verify = (token: unknown): Promise<OcSessionClaims | null> => verifyWith(token, keys, resolved);
  return {
    issuer: resolved.issuer,
    verify,
    verifyAny: (tokens) => newest(tokens, verify),
  };
}

// ---- verifySession: one call, with key sources shared between calls ----

const MAX_CACHED_TEXT_KEYS = 32;
const keysByText = new Map<string, KeySource>();
const keysByObject = new WeakMap<object, KeySource>();
const remoteByFetch = new WeakMap<typeof fetch, Map<string, KeySource>>();

function sharedKeySource(origin: KeyOrigin): KeySource {
  if (origin.kind === 'remote') {
    const { settings } = origin;
    let byUrl = remoteByFetch.get(settings.fetch);
    if (byUrl === undefined) {
      byUrl = new Map();
      remoteByFetch.set(settings.fetch, byUrl);
    }
    const cacheKey = [settings.url, settings.timeoutMs, settings.cooldownMs, settings.cacheMaxAgeMs].join(' ');
    let source = byUrl.get(cacheKey);
    if (source === undefined) {
      source = buildKeySource(origin);
      byUrl.set(cacheKey, source);
    }
    return source;
  }
  const { input } = origin;
  if (typeof input === 'string') {
    let source = keysByText.get(input);
    if (source === undefined) {
      source = buildKeySource(origin);
      if (keysByText.size >= MAX_CACHED_TEXT_KEYS) keysByText.clear();
      keysByText.set(input, source);
    }
    return source;
  }
  let source = keysByObject.get(input);
  if (source === undefined) {
    source = buildKeySource(origin);
    keysByObject.set(input, source);
  }
  return source;
}

/**
 * Verifies one `oc_session` token. Resolves to the session's claims, or null
 * for any token that is not a valid, unexpired session of this issuer.
 * Rejects (TypeError) only for bad options. Keys are cached between calls:
 * per key text or object, and per JWKS URL (with its fetch and timings).
 */
export async function verifySession(token: unknown, options: VerifySessionOptions): Promise<OcSessionClaims | null> {
  const { resolved, origin } = resolve(options);
  return verifyWith(token, sharedKeySource(origin), resolved);
}
