/**
 * External identity providers (docs/api.md "External identity providers",
 * docs/protocol.md §6 "Providers"): the domain side of
 * `GET /api/auth/providers`, `/api/auth/<provider>/start` and `/callback`.
 *
 * `start` builds the authorization request (code flow, PKCE S256, `state`,
 * and `nonce` for OpenID providers) and seals what the callback needs into a
 * ten-minute cookie value (./oauth-state.ts). `callback` opens that cookie,
 * matches `state`, consumes the state once, exchanges the code, checks the ID
 * token, and answers who the provider says the user is. Mapping that subject
 * to an account (`<provider>:<sub>`, docs/protocol.md §2) and setting `oc_session`
 * are the route's job. Every callback failure is a {@link ProviderError}
 * whose code the route puts in `/signin?oauth_error=<code>`.
 *
 * No framework, no environment: configuration, secret, clock and fetch are
 * parameters (docs/architecture.md).
 */
import { calculatePKCECodeChallenge, randomNonce, randomPKCECodeVerifier, randomState } from 'openid-client';
import type { OAuthProviderConfig } from '../../platform/config.js';
import { randomHex, timingSafeEqualString } from '../../platform/crypto.js';
import { OcError } from '../../platform/errors.js';
import { ProviderError } from './oauth-errors.js';
import { GITHUB_API_BASE, GITHUB_AUTH_BASE, GitHubProvider } from './oauth-github.js';
import { OidcProvider, isLoopbackUrl, type ProviderProfile } from './oauth-oidc.js';
import { checkReturnTo, safeReturnTo } from '../../identity/signin/index.js';
import type { ProviderSignIn } from '../../identity/account/index.js';
import { ConsumedStates, OAUTH_STATE_COOKIE_NAME, OAUTH_STATE_TTL_SECONDS, deriveStateKey, openState, sealState } from './oauth-state.js';

export { PROVIDER_ERROR_CODES, ProviderError, isProviderError, type ProviderErrorCode } from './oauth-errors.js';
export { OAUTH_STATE_COOKIE_NAME, OAUTH_STATE_TTL_SECONDS } from './oauth-state.js';
export { RETURN_TO_DETAIL, checkReturnTo, withTabAdoptMarker } from '../../identity/signin/index.js';

/** Outbound calls to a provider give up after this long (discovery, token, userinfo, keys). */
const DEFAULT_PROVIDER_TIMEOUT_SECONDS = 10;

/** `OC_SERVER_SECRET` is 32+ bytes (docs/protocol.md §1). */
const MIN_SECRET_BYTES = 32;
const PROVIDER_ID = /^[a-z0-9][a-z0-9-]{0,62}$/;
const KNOWN_LABELS: Readonly<Record<string, string>> = { github: 'GitHub', google: 'Google' };

export interface ProviderRegistryOptions {
  readonly providers: readonly OAuthProviderConfig[];
  /** `PUBLIC_URL`; the redirect URI is `${publicUrl}/api/auth/<id>/callback`. */
  readonly publicUrl: string;
  /** `OC_SERVER_SECRET`; keys the state cookie. */
  readonly secret: Uint8Array;
  readonly now: () => Date;
  readonly fetch?: typeof fetch;
  /** For the test fake; default https://github.com. */
  readonly githubAuthBase?: string;
  /** For the test fake; default https://api.github.com. */
  readonly githubApiBase?: string;
  /**
   * Whether a `return_to` URL may be redirected to. It is given the URL's
   * origin (`https://app.example.com`); the route answers with the family
   * origin rule (`FAMILY_ORIGINS`, `originMatches`).
   */
  readonly isAllowedReturnTo: (url: string) => boolean;
  /**
   * Atomically records `stateId` as used; false when it already was. Pass the
   * shared used-nonce store so a replayed cookie is refused by every instance
   * (docs/protocol.md §5 uses the same table for challenge nonces). `stateId` is
   * 32 lowercase hex.
   */
  readonly consumeOnce?: (stateId: string, expiresAt: Date) => Promise<boolean>;
  /** Default {@link DEFAULT_PROVIDER_TIMEOUT_SECONDS}. */
  readonly timeoutSeconds?: number;
}

interface ProviderListing {
  readonly id: string;
  readonly label: string;
}

export interface StartOptions {
  /** A path (`/…`) or a family URL; default `/`. */
  readonly returnTo?: string | undefined;
  /** `add=1`: keep the browser's roster (docs/api.md "States and transitions"). */
  readonly add?: boolean | undefined;
}

interface StateCookie {
  /** `oc_oauth`; set with Path=/api/auth, HttpOnly, Secure, SameSite=Lax. */
  readonly name: string;
  readonly value: string;
  readonly maxAgeSeconds: number;
}

interface StartResult {
  /** The provider's consent screen; answer 302 to it. */
  readonly redirectUrl: string;
  readonly stateCookie: StateCookie;
}

interface CallbackInput {
  /** The callback's query string as received. */
  readonly query: URLSearchParams | Readonly<Record<string, string | undefined>>;
  /** The `oc_oauth` cookie value, if the browser sent one. */
  readonly stateCookie: string | undefined;
}

export interface ProviderRegistry {
  /** The configured providers, for `GET /api/auth/providers` (`{providers: [{id, label}]}`). */
  list(): ProviderListing[];
  has(id: string): boolean;
  /** Throws `OcError('unknown_provider')`, `OcError('bad_request')` (return_to), or `ProviderError('provider_unavailable')`. */
  start(id: string, options?: StartOptions): Promise<StartResult>;
  /** Throws {@link ProviderError}; the route clears the state cookie either way. */
  callback(id: string, input: CallbackInput): Promise<ProviderSignIn>;
}

type Provider = { kind: 'oidc'; client: OidcProvider } | { kind: 'github'; client: GitHubProvider };

/** `GitHub`, `Google`, else the id title-cased (`my-corp` → `My Corp`). */
function providerLabel(id: string): string {
  return (
    KNOWN_LABELS[id] ??
    id
      .split(/[-_]+/)
      .filter((word) => word !== '')
      .map((word) => word[0]!.toUpperCase() + word.slice(1))
      .join(' ')
  );
}

export function createProviderRegistry(options: ProviderRegistryOptions): ProviderRegistry {
  if (!(options.secret instanceof Uint8Array) || options.secret.length < MIN_SECRET_BYTES) {
    throw new TypeError(`providers: secret must hold at least ${MIN_SECRET_BYTES} bytes`);
  }
  const publicUrl = options.publicUrl.replace(/\/+$/, '');
  try {
    new URL(publicUrl);
  } catch {
    throw new TypeError('providers: publicUrl is not a URL');
  }
  const fetchImplementation = options.fetch ?? globalThis.fetch;
  const timeoutSeconds = options.timeoutSeconds ?? DEFAULT_PROVIDER_TIMEOUT_SECONDS;
  const githubAuthBase = checkedBase(options.githubAuthBase ?? GITHUB_AUTH_BASE, 'githubAuthBase');
  const githubApiBase = checkedBase(options.githubApiBase ?? GITHUB_API_BASE, 'githubApiBase');
  const key = deriveStateKey(options.secret);
  const consumed = new ConsumedStates();

  const providers = new Map<string, Provider>();
  for (const config of options.providers) {
    if (!PROVIDER_ID.test(config.id)) throw new TypeError(`providers: id "${config.id}" must be lowercase letters, digits and -`);
    if (providers.has(config.id)) throw new TypeError(`providers: "${config.id}" is configured twice`);
    if (config.id === 'github') {
      providers.set(config.id, {
        kind: 'github',
        client: new GitHubProvider({
          clientId: config.clientId,
          clientSecret: config.clientSecret,
          authBase: githubAuthBase,
          apiBase: githubApiBase,
          fetch: fetchImplementation,
          timeoutSeconds,
        }),
      });
      continue;
    }
    // docs/protocol.md §1: google has a known issuer; any other name needs one.
    const issuer = config.issuer ?? (config.id === 'google' ? 'https://accounts.google.com' : undefined);
    if (issuer === undefined) throw new TypeError(`providers: "${config.id}" needs an issuer`);
    providers.set(config.id, {
      kind: 'oidc',
      client: new OidcProvider({
        id: config.id,
        issuer,
        clientId: config.clientId,
        clientSecret: config.clientSecret,
        fetch: fetchImplementation,
        timeoutSeconds,
      }),
    });
  }

  const redirectUri = (id: string): string => `${publicUrl}/api/auth/${id}/callback`;

  return {
    list() {
      return [...providers.keys()].map((id) => ({ id, label: providerLabel(id) }));
    },

    has(id) {
      return providers.has(id);
    },

    async start(id, startOptions = {}) {
      const provider = providers.get(id);
      if (provider === undefined) throw new OcError('unknown_provider');
      const returnTo =
        startOptions.returnTo === undefined || startOptions.returnTo === ''
          ? '/'
          : checkReturnTo(startOptions.returnTo, publicUrl, options.isAllowedReturnTo);
      const now = options.now();
      // All from the CSPRNG (openid-client draws them with crypto.getRandomValues).
      const state = randomState();
      const codeVerifier = randomPKCECodeVerifier();
      const codeChallenge = await calculatePKCECodeChallenge(codeVerifier);
      let nonce: string | undefined;
      let redirectUrl: string;
      if (provider.kind === 'oidc') {
        // OIDC Core §3.1.2.1: binds the ID token to this browser's request.
        nonce = randomNonce();
        redirectUrl = await provider.client.authorizationUrl({ redirectUri: redirectUri(id), state, nonce, codeChallenge, now });
      } else {
        redirectUrl = provider.client.authorizationUrl({ redirectUri: redirectUri(id), state, codeChallenge });
      }

      const value = sealState(key, {
        stateId: randomHex(16),
        provider: id,
        state,
        nonce,
        codeVerifier,
        returnTo,
        add: startOptions.add === true,
        expiresAt: now.getTime() + OAUTH_STATE_TTL_SECONDS * 1000,
      });
      return {
        redirectUrl,
        stateCookie: { name: OAUTH_STATE_COOKIE_NAME, value, maxAgeSeconds: OAUTH_STATE_TTL_SECONDS },
      };
    },

    async callback(id, input) {
      const provider = providers.get(id);
      if (provider === undefined) throw new ProviderError('unknown_provider');
      const query = toSearchParams(input.query);
      const now = options.now();

      // RFC 6749 §10.12: the response must belong to a request this browser made.
      const sealed = openState(key, input.stateCookie);
      if (sealed === undefined) throw new ProviderError('state_mismatch', 'state cookie missing or unreadable');
      if (now.getTime() >= sealed.expiresAt) throw new ProviderError('state_mismatch', 'state cookie expired');
      if (sealed.provider !== id) throw new ProviderError('state_mismatch', 'state cookie is for another provider');
      const returnedState = query.get('state');
      if (returnedState === null || !timingSafeEqualString(returnedState, sealed.state)) {
        throw new ProviderError('state_mismatch', 'state differs from the one sent');
      }
      // Single use, before anything else can fail: a replayed cookie and
      // query must not get a second exchange, even of a spent code.
      if (!consumed.consume(sealed.stateId, sealed.expiresAt, now.getTime())) {
        throw new ProviderError('state_mismatch', 'state already used');
      }
      if (options.consumeOnce !== undefined && !(await options.consumeOnce(sealed.stateId, new Date(sealed.expiresAt)))) {
        throw new ProviderError('state_mismatch', 'state already used');
      }

      // RFC 6749 §4.1.2.1: the provider reports refusals in `error`.
      const error = query.get('error');
      if (error !== null) {
        if (error === 'access_denied') throw new ProviderError('access_denied');
        throw new ProviderError('provider_error', /^[a-z_]{1,64}$/.test(error) ? `provider said ${error}` : 'provider sent an error');
      }
      const code = query.get('code');
      if (code === null || code === '') throw new ProviderError('provider_error', 'no code in the callback');

      let profile: ProviderProfile;
      if (provider.kind === 'oidc') {
        if (sealed.nonce === undefined) throw new ProviderError('state_mismatch', 'state cookie has no nonce');
        profile = await provider.client.complete({
          redirectUri: redirectUri(id),
          query,
          state: sealed.state,
          nonce: sealed.nonce,
          codeVerifier: sealed.codeVerifier,
          now,
        });
      } else {
        profile = await provider.client.complete({ redirectUri: redirectUri(id), code, codeVerifier: sealed.codeVerifier });
      }

      return {
        provider: id,
        subject: profile.subject,
        ...(profile.email === undefined ? {} : { email: profile.email, emailVerified: profile.emailVerified === true }),
        ...(profile.name === undefined ? {} : { name: profile.name }),
        // Checked again: the family may have changed within the ten minutes.
        returnTo: safeReturnTo(sealed.returnTo, publicUrl, options.isAllowedReturnTo) ?? '/',
        add: sealed.add,
      };
    },
  };
}

function toSearchParams(query: CallbackInput['query']): URLSearchParams {
  if (query instanceof URLSearchParams) return query;
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries(query)) {
    if (typeof value === 'string') params.append(key, value);
  }
  return params;
}

/** GitHub bases must be https, except on loopback (the test fake). */
function checkedBase(base: string, name: string): string {
  let url: URL;
  try {
    url = new URL(base);
  } catch {
    throw new TypeError(`providers: ${name} is not a URL`);
  }
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && isLoopbackUrl(url))) {
    throw new TypeError(`providers: ${name} must use https (http only on loopback)`);
  }
  return base.replace(/\/+$/, '');
}

declare module '../../platform/services.js' {
  interface FeatureServices {
    /** Configured identity providers (docs/protocol.md §6). */
    readonly providers: ProviderRegistry;
  }
}
