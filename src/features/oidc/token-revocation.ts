/**
 * Revoking an API's JWT access token at the revocation endpoint
 * (docs/protocol.md §8 "Revoking API tokens"; RFC 7009). The provider
 * library does not store such tokens, so it answers their revocation
 * `unsupported_token_type`, after it has authenticated the client. Here
 * that answer is replaced: a token this provider signed, for that client,
 * still unexpired, is listed in the revocation feed until its `exp`, where
 * the API's verifier learns of it; the answer is then RFC 7009's 200.
 *
 * The library still does the client authentication; only the signature,
 * issuer and type of the token are checked here, with jose, against the
 * provider's own published keys.
 */
import { createLocalJWKSet, jwtVerify, type JSONWebKeySet, type JWK } from 'jose';
import type { KoaContextWithOIDC, Provider } from 'oidc-provider';
import type { OidcStore } from './store.js';
import { OIDC_ALGORITHMS, type OidcPrivateJwk } from './keys.js';

/** The members of a private JWK that make it private (RFC 7518 §6.2.2, §6.3.2; RFC 8037 §2). */
const PRIVATE_MEMBERS = new Set(['d', 'p', 'q', 'dp', 'dq', 'qi', 'oth']);

function publicKeySet(keys: readonly OidcPrivateJwk[]): JSONWebKeySet {
  return {
    keys: keys.map((key) => Object.fromEntries(Object.entries(key).filter(([member]) => !PRIVATE_MEMBERS.has(member))) as JWK),
  };
}

interface ErrorBody {
  readonly error?: unknown;
}

export interface AccessTokenRevocationOptions {
  readonly issuer: string;
  readonly keys: readonly OidcPrivateJwk[];
  readonly store: Pick<OidcStore, 'revokeOidcAccessToken'>;
  readonly now: () => number;
  /** The revocation endpoint's path. */
  readonly path: string;
}

/** Makes the revocation endpoint take the provider's JWT access tokens (registered after the endpoint's other middleware). */
export function revokeJwtAccessTokens(provider: Provider, options: AccessTokenRevocationOptions): void {
  const keys = createLocalJWKSet(publicKeySet(options.keys));
  provider.use(async (ctx, next) => {
    await next();
    const oidc = (ctx as Partial<KoaContextWithOIDC>).oidc;
    if (ctx.path !== options.path || ctx.status !== 400 || (ctx.body as ErrorBody | undefined)?.error !== 'unsupported_token_type') return;
    // Set once the library authenticated the client, which it does before it looks at the token.
    const client = oidc?.client;
    const token = oidc?.params?.token;
    if (client === undefined || typeof token !== 'string') return;
    let claims: Record<string, unknown>;
    try {
      ({ payload: claims } = await jwtVerify(token, keys, {
        issuer: options.issuer,
        typ: 'at+jwt',
        algorithms: [...OIDC_ALGORITHMS],
        currentDate: new Date(options.now()),
      }));
    } catch {
      // Not a token of this provider, or expired: RFC 7009 §2.2 answers 200 all the same.
      answerRevoked(ctx);
      return;
    }
    const { jti, exp, client_id: owner } = claims;
    if (owner !== client.clientId) {
      // As for the library's own tokens (src/features/oidc/provider.ts, revocation.allowedPolicy): a public client learns nothing.
      if (client.clientAuthMethod === 'none') answerRevoked(ctx);
      else ctx.body = { error: 'invalid_request', error_description: 'client is not authorized to revoke the presented token' };
      return;
    }
    if (typeof jti === 'string' && typeof exp === 'number') await options.store.revokeOidcAccessToken(jti, exp * 1000, options.now());
    answerRevoked(ctx);
  });
}

function answerRevoked(ctx: { status: number; body: unknown }): void {
  ctx.status = 200;
  ctx.body = '';
}
