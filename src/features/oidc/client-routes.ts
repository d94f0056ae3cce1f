/**
 * A Connect app's OpenID clients (docs/protocol.md §8 "Clients"): the app
 * registers them at the provider's RFC 7591 endpoint with its API key as the
 * initial access token, and manages them here, server to server, with the
 * same key: list, a new secret, removal. An app sees and touches only its
 * own clients; another's answer `not_found`, like an unknown id.
 */
import type { FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { OcError } from '../../platform/errors.js';
import type { ClientView } from './clients.js';
import { httpsOrigin } from './service.js';
import { INTERACTION_PATH } from './provider.js';
import type { ConnectAppRecord } from '../connect/index.js';
import type { ConnectService } from '../connect/index.js';
import type { OidcService } from './service.js';
import { POLICY } from '../../platform/http/policy.js';
import { route, sessionRoute } from '../../web/route.js';
import { noStore, signedIn } from '../../web/session.js';
import { didOf } from '../../identity/session/index.js';
import type { TypedApp } from '../../platform/http/schema-types.js';
import { ANSWER, answer, EXAMPLE_CLIENT_METADATA, errorResponses, example } from '../../platform/http/schemas.js';

const Client = Type.Object({
  client_id: Type.String({ pattern: '^oc_[0-9a-f]{32}$' }),
  metadata: Type.Object({}, { additionalProperties: true, description: 'The registered RFC 7591 metadata, without the secret' }),
  created_at: Type.String({ description: 'ISO 8601 UTC' }),
  updated_at: Type.String({ description: 'ISO 8601 UTC' }),
});
const ClientParams = Type.Object({ client_id: Type.String({ minLength: 1, maxLength: 64, ...example(ANSWER.clientId) }) });
const BEARER = [{ bearerAuth: [] }];

/** The OpenID client of the examples, as the routes of an app's clients answer it. */
const EXAMPLE_CLIENT = {
  client_id: ANSWER.clientId,
  metadata: EXAMPLE_CLIENT_METADATA,
  created_at: ANSWER.clientRegisteredAt,
  updated_at: ANSWER.clientRegisteredAt,
};

function clientBody(client: ClientView) {
  return {
    client_id: client.client_id,
    metadata: client.metadata,
    created_at: new Date(client.created_at).toISOString(),
    updated_at: new Date(client.updated_at).toISOString(),
  };
}

const ConsentedApp = Type.Object({
  client_id: Type.String(),
  name: Type.String({ description: "The app's registered name" }),
  logo_uri: Type.Optional(Type.String({ description: 'An https URL of its logo, when it registered one' })),
  scopes: Type.Array(Type.String(), {
    description: 'What it was allowed: `openid`, `profile`, `email`, `bitcoin`, `orangecheck`, `offline_access`',
  }),
  first_allowed_at: Type.String({ description: 'ISO 8601 UTC' }),
  last_allowed_at: Type.String({ description: 'ISO 8601 UTC' }),
});

const InteractionParams = Type.Object({
  uid: Type.String({ minLength: 1, maxLength: 64, pattern: '^[A-Za-z0-9_-]+$', ...example('kS2pXz7Qv1nL') }),
});

/** A browser page's read that the library's cookies authenticate: read-limited, no CORS. */
const INTERACTION_READ = Object.freeze({ ...POLICY.publicRead, cors: 'none' as const });

/**
 * The apps the active account allowed to sign it in (docs/protocol.md §8
 * "Consent"), and withdrawing one; and the app an authorization of this
 * browser is for, which the sign-in and re-proof pages name (§8 "Signing in").
 */
/** What the consent routes use. */
export interface ConsentRoutes {
  readonly oidc: OidcService;
}

export function registerConsentRoutes(app: TypedApp, { oidc }: ConsentRoutes): void {
  // Under the interaction's own path, where the library's interaction cookie
  // (scoped to that path) comes with the request: only the browser that
  // started the authorization learns which app it is for.
  app.get(
    `${INTERACTION_PATH}/:uid/app`,
    route(INTERACTION_READ, 'oidc', 'The app an authorization of this browser is for, as the sign-in page names it', {
      description:
        'Browser only: the provider binds the interaction to a cookie of the browser that started it. Another ' +
        "browser's, an unknown or an ended interaction answers 404 `not_found`.",
      params: InteractionParams,
      response: {
        200: Type.Object(
          {
            ok: Type.Literal(true),
            client_id: Type.String(),
            name: Type.String({ description: "The app's registered name, else its client_id" }),
            logo_uri: Type.Optional(Type.String({ description: "The app's logo, when it is https" })),
          },
          answer('The app asking to sign this browser in', {
            ok: true,
            client_id: ANSWER.clientId,
            name: EXAMPLE_CLIENT.metadata.client_name,
            logo_uri: EXAMPLE_CLIENT.metadata.logo_uri,
          }),
        ),
        ...errorResponses(400, 404, 429),
      },
    }),
    async (request, reply) => {
      noStore(reply);
      const provider = oidc.provider();
      const details = await provider.interactionDetails(request.raw, reply.raw).catch(() => null);
      const client =
        details === null || details.uid !== request.params.uid ? undefined : await provider.Client.find(String(details.params.client_id));
      if (client === undefined) throw new OcError('not_found', 'oidc: this browser has no authorization with this id');
      const logo = typeof client.logoUri === 'string' && httpsOrigin(client.logoUri) !== null ? { logo_uri: client.logoUri } : {};
      return { ok: true as const, client_id: client.clientId, name: client.clientName ?? client.clientId, ...logo };
    },
  );

  app.get(
    '/api/auth/apps',
    sessionRoute(POLICY.familyRead, 'auth', 'The apps the active account allowed to sign it in through the OpenID provider, newest first', {
      response: {
        200: Type.Object(
          { ok: Type.Literal(true), apps: Type.Array(ConsentedApp) },
          answer('The apps allowed to sign the account in, newest first', {
            ok: true,
            apps: [
              {
                client_id: ANSWER.clientId,
                name: EXAMPLE_CLIENT.metadata.client_name,
                logo_uri: EXAMPLE_CLIENT.metadata.logo_uri,
                scopes: ['openid', 'profile', 'bitcoin'],
                first_allowed_at: '2026-04-22T12:27:00.000Z',
                last_allowed_at: '2026-04-22T12:27:00.000Z',
              },
            ],
          }),
        ),
        ...errorResponses(401, 429),
      },
    }),
    async (request, reply) => {
      const current = signedIn(request);
      noStore(reply);
      const apps = await oidc.appsOf(didOf(current.account.id));
      return {
        ok: true as const,
        apps: apps.map((one) => ({
          ...one,
          first_allowed_at: new Date(one.first_allowed_at).toISOString(),
          last_allowed_at: new Date(one.last_allowed_at).toISOString(),
        })),
      };
    },
  );

  app.delete(
    '/api/auth/apps/:client_id',
    sessionRoute(
      POLICY.family,
      'auth',
      "Withdraw the active account's consent to an app: its tokens stop working and its next sign-in asks again",
      {
        params: ClientParams,
        response: {
          200: Type.Object({ ok: Type.Literal(true) }, answer('The consent is withdrawn', { ok: true })),
          ...errorResponses(401, 403, 404, 429),
        },
      },
    ),
    async (request, reply) => {
      const current = signedIn(request);
      noStore(reply);
      if (!(await oidc.withdraw(didOf(current.account.id), request.params.client_id))) {
        throw new OcError('not_found', 'oidc: this account has not allowed this app');
      }
      return { ok: true as const };
    },
  );
}

/** What a Connect app's client routes use. */
export interface OidcClientRoutes {
  readonly connect: ConnectService;
  readonly oidc: OidcService;
}

export function registerOidcClientRoutes(app: TypedApp, { connect, oidc }: OidcClientRoutes): void {
  /** The app whose key authenticated the request. */
  const integrators = new WeakMap<FastifyRequest, ConnectAppRecord>();
  // The key is checked before anything else, as on /api/connect/provision.
  const onRequest = async (request: FastifyRequest) => {
    integrators.set(request, await connect.authenticate(request.headers.authorization));
  };
  const integratorOf = (request: FastifyRequest): ConnectAppRecord => {
    const integrator = integrators.get(request);
    if (integrator === undefined) throw new Error('oidc clients: the key hook did not run');
    return integrator;
  };
  /** The client, when the request's app owns it. */
  async function owned(request: FastifyRequest, clientId: string): Promise<ClientView> {
    const client = await oidc.clients.find(clientId);
    if (client === null || client.owner_app_id !== integratorOf(request).id)
      throw new OcError('not_found', 'oidc: this app has no client with this id');
    return client;
  }

  app.get(
    '/api/connect/oidc-clients',
    {
      ...route(POLICY.serverCredential, 'connect', "The OpenID clients this app registered (the key's app)", {
        description:
          "Server to server: `Authorization: Bearer <api_key>`. Clients are registered at the discovery document's " +
          '`registration_endpoint` (RFC 7591) with the same key as the initial access token. The key of an app whose owner the ' +
          'operator disabled is 403 `account_disabled` here and there.',
        security: BEARER,
        response: {
          200: Type.Object(
            { ok: Type.Literal(true), clients: Type.Array(Client) },
            answer("The app's OpenID clients", { ok: true, clients: [EXAMPLE_CLIENT] }),
          ),
          ...errorResponses(401, 403, 429, 503),
        },
      }),
      onRequest,
    },
    async (request, reply) => {
      reply.header('cache-control', 'no-store');
      return { ok: true, clients: (await oidc.clients.list(integratorOf(request).id)).map(clientBody) };
    },
  );

  app.post(
    '/api/connect/oidc-clients/:client_id/rotate-secret',
    {
      ...route(
        POLICY.serverCredential,
        'connect',
        "A new secret for one of the app's confidential OpenID clients; the old one stops working",
        {
          security: BEARER,
          params: ClientParams,
          response: {
            200: Type.Object(
              {
                ok: Type.Literal(true),
                client: Client,
                client_secret: Type.String({ description: 'Shown once: only its hash is kept' }),
              },
              answer('The client and its new secret, shown this once', {
                ok: true,
                client: { ...EXAMPLE_CLIENT, updated_at: ANSWER.now },
                client_secret: 'bmV3IGZvciB0aGUgZXhhbXBsZXM6IG5vdCBhIHNlY3JldCBhdCBhbGwgZWl0aGVy',
              }),
            ),
            ...errorResponses(400, 401, 403, 404, 429, 503),
          },
        },
      ),
      onRequest,
    },
    async (request, reply) => {
      reply.header('cache-control', 'no-store');
      await owned(request, request.params.client_id);
      const issued = await oidc.clients.rotateSecret(request.params.client_id);
      return { ok: true, client: clientBody(issued), client_secret: issued.client_secret ?? '' };
    },
  );

  app.delete(
    '/api/connect/oidc-clients/:client_id',
    {
      ...route(POLICY.serverCredential, 'connect', "Delete one of the app's OpenID clients with its consents, codes and tokens", {
        security: BEARER,
        params: ClientParams,
        response: {
          200: Type.Object({ ok: Type.Literal(true) }, answer('The client is deleted; its tokens stop working', { ok: true })),
          ...errorResponses(401, 403, 404, 429, 503),
        },
      }),
      onRequest,
    },
    async (request) => {
      await owned(request, request.params.client_id);
      await oidc.clients.remove(request.params.client_id);
      return { ok: true as const };
    },
  );
}
