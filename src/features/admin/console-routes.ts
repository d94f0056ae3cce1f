/**
 * The operators' console (docs/operations.md "The console"): its page at
 * `ADMIN_PATH` (and every path under it, which the page itself routes), the
 * state it starts from (`GET /api/admin/session`), and the answer of every
 * other path under `/api/admin/`. All of them go through the one gate
 * (gate-routes.ts): to anyone but an operator they are a path no route serves.
 */
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { didOf } from '../../identity/session/index.js';
import type { Brand } from '../../platform/config.js';
import { POLICY } from '../../platform/http/policy.js';
import { answer, errorResponses, NullableString } from '../../platform/http/schemas.js';
import type { TypedApp } from '../../platform/http/schema-types.js';
import { route } from '../../web/route.js';
import { loadPageFiles, localizedPages, pageLocale, pageSender, type PageFiles } from '../../web/pages.js';
import { CONSOLE_STEP_UP_MS, DESTRUCTIVE_STEP_UP_MS, type AdminGate } from './gate-routes.js';
import { OPERATOR_TOKEN } from './routes.js';

export interface ConsoleRoutes {
  readonly gate: AdminGate;
  /** ADMIN_PATH. */
  readonly path: string;
  readonly brand: Brand;
  /** How many security keys and passkeys the account holds. */
  readonly keysOf: (accountId: string) => Promise<number>;
  readonly now: () => Date;
}

/** HEAD comes with GET. */
const METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'] as const;

function isoOrNull(ms: number | null): string | null {
  return ms === null ? null : new Date(ms).toISOString();
}

export function registerConsoleRoutes(
  app: FastifyInstance,
  routes: TypedApp,
  deps: ConsoleRoutes,
  loaded: PageFiles = loadPageFiles(),
): void {
  const { gate } = deps;
  const sendPage = pageSender(localizedPages(loaded, deps.brand));

  routes.get(
    '/api/admin/session',
    {
      ...route(POLICY.operator, 'admin', 'Who the console or token acts as, and how fresh the console’s key step-up is', {
        description:
          'The console starts here. For the console (the session cookie of an operator’s account) this answers without a ' +
          'fresh step-up: `step_up.fresh_until` says until when the console may read and change, `destructive_until` until ' +
          'when it may delete or rotate; both are null when a step-up with a security key or passkey ' +
          '(POST /api/auth/webauthn/assertion/verify) is due. `keys` counts the account’s keys: with none, it must add one ' +
          'on its account page first. For a token, `via` is `token` and `step_up` null.',
        security: OPERATOR_TOKEN,
        response: {
          200: Type.Object(
            {
              ok: Type.Literal(true),
              operator: Type.Object({ did_oc: Type.String(), display_name: NullableString() }),
              via: Type.Union([Type.Literal('console'), Type.Literal('token')]),
              keys: Type.Integer({ minimum: 0, description: 'The operator account’s security keys and passkeys' }),
              step_up: Type.Union([
                Type.Object({
                  at: NullableString({ description: 'The last key step-up of this session (ISO 8601), or null' }),
                  fresh_until: NullableString({ description: 'Until when the console may act; null when a step-up is due' }),
                  destructive_until: NullableString({ description: 'Until when it may take a destructive action' }),
                }),
                Type.Null(),
              ]),
              console_path: Type.String({ description: 'ADMIN_PATH' }),
            },
            answer('The operator and the console’s step-up', {
              ok: true,
              operator: { did_oc: 'did:oc:0123456789abcdef0123456789abcdef', display_name: 'Ops' },
              via: 'console',
              keys: 1,
              step_up: { at: '2026-11-28T10:00:00.000Z', fresh_until: '2026-11-28T10:10:00.000Z', destructive_until: null },
              console_path: '/admin',
            }),
          ),
          ...errorResponses(401, 403, 404, 429),
        },
      }),
      onRequest: gate({ scope: 'read', stale: true }),
    },
    async (request, reply) => {
      reply.header('cache-control', 'no-store');
      const admitted = gate.admitted(request);
      const nowMs = deps.now().getTime();
      const stepUpAt = admitted.session?.freshness.step_up_at ?? null;
      const until = (window: number) => (stepUpAt !== null && stepUpAt <= nowMs && nowMs - stepUpAt < window ? stepUpAt + window : null);
      const display = admitted.session?.account.display_name ?? null;
      return {
        ok: true as const,
        operator: { did_oc: didOf(admitted.accountId), display_name: display },
        via: admitted.session === null ? ('token' as const) : ('console' as const),
        keys: await deps.keysOf(admitted.accountId),
        step_up:
          admitted.session === null
            ? null
            : {
                at: isoOrNull(stepUpAt),
                fresh_until: isoOrNull(until(CONSOLE_STEP_UP_MS)),
                destructive_until: isoOrNull(until(DESTRUCTIVE_STEP_UP_MS)),
              },
        console_path: deps.path,
      };
    },
  );

  // Every other path under /api/admin/: the gate's look-ups, then what a path no route serves.
  app.route({
    method: [...METHODS],
    url: '/api/admin/*',
    config: { policy: POLICY.operator },
    schema: { hide: true },
    handler: async (request) => gate.refuse(request),
  });

  // The console's page, for an operator's session; it asks for the step-up itself.
  const page = gate({ scope: 'read', stale: true });
  for (const url of [deps.path, `${deps.path}/*`]) {
    app.get(url, { config: { policy: POLICY.unlimited }, schema: { hide: true }, onRequest: page }, async (request, reply) => {
      return sendPage(request, reply, 'admin', pageLocale(request), { console_path: deps.path });
    });
  }
}
