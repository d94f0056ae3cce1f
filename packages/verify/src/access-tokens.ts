/**
 * Local verification of the access tokens oc-host's OpenID provider issues
 * for an API (docs/protocol.md §8 "APIs"): JWTs of RFC 9068, checked against
 * the provider's JWKS (`/oidc/jwks`) with no call back per request.
 *
 * What is pinned: an asymmetric algorithm the provider signs with (ES256, its
 * default for APIs; RS256 and EdDSA as an API's registration may say), so
 * `none` and HS* never reach a key; the header `typ` `at+jwt` (or
 * `application/at+jwt`); the issuer; the audience (the API's resource URI);
 * `exp`, `nbf` when present, and the claims `sub`, `client_id`, `jti`, `iat`.
 * Scopes are the guard's to check (access-guards.ts): a token without the
 * scope a route needs is valid but not enough (403, not 401).
 *
 * With `revocations`, the verifier follows the host's feed and refuses the
 * tokens the provider ended early (docs/protocol.md §8 "Revoking API
 * tokens"); without it, a token verifies until its `exp`.
 *
 * Errors (docs/architecture.md): bad options throw at setup; a bad token is
 * an ordinary outcome, reported as `malformed` (not a JWT at all: an opaque
 * token, say) or `invalid` (every other failure, without saying which check).
 */
import {
  createLocalJWKSet,
  createRemoteJWKSet,
  customFetch,
  decodeProtectedHeader,
  jwtVerify,
  type JSONWebKeySet,
  type JWTVerifyGetKey,
} from 'jose';
import { MAX_TOKEN_LENGTH } from './verifier.js';
import {
  checkedUrl,
  clockOf,
  COMPACT_JWS,
  DEFAULT_JWKS_CACHE_MAX_AGE_SECONDS,
  DEFAULT_JWKS_COOLDOWN_SECONDS,
  DEFAULT_JWKS_TIMEOUT_MS,
  fail,
  optionalNumber,
  resolveRevocations,
} from './verifier.js';
import type { RevocationOptions } from './revocations.js';

/** The algorithms oc-host's provider signs access tokens with (docs/protocol.md §8 "Keys"). */
export const ACCESS_TOKEN_ALGORITHMS = ['ES256', 'RS256', 'EdDSA'] as const;
export type AccessTokenAlgorithm = (typeof ACCESS_TOKEN_ALGORITHMS)[number];

export interface AccessTokenVerifierOptions {
  /** The provider's issuer (the host's `PUBLIC_URL`), compared exactly with `iss`. */
  readonly issuer: string;
  /** The API's resource URI, as registered with `oc-host oidc resources add`: must be in `aud`. */
  readonly audience: string;
  /**
   * The provider's JWKS URL. Default `<issuer>/oidc/jwks`. Keys are cached
   * and refetched once when a token names an unknown kid (key rotation), at
   * most once per `jwksCooldownSeconds`. https, or http on loopback.
   */
  readonly jwksUrl?: string | URL | undefined;
  /** The provider's JWKS itself (an object or JSON text), instead of fetching it. */
  readonly jwks?: JSONWebKeySet | string | undefined;
  /** The algorithms accepted; default all three the provider may use. Only asymmetric ones are allowed. */
  readonly algorithms?: readonly AccessTokenAlgorithm[] | undefined;
  /** Slack for `exp` and `nbf` against this server's clock, s. Default 0. */
  readonly clockToleranceSeconds?: number | undefined;
  /** The time to verify at: a date, or a clock read per verification. Default: the system clock. */
  readonly now?: Date | (() => Date) | undefined;
  /** fetch used for the JWKS and the revocation feed; default the global fetch. */
  readonly fetch?: typeof fetch | undefined;
  /** Deadline of one JWKS request, ms. Default 5000. */
  readonly jwksTimeoutMs?: number | undefined;
  /** Least time between two JWKS fetches, s. Default 30. */
  readonly jwksCooldownSeconds?: number | undefined;
  /** Age after which the cached JWKS is refetched, s. Default 600. */
  readonly jwksCacheMaxAgeSeconds?: number | undefined;
  /** Allow an http JWKS URL on a non-loopback host (anyone on the path could then mint tokens). */
  readonly allowInsecureJwksUrl?: boolean | undefined;
  /**
   * Refuse tokens the provider ended early, within one interval: polls the
   * host's `GET /api/auth/revocations`. Without it, a token verifies until its `exp`.
   */
  readonly revocations?: RevocationOptions | undefined;
}

/** The claims of a valid access token (RFC 9068 §2.2; docs/protocol.md §8 "APIs"). */
export interface AccessTokenClaims {
  readonly iss: string;
  /** The account's `did:oc` (or its pairwise value) for a person; the client id for a machine client. */
  readonly sub: string;
  readonly aud: string | readonly string[];
  readonly client_id: string;
  readonly jti: string;
  readonly iat: number;
  readonly exp: number;
  /** The scopes granted, space-separated; empty when none. */
  readonly scope: string;
  /** When and how the person signed in (absent for a machine client). */
  readonly auth_time?: number;
  readonly acr?: string;
  /** The grant the token belongs to, by reference (the revocation feed's cut-offs name it). */
  readonly oc_grant?: string;
  readonly [claim: string]: unknown;
}

/** Why a token was refused: not a JWT (an opaque token, say), or any check failed. */
export type AccessTokenProblem = 'malformed' | 'invalid';

export type AccessTokenResult =
  | { readonly ok: true; readonly claims: AccessTokenClaims; readonly scopes: ReadonlySet<string> }
  | { readonly ok: false; readonly problem: AccessTokenProblem };

export interface AccessTokenVerifier {
  readonly issuer: string;
  readonly audience: string;
  /** The outcome for one token. Never throws for a bad token. */
  check(token: unknown): Promise<AccessTokenResult>;
  /** The claims of a valid token, else null. */
  verify(token: unknown): Promise<AccessTokenClaims | null>;
}

const REQUIRED_CLAIMS = ['iss', 'sub', 'aud', 'exp', 'iat', 'jti', 'client_id'] as const;

function algorithmsOf(value: AccessTokenVerifierOptions['algorithms']): AccessTokenAlgorithm[] {
  if (value === undefined) return [...ACCESS_TOKEN_ALGORITHMS];
  if (!Array.isArray(value) || value.length === 0) fail('algorithms must be a non-empty array');
  for (const alg of value) {
    if (!(ACCESS_TOKEN_ALGORITHMS as readonly string[]).includes(alg))
      fail(`algorithms: ${String(alg)} is not one the provider signs with (${ACCESS_TOKEN_ALGORITHMS.join(', ')})`);
  }
  return [...value];
}

function keysOf(options: AccessTokenVerifierOptions, issuer: string): JWTVerifyGetKey {
  if (options.jwks !== undefined && options.jwksUrl !== undefined) fail('give jwks or jwksUrl, not both');
  if (options.jwks !== undefined) {
    let set: unknown = options.jwks;
    if (typeof set === 'string') {
      try {
        set = JSON.parse(set);
      } catch {
        fail('jwks is not JSON');
      }
    }
    if (typeof set !== 'object' || set === null || !Array.isArray((set as JSONWebKeySet).keys))
      fail('jwks must be a JWKS: { keys: [...] }');
    // Only public keys of the asymmetric kinds; a secret (kty oct) in the set is a configuration mistake.
    for (const key of (set as JSONWebKeySet).keys) {
      if (key.kty === 'oct') fail("jwks holds a symmetric key: access tokens are verified with the provider's public keys only");
      if ('d' in key) fail('jwks holds a private key: give the public JWKS');
    }
    return createLocalJWKSet(set as JSONWebKeySet);
  }
  const fetchImplementation = options.fetch ?? globalThis.fetch;
  if (typeof fetchImplementation !== 'function') fail('fetch must be a function (no global fetch here)');
  const url = checkedUrl(options.jwksUrl ?? `${issuer.replace(/\/+$/, '')}/oidc/jwks`, options.allowInsecureJwksUrl === true, 'jwksUrl');
  return createRemoteJWKSet(new URL(url), {
    timeoutDuration: optionalNumber(options.jwksTimeoutMs, 'jwksTimeoutMs', DEFAULT_JWKS_TIMEOUT_MS, 1),
    cooldownDuration: optionalNumber(options.jwksCooldownSeconds, 'jwksCooldownSeconds', DEFAULT_JWKS_COOLDOWN_SECONDS, 0) * 1000,
    cacheMaxAge: optionalNumber(options.jwksCacheMaxAgeSeconds, 'jwksCacheMaxAgeSeconds', DEFAULT_JWKS_CACHE_MAX_AGE_SECONDS, 0) * 1000,
    [customFetch]: (input, init) => fetchImplementation(input, init),
  });
}

function claimsOf(payload: Record<string, unknown>): AccessTokenClaims | null {
  const { sub, client_id: clientId, jti, iat, scope } = payload;
  if (typeof sub !== 'string' || typeof clientId !== 'string' || typeof jti !== 'string') return null;
  if (typeof iat !== 'number' || !Number.isFinite(iat)) return null;
  if (scope !== undefined && typeof scope !== 'string') return null;
  return { ...payload, scope: scope ?? '' } as AccessTokenClaims;
}

/**
 * A verifier for an API: options are checked here (throws on a bad one), keys
 * are fetched once and cached for the verifier's life.
 */
export function createAccessTokenVerifier(options: AccessTokenVerifierOptions): AccessTokenVerifier {
  if (typeof options !== 'object' || options === null) fail('options are required ({ issuer, audience })');
  const { issuer, audience } = options;
  if (typeof issuer !== 'string' || issuer.trim() === '') fail("issuer must be the provider's issuer (the host's PUBLIC_URL)");
  if (typeof audience !== 'string' || audience.trim() === '' || /[\u0000-\u001f\u007f]/.test(audience))
    fail("audience must be the API's resource URI");
  const algorithms = algorithmsOf(options.algorithms);
  const clockTolerance = optionalNumber(options.clockToleranceSeconds, 'clockToleranceSeconds', 0, 0);
  const clock = clockOf(options.now);
  const keys = keysOf(options, issuer);
  const revocations = resolveRevocations(options);

  async function check(token: unknown): Promise<AccessTokenResult> {
    if (typeof token !== 'string' || token.length > MAX_TOKEN_LENGTH || !COMPACT_JWS.test(token))
      return { ok: false, problem: 'malformed' };
    try {
      // The header is read before any key is looked up: a token that cannot be the provider's costs no JWKS fetch.
      const header = decodeProtectedHeader(token);
      if (typeof header.alg !== 'string' || !(algorithms as string[]).includes(header.alg)) return { ok: false, problem: 'invalid' };
      const { payload } = await jwtVerify(token, keys, {
        algorithms,
        // jose compares `typ` without case and without an `application/` prefix (RFC 9068 §4).
        typ: 'at+jwt',
        issuer,
        audience,
        requiredClaims: [...REQUIRED_CLAIMS],
        currentDate: clock(),
        clockTolerance,
      });
      const claims = claimsOf(payload as Record<string, unknown>);
      if (claims === null) return { ok: false, problem: 'invalid' };
      if (revocations !== undefined && (await revocations.poller.refusesAccessToken(claims, revocations.failClosed)))
        return { ok: false, problem: 'invalid' };
      return { ok: true, claims, scopes: new Set(claims.scope.split(' ').filter((scope) => scope !== '')) };
    } catch {
      return { ok: false, problem: 'invalid' };
    }
  }

  return {
    issuer,
    audience,
    check,
    async verify(token) {
      const result = await check(token);
      return result.ok ? result.claims : null;
    },
  };
}
