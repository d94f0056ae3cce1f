/**
 * The signing keys in the admin API (docs/api.md "Admin"), behind the same
 * gate as every admin route (routes.ts): list them with their state and
 * age, and rotate the session or the OpenID provider's keys.
 */
import { Type } from 'typebox';
import { POLICY } from '../../platform/http/policy.js';
import { answer, errorResponses, example, NullableString } from '../../platform/http/schemas.js';
import type { TypedApp } from '../../platform/http/schema-types.js';
import { route } from '../../web/route.js';
import type { AdminKeys } from './keys.js';
import type { OperatorService } from './operators.js';
import { actorOf, OPERATOR_TOKEN, operatorGate, Reason } from './routes.js';

/** What the admin key routes use. */
export interface AdminKeyRoutes {
  readonly operators: OperatorService;
  readonly keys: AdminKeys;
}

const Key = Type.Object({
  use: Type.Union([Type.Literal('session'), Type.Literal('oidc'), Type.Literal('webhook')], {
    description: '`session`: the `oc_session` cookie; `oidc`: the OpenID provider’s tokens; `webhook`: Connect’s webhooks',
  }),
  alg: Type.String(),
  kid: Type.String(),
  state: Type.Union([Type.Literal('signing'), Type.Literal('pending'), Type.Literal('published'), Type.Literal('withdrawn')]),
  signs_from: NullableString({ description: 'When a pending key starts signing (ISO 8601)' }),
  created_at: NullableString({ description: 'ISO 8601; null for the webhook key' }),
  retired_at: NullableString(),
});

export function registerAdminKeyRoutes(app: TypedApp, deps: AdminKeyRoutes): void {
  app.get(
    '/api/admin/keys',
    {
      ...route(POLICY.operator, 'admin', 'The signing keys, where each stands and how old it is (the read scope)', {
        description: 'As `oc-host keys list`, with the webhook key. Public facts only: no private part.',
        security: OPERATOR_TOKEN,
        response: {
          200: Type.Object(
            { ok: Type.Literal(true), keys: Type.Array(Key) },
            answer('The keys', {
              ok: true,
              keys: [
                {
                  use: 'session',
                  alg: 'EdDSA',
                  kid: 'k-2026-11-01',
                  state: 'signing',
                  signs_from: null,
                  created_at: '2026-11-01T09:00:00.000Z',
                  retired_at: null,
                },
              ],
            }),
          ),
          ...errorResponses(404, 429),
        },
      }),
      onRequest: operatorGate(deps.operators, 'read'),
    },
    async (_request, reply) => {
      reply.header('cache-control', 'no-store');
      return { ok: true as const, keys: await deps.keys.list() };
    },
  );

  app.post(
    '/api/admin/keys/:use/rotate',
    {
      ...route(POLICY.operator, 'admin', 'Rotate the session key or the OpenID provider’s keys (the write scope; audited)', {
        description:
          'As `oc-host keys rotate` (`session`) or `oc-host keys rotate --oidc` (`oidc`): the new key is published at once; ' +
          'a session key signs from 90 s later, once every instance has read it, and the keys it replaces stay published ' +
          'for their overlap, so no cookie or token they signed stops verifying. Audited as `keys.rotate`.',
        security: OPERATOR_TOKEN,
        params: Type.Object({ use: Type.Union([Type.Literal('session'), Type.Literal('oidc')], { examples: ['session'] }) }),
        body: Type.Object({ reason: Type.Optional(Reason) }, { additionalProperties: false, ...example({ reason: 'Quarterly rotation' }) }),
        response: {
          200: Type.Object(
            { ok: Type.Literal(true), kids: Type.Array(Type.String(), { description: 'The new keys’ ids' }) },
            answer('Rotated', { ok: true, kids: ['k-2026-11-29'] }),
          ),
          ...errorResponses(400, 404, 413, 415, 429),
        },
      }),
      onRequest: operatorGate(deps.operators, 'write'),
    },
    async (request, reply) => {
      reply.header('cache-control', 'no-store');
      return { ok: true as const, kids: await deps.keys.rotate(request.params.use, request.body.reason ?? null, actorOf(request)) };
    },
  );
}
