/**
 * Connect's apps in the admin API (docs/api.md "Admin"), behind the same
 * gate as every admin route (routes.ts): every owner's apps, a new API key
 * on the owner's behalf, an app's webhook deliveries, and sending a failed
 * one again.
 */
import { Type } from 'typebox';
import { OcError } from '../../platform/errors.js';
import { POLICY } from '../../platform/http/policy.js';
import { answer, errorResponses, example, NullableString } from '../../platform/http/schemas.js';
import type { TypedApp } from '../../platform/http/schema-types.js';
import { route } from '../../web/route.js';
import type { AdminApps } from './apps.js';
import { actorOf, type AdminGate } from './gate-routes.js';
import { OPERATOR_TOKEN, Reason } from './routes.js';

/** What the admin app routes use. */
export interface AdminAppRoutes {
  readonly gate: AdminGate;
  readonly apps: AdminApps;
}

const MAX_PAGE = 100;
const DEFAULT_PAGE = 50;
const Id = (description: string) =>
  Type.String({ minLength: 1, maxLength: 64, pattern: '^[A-Za-z0-9_-]+$', description, examples: ['0123456789abcdef0123456789abcdef'] });
const AppParams = Type.Object({ app_id: Id('The app’s id') });
const PageSize = Type.Optional(Type.String({ pattern: '^[0-9]{1,3}$', description: `1 to ${MAX_PAGE}; default ${DEFAULT_PAGE}` }));

const App = Type.Object({
  id: Type.String(),
  name: Type.String(),
  owner: Type.String({ description: 'The owner’s `did:oc`' }),
  created_at: Type.String(),
  rotated_at: NullableString(),
  webhook_url: NullableString(),
});
const EXAMPLE_APP = {
  id: '0123456789abcdef0123456789abcdef',
  name: 'Acme',
  owner: 'did:oc:0123456789abcdef0123456789abcdef',
  created_at: '2026-11-01T09:00:00.000Z',
  rotated_at: null,
  webhook_url: 'https://acme.example/hooks/oc',
};

function pageSize(limit: string | undefined): number {
  const size = limit === undefined ? DEFAULT_PAGE : Number(limit);
  if (!(size >= 1 && size <= MAX_PAGE)) throw new OcError('bad_request', `admin: limit must be 1 to ${MAX_PAGE}`);
  return size;
}

export function registerAdminAppRoutes(app: TypedApp, deps: AdminAppRoutes): void {
  app.get(
    '/api/admin/apps',
    {
      ...route(POLICY.operator, 'admin', 'Every owner’s Connect apps, by id (the read scope)', {
        description: 'Each app’s name, owner, key rotation and webhook endpoint; `next` goes on as `after`.',
        security: OPERATOR_TOKEN,
        querystring: Type.Object({ after: Type.Optional(Id('The `next` of the previous page')), limit: PageSize }),
        response: {
          200: Type.Object(
            { ok: Type.Literal(true), apps: Type.Array(App), next: NullableString() },
            answer('A page of apps', { ok: true, apps: [EXAMPLE_APP], next: null }),
          ),
          ...errorResponses(400, 401, 403, 404, 429),
        },
      }),
      onRequest: deps.gate('read'),
    },
    async (request, reply) => {
      reply.header('cache-control', 'no-store');
      return { ok: true as const, ...(await deps.apps.list(pageSize(request.query.limit), request.query.after)) };
    },
  );

  app.post(
    '/api/admin/apps/:app_id/rotate-key',
    {
      ...route(POLICY.operator, 'admin', 'A new API key for an app, on its owner’s behalf (the write scope; audited)', {
        description:
          'For a key that leaked when its owner cannot rotate it: the old key stops working at once; the new one is in ' +
          'this answer only, to hand to the owner. Audited as `app.rotate_key` with the reason.',
        security: OPERATOR_TOKEN,
        params: AppParams,
        body: Type.Object({ reason: Reason }, { additionalProperties: false, ...example({ reason: 'Key found in a public repository' }) }),
        response: {
          200: Type.Object(
            {
              ok: Type.Literal(true),
              api_key: Type.String({ description: 'Shown in this answer only' }),
              app: Type.Object({}, { additionalProperties: true }),
            },
            answer('The new key', { ok: true, api_key: 'oc_live_…', app: { id: EXAMPLE_APP.id, name: 'Acme' } }),
          ),
          ...errorResponses(400, 401, 403, 404, 413, 415, 429),
        },
      }),
      onRequest: deps.gate({ scope: 'write', destructive: true }),
    },
    async (request, reply) => {
      reply.header('cache-control', 'no-store');
      const issued = await deps.apps.rotateKey(request.params.app_id, request.body.reason, actorOf(deps.gate, request));
      return { ok: true as const, api_key: issued.api_key, app: { ...issued.app } };
    },
  );

  app.get(
    '/api/admin/apps/:app_id/deliveries',
    {
      ...route(POLICY.operator, 'admin', 'An app’s webhook deliveries, newest first (the read scope)', {
        description: 'As the owner’s delivery log: each delivery’s event type, state, attempts, last status and last error.',
        security: OPERATOR_TOKEN,
        params: AppParams,
        querystring: Type.Object({ limit: PageSize }),
        response: {
          200: Type.Object(
            { ok: Type.Literal(true), deliveries: Type.Array(Type.Object({}, { additionalProperties: true })) },
            answer('The deliveries', {
              ok: true,
              deliveries: [
                {
                  id: '0123456789abcdef0123456789abcdef',
                  type: 'identity.linked',
                  state: 'failed',
                  attempts: 8,
                  created_at: '2026-11-28T10:00:00.000Z',
                  last_attempt_at: '2026-11-29T08:00:00.000Z',
                  last_status: 503,
                  last_error: 'http_503',
                },
              ],
            }),
          ),
          ...errorResponses(400, 401, 403, 404, 429),
        },
      }),
      onRequest: deps.gate('read'),
    },
    async (request, reply) => {
      reply.header('cache-control', 'no-store');
      return { ok: true as const, deliveries: await deps.apps.deliveries(request.params.app_id, pageSize(request.query.limit)) };
    },
  );

  app.post(
    '/api/admin/apps/:app_id/deliveries/:delivery_id/resend',
    {
      ...route(POLICY.operator, 'admin', 'Send a failed webhook delivery again (the write scope; audited)', {
        description:
          'One more attempt, due now, with the delivery’s own id and body, so a receiver that got it after all can tell. ' +
          '409 `delivery_not_failed` for one still pending or delivered. Audited as `webhook.resend`.',
        security: OPERATOR_TOKEN,
        params: Type.Object({ app_id: Id('The app’s id'), delivery_id: Id('The delivery’s id') }),
        body: Type.Object({}, { additionalProperties: false, ...example({}) }),
        response: {
          202: Type.Object({ ok: Type.Literal(true) }, answer('Queued', { ok: true })),
          ...errorResponses(400, 401, 403, 404, 409, 413, 415, 429),
        },
      }),
      onRequest: deps.gate('write'),
    },
    async (request, reply) => {
      await deps.apps.resend(request.params.app_id, request.params.delivery_id, actorOf(deps.gate, request));
      reply.code(202).header('cache-control', 'no-store');
      return { ok: true as const };
    },
  );
}
