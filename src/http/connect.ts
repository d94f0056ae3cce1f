/**
 * Connect (docs/protocol.md §6): the app management routes a signed-in integrator
 * uses from the browser (/api/connect/apps*, family CORS and the cross-site
 * guard of cors.ts) and the server-to-server provisioning route
 * (/api/connect/provision, authenticated by `Authorization: Bearer
 * <api_key>`, no browser CORS). Thin: a schema, one call to the
 * ConnectService (src/connect), a reply.
 */
import { Type } from 'typebox';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { ConnectService } from '../connect/index.js';
import type { ConnectAppRecord } from '../storage/index.js';
import type { ServiceContext } from './context.js';
import { errorResponses, NullableString } from './schemas.js';
import { noStore, requireSession } from './session.js';
import { POLICY } from './policy.js';
import { typed } from './schema-types.js';

const App = Type.Object({
  id: Type.String(),
  name: Type.String(),
  created_at: Type.String({ description: 'ISO 8601 UTC' }),
  rotated_at: NullableString({ description: 'ISO 8601 UTC of the last key rotation' }),
});
const AppWithKey = Type.Object({
  ok: Type.Literal(true),
  app: App,
  api_key: Type.String({ description: 'Shown once: only its hash is kept. Send it as `Authorization: Bearer <api_key>`' }),
});
const CreateAppBody = Type.Object({ name: Type.String({ maxLength: 256, description: '1 to 64 characters after trimming' }) });
const AppParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 64 }) });
const ProvisionBody = Type.Object({
  user_id: Type.String({ minLength: 1, maxLength: 1024, description: "The integrator's own id for its user, 1 to 256 characters, kept exactly" }),
  email: Type.Optional(
    Type.Union([Type.String({ maxLength: 254 }), Type.Null()], {
      description: 'Unverified hint, kept privately; it never becomes a way to sign in',
    }),
  ),
});
const Provisioned = Type.Object({
  ok: Type.Literal(true),
  did_oc: Type.String({ pattern: '^did:oc:[0-9a-f]{32}$' }),
  is_new: Type.Boolean({ description: 'True only for the call that created the account' }),
});

const SESSION = [{ cookieAuth: [] }];

export function registerConnectRoutes(root: FastifyInstance, context: ServiceContext, connect: ConnectService): void {
  const app = typed(root);
  /** The app whose key authenticated a provision request. */
  const integrators = new WeakMap<FastifyRequest, ConnectAppRecord>();

  app.post(
    '/api/connect/apps',
    {
      config: { policy: POLICY.family },
      schema: {
        tags: ['connect'],
        summary: 'Create an integrator app; answers its API key once',
        security: SESSION,
        body: CreateAppBody,
        response: { 200: AppWithKey, ...errorResponses(400, 401, 403, 413, 415, 429) },
      },
    },
    async (request, reply) => {
      const current = await requireSession(context, request);
      noStore(reply);
      return { ok: true, ...(await connect.createApp(current.account.id, request.body.name)) };
    },
  );

  app.get(
    '/api/connect/apps',
    {
      config: { policy: POLICY.family },
      schema: {
        tags: ['connect'],
        summary: "The caller's apps, oldest first (never their keys)",
        security: SESSION,
        response: { 200: Type.Object({ ok: Type.Literal(true), apps: Type.Array(App) }), ...errorResponses(401, 429) },
      },
    },
    async (request, reply) => {
      const current = await requireSession(context, request);
      noStore(reply);
      return { ok: true, apps: await connect.listApps(current.account.id) };
    },
  );

  app.post(
    '/api/connect/apps/:id/rotate',
    {
      config: { policy: POLICY.family },
      schema: {
        tags: ['connect'],
        summary: 'Replace the API key; the old key stops working at once',
        security: SESSION,
        params: AppParams,
        response: { 200: AppWithKey, ...errorResponses(401, 403, 404, 429) },
      },
    },
    async (request, reply) => {
      const current = await requireSession(context, request);
      noStore(reply);
      return { ok: true, ...(await connect.rotateKey(current.account.id, request.params.id)) };
    },
  );

  app.delete(
    '/api/connect/apps/:id',
    {
      config: { policy: POLICY.family },
      schema: {
        tags: ['connect'],
        summary: 'Delete the app; its key stops working. Accounts it provisioned stay',
        security: SESSION,
        params: AppParams,
        response: { 200: Type.Object({ ok: Type.Literal(true) }), ...errorResponses(401, 403, 404, 429) },
      },
    },
    async (request, reply) => {
      const current = await requireSession(context, request);
      noStore(reply);
      await connect.deleteApp(current.account.id, request.params.id);
      return { ok: true };
    },
  );

  app.post(
    '/api/connect/provision',
    {
      config: { policy: POLICY.serverCredential },
      schema: {
        tags: ['connect'],
        summary: "Provision a did:oc account for one of the integrator's users (idempotent per app and user_id)",
        description:
          'Server to server: `Authorization: Bearer <api_key>`. The user is the identity `<app_id>:<user_id>` of a federated ' +
          "account; the app comes from the key, so an app can only reach its own users. A missing, wrong or rotated key is 401 " +
          '`invalid_api_key`.',
        security: [{ bearerAuth: [] }],
        body: ProvisionBody,
        response: { 200: Provisioned, ...errorResponses(400, 401, 413, 415, 429, 503) },
      },
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
