/**
 * The console's dashboard (docs/api.md "Admin", `GET /api/admin/dashboard`),
 * and what it counts as answers leave: each way in's sign-ins and refusals
 * (by the error code it answered), /api/check by its cache result and
 * /api/verify by its outcome. A hook of the answer, not of the ways in: a
 * new way in is counted by naming its route in {@link WAYS_IN}.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { OcError } from '../../platform/errors.js';
import { POLICY } from '../../platform/http/policy.js';
import { answer, errorResponses } from '../../platform/http/schemas.js';
import type { TypedApp } from '../../platform/http/schema-types.js';
import { route } from '../../web/route.js';
import type { AdminDashboard, DashboardCounter } from './dashboard.js';
import type { AdminGate } from './gate-routes.js';
import { OPERATOR_TOKEN } from './routes.js';

/** The route of each way in, and the way it is counted as. */
const WAYS_IN: Readonly<Record<string, string>> = {
  '/api/auth/signin': 'bip322',
  '/api/auth/email-otp/verify': 'email_otp',
  '/api/auth/email-otp/link': 'email_otp',
  '/api/auth/passkey/signin': 'passkey',
};
const PROVIDER_CALLBACK = '/api/auth/:provider/callback';
/** An error body's code: the answers are the service's own JSON, `{"ok":false,"error":"<code>",…}`. */
const ERROR_CODE = /"error":"([a-z_]{1,64})"/;
/** The provider callback's refusal goes back to the page as `oauth_error=<code>`. */
const OAUTH_ERROR = /[?&]oauth_error=([a-z_]{1,64})/;

export interface DashboardRoutes {
  readonly gate: AdminGate;
  readonly dashboard: AdminDashboard;
  readonly counter: DashboardCounter;
  /** The providers configured: a callback of any other name is not a way in. */
  readonly providers: ReadonlySet<string>;
}

function codeOf(payload: unknown): string {
  return typeof payload === 'string' ? (ERROR_CODE.exec(payload)?.[1] ?? 'unknown') : 'unknown';
}

/** Counts the answer of `request`, if it is one the dashboard shows. */
export function countAnswer(
  counter: DashboardCounter,
  providers: ReadonlySet<string>,
  request: FastifyRequest,
  reply: FastifyReply,
  payload: unknown,
): void {
  const url = request.routeOptions.url;
  if (url === undefined) return;
  const status = reply.statusCode;
  if (url === '/api/check') {
    const cache = reply.getHeader('x-cache');
    if (cache === 'hit' || cache === 'miss') counter.count('check', cache);
    return;
  }
  if (url === '/api/verify') {
    counter.count('verify', status === 200 ? 'ok' : 'refused');
    return;
  }
  if (url === PROVIDER_CALLBACK) {
    const provider = (request.params as { provider?: string }).provider ?? '';
    if (!providers.has(provider)) return;
    const location = reply.getHeader('location');
    const refused = typeof location === 'string' ? OAUTH_ERROR.exec(location)?.[1] : undefined;
    if (refused !== undefined) counter.count('signin_failed', `oauth:${provider} ${refused}`);
    else if (status === 302 || status === 303) counter.count('signin', `oauth:${provider}`);
    else if (status >= 400) counter.count('signin_failed', `oauth:${provider} ${codeOf(payload)}`);
    return;
  }
  const way = WAYS_IN[url];
  if (way === undefined || request.method !== 'POST') return;
  if (status === 200) counter.count('signin', way);
  // A refused sign-in, by the code it answered; rate limits and outages included, a 404 of a way not set up not.
  else if (status >= 400 && status !== 404) counter.count('signin_failed', `${way} ${codeOf(payload)}`);
}

export function registerDashboardRoutes(app: FastifyInstance, routes: TypedApp, deps: DashboardRoutes): void {
  // A callback hook: it runs on every answer, so it does no more than a few comparisons for most.
  app.addHook('onSend', (request, reply, payload, done) => {
    try {
      countAnswer(deps.counter, deps.providers, request, reply, payload);
    } catch {
      // Counting never stands in an answer's way: a count missed is a count missed.
    }
    done(null, payload);
  });

  routes.get(
    '/api/admin/dashboard',
    {
      ...route(POLICY.operator, 'admin', 'The dashboard: sign-ins, refusals, OpenID sign-ins, check and verify per day (the read scope)', {
        description:
          'The last `days` days (UTC, today last) of what every instance counted: sign-ins by way in, refused sign-ins by way ' +
          'and error code, OpenID sign-ins by client, /api/check by cache result and /api/verify by outcome; accounts created ' +
          'per day, the sessions live now, and each OpenID client with the accounts that consented to it. Counts reach the ' +
          'database within 10 seconds of the answer they count. Names no person; not audited.',
        security: OPERATOR_TOKEN,
        querystring: Type.Object({
          days: Type.Optional(Type.String({ pattern: '^[0-9]{1,2}$', description: 'Days to show, 1 to 90; default 14', examples: ['14'] })),
        }),
        response: {
          200: Type.Object(
            {
              ok: Type.Literal(true),
              days: Type.Array(
                Type.Object({
                  day: Type.String({ description: 'YYYY-MM-DD (UTC)' }),
                  signins: Type.Record(Type.String(), Type.Integer(), {
                    description: 'By way in: bip322, email_otp, passkey, oauth:<provider>',
                  }),
                  failures: Type.Record(Type.String(), Type.Integer(), { description: 'By `<way> <error code>`' }),
                  oidc: Type.Record(Type.String(), Type.Integer(), { description: 'OpenID sign-ins by client id' }),
                  new_accounts: Type.Integer(),
                  check: Type.Object({ hit: Type.Integer(), miss: Type.Integer() }),
                  verify: Type.Object({ ok: Type.Integer(), refused: Type.Integer() }),
                }),
              ),
              active_sessions: Type.Integer({ description: 'Sessions neither revoked nor expired now' }),
              clients: Type.Array(Type.Object({ client_id: Type.String(), name: Type.String(), consents: Type.Integer() })),
            },
            answer('The dashboard', {
              ok: true,
              days: [
                {
                  day: '2026-11-28',
                  signins: { bip322: 41, email_otp: 12, passkey: 9 },
                  failures: { 'email_otp invalid_code': 3 },
                  oidc: { acme: 7 },
                  new_accounts: 5,
                  check: { hit: 1820, miss: 96 },
                  verify: { ok: 30, refused: 2 },
                },
              ],
              active_sessions: 311,
              clients: [{ client_id: 'acme', name: 'Acme', consents: 58 }],
            }),
          ),
          ...errorResponses(400, 401, 403, 404, 429),
        },
      }),
      onRequest: deps.gate('read'),
    },
    async (request, reply) => {
      const days = request.query.days === undefined ? 14 : Number(request.query.days);
      if (!(days >= 1 && days <= 90)) throw new OcError('bad_request', 'admin: days must be 1 to 90');
      reply.header('cache-control', 'no-store');
      return { ok: true as const, ...(await deps.dashboard.view(days)) };
    },
  );
}
