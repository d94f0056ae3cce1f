/**
 * The OpenID provider on HTTP (docs/protocol.md §8, docs/api.md "OpenID
 * provider"):
 *
 * - the library's endpoints (discovery, JWKS, authorization, pushed
 *   authorization requests, device authorization and its verification
 *   page, token, userinfo, revocation, introspection, end-session) are
 *   Fastify routes
 *   with their own policy, each handing the raw request to the library,
 *   which reads its own body (no Fastify parser touches it here);
 * - the interaction, where the library asks oc-host who is signing in and
 *   what they agree to share: `GET /oidc/interaction/:uid` signs the
 *   browser's host session in (or sends the person to /signin, or to /sudo
 *   for a fresh proof when the app asks for one), or shows the consent page;
 *   `POST …/confirm` and `POST …/abort` answer it.
 */
import type { IncomingMessage } from 'node:http';
import { Readable } from 'node:stream';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import type Provider from 'oidc-provider';
import { isOcError } from '../../platform/errors.js';
import type { ResilientLimiter } from '../../platform/limits/index.js';
import { isJsonObject } from '../../platform/json.js';
import { ACR_BASIC, ACR_KEY, OIDC_SCOPES } from './claims.js';
import { DEVICE_CODE_GRANT } from './clients.js';
import {
  DEVICE_CODE_SECONDS,
  INTERACTION_PATH,
  loginHintOf,
  OIDC_ROUTES,
  prefersKey,
  setAsideProviderSession,
  type HostSessionView,
} from './provider.js';
import type { OidcService } from './service.js';
import type { AccountService } from '../../identity/account/index.js';
import type { Brand } from '../../platform/config.js';
import type { SessionService } from '../../identity/session/index.js';
import type { WebAuthnService } from '../passkeys/index.js';
import {
  accountIdFromDid,
  coarseNetwork,
  didOf,
  readSessionCookies,
  signInMethodClaims,
  type Authenticated,
} from '../../identity/session/index.js';
import { oidcPageRenderer, type OidcPageRenderer } from './page-routes.js';
import { POLICY, type RoutePolicy } from '../../platform/http/policy.js';
import { ANSWER, answer, EXAMPLE_CLIENT_METADATA, errorResponses } from '../../platform/http/schemas.js';
import { HSTS_VALUE, securityHeaders, type PageFiles } from '../../web/pages.js';
import { clientKey } from '../../web/rate-limit.js';
import type { SessionDoor } from '../../web/session.js';

/** Browser navigations to the provider (authorization, end-session): read-limited, no CORS of ours. */
const BROWSER: RoutePolicy = Object.freeze({ ...POLICY.publicRead, cors: 'none' as const });
/** Client calls that check a credential (token, revocation, introspection): the library answers CORS itself. */
const CLIENT_CREDENTIAL: RoutePolicy = POLICY.serverCredential;
/** Public reads the library answers CORS for itself (discovery, JWKS, userinfo). */
const CLIENT_READ: RoutePolicy = BROWSER;

/** A browser app's CORS preflight of a provider endpoint: read-limited, its CORS the library's. */
const PREFLIGHT: RoutePolicy = BROWSER;

/** Every path the library answers, its methods and its policy; discovery is also in the OpenAPI document. */
const FORWARDED: ReadonlyArray<{
  readonly url: string;
  readonly methods: readonly ('GET' | 'POST' | 'PUT' | 'DELETE')[];
  readonly policy: RoutePolicy;
  /**
   * The CORS preflight the library answers (docs/protocol.md §8 "Endpoints"):
   * `any` origin (public reads), or only the origins of registered redirect
   * URIs (`clients`: the request itself is then held to its own client's).
   */
  readonly preflight?: 'any' | 'clients';
  /** For the OpenAPI document: the routes an integrator calls itself. */
  readonly summary?: string;
  readonly description?: string;
  readonly status?: number;
  /** For the OpenAPI document: what the answer is, and its example for the issuer `PUBLIC_URL`. */
  readonly answer?: { readonly description: string; readonly example: (issuer: string) => unknown };
}> = [
  {
    url: '/.well-known/openid-configuration',
    methods: ['GET'],
    policy: CLIENT_READ,
    preflight: 'any',
    summary: 'OpenID provider discovery (OpenID Connect Discovery 1.0): the issuer, its endpoints, scopes, claims and algorithms',
    answer: {
      description: 'The provider metadata (its main fields here; the library adds a few more)',
      example: (issuer) => ({
        issuer,
        authorization_endpoint: `${issuer}${OIDC_ROUTES.authorization}`,
        token_endpoint: `${issuer}${OIDC_ROUTES.token}`,
        userinfo_endpoint: `${issuer}${OIDC_ROUTES.userinfo}`,
        jwks_uri: `${issuer}${OIDC_ROUTES.jwks}`,
        registration_endpoint: `${issuer}${OIDC_ROUTES.registration}`,
        revocation_endpoint: `${issuer}${OIDC_ROUTES.revocation}`,
        introspection_endpoint: `${issuer}${OIDC_ROUTES.introspection}`,
        end_session_endpoint: `${issuer}${OIDC_ROUTES.end_session}`,
        pushed_authorization_request_endpoint: `${issuer}${OIDC_ROUTES.pushed_authorization_request}`,
        device_authorization_endpoint: `${issuer}${OIDC_ROUTES.device_authorization}`,
        scopes_supported: [...OIDC_SCOPES],
        response_types_supported: ['code'],
        grant_types_supported: ['authorization_code', 'refresh_token', 'client_credentials', DEVICE_CODE_GRANT],
        subject_types_supported: ['public', 'pairwise'],
        acr_values_supported: [ACR_BASIC, ACR_KEY],
        code_challenge_methods_supported: ['S256'],
        id_token_signing_alg_values_supported: ['EdDSA', 'ES256', 'RS256'],
        token_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post', 'none', 'private_key_jwt'],
        backchannel_logout_supported: true,
      }),
    },
  },
  { url: OIDC_ROUTES.jwks, methods: ['GET'], policy: CLIENT_READ, preflight: 'any' },
  { url: OIDC_ROUTES.authorization, methods: ['GET', 'POST'], policy: BROWSER },
  { url: `${OIDC_ROUTES.authorization}/:uid`, methods: ['GET'], policy: BROWSER },
  { url: OIDC_ROUTES.token, methods: ['POST'], policy: CLIENT_CREDENTIAL, preflight: 'clients' },
  { url: OIDC_ROUTES.pushed_authorization_request, methods: ['POST'], policy: CLIENT_CREDENTIAL },
  { url: OIDC_ROUTES.userinfo, methods: ['GET', 'POST'], policy: CLIENT_READ, preflight: 'clients' },
  { url: OIDC_ROUTES.revocation, methods: ['POST'], policy: CLIENT_CREDENTIAL, preflight: 'clients' },
  { url: OIDC_ROUTES.introspection, methods: ['POST'], policy: CLIENT_CREDENTIAL },
  { url: OIDC_ROUTES.end_session, methods: ['GET', 'POST'], policy: BROWSER },
  {
    url: OIDC_ROUTES.registration,
    methods: ['POST'],
    policy: CLIENT_CREDENTIAL,
    summary: 'Register an OpenID client (RFC 7591) for a Connect app',
    description:
      'The body is the client metadata (RFC 7591 §2), as JSON; `Authorization: Bearer <api_key>` of the Connect app is the ' +
      'initial access token. The answer carries `client_id` and, for a confidential client, `client_secret`, shown once. ' +
      'Errors are OAuth errors (`invalid_client_metadata`, `invalid_redirect_uri`, `invalid_token`; 403 `account_disabled` for ' +
      'the key of an app whose owner the operator disabled). Manage the clients with ' +
      '/api/connect/oidc-clients.',
    status: 201,
    answer: {
      description: 'Registered: the client metadata as kept, with `client_id` and, for a confidential client, `client_secret`',
      example: () => ({
        client_id: ANSWER.clientId,
        client_secret: ANSWER.clientSecret,
        client_id_issued_at: Date.parse(ANSWER.clientRegisteredAt) / 1000,
        client_secret_expires_at: 0,
        ...EXAMPLE_CLIENT_METADATA,
      }),
    },
  },
  {
    url: OIDC_ROUTES.device_authorization,
    methods: ['POST'],
    policy: CLIENT_CREDENTIAL,
    summary: 'Start a device sign-in (RFC 8628 device authorization request)',
    description:
      'For an app on a device without a handy browser (a TV, a console, a command-line tool): the body is ' +
      "`application/x-www-form-urlencoded` with `client_id` (and the client's secret when it has one) and `scope`. " +
      'The device shows `user_code` and `verification_uri` (or a QR code of `verification_uri_complete`) and polls ' +
      `the token endpoint with \`grant_type=${DEVICE_CODE_GRANT}\` and \`device_code\` every \`interval\` seconds: ` +
      '`authorization_pending` while the person has not answered, `slow_down` when it polls sooner, `access_denied` when ' +
      'they said no, `expired_token` after `expires_in`. The client must be registered with this grant type. ' +
      'Errors are OAuth errors: `invalid_client`, `invalid_scope`, `invalid_request` (also for a client not registered ' +
      'for the grant).',
    answer: {
      description: 'The device code, the user code and where the person types it',
      example: (issuer) => ({
        device_code: 'Vh3Qm0tD5oJwq3FPZ0-Tn2vHr8kX6bqS1yL4eAcW9uE',
        user_code: 'BCDF-GHJK',
        verification_uri: `${issuer}${OIDC_ROUTES.code_verification}`,
        verification_uri_complete: `${issuer}${OIDC_ROUTES.code_verification}?user_code=BCDF-GHJK`,
        expires_in: DEVICE_CODE_SECONDS,
        interval: 5,
      }),
    },
  },
  // The verification page (GET: the code entry; POST: a code typed, then the answer) and its return from the interaction.
  { url: OIDC_ROUTES.code_verification, methods: ['GET', 'POST'], policy: BROWSER },
  { url: `${OIDC_ROUTES.code_verification}/:uid`, methods: ['GET'], policy: BROWSER },
  // RFC 7592: a client's own registration, with its registration access token.
  { url: `${OIDC_ROUTES.registration}/:clientId`, methods: ['GET', 'PUT', 'DELETE'], policy: CLIENT_CREDENTIAL },
  { url: `${OIDC_ROUTES.end_session}/confirm`, methods: ['POST'], policy: BROWSER },
  { url: `${OIDC_ROUTES.end_session}/success`, methods: ['GET'], policy: BROWSER },
];

/** How the provider sees a host session (docs/protocol.md §8 "How the person signed in"). */
function hostSessionView(deps: OidcRoutes, found: Authenticated): HostSessionView {
  const { session, freshness } = found;
  // The presented token's freshness (identity/session/freshness.ts), as every other door reads it.
  const amr = signInMethodClaims(session.signing_method, freshness.step_up_at).amr;
  return {
    accountId: didOf(found.account.id),
    authTime: Math.max(session.created_at, freshness.sudo_at ?? 0, freshness.step_up_at ?? 0),
    amr,
    usedKey: amr.includes('hwk'),
    hasKey: async () => (await deps.webauthn.list(found.account.id)).length > 0,
    matches: (hint) => accountMatches(deps, found, hint),
    sessionJti: session.jti,
    rosterSessionJtis: () => deps.sessions.rosterSessionJtis(found),
  };
}

/** The host session of a raw request (the library's login checks), from the browser's cookies alone. */
async function hostSessionOfRaw(deps: OidcRoutes, request: IncomingMessage): Promise<HostSessionView | null> {
  const found = await ownSessionOfRaw(deps, request);
  return found === null ? null : hostSessionView(deps, found);
}

/**
 * The host session of a raw request's cookies, as the host's own sign-out
 * finds it: a cookie of a roster this browser's binding does not name
 * (planted) counts as none (docs/protocol.md §3 "Planted cookies").
 */
async function ownSessionOfRaw(deps: OidcRoutes, request: IncomingMessage): Promise<Authenticated | null> {
  const tokens = readSessionCookies(request.headers.cookie);
  if (tokens.length === 0) return null;
  try {
    return await deps.sessions.authenticate(tokens, deps.door.ownRosterCheck(request));
  } catch (error) {
    if (isOcError(error) && error.code === 'ambiguous_session') return null;
    throw error;
  }
}

/**
 * Ends the host session of the account that signed in to the app, in this
 * browser only (docs/protocol.md §8 "Logout"): the other accounts of the
 * roster stay; when it was the active one, the cookie moves to the most
 * recently seen remaining account, or is cleared.
 */
async function endHostSessionOfRaw(deps: OidcRoutes, request: IncomingMessage, accountDid: string): Promise<string[]> {
  const accountId = accountIdFromDid(accountDid);
  const current = await ownSessionOfRaw(deps, request);
  if (accountId === null || current === null) return [];
  const { next } = await deps.sessions.logoutAccount(current, accountId);
  if (next === undefined) return [];
  return next === null ? deps.door.clearedCookieLines() : deps.door.cookieLines(next);
}

/** How the sign-out question names the account that signed in to the app: when it is this browser's active account. */
async function accountNameOfRaw(deps: OidcRoutes, request: IncomingMessage, accountDid: string | undefined): Promise<string | undefined> {
  if (accountDid === undefined) return undefined;
  const current = await ownSessionOfRaw(deps, request);
  if (current === null || didOf(current.account.id) !== accountDid) return undefined;
  return current.account.display_name ?? current.account.primary_btc ?? accountDid;
}

/**
 * The library builds every URL it answers (discovery, redirects) from the
 * request's host and scheme: they are set to the issuer's, whatever the
 * request said, so no Host or X-Forwarded-Host header can make it name
 * another server (the provider trusts the forwarded scheme, which this sets).
 */
function asIssuer(request: IncomingMessage, issuer: URL): void {
  request.headers.host = issuer.host;
  request.headers['x-forwarded-proto'] = issuer.protocol.slice(0, -1);
  delete request.headers['x-forwarded-host'];
}

/** The largest RFC 7592 update read here: the library's own limit for a body. */
const UPDATE_BODY_LIMIT = 56 * 1024;

/**
 * An RFC 7592 update whose body sends back the client's secret, as a client
 * that kept its registration answer does: the library compares it with the
 * stored value, which here is the secret's hash (docs/protocol.md §8
 * "Clients"), so a secret that matches the hash is taken out of the body
 * before the library reads it, and one that does not is left for the library
 * to refuse. The library then reads the body as it came, or as changed.
 */
async function updateWithSecretChecked(deps: OidcRoutes, request: FastifyRequest, clientId: string): Promise<IncomingMessage> {
  const raw = request.raw;
  // Too long by its own word, or of no known length: the library reads and refuses it as it would have.
  const declared = Number(raw.headers['content-length']);
  if (!Number.isSafeInteger(declared) || declared > UPDATE_BODY_LIMIT) return raw;
  const chunks: Buffer[] = [];
  let received = 0;
  // Read to the end (a stream left half-read would stall the connection); keep no more than the limit.
  for await (const chunk of raw) {
    received += (chunk as Buffer).length;
    if (received <= UPDATE_BODY_LIMIT) chunks.push(chunk as Buffer);
  }
  let body = Buffer.concat(chunks);
  const parsed = received === body.length ? parseJsonObject(body) : null;
  if (
    parsed !== null &&
    typeof parsed.client_secret === 'string' &&
    (await deps.oidc.clients.secretMatches(clientId, parsed.client_secret))
  ) {
    delete parsed.client_secret;
    body = Buffer.from(JSON.stringify(parsed), 'utf8');
  }
  // What the library reads of a request: its stream, method, URL, headers and socket.
  const replay = Object.assign(Readable.from([body], { objectMode: false }), {
    method: raw.method,
    url: raw.url,
    httpVersion: raw.httpVersion,
    httpVersionMajor: raw.httpVersionMajor,
    httpVersionMinor: raw.httpVersionMinor,
    headers: { ...raw.headers, 'content-length': String(body.length) },
    socket: raw.socket,
  });
  return replay as unknown as IncomingMessage;
}

function parseJsonObject(body: Buffer): Record<string, unknown> | null {
  try {
    const value: unknown = JSON.parse(body.toString('utf8'));
    return isJsonObject(value) ? value : null;
  } catch {
    return null;
  }
}

/** Hands a request to the library; Fastify writes nothing more. */
async function forward(
  provider: Provider,
  request: FastifyRequest,
  reply: FastifyReply,
  https: boolean,
  incoming: IncomingMessage = request.raw,
): Promise<void> {
  reply.hijack();
  // What every answer carries (src/app.ts, src/web/pages.ts); hijacked answers skip the hooks that add it.
  // The pages' policy is the library's to set (src/features/oidc/provider.ts), docs/protocol.md §8 "Endpoints".
  reply.raw.setHeader('x-request-id', request.id);
  reply.raw.setHeader('x-content-type-options', 'nosniff');
  reply.raw.setHeader('referrer-policy', 'no-referrer');
  if (https) reply.raw.setHeader('strict-transport-security', HSTS_VALUE);
  await provider.callback()(incoming, reply.raw);
}

const HOUR = 3_600_000;
/** When the page says to come back while the limit store is away (as the API's `not_ready`, docs/operations.md). */
const STORE_AWAY_RETRY_SECONDS = 5;

/**
 * Whether a device polled too soon (docs/protocol.md §8 "Devices"): one poll
 * per interval per device code, counted in the shared limit store (Redis
 * when configured, so every instance sees the last poll). With Redis away
 * each instance times the polls it sees, as for every `open` limit
 * (src/platform/limits/resilient.ts): a poll is never refused for the outage alone.
 */
async function polledTooSoon(limiter: ResilientLimiter, key: string, seconds: number): Promise<boolean> {
  const answer = await limiter.hit(`device_poll:${key}`, 1, seconds * 1000, 'open');
  return answer !== 'unavailable' && !answer.allowed;
}

/**
 * What the provider's routes use: the provider, the session door and the
 * session service (a raw request's host session, signing one account out),
 * an account's identities and keys (a login hint, the key step-up), and the
 * settings of its pages and device grant.
 */
export interface OidcRoutes {
  readonly door: SessionDoor;
  readonly oidc: OidcService;
  readonly sessions: SessionService;
  readonly accounts: AccountService;
  readonly webauthn: WebAuthnService;
  readonly now: () => Date;
  readonly publicUrl: string;
  readonly brand: Brand;
  readonly devicePollSeconds: number;
  readonly deviceCodePerHour: number;
}

export function registerOidcRoutes(app: FastifyInstance, deps: OidcRoutes, limiter: ResilientLimiter, loaded?: PageFiles): void {
  const oidc = deps.oidc;
  const issuer = new URL(deps.publicUrl);
  const renderer: OidcPageRenderer = oidcPageRenderer(deps.brand, loaded);
  const pollSeconds = deps.devicePollSeconds;
  oidc.attach({
    hostSession: (request) => hostSessionOfRaw(deps, request),
    endHostSession: (request, accountId) => endHostSessionOfRaw(deps, request, accountId),
    pages: {
      ...renderer.library,
      logout: async (request, form, question) =>
        renderer.logout(request, form, { ...question, accountName: await accountNameOfRaw(deps, request, question.accountId) }),
    },
    devicePolledTooSoon: (key) => polledTooSoon(limiter, key, pollSeconds),
  });
  const codesPerHour = deps.deviceCodePerHour;

  /**
   * A post of the verification page counts against its network's hourly
   * budget (docs/protocol.md §8 "Devices"), so user codes cannot be guessed:
   * past it, the page says to wait, and the library does not look the code up.
   * True when the request was answered here.
   */
  async function deviceCodeRefused(request: FastifyRequest, reply: FastifyReply): Promise<boolean> {
    if (codesPerHour === 0) return false;
    const network = coarseNetwork(request.ip) ?? clientKey(request.ip);
    const answer = await limiter.hit(`device_code:${network}`, codesPerHour, HOUR, 'closed');
    if (answer !== 'unavailable' && answer.allowed) return false;
    const seconds = answer === 'unavailable' ? STORE_AWAY_RETRY_SECONDS : answer.retryAfterSeconds;
    securityHeaders(reply, renderer.library.csp)
      .code(answer === 'unavailable' ? 503 : 429)
      .header('retry-after', seconds)
      .header('cache-control', 'no-store')
      .header('referrer-policy', 'no-referrer')
      .type('text/html; charset=utf-8')
      .send(renderer.deviceLimited(request.raw, answer === 'unavailable' ? undefined : seconds));
    return true;
  }

  // The library reads its own bodies, and the interaction's forms carry
  // none that matter: in this scope no parser consumes a body.
  app.register(async (scope) => {
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('*', (_request, _payload, done) => done(null, undefined));
    scope.addHook('onRequest', async (request) => {
      asIssuer(request.raw, issuer);
      // The library reads the client's address from this header (it trusts the proxy headers, which this sets):
      // the address the host itself decided on (TRUST_PROXY), never one the request made up.
      request.raw.headers['x-forwarded-for'] = request.ip;
    });
    // The interaction's own answers (its redirects too) carry what forward() gives the library's.
    scope.addHook('onSend', async (_request, reply) => {
      reply.header('referrer-policy', 'no-referrer');
    });
    for (const route of FORWARDED) {
      scope.route({
        method: [...route.methods],
        url: route.url,
        config: { policy: route.policy },
        schema:
          route.summary === undefined
            ? { hide: true }
            : {
                tags: ['oidc'],
                summary: route.summary,
                ...(route.description === undefined ? {} : { description: route.description, security: [{ bearerAuth: [] }] }),
                response: {
                  [route.status ?? 200]: Type.Object(
                    {},
                    {
                      additionalProperties: true,
                      ...(route.answer === undefined ? {} : answer(route.answer.description, route.answer.example(issuer.origin))),
                    },
                  ),
                  ...errorResponses(429),
                },
              },
        handler: async (request, reply) => {
          const https = issuer.protocol === 'https:';
          if (route.url === OIDC_ROUTES.code_verification && request.method === 'POST' && (await deviceCodeRefused(request, reply))) return;
          const clientId = (request.params as { clientId?: string }).clientId;
          if (route.url === OIDC_ROUTES.jwks) {
            await oidc.refreshKeysForJwks((error) => request.log.error({ err: error }, 'oidc: could not read the keys for the JWKS'));
          }
          if (request.method !== 'PUT' || clientId === undefined) return forward(oidc.provider(), request, reply, https);
          return forward(oidc.provider(), request, reply, https, await updateWithSecretChecked(deps, request, clientId));
        },
      });
      const preflight = route.preflight;
      if (preflight === undefined) continue;
      // A browser app's preflight: the library answers it for an origin it
      // may serve; any other gets what every other path gives a stranger,
      // a 204 that allows nothing (src/web/cors.ts).
      scope.route({
        method: 'OPTIONS',
        url: route.url,
        config: { policy: PREFLIGHT },
        schema: { hide: true },
        handler: async (request, reply) => {
          const origin = request.headers.origin;
          const allowed = preflight === 'any' || (typeof origin === 'string' && (await oidc.clients.isBrowserOrigin(origin)));
          if (allowed) return forward(oidc.provider(), request, reply, issuer.protocol === 'https:');
          return reply.code(204).header('vary', 'Origin').send();
        },
      });
    }
    registerInteractionRoutes(scope, deps, renderer);
  });
}

/** The APIs a consent is asked for, by the names the operator gave them, each with its scopes not granted yet. */
async function apisAsked(deps: OidcRoutes, missing: unknown): Promise<Array<{ name: string; scopes: string[] }>> {
  if (missing === null || typeof missing !== 'object') return [];
  const apis: Array<{ name: string; scopes: string[] }> = [];
  for (const [indicator, scopes] of Object.entries(missing)) {
    if (!Array.isArray(scopes) || scopes.length === 0) continue;
    const resource = await deps.oidc.resources.find(indicator);
    apis.push({ name: resource?.name ?? indicator, scopes: scopes.map(String) });
  }
  return apis;
}

/** The interaction: who signs in, and what they agree to share. */
function registerInteractionRoutes(app: FastifyInstance, deps: OidcRoutes, renderer: OidcPageRenderer): void {
  const oidc = deps.oidc;
  /** A route of the interaction: its handler runs with the interaction of this browser, which answers an error page otherwise. */
  function interactionRoute(
    method: 'GET' | 'POST',
    suffix: '' | '/confirm' | '/abort',
    policy: RoutePolicy,
    handler: (provider: Provider, details: InteractionDetails, request: InteractionRequest, reply: FastifyReply) => Promise<FastifyReply>,
  ): void {
    app.route<{ Params: { uid: string }; Querystring: Record<string, unknown> }>({
      method,
      url: `${INTERACTION_PATH}/:uid${suffix}`,
      config: { policy },
      schema: { hide: true },
      handler: async (request, reply) => {
        const provider = oidc.provider();
        const details = await interactionOf(provider, request, reply, renderer);
        return details === null ? reply : handler(provider, details, request, reply);
      },
    });
  }

  interactionRoute('GET', '', POLICY.unlimited, async (provider, details, request, reply) => {
    // The Cancel of /sudo when it was asked for here (docs/protocol.md §8 "Signing in").
    if (request.query.cancel !== undefined) {
      return finish(provider, request, reply, { error: 'access_denied', error_description: 'the person did not confirm' });
    }
    const found = await deps.door.current(request);
    const host = found === null ? null : hostSessionView(deps, found);
    // A consent page shown for one account, answered after a switch to another, signs the new one in first.
    if (
      details.prompt.name === 'login' ||
      (details.prompt.name === 'consent' && host !== null && host.accountId !== details.session?.accountId)
    ) {
      return signInHost(provider, request, reply, details, found, host);
    }
    if (details.prompt.name === 'consent' && found !== null && host !== null) {
      const client = await provider.Client.find(String(details.params.client_id));
      if (client === undefined) return finish(provider, request, reply, { error: 'invalid_client' });
      const missing = details.prompt.details.missingOIDCScope;
      const scopes = Array.isArray(missing) ? missing.map(String) : String(details.params.scope ?? '').split(' ');
      const page = renderer.consent(request.raw, {
        apis: await apisAsked(deps, details.prompt.details.missingResourceScopes),
        uid: request.params.uid,
        clientName: client.clientName ?? client.clientId,
        logoUri: client.logoUri,
        accountName: found.account.display_name ?? found.account.primary_btc ?? didOf(found.account.id),
        scopes,
        // A device's sign-in (RFC 8628) has no redirect URI: the answer goes to the device.
        redirectUri: typeof details.params.redirect_uri === 'string' ? details.params.redirect_uri : undefined,
      });
      return securityHeaders(reply, page.csp)
        .header('cache-control', 'no-store')
        .header('content-language', page.locale)
        .type('text/html; charset=utf-8')
        .send(page.html);
    }
    if (details.prompt.name === 'consent') return seeOther(reply, signInUrl(interactionPath(request.params.uid), details));
    return finish(provider, request, reply, { error: 'invalid_request', error_description: 'unknown interaction' });
  });

  /**
   * The login prompt: the browser's host session signs in, after what the
   * app asked for is met (docs/protocol.md §8 "Signing in"): a `login_hint`
   * naming another account sends the person to sign that one in (once); a
   * fresh proof (`prompt=login`, `max_age`) goes through /sudo; a demanded or
   * preferred security key through the key step-up of /sudo.
   */
  async function signInHost(
    provider: Provider,
    request: InteractionRequest,
    reply: FastifyReply,
    details: InteractionDetails,
    found: Authenticated | null,
    host: HostSessionView | null,
  ): Promise<FastifyReply> {
    const hinted = request.query.hinted !== undefined;
    const base = interactionPath(request.params.uid);
    if (found === null || host === null) return seeOther(reply, signInUrl(base, details));
    const hint = loginHintOf(details.params.login_hint);
    if (hint !== null && !hinted && !(await accountMatches(deps, found, hint))) {
      return seeOther(reply, signInUrl(base, details, true));
    }
    // Back here from /sudo without asking about the hint again.
    const here = hinted ? `${base}?hinted=1` : base;
    const reasons = new Set(details.prompt.reasons);
    const startedAt = (details.iat ?? 0) * 1000;
    const maxAge = typeof details.params.max_age === 'number' ? details.params.max_age : Number(details.params.max_age);
    const tooOld = Number.isFinite(maxAge) && deps.now().getTime() - host.authTime > maxAge * 1000;
    // prompt=login and max_age ask for a proof made now: /sudo, then back here.
    if ((reasons.has('login_prompt') && host.authTime < startedAt) || (reasons.has('max_age') && tooOld)) {
      return seeOther(reply, `/sudo?return_to=${encodeURIComponent(here)}`);
    }
    const demandsKey = reasons.has('essential_acr') || reasons.has('essential_acrs');
    if ((demandsKey || prefersKey(details.params.acr_values)) && !host.usedKey) {
      if (await host.hasKey()) return seeOther(reply, `/sudo?require=key&return_to=${encodeURIComponent(here)}`);
      if (demandsKey) {
        return finish(provider, request, reply, {
          error: 'unmet_authentication_requirements',
          error_description: 'a security key or passkey was asked for and this account has none',
        });
      }
    }
    // Another account than the provider session's signs in: that session is kept for its account, not ended.
    await setAsideProviderSession(provider, details, host.accountId);
    return finish(provider, request, reply, {
      login: {
        accountId: host.accountId,
        acr: host.usedKey ? ACR_KEY : ACR_BASIC,
        // A provider sign-in has no RFC 8176 value: the claim is left out rather than empty.
        ...(host.amr.length > 0 ? { amr: [...host.amr] } : {}),
        ts: Math.floor(host.authTime / 1000),
        remember: true,
      },
    });
  }

  interactionRoute('POST', '/confirm', POLICY.sameOrigin, async (provider, details, request, reply) => {
    const accountId = details.session?.accountId;
    const found = await deps.door.current(request);
    // Only the account the page was shown for can agree, in the browser it was shown in.
    if (details.prompt.name !== 'consent' || accountId === undefined || found === null || didOf(found.account.id) !== accountId) {
      return seeOther(reply, `${INTERACTION_PATH}/${encodeURIComponent(request.params.uid)}`);
    }
    const clientId = String(details.params.client_id);
    const grant =
      (details.grantId === undefined ? undefined : await provider.Grant.find(details.grantId)) ??
      new provider.Grant({ accountId, clientId });
    const { missingOIDCScope, missingOIDCClaims, missingResourceScopes } = details.prompt.details;
    if (Array.isArray(missingOIDCScope)) grant.addOIDCScope(missingOIDCScope.join(' '));
    if (Array.isArray(missingOIDCClaims)) grant.addOIDCClaims(missingOIDCClaims.map(String));
    if (missingResourceScopes !== null && typeof missingResourceScopes === 'object') {
      for (const [indicator, scopes] of Object.entries(missingResourceScopes)) {
        if (Array.isArray(scopes)) grant.addResourceScope(indicator, scopes.join(' '));
      }
    }
    const grantId = await grant.save();
    await oidc.recordConsent(accountId, clientId, grantId);
    return finish(provider, request, reply, { consent: { grantId } }, true);
  });

  interactionRoute('POST', '/abort', POLICY.sameOrigin, (provider, _details, request, reply) =>
    finish(provider, request, reply, { error: 'access_denied', error_description: 'the person did not allow it' }),
  );
}

type InteractionDetails = Awaited<ReturnType<Provider['interactionDetails']>>;

/** A request to `/oidc/interaction/<uid>…`. */
type InteractionRequest = FastifyRequest<{ Params: { uid: string }; Querystring: Record<string, unknown> }>;

/**
 * The interaction of this browser, or null after answering an error page:
 * an unknown or expired uid, or one opened in a browser that did not start
 * it (the library binds it to its cookie), cannot go on.
 */
async function interactionOf(
  provider: Provider,
  request: FastifyRequest<{ Params: { uid: string } }>,
  reply: FastifyReply,
  renderer: OidcPageRenderer,
): Promise<InteractionDetails | null> {
  try {
    const details = await provider.interactionDetails(request.raw, reply.raw);
    if (details.uid !== request.params.uid) throw new Error('interaction of another uid');
    return details;
  } catch {
    const html = renderer.library.error(request.raw, { code: 'invalid_request', description: 'interaction expired or not found' });
    securityHeaders(reply, renderer.library.csp).header('cache-control', 'no-store').code(400).type('text/html; charset=utf-8').send(html);
    return null;
  }
}

/** Ends the interaction with `result` and sends the browser back to the library. */
async function finish(
  provider: Provider,
  request: FastifyRequest,
  reply: FastifyReply,
  result: Parameters<Provider['interactionResult']>[2],
  merge = false,
): Promise<FastifyReply> {
  const location = await provider.interactionResult(request.raw, reply.raw, result, { mergeWithLastSubmission: merge });
  return seeOther(reply, location);
}

function seeOther(reply: FastifyReply, location: string): FastifyReply {
  return reply.code(303).header('cache-control', 'no-store').header('location', location).send();
}

function interactionPath(uid: string): string {
  return `${INTERACTION_PATH}/${encodeURIComponent(uid)}`;
}

/**
 * Whether `hint` names the account: its `did:oc`, one of its verified e-mail
 * addresses (any case), or one of its verified Bitcoin addresses (bech32 in
 * any case, base58 exactly).
 */
async function accountMatches(deps: OidcRoutes, found: Authenticated, hint: string): Promise<boolean> {
  if (hint === didOf(found.account.id)) return true;
  const lower = hint.toLowerCase();
  for (const identity of await deps.accounts.identities(found.account.id)) {
    if (!identity.verified) continue;
    if (identity.kind === 'email' && identity.value === lower) return true;
    if (identity.kind === 'btc' && (identity.value === hint || (/^(bc|tb|bcrt)1/i.test(hint) && identity.value.toLowerCase() === lower))) {
      return true;
    }
  }
  return false;
}

/**
 * Where a person signs in for an interaction: /signin, coming back to it.
 * With a `login_hint` the page is told it (to fill the e-mail or address
 * field) and the way back says the hint was offered, so a person who signs
 * in with another account is not sent round again; `add` keeps the accounts
 * already in this browser.
 */
function signInUrl(here: string, details: InteractionDetails, add = false): string {
  const hint = loginHintOf(details.params.login_hint);
  const query = new URLSearchParams();
  if (add) query.set('add', '1');
  query.set('return_to', hint === null ? here : `${here}?hinted=1`);
  if (hint !== null) query.set('login_hint', hint);
  return `/signin?${query.toString()}`;
}
