/**
 * One OpenID Connect provider (Google, or any issuer configured with
 * `OAUTH_<NAME>_ISSUER`, docs/protocol.md §1), driven through `openid-client`:
 * discovery (OIDC Discovery §4), the authorization code flow with PKCE
 * (OIDC Core §3.1, RFC 7636), and the ID token checks of OIDC Core §3.1.3.7
 * (issuer, audience, nonce, expiry, signature), which the library performs.
 *
 * openid-client only allows https. Plain http is allowed for an issuer on the
 * loopback interface alone, so tests can run a real provider on 127.0.0.1
 * while a deployment cannot be pointed at an unprotected issuer.
 */
import { isJsonObject } from '../../platform/json.js';
import {
  ClientError,
  ClientSecretBasic,
  ClientSecretPost,
  Configuration,
  ResponseBodyError,
  allowInsecureRequests,
  authorizationCodeGrant,
  buildAuthorizationUrl,
  clockSkew,
  customFetch,
  discovery,
  enableNonRepudiationChecks,
  fetchUserInfo,
  getJwksCache,
  setJwksCache,
  type ClientAuth,
  type CustomFetch,
  type ExportedJWKSCache,
  type IDToken,
  type ServerMetadata,
  type UserInfoResponse,
} from 'openid-client';
import { ProviderError, type ProviderErrorCode } from './oauth-errors.js';

/** What a provider says about the user, before the caller maps it to an account. */
export interface ProviderProfile {
  readonly subject: string;
  readonly email?: string;
  readonly emailVerified?: boolean;
  readonly name?: string;
}

export interface OidcProviderOptions {
  readonly id: string;
  readonly issuer: string;
  readonly clientId: string;
  readonly clientSecret: string;
  readonly fetch: typeof fetch;
  readonly timeoutSeconds: number;
}

const LOOPBACK_HOSTS = new Set(['127.0.0.1', 'localhost', '[::1]']);

/** True for http(s) URLs on 127.0.0.1, localhost or ::1. */
export function isLoopbackUrl(url: URL): boolean {
  return LOOPBACK_HOSTS.has(url.hostname);
}

/** Longest piece of library error text kept in a {@link ProviderError} detail. */
const MAX_DETAIL_LENGTH = 200;

export class OidcProvider {
  readonly id: string;
  readonly #issuer: URL;
  readonly #clientId: string;
  readonly #clientSecret: string;
  readonly #fetch: typeof fetch;
  readonly #timeoutSeconds: number;
  /** http is allowed only when the issuer itself is on loopback (see file comment). */
  readonly #allowHttp: boolean;
  /** One discovery in flight or done; dropped on failure so the next sign-in tries again. */
  #metadata: Promise<ServerMetadata> | undefined;
  /** The provider's keys, kept across the per-sign-in configurations. */
  #jwksCache: ExportedJWKSCache | undefined;

  constructor(options: OidcProviderOptions) {
    let issuer: URL;
    try {
      issuer = new URL(options.issuer);
    } catch {
      throw new TypeError(`providers: ${options.id} issuer is not a URL`);
    }
    const loopback = isLoopbackUrl(issuer);
    if (issuer.protocol !== 'https:' && !(issuer.protocol === 'http:' && loopback)) {
      throw new TypeError(`providers: ${options.id} issuer must use https (http only on loopback)`);
    }
    this.id = options.id;
    this.#issuer = issuer;
    this.#clientId = options.clientId;
    this.#clientSecret = options.clientSecret;
    this.#fetch = options.fetch;
    this.#timeoutSeconds = options.timeoutSeconds;
    this.#allowHttp = issuer.protocol === 'http:';
  }

  /** The provider's authorization endpoint URL with the request parameters of OIDC Core §3.1.2.1. */
  async authorizationUrl(input: { redirectUri: string; state: string; nonce: string; codeChallenge: string; now: Date }): Promise<string> {
    const config = this.#configuration(await this.#discover(), input.now, this.#adapter());
    return buildAuthorizationUrl(config, {
      redirect_uri: input.redirectUri,
      scope: 'openid email profile',
      state: input.state,
      nonce: input.nonce,
      code_challenge: input.codeChallenge,
      code_challenge_method: 'S256',
    }).href;
  }

  /**
   * Exchanges the code and validates the ID token. `query` is the whole
   * authorization response, so that RFC 9207's `iss` parameter (a mix-up
   * defence) is checked too. The caller has already matched `state`.
   */
  async complete(input: {
    redirectUri: string;
    query: URLSearchParams;
    state: string;
    nonce: string;
    codeVerifier: string;
    now: Date;
  }): Promise<ProviderProfile> {
    const metadata = await this.#discover();
    const phase = { tokenRequested: false, tokenAccepted: false };
    const config = this.#configuration(metadata, input.now, this.#trackingAdapter(metadata, phase));

    // The redirect_uri sent to the token endpoint is derived from this URL, so
    // it is rebuilt from the one used at start, not taken from the request.
    const currentUrl = new URL(input.redirectUri);
    for (const [key, value] of input.query) currentUrl.searchParams.append(key, value);

    let claims: IDToken | undefined;
    let accessToken: string;
    try {
      const tokens = await authorizationCodeGrant(config, currentUrl, {
        pkceCodeVerifier: input.codeVerifier,
        expectedState: input.state,
        expectedNonce: input.nonce,
      });
      claims = tokens.claims();
      accessToken = tokens.access_token;
    } catch (error) {
      throw this.#grantFailure(error, phase);
    } finally {
      this.#jwksCache = getJwksCache(config) ?? this.#jwksCache;
    }
    if (claims === undefined || typeof claims.sub !== 'string' || claims.sub === '') {
      throw new ProviderError('id_token_invalid', `${this.id}: no subject in the ID token`);
    }

    let email = stringClaim(claims.email);
    let emailVerified = booleanClaim(claims.email_verified);
    let name = stringClaim(claims.name);
    // Providers may keep profile claims out of the ID token and serve them
    // from userinfo only (OIDC Core §5.4 leaves the choice to them). Asked
    // only when the e-mail is missing: a name alone is not worth a failure.
    if (email === undefined && typeof metadata.userinfo_endpoint === 'string') {
      let info: UserInfoResponse;
      try {
        // The expected subject makes openid-client refuse a userinfo answer
        // about somebody else (OIDC Core §5.3.4).
        info = await fetchUserInfo(config, accessToken, claims.sub);
      } catch (error) {
        throw new ProviderError('userinfo_failed', `${this.id}: ${describeFailure(error)}`);
      }
      email = stringClaim(info.email);
      emailVerified = booleanClaim(info.email_verified);
      name ??= stringClaim(info.name);
    }
    return {
      subject: claims.sub,
      ...(email === undefined ? {} : { email, emailVerified: emailVerified === true }),
      ...(name === undefined ? {} : { name }),
    };
  }

  #discover(): Promise<ServerMetadata> {
    if (this.#metadata === undefined) {
      const pending = discovery(this.#issuer, this.#clientId, { client_secret: this.#clientSecret }, undefined, {
        execute: this.#allowHttp ? [allowInsecureRequests] : [],
        timeout: this.#timeoutSeconds,
        [customFetch]: this.#adapter(),
      }).then(
        (config) => JSON.parse(JSON.stringify(config.serverMetadata())) as ServerMetadata,
        (error: unknown) => {
          throw new ProviderError('provider_unavailable', `${this.id}: discovery failed: ${describeFailure(error)}`);
        },
      );
      this.#metadata = pending;
      // Forget a failed discovery so the next sign-in retries it instead of
      // failing until restart.
      pending.catch(() => {
        if (this.#metadata === pending) this.#metadata = undefined;
      });
    }
    return this.#metadata;
  }

  /**
   * A fresh configuration per sign-in over the cached metadata, so the ID
   * token's time checks use the injected clock: openid-client reads the
   * clock skew from the client metadata, which is fixed per configuration.
   */
  #configuration(metadata: ServerMetadata, now: Date, fetchAdapter: CustomFetch): Configuration {
    const skewSeconds = Math.round((now.getTime() - Date.now()) / 1000);
    const config = new Configuration(
      metadata,
      this.#clientId,
      { client_secret: this.#clientSecret, [clockSkew]: skewSeconds },
      clientAuthentication(metadata, this.#clientSecret),
    );
    if (this.#allowHttp) allowInsecureRequests(config);
    config.timeout = this.#timeoutSeconds;
    config[customFetch] = fetchAdapter;
    // An ID token from the token endpoint may be trusted on TLS alone (OIDC
    // Core §3.1.3.7 item 6), so openid-client skips its signature by default.
    // Checking it too costs one cached JWKS fetch and also covers the http
    // loopback case, where there is no TLS to lean on.
    enableNonRepudiationChecks(config);
    if (this.#jwksCache !== undefined) setJwksCache(config, this.#jwksCache);
    return config;
  }

  #adapter(): CustomFetch {
    const fetchImplementation = this.#fetch;
    return (url, options) => fetchImplementation(url, options as RequestInit);
  }

  /**
   * Notes how far the code exchange got, so a failure can be told apart
   * without reading library message text: nothing sent yet (the
   * authorization response itself was refused), the token endpoint did not
   * answer with tokens, or it did and what follows (ID token checks) failed.
   */
  #trackingAdapter(metadata: ServerMetadata, phase: { tokenRequested: boolean; tokenAccepted: boolean }): CustomFetch {
    const fetchImplementation = this.#fetch;
    const tokenEndpoint = typeof metadata.token_endpoint === 'string' ? new URL(metadata.token_endpoint).href : undefined;
    return async (url, options) => {
      const isTokenRequest = options.method === 'POST' && tokenEndpoint !== undefined && new URL(url).href === tokenEndpoint;
      if (isTokenRequest) phase.tokenRequested = true;
      const response = await fetchImplementation(url, options as RequestInit);
      if (isTokenRequest && response.ok) {
        try {
          const body: unknown = await response.clone().json();
          if (isJsonObject(body) && typeof body.access_token === 'string') {
            phase.tokenAccepted = true;
          }
        } catch {
          // Not JSON: openid-client reports it, and it counts as a failed exchange.
        }
      }
      return response;
    };
  }

  #grantFailure(error: unknown, phase: { tokenRequested: boolean; tokenAccepted: boolean }): unknown {
    if (error instanceof ProviderError) return error;
    // openid-client's own argument errors are programming mistakes, not provider behaviour.
    const code = (error as { code?: unknown } | null)?.code;
    if (typeof code === 'string' && code.startsWith('ERR_INVALID_ARG')) return error;
    let mapped: ProviderErrorCode;
    if (!phase.tokenRequested) mapped = 'provider_error';
    else if (!phase.tokenAccepted) mapped = 'token_exchange_failed';
    else mapped = 'id_token_invalid';
    return new ProviderError(mapped, `${this.id}: ${describeFailure(error)}`);
  }
}

/**
 * client_secret_basic is the default of OIDC Registration §2 and what most
 * providers register clients with; client_secret_post only when the provider
 * offers nothing else.
 */
function clientAuthentication(metadata: ServerMetadata, clientSecret: string): ClientAuth {
  const methods = metadata.token_endpoint_auth_methods_supported;
  if (Array.isArray(methods) && !methods.includes('client_secret_basic') && methods.includes('client_secret_post')) {
    return ClientSecretPost(clientSecret);
  }
  return ClientSecretBasic(clientSecret);
}

function stringClaim(value: unknown): string | undefined {
  return typeof value === 'string' && value !== '' ? value : undefined;
}

/** Some providers send `"true"` as a string; anything else is not a yes. */
function booleanClaim(value: unknown): boolean | undefined {
  if (value === undefined) return undefined;
  return value === true || value === 'true';
}

/**
 * Library error code, OAuth error code and message, trimmed. The message
 * texts of openid-client name the failed check, never the values; the
 * `cause` (which holds claims and bodies) is left out on purpose.
 */
function describeFailure(error: unknown): string {
  if (error instanceof ProviderError) return error.detail ?? error.code;
  const parts: string[] = [];
  if (error instanceof ResponseBodyError) parts.push(`${error.code} ${error.error}`);
  else if (error instanceof ClientError && error.code !== undefined) parts.push(error.code);
  if (error instanceof ClientError && error.cause instanceof Error) {
    // openid-client's own message is generic ("unexpected JWT claim value
    // encountered"); the wrapped one names the check ('unexpected JWT "aud"
    // (audience) claim value').
    parts.push(error.cause.message);
  } else if (error instanceof Error) {
    parts.push(error.message);
  } else {
    parts.push('unknown failure');
  }
  return parts.join(': ').slice(0, MAX_DETAIL_LENGTH);
}
