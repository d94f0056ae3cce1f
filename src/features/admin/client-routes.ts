/**
 * The OpenID provider's clients in the admin API (docs/api.md "Admin"), for
 * an operator's API token, behind the same gate as every admin route
 * (routes.ts): list them, register one (its secret in that answer only), a
 * new secret, the first-party flag, removal. Each change is audited.
 */
import { Type } from 'typebox';
import { POLICY } from '../../platform/http/policy.js';
import { ANSWER, answer, EXAMPLE_CLIENT_METADATA, errorResponses, example, NullableString } from '../../platform/http/schemas.js';
import type { TypedApp } from '../../platform/http/schema-types.js';
import { route } from '../../web/route.js';
import { CLIENT_AUTH_METHODS, OIDC_ALGORITHMS, type ClientView, type IssuedClient } from '../oidc/index.js';
import type { AdminClients } from './clients.js';
import { actorOf, type AdminGate } from './gate-routes.js';
import { OPERATOR_TOKEN, Reason } from './routes.js';

/** What the admin client routes use. */
export interface AdminClientRoutes {
  readonly gate: AdminGate;
  readonly clients: AdminClients;
}

const Client = Type.Object({
  client_id: Type.String(),
  metadata: Type.Object({}, { additionalProperties: true, description: 'The registered RFC 7591 metadata, without the secret' }),
  owner_app_id: Type.Union([Type.String(), Type.Null()], {
    description: 'The Connect app that registered it; null for the operator’s own',
  }),
  first_party: Type.Boolean({ description: 'Signs people in without a consent screen' }),
  disabled_at: NullableString({ description: 'When the operator held it (ISO 8601): it signs nobody in and redeems nothing' }),
  created_at: Type.String({ description: 'ISO 8601 UTC' }),
  updated_at: Type.String({ description: 'ISO 8601 UTC' }),
});
const IssuedClientBody = Type.Object({
  ...Client.properties,
  client_secret: Type.Optional(Type.String({ description: 'Shown in this answer only; oc-host keeps its hash' })),
});
const EXAMPLE = {
  client_id: ANSWER.clientId,
  metadata: EXAMPLE_CLIENT_METADATA,
  owner_app_id: null,
  first_party: false,
  disabled_at: null,
  created_at: ANSWER.clientRegisteredAt,
  updated_at: ANSWER.clientRegisteredAt,
};
const ClientParams = Type.Object({
  client_id: Type.String({ minLength: 1, maxLength: 64, pattern: '^[A-Za-z0-9_-]+$', ...example(ANSWER.clientId) }),
});
const Uri = Type.String({ minLength: 1, maxLength: 2000 });

/** The answer of a change to a client: the client as it is now. */
const CHANGED = {
  200: Type.Object({ ok: Type.Literal(true), client: Client }, answer('Changed', { ok: true, client: EXAMPLE })),
  ...errorResponses(400, 401, 403, 404, 413, 415, 429),
};

function clientBody(client: ClientView | IssuedClient) {
  return {
    client_id: client.client_id,
    metadata: client.metadata,
    owner_app_id: client.owner_app_id,
    first_party: client.first_party,
    disabled_at: client.disabled_at === null ? null : new Date(client.disabled_at).toISOString(),
    created_at: new Date(client.created_at).toISOString(),
    updated_at: new Date(client.updated_at).toISOString(),
    ...('client_secret' in client && client.client_secret !== undefined ? { client_secret: client.client_secret } : {}),
  };
}

export function registerAdminClientRoutes(app: TypedApp, deps: AdminClientRoutes): void {
  app.get(
    '/api/admin/clients',
    {
      ...route(POLICY.operator, 'admin', 'Every OpenID client, the operator’s own and the Connect apps’ (the read scope)', {
        description: 'As `oc-host oidc clients list`: each client’s metadata without its secret, its owner and the first-party flag.',
        security: OPERATOR_TOKEN,
        response: {
          200: Type.Object(
            { ok: Type.Literal(true), clients: Type.Array(Client) },
            answer('The clients', { ok: true, clients: [EXAMPLE] }),
          ),
          ...errorResponses(401, 403, 404, 429),
        },
      }),
      onRequest: deps.gate('read'),
    },
    async (_request, reply) => {
      reply.header('cache-control', 'no-store');
      return { ok: true as const, clients: (await deps.clients.list()).map(clientBody) };
    },
  );

  app.post(
    '/api/admin/clients',
    {
      ...route(POLICY.operator, 'admin', 'Register an OpenID client of the operator’s own (the write scope; audited)', {
        description:
          'As `oc-host oidc clients add`: the metadata is checked as the provider loads it (400 `bad_request` with the ' +
          'reason). A confidential client’s secret is in this answer only. Audited as `client.create`.',
        security: OPERATOR_TOKEN,
        body: Type.Object(
          {
            client_name: Type.String({ minLength: 1, maxLength: 100 }),
            redirect_uris: Type.Array(Uri, { maxItems: 20 }),
            post_logout_redirect_uris: Type.Optional(Type.Array(Uri, { maxItems: 20 })),
            token_endpoint_auth_method: Type.Optional(Type.Union(CLIENT_AUTH_METHODS.map((method) => Type.Literal(method)))),
            logo_uri: Type.Optional(Uri),
            client_uri: Type.Optional(Uri),
            id_token_signed_response_alg: Type.Optional(Type.Union(OIDC_ALGORITHMS.map((alg) => Type.Literal(alg)))),
            subject_type: Type.Optional(Type.Union([Type.Literal('public'), Type.Literal('pairwise')])),
            backchannel_logout_uri: Type.Optional(Uri),
            application_type: Type.Optional(Type.Union([Type.Literal('web'), Type.Literal('native')])),
            machine: Type.Optional(Type.Boolean({ description: 'A service calling an API: the client credentials grant only' })),
            device: Type.Optional(Type.Boolean({ description: 'A device app (RFC 8628)' })),
            require_pushed_authorization_requests: Type.Optional(Type.Boolean()),
            first_party: Type.Optional(Type.Boolean({ description: 'No consent screen; default false' })),
          },
          {
            additionalProperties: false,
            ...example({ client_name: 'Acme', redirect_uris: ['https://acme.example/callback'], first_party: false }),
          },
        ),
        response: {
          201: Type.Object({ ok: Type.Literal(true), client: IssuedClientBody }, answer('Registered', { ok: true, client: EXAMPLE })),
          ...errorResponses(400, 401, 403, 404, 413, 415, 429),
        },
      }),
      onRequest: deps.gate('write'),
    },
    async (request, reply) => {
      const { first_party: firstParty, ...input } = request.body;
      const issued = await deps.clients.create(input, firstParty === true, actorOf(deps.gate, request));
      reply.code(201).header('cache-control', 'no-store');
      return { ok: true as const, client: clientBody(issued) };
    },
  );

  app.post(
    '/api/admin/clients/:client_id/rotate',
    {
      ...route(POLICY.operator, 'admin', 'A new secret for a confidential client (the write scope; audited)', {
        description:
          'As `oc-host oidc clients rotate`: the old secret stops working at once; the new one is in this answer only. ' +
          'A public client has none (400 `bad_request`). Audited as `client.rotate` with the reason, when given.',
        security: OPERATOR_TOKEN,
        params: ClientParams,
        body: Type.Object(
          { reason: Type.Optional(Reason) },
          { additionalProperties: false, ...example({ reason: 'The secret was in a leaked log' }) },
        ),
        response: {
          200: Type.Object({ ok: Type.Literal(true), client: IssuedClientBody }, answer('The new secret', { ok: true, client: EXAMPLE })),
          ...errorResponses(400, 401, 403, 404, 413, 415, 429),
        },
      }),
      onRequest: deps.gate({ scope: 'write', destructive: true }),
    },
    async (request, reply) => {
      reply.header('cache-control', 'no-store');
      const issued = await deps.clients.rotateSecret(request.params.client_id, request.body.reason ?? null, actorOf(deps.gate, request));
      return { ok: true as const, client: clientBody(issued) };
    },
  );

  app.post(
    '/api/admin/clients/:client_id/first-party',
    {
      ...route(POLICY.operator, 'admin', 'Whether a client skips the consent screen (the write scope; audited)', {
        description: 'As `oc-host oidc clients first-party <id> on|off`. Audited as `client.first_party`.',
        security: OPERATOR_TOKEN,
        params: ClientParams,
        body: Type.Object({ first_party: Type.Boolean() }, { additionalProperties: false, ...example({ first_party: true }) }),
        response: CHANGED,
      }),
      onRequest: deps.gate('write'),
    },
    async (request, reply) => {
      reply.header('cache-control', 'no-store');
      const client = await deps.clients.setFirstParty(request.params.client_id, request.body.first_party, actorOf(deps.gate, request));
      return { ok: true as const, client: clientBody(client) };
    },
  );

  const OptionalUri = Type.Optional(Type.Union([Uri, Type.Null()], { description: 'A URI; null removes it' }));
  app.post(
    '/api/admin/clients/:client_id/edit',
    {
      ...route(POLICY.operator, 'admin', 'Change a client’s redirect URIs, name, logo and links (the write scope; audited)', {
        description:
          'Only the members sent change; null removes an optional URI. The result is checked as the provider would load it: ' +
          '400 `bad_request` with its reason, and nothing changes. Audited as `client.edit` with the names of what changed.',
        security: OPERATOR_TOKEN,
        params: ClientParams,
        body: Type.Object(
          {
            client_name: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
            redirect_uris: Type.Optional(Type.Array(Uri, { maxItems: 20 })),
            post_logout_redirect_uris: Type.Optional(Type.Array(Uri, { maxItems: 20 })),
            logo_uri: OptionalUri,
            client_uri: OptionalUri,
            policy_uri: OptionalUri,
            tos_uri: OptionalUri,
            backchannel_logout_uri: OptionalUri,
          },
          {
            additionalProperties: false,
            ...example({ redirect_uris: ['https://acme.example/callback', 'https://acme.example/oidc/callback'], logo_uri: null }),
          },
        ),
        response: CHANGED,
      }),
      onRequest: deps.gate('write'),
    },
    async (request, reply) => {
      reply.header('cache-control', 'no-store');
      const client = await deps.clients.edit(request.params.client_id, request.body, actorOf(deps.gate, request));
      return { ok: true as const, client: clientBody(client) };
    },
  );

  for (const disabling of [true, false]) {
    app.post(
      `/api/admin/clients/:client_id/${disabling ? 'disable' : 'enable'}`,
      {
        ...route(
          POLICY.operator,
          'admin',
          disabling
            ? 'Hold a client: it signs nobody in and redeems no code or token (the write scope; audited)'
            : 'Lift the hold of a client (the write scope; audited)',
          {
            description: disabling
              ? 'The provider no longer finds the client: its sign-ins, codes, refresh tokens and access tokens are refused ' +
                '(`invalid_client`, `invalid_token`) until the hold is lifted. Audited as `client.disable` with the reason.'
              : 'Audited as `client.enable`.',
            security: OPERATOR_TOKEN,
            params: ClientParams,
            body: Type.Object(
              { reason: disabling ? Reason : Type.Optional(Reason) },
              { additionalProperties: false, ...example({ reason: 'Its redirect domain lapsed' }) },
            ),
            response: CHANGED,
          },
        ),
        onRequest: deps.gate('write'),
      },
      async (request, reply) => {
        reply.header('cache-control', 'no-store');
        const reason = (request.body as { reason?: string }).reason ?? null;
        const client = await deps.clients.setDisabled(request.params.client_id, disabling, reason, actorOf(deps.gate, request));
        return { ok: true as const, client: clientBody(client) };
      },
    );
  }

  app.post(
    '/api/admin/clients/:client_id/delete',
    {
      ...route(POLICY.operator, 'admin', 'Delete a client with its consents, codes and tokens (the write scope; audited)', {
        description:
          'As `oc-host oidc clients remove`: the client signs nobody in from then on, and every token it holds ends. ' +
          'Audited as `client.delete` with the reason.',
        security: OPERATOR_TOKEN,
        params: ClientParams,
        body: Type.Object({ reason: Reason }, { additionalProperties: false, ...example({ reason: 'The app was retired' }) }),
        response: {
          200: Type.Object({ ok: Type.Literal(true) }, answer('Deleted', { ok: true })),
          ...errorResponses(400, 401, 403, 404, 413, 415, 429),
        },
      }),
      onRequest: deps.gate({ scope: 'write', destructive: true }),
    },
    async (request, reply) => {
      reply.header('cache-control', 'no-store');
      await deps.clients.remove(request.params.client_id, request.body.reason, actorOf(deps.gate, request));
      return { ok: true as const };
    },
  );
}
