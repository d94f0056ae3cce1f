/**
 * The decision behind `requireAccessToken()`, shared by the Express, Fastify
 * and Hono adapters so that all three answer alike (RFC 6750 §3):
 *
 * - no Bearer token: 401, `WWW-Authenticate: Bearer realm="<audience>"` with
 *   no error code (§3.1), body `not_authenticated`;
 * - a token that does not verify: 401, `error="invalid_token"`, body
 *   `invalid_token`; the description says only whether it was no JWT at all
 *   (an opaque token: the app must ask for one with `resource=<audience>`);
 * - a valid token without a scope the route needs: 403,
 *   `error="insufficient_scope"` with the scopes needed, body `insufficient_scope`.
 *
 * Bodies use the host's error shape (docs/protocol.md §4): `{ok: false, error, reason}`.
 */
import { AREA } from './area.js';
import {
  createAccessTokenVerifier,
  type AccessTokenClaims,
  type AccessTokenVerifier,
  type AccessTokenVerifierOptions,
} from './access-tokens.js';
import { bearerToken, type HeaderValue } from './tokens.js';

export type AccessGuardCode = 'not_authenticated' | 'invalid_token' | 'insufficient_scope';

export interface AccessRefusal {
  readonly status: 401 | 403;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: { readonly ok: false; readonly error: AccessGuardCode; readonly reason: AccessGuardCode };
}

/** Options of `requireAccessToken()`: a verifier (or its options) and the scopes the route needs. */
export type AccessTokenGuardOptions = (AccessTokenVerifierOptions | { readonly verifier: AccessTokenVerifier }) & {
  /** Every one of these must be in the token's `scope`. */
  readonly scopes?: readonly string[] | undefined;
};

/** A scope token (RFC 6749 §3.3), as a route may name it. */
const SCOPE_TOKEN = /^[\x21\x23-\x5b\x5d-\x7e]+$/;

function quoted(value: string): string {
  return value.replace(/[\\"]/g, '');
}

function refusal(status: 401 | 403, code: AccessGuardCode, challenge: string): AccessRefusal {
  return Object.freeze({
    status,
    headers: Object.freeze({ 'cache-control': 'no-store', 'www-authenticate': challenge }),
    body: Object.freeze({ ok: false, error: code, reason: code }),
  });
}

export type AccessGuard = (
  authorization: HeaderValue,
) => Promise<{ readonly claims: AccessTokenClaims; readonly refusal: null } | { readonly claims: null; readonly refusal: AccessRefusal }>;

/** Builds the guard; throws at setup for bad options or scopes. */
export function accessTokenGuard(options: AccessTokenGuardOptions): AccessGuard {
  if (typeof options !== 'object' || options === null) throw new TypeError(`${AREA}: requireAccessToken needs options`);
  const verifier =
    'verifier' in options && options.verifier !== undefined
      ? options.verifier
      : createAccessTokenVerifier(options as AccessTokenVerifierOptions);
  const needed = [...(options.scopes ?? [])];
  for (const scope of needed) {
    if (typeof scope !== 'string' || !SCOPE_TOKEN.test(scope))
      throw new TypeError(`${AREA}: requireAccessToken: ${String(scope)} is no scope`);
  }
  const realm = `realm="${quoted(verifier.audience)}"`;
  const missing = refusal(401, 'not_authenticated', `Bearer ${realm}`);
  const malformed = refusal(
    401,
    'invalid_token',
    `Bearer ${realm}, error="invalid_token", error_description="not a JWT access token: ask for one with resource=${quoted(verifier.audience)}"`,
  );
  const invalid = refusal(
    401,
    'invalid_token',
    `Bearer ${realm}, error="invalid_token", error_description="the access token is invalid or expired"`,
  );
  const insufficient = refusal(403, 'insufficient_scope', `Bearer ${realm}, error="insufficient_scope", scope="${needed.join(' ')}"`);
  return async (authorization) => {
    const token = bearerToken(authorization);
    if (token === undefined) return { claims: null, refusal: missing };
    const result = await verifier.check(token);
    if (!result.ok) return { claims: null, refusal: result.problem === 'malformed' ? malformed : invalid };
    if (!needed.every((scope) => result.scopes.has(scope))) return { claims: null, refusal: insufficient };
    return { claims: result.claims, refusal: null };
  };
}
