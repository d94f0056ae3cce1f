/**
 * Connect (docs/protocol.md §6): the app management routes a signed-in integrator
 * uses from the browser (/api/connect/apps*, family CORS and the cross-site
 * guard of cors.ts) and the server-to-server provisioning route
 * (/api/connect/provision, authenticated by `Authorization: Bearer
 * <api_key>`, no browser CORS). Thin: a schema, one call to the
 * ConnectService (src/features/connect), a reply.
 */
import { Type } from 'typebox';
import type { FastifyRequest } from 'fastify';
import type { ConnectAppRecord } from './store.js';
import type { ConnectService } from './apps.js';
import { WEBHOOK_KEYS_MAX_AGE_SECONDS, type WebhookKeyRing } from './webhook-keys.js';
import { ANSWER, answer, EXAMPLE, errorResponses, example, NullableString } from '../../platform/http/schemas.js';
import { noStore, signedIn } from '../../web/session.js';
import { POLICY } from '../../platform/http/policy.js';
import type { TypedApp } from '../../platform/http/schema-types.js';
import { route, sessionRoute } from '../../web/route.js';
import { OcError } from '../../platform/errors.js';

const App = Type.Object({
  id: Type.String(),
  name: Type.String(),
  created_at: Type.String({ description: 'ISO 8601 UTC' }),
  rotated_at: NullableString({ description: 'ISO 8601 UTC of the last key rotation' }),
  webhook_url: NullableString({ description: "Where the app's webhooks go (PUT /api/connect/apps/{id}/webhook)" }),
});
/** The app of the examples, as GET /api/connect/apps lists it once its webhook is set. */
const EXAMPLE_APP = {
  id: EXAMPLE.id,
  name: 'Example shop',
  created_at: ANSWER.signedInAt,
  rotated_at: null,
  webhook_url: 'https://shop.example.com/oc-webhook',
};
/** The app just created or given a new key: it has no webhook yet, and the key is shown this once. */
const EXAMPLE_APP_WITH_KEY = { ok: true, app: { ...EXAMPLE_APP, webhook_url: null }, api_key: ANSWER.apiKey };
const WebhookBody = Type.Object(
  {
    url: Type.Union([Type.String({ minLength: 1, maxLength: 4096 }), Type.Null()], {
      description: 'An https URL (http only for a loopback host while the service runs on loopback); null removes the webhook',
    }),
  },
  { additionalProperties: false, ...example({ url: 'https://shop.example.com/oc-webhook' }) },
);
const Delivery = Type.Object({
  id: Type.String({ description: 'The `webhook-id` header of every attempt' }),
  type: Type.String({ description: '`account.merged`, `account.deleted`, `identity.linked`, `identity.unlinked`' }),
  state: Type.Union([Type.Literal('pending'), Type.Literal('delivered'), Type.Literal('failed')]),
  attempts: Type.Integer(),
  created_at: Type.String(),
  last_attempt_at: NullableString(),
  last_status: Type.Union([Type.Integer(), Type.Null()], { description: "The receiver's HTTP status on the last attempt" }),
  last_error: NullableString({ description: '`timeout`, `connect`, `dns`, `tls`, `refused_address`, `http_<status>`, `no_endpoint`' }),
  next_attempt_at: NullableString({ description: 'When a pending delivery is tried next' }),
  delivered_at: NullableString(),
});
const DeliveriesQuery = Type.Object({
  limit: Type.Optional(Type.String({ pattern: '^[0-9]{1,3}$', description: '1 to 100, default 50' })),
});
const APP_WITH_KEY_FIELDS = {
  ok: Type.Literal(true),
  app: App,
  api_key: Type.String({ description: 'Shown once: only its hash is kept. Send it as `Authorization: Bearer <api_key>`' }),
};
const AppCreated = Type.Object(APP_WITH_KEY_FIELDS, answer('The app and its API key, shown this once', EXAMPLE_APP_WITH_KEY));
const KeyRotated = Type.Object(
  APP_WITH_KEY_FIELDS,
  answer('The app and its new API key, shown this once', {
    ...EXAMPLE_APP_WITH_KEY,
    app: { ...EXAMPLE_APP, rotated_at: '2026-04-22T12:25:00.000Z' },
  }),
);
const CreateAppBody = Type.Object(
  { name: Type.String({ maxLength: 256, description: '1 to 64 characters after trimming' }) },
  example({ name: 'Example shop' }),
);
const AppParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 64, ...example(EXAMPLE.id) }) });
const ProvisionBody = Type.Object(
  {
    user_id: Type.String({
      minLength: 1,
      maxLength: 1024,
      description: "The integrator's own id for its user, 1 to 256 characters, kept exactly",
    }),
    email: Type.Optional(
      Type.Union([Type.String({ maxLength: 254 }), Type.Null()], {
        description: 'Unverified hint, kept privately; it never becomes a way to sign in',
      }),
    ),
  },
  example({ user_id: 'user-42', email: EXAMPLE.email }),
);
const Provisioned = Type.Object(
  {
    ok: Type.Literal(true),
    did_oc: Type.String({ pattern: '^did:oc:[0-9a-f]{32}$' }),
    is_new: Type.Boolean({ description: 'True only for the call that created the account' }),
  },
  answer("The did of the integrator's user: the same one for every call with its `user_id`", {
    ok: true,
    did_oc: 'did:oc:5f1c3a9e7b2d4068a1e3c5b7d9f20486',
    is_new: true,
  }),
);

/** What Connect's routes use. */
export interface ConnectRoutes {
  readonly connect: ConnectService;
  /** The public half of the webhook signing key is all they show. */
  readonly webhookKeys: Pick<WebhookKeyRing, 'published'>;
}

export function registerConnectRoutes(app: TypedApp, deps: ConnectRoutes): void {
  const connect = deps.connect;
  /** The app whose key authenticated a provision request. */
  const integrators = new WeakMap<FastifyRequest, ConnectAppRecord>();

  app.post(
    '/api/connect/apps',
    sessionRoute(POLICY.family, 'connect', 'Create an integrator app; answers its API key once', {
      body: CreateAppBody,
      response: { 200: AppCreated, ...errorResponses(400, 401, 403, 413, 415, 429) },
    }),
    async (request, reply) => {
      const current = signedIn(request);
      noStore(reply);
      return { ok: true, ...(await connect.createApp(current.account.id, request.body.name)) };
    },
  );

  app.get(
    '/api/connect/apps',
    sessionRoute(POLICY.family, 'connect', "The caller's apps, oldest first (never their keys)", {
      response: {
        200: Type.Object({ ok: Type.Literal(true), apps: Type.Array(App) }, answer("The caller's apps", { ok: true, apps: [EXAMPLE_APP] })),
        ...errorResponses(401, 429),
      },
    }),
    async (request, reply) => {
      const current = signedIn(request);
      noStore(reply);
      return { ok: true, apps: await connect.listApps(current.account.id) };
    },
  );

  app.post(
    '/api/connect/apps/:id/rotate',
    sessionRoute(POLICY.family, 'connect', 'Replace the API key; the old key stops working at once', {
      params: AppParams,
      response: { 200: KeyRotated, ...errorResponses(401, 403, 404, 429) },
    }),
    async (request, reply) => {
      const current = signedIn(request);
      noStore(reply);
      return { ok: true, ...(await connect.rotateKey(current.account.id, request.params.id)) };
    },
  );

  app.delete(
    '/api/connect/apps/:id',
    sessionRoute(POLICY.family, 'connect', 'Delete the app; its key stops working. Accounts it provisioned stay', {
      params: AppParams,
      response: {
        200: Type.Object({ ok: Type.Literal(true) }, answer('The app is deleted', { ok: true })),
        ...errorResponses(401, 403, 404, 429),
      },
    }),
    async (request, reply) => {
      const current = signedIn(request);
      noStore(reply);
      await connect.deleteApp(current.account.id, request.params.id);
      return { ok: true };
    },
  );

  app.put(
    '/api/connect/apps/:id/webhook',
    sessionRoute(POLICY.family, 'connect', "Set or remove where the app's signed webhooks go", {
      description:
        'Events about the accounts the app provisioned (`account.merged`, `account.deleted`, `identity.linked`, ' +
        '`identity.unlinked`) are POSTed there, signed with the key of GET /api/connect/webhook-keys. ' +
        '400 `invalid_webhook_url` for an endpoint that is not allowed.',
      params: AppParams,
      body: WebhookBody,
      response: {
        200: Type.Object(
          { ok: Type.Literal(true), app: App },
          answer("The app with its webhook's new address", { ok: true, app: EXAMPLE_APP }),
        ),
        ...errorResponses(400, 401, 403, 404, 413, 415, 429),
      },
    }),
    async (request, reply) => {
      const current = signedIn(request);
      noStore(reply);
      return { ok: true, app: await connect.setWebhook(current.account.id, request.params.id, request.body.url) };
    },
  );

  app.get(
    '/api/connect/apps/:id/deliveries',
    sessionRoute(POLICY.family, 'connect', "The app's webhook delivery log, newest first (finished ones are kept 30 days)", {
      params: AppParams,
      querystring: DeliveriesQuery,
      response: {
        200: Type.Object(
          { ok: Type.Literal(true), deliveries: Type.Array(Delivery) },
          answer('The deliveries, newest first: here one delivered at the second attempt', {
            ok: true,
            deliveries: [
              {
                id: 'wh_2f6d0c8e4a1b39577c5e0d2b8a4f6e13',
                type: 'identity.linked',
                state: 'delivered',
                attempts: 2,
                created_at: '2026-04-22T12:20:00.000Z',
                last_attempt_at: '2026-04-22T12:20:05.000Z',
                last_status: 200,
                last_error: null,
                next_attempt_at: null,
                delivered_at: '2026-04-22T12:20:05.000Z',
              },
            ],
          }),
        ),
        ...errorResponses(400, 401, 403, 404, 429),
      },
    }),
    async (request, reply) => {
      const current = signedIn(request);
      const limit = request.query.limit === undefined ? 50 : Number(request.query.limit);
      if (limit < 1 || limit > 100) throw new OcError('bad_request', 'limit: 1 to 100');
      noStore(reply);
      return { ok: true, deliveries: await connect.listDeliveries(current.account.id, request.params.id, limit) };
    },
  );

  app.get(
    '/api/connect/webhook-keys',
    route(POLICY.publicRead, 'connect', 'The public keys that sign webhooks, as a JWKS (separate from the session keys)', {
      description:
        'Match `webhook-key-id` to a `kid`; verify `webhook-signature` (`v1a,<base64>`, Ed25519) over `<webhook-id>.<webhook-timestamp>.<body>`.',
      response: {
        200: Type.Object(
          {
            keys: Type.Array(
              Type.Object({
                kty: Type.Literal('OKP'),
                crv: Type.Literal('Ed25519'),
                x: Type.String(),
                kid: Type.String(),
                use: Type.Literal('sig'),
                alg: Type.Literal('EdDSA'),
              }),
            ),
          },
          answer('The webhook signing key', {
            keys: [
              {
                kty: 'OKP',
                crv: 'Ed25519',
                x: 'Gb9ECWmEzf6FQbrBZ9w7lshQhqowtrbLDFw4rXAxZuE',
                kid: 'wh-3YZxBJ12jO3n_mXt_q-j_Z',
                use: 'sig',
                alg: 'EdDSA',
              },
            ],
          }),
        ),
        ...errorResponses(429),
      },
    }),
    async (_request, reply) => {
      reply.header('cache-control', `public, max-age=${WEBHOOK_KEYS_MAX_AGE_SECONDS}`);
      return { keys: deps.webhookKeys.published().map((key) => key.publicJwk) };
    },
  );

  app.post(
    '/api/connect/provision',
    {
      ...route(
        POLICY.serverCredential,
        'connect',
        "Provision a did:oc account for one of the integrator's users (idempotent per app and user_id)",
        {
          description:
            'Server to server: `Authorization: Bearer <api_key>`. The user is the identity `<app_id>:<user_id>` of a federated ' +
            'account; the app comes from the key, so an app can only reach its own users. A missing, wrong or rotated key is 401 ' +
            '`invalid_api_key`; the key of an app whose owner the operator disabled is 403 `account_disabled`.',
          security: [{ bearerAuth: [] }],
          body: ProvisionBody,
          response: { 200: Provisioned, ...errorResponses(400, 401, 403, 413, 415, 429, 503) },
        },
      ),
      // The key is checked before the body is even read: a caller without a
      // valid key learns nothing about the body rules and costs no parsing.
      onRequest: async (request) => {
        integrators.set(request, await connect.authenticate(request.headers.authorization));
      },
    },
    async (request, reply) => {
      const integrator = integrators.get(request);
      if (integrator === undefined) throw new Error('connect: the key hook did not run');
      reply.header('cache-control', 'no-store');
      return { ok: true, ...(await connect.provision(integrator, request.body)) };
    },
  );
}
