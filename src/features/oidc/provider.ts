/**
 * The OpenID provider (docs/protocol.md §8): `oidc-provider`, the OpenID
 * Foundation certified implementation for Node, configured for oc-host. It
 * runs the protocol (discovery, authorization with PKCE, tokens, refresh
 * rotation, userinfo, revocation, introspection, end-session); oc-host
 * supplies what only it knows:
 *
 * - who is signed in: the host session of the browser (`oc_session`), read
 *   through {@link HostSessionReader}; the provider's own session follows it
 *   (a login check asks again whenever the host session is gone or names
 *   another account), so signing out of the host signs out of the provider;
 * - the claims of an account ({@link ClaimSource});
 * - storage (src/features/oidc/adapter.ts), keys (src/features/oidc/keys.ts) and the hashed
 *   client secrets (src/features/oidc/clients.ts);
 * - the pages the library itself renders (an error, the end-session
 *   question and its answer, the device pages of RFC 8628), in the host's
 *   look and language ({@link OidcPages}).
 */
import { createHash, createHmac } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type {
  default as Provider,
  Client,
  Configuration,
  KoaContextWithOIDC,
  interactionPolicy as InteractionPolicy,
  Session,
} from 'oidc-provider';
import { escapeHtml } from '../../platform/i18n/index.js';
import { clientFacts } from '../../identity/session/index.js';
import type { AccountRecord } from '../../platform/storage/index.js';
import { grantReference } from './token-revocation-store.js';
import type { OidcLogoutStore } from './logout-store.js';
import type { OidcStore } from './store.js';
import { CONNECT_APP_POLICY, storageAdapter, type ApiKeyApp } from './adapter.js';
import {
  API_SCOPES_METADATA,
  apiScopesOf,
  CLIENT_AUTH_METHODS,
  clientMetadataProblem,
  clientSecretMatches,
  cspSourceOf,
  isHashedClientSecret,
  newClientId,
  newSecret,
  OWNER_APP_METADATA,
} from './clients.js';
import { OIDC_ALGORITHMS, type OidcPrivateJwk } from './keys.js';
import type { ResourceRegistry } from './resources.js';
import { revokeJwtAccessTokens } from './token-revocation.js';
import { ACR_BASIC, ACR_KEY, idTokenScopes, OIDC_CLAIMS, OIDC_SCOPES, type ClaimSource } from './claims.js';

/** The host session of a request, as the provider needs it. */
export interface HostSessionView {
  /** The account's `did:oc`: the provider's account id and the public `sub`. */
  readonly accountId: string;
  /** When the person last proved themselves in this session (the sign-in, or a later re-proof), ms. */
  readonly authTime: number;
  /** RFC 8176 methods of the session (docs/protocol.md §3 "How the person signed in"). */
  readonly amr: readonly string[];
  /** Whether a WebAuthn authenticator signed in this session (a passkey sign-in or a key step-up). */
  readonly usedKey: boolean;
  /** Whether the account has a security key or passkey it could step up with (asked only when it matters). */
  hasKey(): Promise<boolean>;
  /** Whether a `login_hint` (as {@link loginHintOf} reads it) names this account. */
  matches(hint: string): Promise<boolean>;
  /** The host session row's jti: the clients signed in through it are logged out when it ends (docs/protocol.md §8 "Logout"). */
  readonly sessionJti: string;
  /** The jtis of the live host sessions of this browser's roster, this one included (docs/protocol.md §8 "Logout"). */
  rosterSessionJtis(): Promise<readonly string[]>;
}

/** Reads the host session of a raw request from its `oc_session` cookies; null when it has none. */
export type HostSessionReader = (request: IncomingMessage) => Promise<HostSessionView | null>;

/**
 * Ends, in the browser of `request`, the host session of the account
 * `accountId` (a `did:oc`), leaving the roster's other accounts signed in;
 * answers the Set-Cookie lines the browser needs (docs/protocol.md §8 "Logout").
 */
export type HostSessionEnder = (request: IncomingMessage, accountId: string) => Promise<string[]>;

/** What the provider reports for back-channel logout (docs/protocol.md §8 "Logout"), stored by the service. */
export interface LogoutEvents {
  /** The provider signed `clientId` in through the host session `sessionJti`. */
  signedIn(link: {
    readonly sessionJti: string;
    readonly accountId: string;
    readonly clientId: string;
    readonly sid: string;
    readonly opSessionUid: string;
    readonly backchannel: boolean;
  }): Promise<void>;
  /** The library decided to log `clientId` out of its session `sid` (its own end-session): into the outbox. */
  logout(clientId: string, accountId: string, sid: string): Promise<void>;
}

/** What the sign-out question is about. */
export interface LogoutQuestion {
  /** The app's name, when it has one. */
  readonly clientName: string | undefined;
  /** Whether the request named the app (an `id_token_hint` or a `client_id`): only then can the app alone be signed out. */
  readonly hasClient: boolean;
  /** The `did:oc` of the account signed in to the provider in this browser, when one is. */
  readonly accountId: string | undefined;
}

/**
 * What went wrong with a code typed at the verification page (docs/protocol.md
 * §8 "Devices"): `wrong` (no such code, or none typed), `expired`, `used`
 * (approved or denied already), `denied` (the person just said no),
 * `failed` (anything else, such as a form sent twice).
 */
export type DeviceCodeProblem = 'wrong' | 'expired' | 'used' | 'denied' | 'failed';

/** The code entry of the verification page. */
interface DeviceEntry {
  /** Where the form posts (the verification URI). */
  readonly action: string;
  /** The library's anti-forgery value, which the form carries. */
  readonly xsrf: string;
  /** What the person typed, shown again after a problem. */
  readonly code?: string | undefined;
  readonly problem?: DeviceCodeProblem | undefined;
}

/** What the device was when it asked (docs/protocol.md §8 "Devices"): coarse, as a session row keeps it. */
interface DeviceFacts {
  /** "Chrome 120 on Linux" when the User-Agent says so, else the first characters of the User-Agent, or null. */
  readonly device: string | null;
  /** The device's network, /24 or /48, or null. */
  readonly network: string | null;
}

/** The question "Is this your device?" of the verification page. */
export interface DeviceQuestion {
  readonly action: string;
  readonly xsrf: string;
  /** The code as the device shows it (`BCDF-GHJK`). */
  readonly userCode: string;
  readonly clientName: string;
  readonly logoUri: string | undefined;
  /** The host of the app's `client_uri`, when it registered one. */
  readonly domain: string | undefined;
  readonly device: DeviceFacts;
  /** The scopes the device asks for. */
  readonly scopes: readonly string[];
}

/** The pages the library renders, drawn by the HTTP layer in the host's look; each answers a whole HTML document. */
export interface OidcPages {
  /** An error the person sees (an authorization request that cannot be answered to the app). */
  error(request: IncomingMessage, error: { readonly code: string; readonly description: string }): string;
  /**
   * "Sign out of this app?": `form` is the library's hidden form the page's
   * buttons submit; one answers `logout=host` to end the host session of
   * `accountId` in this browser too (docs/protocol.md §8 "Logout").
   */
  logout(request: IncomingMessage, form: string, question: LogoutQuestion): Promise<string>;
  /** After an end-session without a return address. */
  loggedOut(request: IncomingMessage, clientName: string | undefined): string;
  /** The verification page's code entry, after a problem when there was one (docs/protocol.md §8 "Devices"). */
  deviceEntry(request: IncomingMessage, entry: DeviceEntry): string;
  /** The verification page's question about the device a code names, and its policy (the app's logo may be shown). */
  deviceQuestion(request: IncomingMessage, question: DeviceQuestion): { readonly html: string; readonly csp: string };
  /** The device has its answer: the person may go back to it. */
  deviceDone(request: IncomingMessage, clientName: string | undefined): string;
  /** The Content-Security-Policy of these pages. */
  readonly csp: string;
  /** The policy of a page whose form's answer redirects to `target` (browsers apply `form-action` to that redirect). */
  cspLeadingTo(target: string | undefined): string;
}

export interface OidcProviderOptions {
  /** `PUBLIC_URL`: the issuer identifier. */
  readonly issuer: string;
  /** The links of host sessions to app sessions find the provider sessions set aside (docs/protocol.md §8 "Logout"). */
  readonly store: OidcStore & Pick<OidcLogoutStore, 'listOidcSessionLinks'>;
  readonly keys: readonly OidcPrivateJwk[];
  /** Keys the provider's cookies are signed with (derived from the server secret). */
  readonly cookieKeys: readonly string[];
  /** Derives pairwise subject identifiers. */
  readonly pairwiseSecret: Uint8Array;
  readonly claims: ClaimSource;
  readonly hostSession: HostSessionReader;
  readonly endHostSession: HostSessionEnder;
  readonly logouts: LogoutEvents;
  readonly pages: OidcPages;
  /** The Connect app of an API key (the initial access token of dynamic registration), or null. */
  readonly appOfApiKey?: ((apiKey: string) => Promise<ApiKeyApp | null>) | undefined;
  /**
   * The account `sub` (a `did:oc`) names, when it may act
   * (src/identity/session/standing.ts), else null: for one that may not, nothing is
   * issued, refreshed or answered (docs/protocol.md §2 "Disabling and deleting").
   */
  readonly standingAccount: (sub: string) => Promise<AccountRecord | null>;
  /** The APIs tokens can be asked for (docs/protocol.md §8 "APIs"). */
  readonly resources: Pick<ResourceRegistry, 'find'>;
  /** Whether the owner of a Connect app may act: the clients of an app whose owner may not are unknown meanwhile. */
  readonly appMayAct?: ((appId: string) => Promise<boolean>) | undefined;
  /** Why a `backchannel_logout_uri` breaks the endpoint rules, or null (docs/protocol.md §8 "Logout"). */
  readonly backchannelUriProblem?: ((uri: string) => string | null) | undefined;
  /** PUBLIC_URL is http on a loopback host: plain-http redirect URIs are registered (docs/protocol.md §8 "Clients"). */
  readonly development: boolean;
  /** Seconds a device waits between polls of the token endpoint (RFC 8628 `interval`; docs/protocol.md §8 "Devices"). */
  readonly devicePollSeconds: number;
  /**
   * Counts a poll of the device code whose key is `key` (a hash of the code);
   * true when it came sooner than the interval after the one before, which is
   * answered `slow_down`. Absent, polls are not timed.
   */
  readonly devicePolledTooSoon?: ((key: string) => Promise<boolean>) | undefined;
  readonly now: () => number;
}

/** The provider's endpoints, under the issuer; discovery lists them (docs/api.md "OpenID provider"). */
export const OIDC_ROUTES = Object.freeze({
  authorization: '/oidc/auth',
  token: '/oidc/token',
  userinfo: '/oidc/userinfo',
  jwks: '/oidc/jwks',
  revocation: '/oidc/token/revocation',
  introspection: '/oidc/token/introspection',
  end_session: '/oidc/session/end',
  registration: '/oidc/register',
  pushed_authorization_request: '/oidc/request',
  // RFC 8628: the device asks here; the person goes to the verification URI (docs/protocol.md §8 "Devices").
  device_authorization: '/oidc/device/auth',
  code_verification: '/oidc/device',
});

/** The library's routes a browser app calls with its client's tokens, cross-origin from its redirect URIs' origins. */
const BROWSER_ROUTES: ReadonlySet<string> = new Set(['token', 'userinfo', 'revocation']);

/** Where the provider sends the browser to sign in and consent (src/features/oidc/routes.ts). */
export const INTERACTION_PATH = '/oidc/interaction';

/** The provider's cookies, named apart from the host's own. */
const COOKIE_NAMES = Object.freeze({ session: 'oc_op_session', interaction: 'oc_op_interaction', resume: 'oc_op_resume' });

const DAY = 24 * 60 * 60;

/** How long a device code and its user code live (RFC 8628 `expires_in`). */
export const DEVICE_CODE_SECONDS = 10 * 60;

/**
 * The user code (docs/protocol.md §8 "Devices"): eight letters of the
 * library's base-20 alphabet (consonants without look-alikes: no vowels, so
 * no words, and no I, O, 0 or 1), shown as `BCDF-GHJK`; typed in any case,
 * with or without the dash or spaces. 20^8 is about 2.6 × 10^10 codes.
 */
const USER_CODE = Object.freeze({ charset: 'base-20', mask: '****-****' } as const);

/**
 * The login check oc-host adds: the provider's session must stand on the
 * host session of this browser, for the same account. When the person
 * signed out of the host, or switched to another account, the provider asks
 * again (and the interaction picks up the host's current account).
 */
function hostSessionCheck(interactionPolicy: typeof InteractionPolicy, hostSession: HostSessionReader): InteractionPolicy.Check {
  return new interactionPolicy.Check('oc_host_session', 'the host session ended or changed account', 'login_required', async (ctx) => {
    const accountId = ctx.oidc.session?.accountId;
    if (accountId === undefined) return interactionPolicy.Check.REQUEST_PROMPT;
    const host = await hostSession(ctx.req);
    return host === null || host.accountId !== accountId
      ? interactionPolicy.Check.REQUEST_PROMPT
      : interactionPolicy.Check.NO_NEED_TO_PROMPT;
  });
}

/** The longest `login_hint` looked at; a longer one is ignored. */
const MAX_LOGIN_HINT_LENGTH = 256;

/** An authorization's `login_hint`, trimmed, or null when there is none or it is not a plausible identifier. */
export function loginHintOf(value: unknown): string | null {
  if (typeof value !== 'string') return null;
  const hint = value.trim();
  return hint === '' || hint.length > MAX_LOGIN_HINT_LENGTH || /\p{Cc}/u.test(hint) ? null : hint;
}

/**
 * The third check: an authorization whose `login_hint` names another account
 * than the one signed in asks again (the interaction sends the person to sign
 * that one in, once). The authorization that resumes from the interaction is
 * not asked again, whoever signed in there.
 */
function loginHintCheck(interactionPolicy: typeof InteractionPolicy, hostSession: HostSessionReader): InteractionPolicy.Check {
  return new interactionPolicy.Check('oc_login_hint', 'the app named another account', 'login_required', async (ctx) => {
    const hint = loginHintOf(ctx.oidc.params?.login_hint);
    if (hint === null || ctx.oidc.result?.login !== undefined) return interactionPolicy.Check.NO_NEED_TO_PROMPT;
    const host = await hostSession(ctx.req);
    return host !== null && !(await host.matches(hint))
      ? interactionPolicy.Check.REQUEST_PROMPT
      : interactionPolicy.Check.NO_NEED_TO_PROMPT;
  });
}

/**
 * Whether `acr_values` puts the key level first: the app prefers a security
 * key (docs/protocol.md §8 "How the person signed in"). Unlike an essential
 * `acr` claim this is a preference: an account without a key is signed in
 * at the basic level.
 */
export function prefersKey(acrValues: unknown): boolean {
  return typeof acrValues === 'string' && acrValues.split(' ').find((value) => value !== '') === ACR_KEY;
}

/**
 * The second check oc-host adds: an app that prefers a key gets one when the
 * account can give it. A provider session signed in at the basic level asks
 * again (the interaction then sends the person to the key step-up) when the
 * host session has used a key since or the account has one.
 */
function keyPreferenceCheck(interactionPolicy: typeof InteractionPolicy, hostSession: HostSessionReader): InteractionPolicy.Check {
  return new interactionPolicy.Check('oc_key_preferred', 'the app prefers a security key', 'login_required', async (ctx) => {
    if (!prefersKey(ctx.oidc.params?.acr_values) || ctx.oidc.session?.acr === ACR_KEY || ctx.oidc.result?.login !== undefined) {
      return interactionPolicy.Check.NO_NEED_TO_PROMPT;
    }
    const host = await hostSession(ctx.req);
    return host !== null && (host.usedKey || (await host.hasKey()))
      ? interactionPolicy.Check.REQUEST_PROMPT
      : interactionPolicy.Check.NO_NEED_TO_PROMPT;
  });
}

function interactionPolicyFor(interactionPolicy: typeof InteractionPolicy, hostSession: HostSessionReader): InteractionPolicy.Prompt[] {
  const policy = interactionPolicy.base();
  const login = policy.get('login');
  login?.checks.add(hostSessionCheck(interactionPolicy, hostSession), 0);
  login?.checks.add(loginHintCheck(interactionPolicy, hostSession));
  login?.checks.add(keyPreferenceCheck(interactionPolicy, hostSession));
  return [...policy];
}

/** The origin of a URL, or null when it does not parse. */
function originOf(url: string): string | null {
  try {
    return new URL(url).origin;
  } catch {
    return null;
  }
}

/**
 * The library, loaded on first use: on Node 20 (past its end of life) it
 * prints an "unsupported runtime" warning when loaded, which commands that
 * never use the provider should not print.
 */
export type OidcLibrary = typeof import('oidc-provider');

export async function loadOidcLibrary(): Promise<OidcLibrary> {
  return import('oidc-provider');
}

/**
 * The host session of a request, read once: the login checks and the
 * session watch each ask for it during one authorization, and each read
 * verifies the cookie's token and reads its session row.
 */
function oncePerRequest(read: HostSessionReader): HostSessionReader {
  const seen = new WeakMap<IncomingMessage, Promise<HostSessionView | null>>();
  return (request) => {
    let view = seen.get(request);
    if (view === undefined) {
      view = read(request);
      seen.set(request, view);
    }
    return view;
  };
}

/**
 * 403 `account_disabled`, the Connect API's answer to the key of an app
 * whose owner the operator holds, as an OAuth error of the registration
 * endpoint.
 */
function accountDisabled(library: OidcLibrary): Error {
  const error = new library.errors.CustomOIDCProviderError(
    'account_disabled',
    'the account that owns this app is disabled by the operator',
  );
  error.status = 403;
  error.statusCode = 403;
  return error;
}

/** Builds the provider. Cheap enough to rebuild when the published keys change (src/features/oidc/service.ts). */
export function createOidcProvider(library: OidcLibrary, options: OidcProviderOptions): Provider {
  const { interactionPolicy } = library;
  const { store, claims, pages, logouts } = options;
  const hostSession = oncePerRequest(options.hostSession);
  const subject = (accountId: string, client: Client) => subjectOf(options.pairwiseSecret, accountId, client);
  const signingAlgorithms = [...OIDC_ALGORITHMS];
  const configuration: Configuration = {
    adapter: storageAdapter({
      store,
      now: options.now,
      appOfApiKey: options.appOfApiKey,
      appMayAct: options.appMayAct,
      // The words the library uses for a second use it sees itself.
      usedTwice: (model) =>
        model === 'PushedAuthorizationRequest'
          ? new library.errors.InvalidRequestUri('request_uri is invalid, expired, or was already used')
          : new library.errors.InvalidGrant(model === 'RefreshToken' ? 'refresh token already used' : 'grant already used'),
    }),
    clients: [],
    jwks: { keys: options.keys.map((key) => ({ ...key })) },
    cookies: {
      names: COOKIE_NAMES,
      keys: [...options.cookieKeys],
      long: { httpOnly: true, sameSite: 'lax', signed: true },
      short: { httpOnly: true, sameSite: 'lax', signed: true },
    },
    routes: { ...OIDC_ROUTES },
    scopes: [...OIDC_SCOPES],
    claims: Object.fromEntries(Object.entries(OIDC_CLAIMS).map(([scope, names]) => [scope, names === null ? null : [...names]])),
    acrValues: [ACR_BASIC, ACR_KEY],
    subjectTypes: ['public', 'pairwise'],
    responseTypes: ['code'],
    clientAuthMethods: [...CLIENT_AUTH_METHODS, 'private_key_jwt'],
    allowOmittingSingleRegisteredRedirectUri: false,
    pkce: {
      // Public clients must use PKCE; confidential ones may (docs/protocol.md §8 "Flows").
      required: (_ctx, client) => client.clientAuthMethod === 'none',
    },
    enabledJWA: {
      idTokenSigningAlgValues: signingAlgorithms,
      userinfoSigningAlgValues: signingAlgorithms,
      introspectionSigningAlgValues: signingAlgorithms,
      authorizationSigningAlgValues: signingAlgorithms,
      requestObjectSigningAlgValues: signingAlgorithms,
      clientAuthSigningAlgValues: ['RS256', 'PS256', 'ES256', 'EdDSA'],
    },
    extraClientMetadata: {
      properties: [OWNER_APP_METADATA, API_SCOPES_METADATA],
      validator(_ctx, key, value) {
        if (key === OWNER_APP_METADATA && value !== undefined && typeof value !== 'string') {
          throw new library.errors.InvalidClientMetadata(`${OWNER_APP_METADATA} must be a string`);
        }
        if (
          key === API_SCOPES_METADATA &&
          value !== undefined &&
          !(Array.isArray(value) && value.every((scope) => typeof scope === 'string'))
        ) {
          throw new library.errors.InvalidClientMetadata(`${API_SCOPES_METADATA} must be an array of scopes`);
        }
      },
    },
    features: {
      devInteractions: { enabled: false },
      // RFC 7591 with a Connect app's API key as the initial access token
      // (docs/protocol.md §8 "Clients"); managed through the Connect API.
      registration: {
        enabled: true,
        initialAccessToken: true,
        // RFC 7592: the answer carries a registration access token, with which
        // the client reads, updates and deletes its own registration at
        // `registration_client_uri` (docs/protocol.md §8 "Clients").
        issueRegistrationAccessToken: true,
        idFactory: () => newClientId(),
        secretFactory: () => newSecret(),
        policies: {
          [CONNECT_APP_POLICY]: async (ctx, properties) => {
            // Which APIs a client may reach is the operator's to say (docs/protocol.md §8 "APIs").
            delete properties[API_SCOPES_METADATA];
            const registering = ctx.oidc.entities.InitialAccessToken;
            if (registering !== undefined) {
              const app = options.appOfApiKey === undefined ? null : await options.appOfApiKey(registering.jti);
              if (app === null) throw new library.errors.InvalidToken('the API key is wrong, was rotated, or its app was deleted');
              // The key of a held owner is known, and refused as the Connect API refuses it (docs/protocol.md §2 "Disabling and deleting").
              if ('held' in app) throw accountDisabled(library);
              // The app comes from its key; whatever the request said is replaced.
              properties[OWNER_APP_METADATA] = app.appId;
            } else {
              // An update with the client's registration access token (RFC 7592): the client keeps its app,
              // whatever the request said (a held owner's client is not found, so it never gets here).
              const owner = ctx.oidc.client?.metadata()[OWNER_APP_METADATA];
              if (typeof owner !== 'string') throw new library.errors.InvalidToken('the client belongs to no Connect app');
              properties[OWNER_APP_METADATA] = owner;
            }
            const uri = properties.backchannel_logout_uri;
            const problem = typeof uri === 'string' ? options.backchannelUriProblem?.(uri) : null;
            if (typeof problem === 'string') throw new library.errors.InvalidClientMetadata(`backchannel_logout_uri: ${problem}`);
            const broken = clientMetadataProblem(properties, options.development);
            if (broken !== null) {
              const message = `${broken.member} ${broken.reason}`;
              throw broken.redirect ? new library.errors.InvalidRedirectUri(message) : new library.errors.InvalidClientMetadata(message);
            }
          },
        },
      },
      // Every update gives a new registration access token and ends the old one.
      registrationManagement: { enabled: true, rotateRegistrationAccessToken: true },
      // docs/protocol.md §8 "APIs": a confidential machine client gets an access token for an API, with no person.
      clientCredentials: { enabled: true },
      // RFC 8707: an app names the API it wants a token for with `resource`; the
      // token is then a JWT for that API alone (RFC 9068), which the API checks
      // by itself. Without a resource the access token stays opaque.
      resourceIndicators: {
        enabled: true,
        // A code exchange or refresh that names no resource gets a token for the one the person granted.
        useGrantedResource: async () => true,
        async getResourceServerInfo(ctx, indicator, client) {
          const resource = await options.resources.find(indicator);
          if (resource === null) throw new library.errors.InvalidTarget(`${indicator} is no API of this provider`);
          // A client reaches an API's scopes the operator allowed it, and no others.
          const allowed = apiScopesOf(client.metadata());
          const scopes = resource.scopes.filter((scope) => allowed.has(scope));
          if (scopes.length === 0) throw new library.errors.InvalidTarget(`the client may not ask for ${indicator}`);
          const asked = String(ctx.oidc.params?.scope ?? '').split(' ');
          const refused = asked.filter((scope) => resource.scopes.includes(scope) && !allowed.has(scope));
          if (refused.length > 0)
            throw new library.errors.InvalidScope(`the client may not ask for ${refused.join(' ')}`, refused.join(' '));
          return {
            scope: scopes.join(' '),
            audience: resource.uri,
            accessTokenTTL: resource.access_token_seconds,
            accessTokenFormat: 'jwt',
            jwt: { sign: { alg: resource.alg as 'RS256' | 'ES256' | 'EdDSA' } },
          };
        },
      },
      claimsParameter: { enabled: true },
      // RFC 8628 (docs/protocol.md §8 "Devices"): the library runs the grant; oc-host draws its pages.
      deviceFlow: {
        enabled: true,
        ...USER_CODE,
        deviceInfo: (ctx): Record<string, unknown> => {
          const ua = ctx.get('user-agent');
          // Coarse, as a session row keeps it: a label and the network, never the whole address.
          const facts = clientFacts(ua, ctx.ip);
          return { device: facts.device ?? softwareOf(ua), network: facts.network };
        },
        userCodeInputSource: (ctx, _form, _out, err) => {
          const userCode = (err as { userCode?: unknown } | undefined)?.userCode;
          ctx.set('content-security-policy', pages.csp);
          ctx.type = 'html';
          ctx.body = pages.deviceEntry(ctx.req, {
            action: ctx.oidc.urlFor('code_verification'),
            xsrf: String(ctx.oidc.session?.state?.secret ?? ''),
            code: typeof userCode === 'string' ? userCode : undefined,
            problem: deviceProblemOf(err),
          });
        },
        userCodeConfirmSource: (ctx, _form, client, deviceInfo, userCode) => {
          const scope = ctx.oidc.entities.DeviceCode?.params?.scope;
          const page = pages.deviceQuestion(ctx.req, {
            action: ctx.oidc.urlFor('code_verification'),
            xsrf: String(ctx.oidc.session?.state?.secret ?? ''),
            userCode,
            clientName: client.clientName ?? client.clientId,
            logoUri: client.logoUri,
            domain: hostOf(client.clientUri),
            device: factsOf(deviceInfo),
            scopes: typeof scope === 'string' ? scope.split(' ').filter((one) => one !== '') : [],
          });
          ctx.set('content-security-policy', page.csp);
          ctx.type = 'html';
          ctx.body = page.html;
        },
        successSource: (ctx) => {
          ctx.set('content-security-policy', pages.csp);
          ctx.type = 'html';
          ctx.body = pages.deviceDone(ctx.req, ctx.oidc.client?.clientName);
        },
      },
      // RFC 9126: a client may push its authorization request first, and a
      // client registered with `require_pushed_authorization_requests` must
      // (docs/protocol.md §8 "Flows"). The pushed request's redirect URI must
      // be one the client registered, as for a plain request.
      pushedAuthorizationRequests: { enabled: true, requirePushedAuthorizationRequests: false, allowUnregisteredRedirectUris: false },
      revocation: {
        enabled: true,
        // Only the token's own client may revoke it (docs/protocol.md §8
        // "Flows"): a confidential client naming another's token is told so
        // (RFC 7009 §2.1); a public client, which anyone can be, learns nothing.
        allowedPolicy(_ctx, client, token) {
          if (token.clientId === client.clientId) return true;
          if (client.clientAuthMethod === 'none') return false;
          throw new library.errors.InvalidRequest('client is not authorized to revoke the presented token');
        },
      },
      introspection: {
        enabled: true,
        // Only the client the token was issued to, or a client the token
        // names as its audience (a resource server), learns anything about it
        // (docs/protocol.md §8 "Flows"); and only while the token's account
        // stands and its client is known: a held account's token, or one of a
        // held owner's client, is `active: false` (docs/protocol.md §2
        // "Disabling and deleting"), as the library does not look the account
        // up here itself. Any other caller gets `active: false`.
        async allowedPolicy(ctx, client, token) {
          const clientId = token.clientId;
          if (clientId !== client.clientId && !audienceOf(token as { readonly aud?: unknown }).includes(client.clientId)) return false;
          const accountId = 'accountId' in token ? token.accountId : undefined;
          if (typeof accountId === 'string' && (await options.standingAccount(accountId)) === null) return false;
          return (
            clientId === client.clientId || (typeof clientId === 'string' && (await ctx.oidc.provider.Client.find(clientId)) !== undefined)
          );
        },
      },
      // docs/protocol.md §8 "Logout": the tokens go through the outbox (backchannelLogout below).
      backchannelLogout: { enabled: true },
      userinfo: { enabled: true },
      rpInitiatedLogout: {
        enabled: true,
        logoutSource: async (ctx, form) => {
          // The hint may name an account the browser switched away from: its own app session is the one to end.
          const aside = await setAsideAppSession(ctx, store, hostSession, subject);
          if (aside === null) return nothingToEnd(ctx);
          await askLogout(ctx, pages, form, aside);
        },
        postLogoutSuccessSource: async (ctx) => {
          ctx.set('content-security-policy', pages.csp);
          ctx.type = 'html';
          ctx.body = pages.loggedOut(ctx.req, ctx.oidc.client?.clientName);
        },
      },
    },
    ttl: {
      // An API's token lives as long as its registration says (docs/protocol.md §8 "APIs"); the provider's own, an hour.
      AccessToken: (_ctx, token) => token.resourceServer?.accessTokenTTL ?? 60 * 60,
      ClientCredentials: (_ctx, token) => token.resourceServer?.accessTokenTTL ?? 10 * 60,
      AuthorizationCode: 60,
      IdToken: 60 * 60,
      Interaction: 60 * 60,
      Session: 14 * DAY,
      Grant: 365 * DAY,
      RefreshToken: 30 * DAY,
      PushedAuthorizationRequest: 60,
      DeviceCode: DEVICE_CODE_SECONDS,
    },
    // Every ID token carries auth_time, not only those of a request with max_age (docs/protocol.md §8 "Tokens");
    // the adapter sets it on every client it loads, this on the metadata a registration is checked with.
    clientDefaults: { require_auth_time: true },
    rotateRefreshToken: true,
    // An access token a person's sign-in stands behind says when and how it
    // was made, as the ID token does (RFC 9068 §2.2.1; docs/protocol.md §8 "APIs").
    // An API's token also names its grant, by a reference the revocation feed
    // uses to end every token of the grant at once (docs/protocol.md §8 "Revoking API tokens").
    async extraTokenClaims(ctx, token) {
      if (token.kind !== 'AccessToken') return undefined;
      const grant =
        token.resourceServer !== undefined && typeof token.grantId === 'string' ? { oc_grant: grantReference(token.grantId) } : {};
      const { AuthorizationCode: code, RefreshToken: refresh, DeviceCode: device } = ctx.oidc.entities;
      const source = code ?? device ?? refresh;
      if (source?.authTime === undefined) return { ...grant };
      return { ...grant, auth_time: source.authTime, ...(source.acr === undefined ? {} : { acr: source.acr }) };
    },
    interactions: {
      url: (_ctx, interaction) => `${INTERACTION_PATH}/${interaction.uid}`,
      policy: interactionPolicyFor(interactionPolicy, hostSession),
    },
    // The library asks on every authorization, code exchange, refresh and
    // userinfo: an account that may not act is not found, which it answers
    // with invalid_grant or invalid_token (docs/protocol.md §2 "Disabling and deleting").
    // The claims come from the account this check read, in the same request.
    async findAccount(ctx, sub) {
      const account = await options.standingAccount(sub);
      if (account === null) return undefined;
      return {
        accountId: sub,
        async claims(use, scope, requested) {
          return claims.claimsFor(sub, idTokenKeepsOpenidOnly(ctx, use) ? idTokenScopes(requested) : new Set(scope.split(' ')), account);
        },
      };
    },
    async loadExistingGrant(ctx: KoaContextWithOIDC) {
      return loadGrant(ctx, store, options.now);
    },
    async pairwiseIdentifier(_ctx, accountId, client) {
      return pairwiseSubject(options.pairwiseSecret, accountId, client);
    },
    clientBasedCORS(ctx, origin, client) {
      // Browsers may call the token endpoint (public clients), userinfo and
      // revocation from the origins of the client's own redirect URIs;
      // nothing else (docs/protocol.md §8 "Endpoints").
      if (!BROWSER_ROUTES.has(String(ctx.oidc.route))) return false;
      return client.redirectUris?.some((uri) => originOf(uri) === origin) === true;
    },
    // The library fetches a client's `jwks_uri` and `sector_identifier_uri`
    // itself; registration refuses both and nothing else it would fetch is
    // enabled, and a client stored before that rule is refused here, before
    // any name is resolved or connection made (docs/protocol.md §8 "Clients").
    fetch: async (input) => {
      throw new Error(`oidc: the provider makes no outbound requests (${String(input instanceof Request ? input.url : input)})`);
    },
    async renderError(ctx, out) {
      ctx.set('content-security-policy', pages.csp);
      ctx.type = 'html';
      ctx.body = pages.error(ctx.req, { code: String(out.error ?? 'server_error'), description: String(out.error_description ?? '') });
    },
  };
  const provider = new library.Provider(options.issuer, configuration);
  // The HTTP layer sets the request's host and scheme to the issuer's before
  // the library sees it (src/features/oidc/routes.ts), so the scheme header is ours.
  provider.proxy = true;
  // Secrets are stored as their SHA-256 (docs/protocol.md §8 "Clients"); the
  // library's documented place to compare them is this method.
  // A client authenticates only with the method it registered (docs/protocol.md §8
  // "Clients"): the library takes a secret in the body or in the Authorization header
  // alike, so the way this request carried it is checked first, before the secret.
  const { InvalidClientAuth } = library.errors;
  const { Provider: ProviderClass } = library;
  provider.Client.prototype.compareClientSecret = function compareClientSecret(
    this: { clientSecret?: string; clientAuthMethod?: string },
    actual: string,
  ) {
    const ctx = ProviderClass.ctx;
    if (ctx !== undefined) {
      const carried = ctx.oidc.params?.client_secret !== undefined ? 'client_secret_post' : 'client_secret_basic';
      if (carried !== this.clientAuthMethod) {
        throw new InvalidClientAuth(`the client authenticates with ${String(this.clientAuthMethod)} only`);
      }
    }
    return clientSecretMatches(this.clientSecret, actual);
  };
  // The library POSTs logout tokens itself, inline, from this method; here
  // every logout goes into the outbox instead, and a worker builds, signs
  // and sends its token with retries (src/features/oidc/backchannel.ts).
  provider.Client.prototype.backchannelLogout = async function backchannelLogout(this: { clientId: string }, sub: string, sid: string) {
    await logouts.logout(this.clientId, sub, sid);
  };
  provider.use(pagePolicy(pages));
  provider.use(bareRevocationAnswer);
  revokeJwtAccessTokens(provider, { issuer: options.issuer, keys: options.keys, store, now: options.now, path: OIDC_ROUTES.revocation });
  provider.use(withoutStoredSecret);
  provider.use(devicePollInterval(options.devicePollSeconds));
  timeDevicePolls(provider, library, options.devicePolledTooSoon);
  askAboutSetAsideWithoutAccount(provider, pages, async (ctx) => await setAsideAppSession(ctx, store, hostSession, subject));
  endSetAsideSessions(provider, library);
  watchSessions(provider, hostSession, options.endHostSession, logouts);
  return provider;
}

/**
 * Whether the ID token these claims are for keeps only the `openid` scope's
 * claims and those the claims parameter names: one the token endpoint issues
 * with an access token for userinfo (no audience), as the library's
 * `conformIdTokenClaims` (on by default, userinfo enabled) has it. Anything
 * else is given every claim of its scope.
 */
function idTokenKeepsOpenidOnly(ctx: KoaContextWithOIDC, use: string): boolean {
  if (use !== 'id_token' || ctx.oidc.route !== 'token') return false;
  const accessToken = ctx.oidc.entities.AccessToken;
  return accessToken !== undefined && accessToken.aud === undefined;
}

/** Which problem of the verification page a library error is (its re-render errors, by name). */
function deviceProblemOf(err: unknown): DeviceCodeProblem | undefined {
  if (err === undefined) return undefined;
  const { name, userCode } = err as { name?: unknown; userCode?: unknown };
  switch (name) {
    case 'NotFoundError':
    case 'NoCodeError':
      return 'wrong';
    case 'ExpiredError':
      return 'expired';
    case 'AlreadyUsedError':
      return 'used';
    case 'AbortedError':
      return 'denied';
    default:
      return userCode === undefined ? 'failed' : 'wrong';
  }
}

/** The longest piece of a device's own User-Agent kept when it names no browser ("MyTV/2.1"). */
const MAX_SOFTWARE_LENGTH = 64;

/** A User-Agent no browser parser reads, cut to its printable start; null when there is none. */
function softwareOf(userAgent: string | undefined): string | null {
  const text = (userAgent ?? '')
    .replace(/[^\p{L}\p{N} ._/()+;:,-]/gu, '')
    .trim()
    .slice(0, MAX_SOFTWARE_LENGTH)
    .trim();
  return text === '' ? null : text;
}

/** The device facts a device code keeps ({@link DeviceFacts}), read back from its stored form. */
function factsOf(deviceInfo: unknown): DeviceFacts {
  const { device, network } = (typeof deviceInfo === 'object' && deviceInfo !== null ? deviceInfo : {}) as Record<string, unknown>;
  return { device: typeof device === 'string' ? device : null, network: typeof network === 'string' ? network : null };
}

function hostOf(url: string | undefined): string | undefined {
  if (url === undefined) return undefined;
  const parsed = URL.parse(url);
  return parsed === null || (parsed.protocol !== 'https:' && parsed.protocol !== 'http:') ? undefined : parsed.host;
}

/**
 * The device authorization's answer names the poll interval (RFC 8628 §3.2
 * `interval`): without it a device waits 5 seconds, which this says when
 * the interval is another.
 */
function devicePollInterval(seconds: number) {
  return async (ctx: KoaContextWithOIDC, next: () => Promise<void>) => {
    await next();
    const oidc = (ctx as Partial<KoaContextWithOIDC>).oidc;
    const body = ctx.body as Record<string, unknown> | undefined;
    if (oidc?.route === 'device_authorization' && ctx.status === 200 && typeof body?.device_code === 'string') body.interval = seconds;
  };
}

/**
 * `slow_down` (RFC 8628 §3.5): a device that polls the token endpoint sooner
 * than the interval after its last poll, while its code waits for the
 * person, is told so, and its token request goes no further. The library
 * names the error but does not time polls; the poll is seen where the token
 * endpoint looks its device code up.
 */
function timeDevicePolls(provider: Provider, library: OidcLibrary, tooSoon: ((key: string) => Promise<boolean>) | undefined): void {
  if (tooSoon === undefined) return;
  const DeviceCode = provider.DeviceCode;
  type Found = InstanceType<typeof DeviceCode> | undefined;
  const find = DeviceCode.find.bind(DeviceCode) as (id: string, options?: { ignoreExpiration?: boolean }) => Promise<Found>;
  const timed = async (id: string, options?: { ignoreExpiration?: boolean }): Promise<Found> => {
    const code = await find(id, options);
    const ctx = library.Provider.ctx;
    const pending = code !== undefined && !code.isExpired && code.accountId === undefined && code.error === undefined;
    if (pending && ctx?.oidc.route === 'token') {
      const key = createHash('sha256').update(code.jti, 'utf8').digest('base64url');
      if (await tooSoon(key)) throw new library.errors.SlowDown();
    }
    return code;
  };
  DeviceCode.find = timed as typeof DeviceCode.find;
}

/** The pairwise `sub` of an account for a client (its sector, else its id). */
function pairwiseSubject(secret: Uint8Array, accountId: string, client: Client): string {
  const sector = client.sectorIdentifier ?? client.clientId;
  return createHmac('sha256', secret).update(`${sector}\n${accountId}`, 'utf8').digest('base64url');
}

/** The `sub` the client's ID tokens carry for the account. */
function subjectOf(secret: Uint8Array, accountId: string, client: Client): string {
  return client.subjectType === 'pairwise' ? pairwiseSubject(secret, accountId, client) : accountId;
}

/** The client ids a token names as its audience. */
function audienceOf(token: { readonly aud?: unknown }): readonly string[] {
  const { aud } = token;
  return typeof aud === 'string' ? [aud] : Array.isArray(aud) ? aud.filter((one): one is string => typeof one === 'string') : [];
}

/**
 * Every answer of the library carries the pages' policy (docs/protocol.md §8
 * "Endpoints"): the pages oc-host draws set their own, and the library's own HTML
 * (the auto-submitting forms of `response_mode=form_post` and of an
 * end-session without a session) would otherwise have none. It is set before
 * the library answers, so the library adds its inline script's hash to
 * `script-src`; a form that posts an authorization's answer to the client's
 * redirect URI gets that origin in `form-action`, and only when the URI is
 * one the client registered.
 */
function pagePolicy(pages: OidcPages) {
  return async (ctx: KoaContextWithOIDC, next: () => Promise<void>) => {
    ctx.set('content-security-policy', pages.csp);
    await next();
    const oidc = (ctx as Partial<KoaContextWithOIDC>).oidc;
    const target = oidc?.params?.redirect_uri;
    if (
      oidc?.params?.response_mode !== 'form_post' ||
      typeof target !== 'string' ||
      oidc.client?.redirectUris?.includes(target) !== true ||
      !ctx.response.is('html')
    ) {
      return;
    }
    const source = cspSourceOf(target);
    const policy = ctx.response.get('content-security-policy');
    if (source !== null && typeof policy === 'string')
      ctx.set('content-security-policy', policy.replace("form-action 'self'", `form-action 'self' ${source}`));
  };
}

/**
 * A revocation's answer as RFC 7009 §2.2 has it: the status says it all, so
 * the empty body goes without a type. The library answers `text/plain`, which
 * the most used browser OpenID library (oidc-client-ts) refuses as not JSON.
 */
/**
 * A client's registration as RFC 7592 reads and updates answer it, without
 * the stored secret: oc-host keeps only its hash (docs/protocol.md §8
 * "Clients"), which is no secret to hand out. A secret made by this very
 * update (a public client turned confidential) is shown, once.
 */
async function withoutStoredSecret(ctx: KoaContextWithOIDC, next: () => Promise<void>): Promise<void> {
  await next();
  const body = ctx.body as { client_secret?: unknown } | undefined;
  if (!ctx.path.startsWith(`${OIDC_ROUTES.registration}/`) || body === null || typeof body !== 'object') return;
  if (typeof body.client_secret === 'string' && isHashedClientSecret(body.client_secret)) delete body.client_secret;
}

async function bareRevocationAnswer(ctx: KoaContextWithOIDC, next: () => Promise<void>): Promise<void> {
  await next();
  if (ctx.path === OIDC_ROUTES.revocation && ctx.status === 200 && ctx.body === '') ctx.remove('content-type');
}

/**
 * The provider's requests that start or end a client's part in a host
 * session (docs/protocol.md §8 "Logout"), seen once the library has answered
 * them and before the answer leaves:
 *
 * - an authorization that succeeded links the client, its `sid` and the
 *   provider session to the host session of the browser;
 * - an end-session confirmed with `logout=host` (the question page's
 *   second button: a same-browser form post whose anti-forgery value the
 *   library has checked) also ends the host session of the account that
 *   signed in to the app, in this browser only.
 */
function watchSessions(provider: Provider, hostSession: HostSessionReader, endHostSession: HostSessionEnder, logouts: LogoutEvents): void {
  const authorized = new WeakSet<object>();
  provider.on('authorization.success', (ctx: KoaContextWithOIDC) => {
    authorized.add(ctx);
  });
  provider.use(async (ctx, next) => {
    await next();
    const oidc = (ctx as Partial<KoaContextWithOIDC>).oidc;
    if (oidc === undefined) return;
    const session = oidc.session;
    const accountId = session?.accountId;
    if (authorized.has(ctx) && session !== undefined && accountId !== undefined && oidc.client !== undefined) {
      const host = await hostSession(ctx.req);
      const sid = session.sidFor(oidc.client.clientId);
      if (host !== null && host.accountId === accountId && typeof sid === 'string') {
        await logouts.signedIn({
          sessionJti: host.sessionJti,
          accountId,
          clientId: oidc.client.clientId,
          sid,
          opSessionUid: session.uid,
          backchannel: typeof oidc.client.backchannelLogoutUri === 'string',
        });
      }
    }
    if (oidc.route === 'end_session_confirm' && ctx.status === 303 && oidc.params?.logout === 'host' && accountId !== undefined) {
      for (const line of await endHostSession(ctx.req, accountId)) ctx.append('set-cookie', line);
    }
  });
}

/**
 * Before an interaction signs in another account than the one the browser's
 * provider session holds (the person switched accounts on the host since):
 * that session is set aside rather than ended (docs/protocol.md §8
 * "Signing in"). Left as it is, the library would answer the resumed
 * authorization with a self-submitting end-session for the previous account,
 * which logs its apps out (back-channel) and revokes their grants, though
 * that account is still signed in on the host.
 *
 * The session moves to a new identifier that no cookie holds, so the
 * browser starts a fresh provider session for the new account; the old one
 * keeps its uid, its clients and their tokens, and ends when its host
 * session ends (src/features/oidc/logout-store.ts deletes it by uid) or at its
 * own expiry. The interaction no longer names it.
 */
export async function setAsideProviderSession(
  provider: Provider,
  interaction: Awaited<ReturnType<Provider['interactionDetails']>>,
  accountId: string,
): Promise<void> {
  const origin = interaction.session;
  if (origin?.accountId === undefined || origin.accountId === accountId) return;
  const session = await provider.Session.findByUid(origin.uid);
  if (session !== undefined) {
    session.resetIdentifier();
    await session.persist();
  }
  interaction.session = undefined;
  await interaction.persist();
}

/**
 * An app session of another account than the browser's provider session
 * holds, in a provider session this browser set aside ({@link setAsideProviderSession}).
 */
interface SetAsideAppSession {
  /** The set-aside provider session's uid. */
  readonly uid: string;
  /** Its account, a `did:oc`. */
  readonly accountId: string;
  readonly clientId: string;
  readonly sid: string;
}

/** Where the end-session question keeps, in the browser's own provider session's state, the set-aside session it is about. */
const SET_ASIDE = 'ocSetAside';

function setAsideOf(state: Session['state']): SetAsideAppSession | undefined {
  const value = state?.[SET_ASIDE];
  if (typeof value !== 'object' || value === null) return undefined;
  const { uid, accountId, clientId, sid } = value as Record<string, unknown>;
  return typeof uid === 'string' && typeof accountId === 'string' && typeof clientId === 'string' && typeof sid === 'string'
    ? { uid, accountId, clientId, sid }
    : undefined;
}

/**
 * Which app session an end-session's `id_token_hint` names (docs/protocol.md
 * §8 "Logout"). The library acts on the browser's provider session, whoever
 * the hint names; after a switch that session is another account's, which
 * the library would sign out of the app in its place. So:
 *
 * - undefined: no hint, or the hint's `sub` is the account of the browser's
 *   provider session: the library's own way;
 * - the app session of the hint's account that this browser set aside: the
 *   answer is to end that one (the live host sessions of this browser's
 *   roster link it, for this client, with the hint's `sid` when it has one);
 * - null: the hint names another account that has no session with the app
 *   in this browser any more: there is nothing to end.
 */
async function setAsideAppSession(
  ctx: KoaContextWithOIDC,
  store: Pick<OidcLogoutStore, 'listOidcSessionLinks'>,
  hostSession: HostSessionReader,
  subject: (accountId: string, client: Client) => string,
): Promise<SetAsideAppSession | null | undefined> {
  const hint = ctx.oidc.entities.IdTokenHint?.payload;
  const client = ctx.oidc.client;
  const own = ctx.oidc.session?.accountId;
  if (hint === undefined || client === undefined || (own !== undefined && hint.sub === subject(own, client))) return undefined;
  const host = await hostSession(ctx.req);
  if (host === null) return null;
  for (const jti of await host.rosterSessionJtis()) {
    for (const link of await store.listOidcSessionLinks(jti)) {
      const accountId = `did:oc:${link.account_id}`;
      if (link.client_id !== client.clientId || subject(accountId, client) !== hint.sub) continue;
      if (hint.sid !== undefined && hint.sid !== link.sid) continue;
      const session = await ctx.oidc.provider.Session.findByUid(link.op_session_uid);
      if (session?.accountId === accountId && session.sidFor(client.clientId) === link.sid) {
        return { uid: session.uid, accountId, clientId: client.clientId, sid: link.sid };
      }
    }
  }
  return null;
}

/**
 * The end-session question (the first page of RP-initiated logout), about
 * the browser's own provider session or, when `aside` names one, about an
 * app session this browser set aside; the confirm then ends that one
 * ({@link endSetAsideSessions}).
 */
async function askLogout(ctx: KoaContextWithOIDC, pages: OidcPages, form: string, aside: SetAsideAppSession | undefined): Promise<void> {
  if (aside !== undefined && ctx.oidc.session?.state !== undefined) ctx.oidc.session.state[SET_ASIDE] = { ...aside };
  // The form's answer redirects to the app's (checked) post-logout address: form-action must allow it.
  const target = ctx.oidc.params?.post_logout_redirect_uri;
  ctx.set('content-security-policy', pages.cspLeadingTo(typeof target === 'string' ? target : undefined));
  ctx.status = 200;
  ctx.type = 'html';
  ctx.body = await pages.logout(ctx.req, form, {
    clientName: ctx.oidc.client?.clientName,
    hasClient: ctx.oidc.client !== undefined,
    accountId: aside?.accountId ?? ctx.oidc.session?.accountId,
  });
}

/**
 * An end-session in a browser whose own provider session holds no account
 * (the account it last signed in to an app signed out of the host since):
 * the library does not ask then, it posts its own confirm with
 * `logout=yes` at once, which ends nothing. When the hint names an app
 * session of an account still in this browser's roster, set aside by a
 * switch (docs/protocol.md §8 "Logout"), the answer is replaced by the
 * question about that session, with the anti-forgery value the library
 * has just stored in the browser's (empty) provider session.
 */
function askAboutSetAsideWithoutAccount(
  provider: Provider,
  pages: OidcPages,
  setAside: (ctx: KoaContextWithOIDC) => Promise<SetAsideAppSession | null | undefined>,
): void {
  provider.use(async (ctx, next) => {
    await next();
    const oidc = (ctx as Partial<KoaContextWithOIDC>).oidc;
    const session = oidc?.session;
    const secret = session?.state?.secret;
    if (oidc?.route !== 'end_session' || ctx.status !== 200 || session === undefined || session.accountId !== undefined) return;
    if (typeof secret !== 'string') return;
    const aside = await setAside(ctx as KoaContextWithOIDC);
    if (aside === null || aside === undefined) return;
    const action = oidc.urlFor('end_session_confirm');
    const form = `<form id="op.logoutForm" method="post" action="${escapeHtml(action)}"><input type="hidden" name="xsrf" value="${escapeHtml(secret)}"/></form>`;
    await askLogout(ctx as KoaContextWithOIDC, pages, form, aside);
    await session.persist();
  });
}

/** An end-session with nothing to end in this browser goes on as a finished one would: to the app's post-logout address, else the success page. */
function nothingToEnd(ctx: KoaContextWithOIDC): void {
  const { params, client, session } = ctx.oidc;
  if (session !== undefined) session.state = undefined;
  const post = params?.post_logout_redirect_uri;
  const url = new URL(typeof post === 'string' ? post : ctx.oidc.urlFor('end_session_success'));
  if (typeof post === 'string' && typeof params?.state === 'string') url.searchParams.set('state', params.state);
  if (typeof post !== 'string' && client !== undefined) url.searchParams.set('client_id', client.clientId);
  ctx.status = 303;
  ctx.redirect(url.href);
}

/**
 * The confirm of an end-session whose question was about a set-aside app
 * session ({@link setAsideAppSession}) runs the library's own end-session on
 * that provider session instead of the browser's (docs/protocol.md §8
 * "Logout"): with "this app only" the app's part of it ends (its back-channel
 * logout with that `sid`, its grant's tokens revoked), with `logout=host` all
 * of it (and watchSessions then ends that account's host session). The
 * question's state, anti-forgery value included, stays in the browser's own
 * session until the confirm succeeds, so the value is still checked against
 * this browser's cookie. The browser's own provider session and its cookie
 * are left as they are: the Set-Cookie lines the library writes for the
 * session it ended are dropped.
 */
function endSetAsideSessions(provider: Provider, library: OidcLibrary): void {
  const SessionModel = provider.Session;
  const sessionOfCookie = SessionModel.get.bind(SessionModel);
  const retargeted = new WeakMap<object, Session>();
  SessionModel.get = async (ctx) => {
    const own = await sessionOfCookie(ctx);
    const aside = setAsideOf(own.state);
    const oidc = (ctx as Partial<KoaContextWithOIDC>).oidc;
    if (aside === undefined || oidc?.route !== 'end_session_confirm') return own;
    const session = await SessionModel.findByUid(aside.uid);
    if (session?.accountId !== aside.accountId || session.sidFor(aside.clientId) !== aside.sid) {
      throw new library.errors.InvalidRequest('the app session this sign-out was asked for has ended');
    }
    const { [SET_ASIDE]: _, ...state } = own.state ?? {};
    session.state = state;
    oidc.entity('Session', session);
    retargeted.set(ctx, own);
    return session;
  };
  const cookie = new RegExp(`^${provider.cookieName('session')}(?:\\.sig)?=`);
  provider.use(async (ctx, next) => {
    await next();
    const own = retargeted.get(ctx);
    if (own === undefined) return;
    const lines = ctx.res.getHeader('set-cookie');
    const kept = (Array.isArray(lines) ? lines : typeof lines === 'string' ? [lines] : []).filter((line) => !cookie.test(line));
    if (kept.length > 0) ctx.res.setHeader('set-cookie', kept);
    else ctx.res.removeHeader('set-cookie');
    if (ctx.status === 303) {
      own.state = undefined;
      await own.persist();
    }
  });
}

/**
 * The grant an authorization may reuse: the one this consent just made, the
 * one the provider's session holds, or the consent the account gave the
 * client before in any browser (docs/protocol.md §8 "Consent"). A
 * first-party client is granted what it asks for without a consent screen.
 */
async function loadGrant(ctx: KoaContextWithOIDC, store: OidcStore, now: () => number) {
  const { oidc } = ctx;
  const client = oidc.client;
  const accountId = oidc.session?.accountId;
  if (client === undefined || accountId === undefined) return undefined;
  const known = oidc.result?.consent?.grantId ?? oidc.session?.grantIdFor(client.clientId);
  if (known !== undefined) {
    const grant = await oidc.provider.Grant.find(known);
    if (grant !== undefined && grant.accountId === accountId) return grant;
  }
  const consent = await store.findOidcConsent(accountId, client.clientId);
  if (consent !== null) {
    const grant = await oidc.provider.Grant.find(consent.grant_id);
    if (grant !== undefined) return grant;
  }
  const record = await store.findOidcClient(client.clientId);
  if (record?.first_party !== true) return undefined;
  const grant = new oidc.provider.Grant({ accountId, clientId: client.clientId });
  const scope = oidc.requestParamScopes;
  grant.addOIDCScope([...scope].join(' '));
  const claims = oidc.requestParamClaims;
  if (claims.size > 0) grant.addOIDCClaims([...claims]);
  // And the scopes asked of an API (docs/protocol.md §8 "APIs"), those the API has.
  for (const [indicator, server] of Object.entries(oidc.resourceServers ?? {})) {
    const offered = new Set(server.scope.split(' '));
    const asked = [...scope].filter((name) => offered.has(name));
    if (asked.length > 0) grant.addResourceScope(indicator, asked.join(' '));
  }
  const grantId = await grant.save();
  const at = now();
  await store.putOidcConsent({ account_id: accountId, client_id: client.clientId, grant_id: grantId, created_at: at, updated_at: at });
  return grant;
}
