/**
 * The service itself in the admin API (docs/api.md "Admin"), behind the
 * same gate as every admin route (routes.ts): the health of what it depends
 * on, and the signing keys, listed with their state and age, and rotated.
 */
import { Type } from 'typebox';
import { POLICY } from '../../platform/http/policy.js';
import { answer, errorResponses, example, NullableString } from '../../platform/http/schemas.js';
import type { TypedApp } from '../../platform/http/schema-types.js';
import { route } from '../../web/route.js';
import type { Config } from '../../platform/config.js';
import type { AdminHealth } from './health.js';
import type { AdminKeys } from './keys.js';
import { actorOf, type AdminGate } from './gate-routes.js';
import { OPERATOR_TOKEN, Reason } from './routes.js';
import { settingsInForce } from './settings.js';

/** What the admin service routes use. */
export interface AdminServiceRoutes {
  readonly gate: AdminGate;
  readonly keys: AdminKeys;
  readonly health: AdminHealth;
  /** The variables the settings came from, masked before they are answered. */
  readonly config: Pick<Config, 'environment' | 'defaulted'>;
}

const Dependency = Type.Object({
  name: Type.String({ description: '`database`, `redis`, `keys`, an Esplora base or a relay URL' }),
  ok: Type.Boolean(),
  ms: Type.Union([Type.Integer(), Type.Null()], { description: 'How long the probe took; null where it is not timed' }),
  error: NullableString({ description: 'Why it failed, in a few words' }),
});

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

export function registerAdminServiceRoutes(app: TypedApp, deps: AdminServiceRoutes): void {
  app.get(
    '/api/admin/health',
    {
      ...route(
        POLICY.operator,
        'admin',
        'The health of the database, Redis, each Esplora base and each relay, asked now (the read scope)',
        {
          description:
            'Each dependency probed as the request comes: the database’s ping, Redis as the readiness check sees it, every ' +
            'Esplora base on its own (its tip, within 3 s) and every Nostr relay (a look-up answered with its end of stored ' +
            'events), with how long each took and why one failed. Not cached.',
          security: OPERATOR_TOKEN,
          response: {
            200: Type.Object(
              {
                ok: Type.Literal(true),
                database: Dependency,
                redis: Type.Union([Dependency, Type.Null()], { description: 'Null without REDIS_URL' }),
                esplora: Type.Array(Type.Object({ ...Dependency.properties, tip_height: Type.Union([Type.Integer(), Type.Null()]) })),
                relays: Type.Array(Dependency),
                keys: Dependency,
              },
              answer('The dependencies', {
                ok: true,
                database: { name: 'database', ok: true, ms: 1, error: null },
                redis: null,
                esplora: [{ name: 'https://blockstream.info/api', ok: true, ms: 182, error: null, tip_height: 925104 }],
                relays: [{ name: 'wss://relay.damus.io', ok: false, ms: 4000, error: 'timeout' }],
                keys: { name: 'keys', ok: true, ms: null, error: null },
              }),
            ),
            ...errorResponses(401, 403, 404, 429),
          },
        },
      ),
      onRequest: deps.gate('read'),
    },
    async (_request, reply) => {
      reply.header('cache-control', 'no-store');
      return { ok: true as const, ...(await deps.health.report()) };
    },
  );

  app.get(
    '/api/admin/settings',
    {
      ...route(POLICY.operator, 'admin', 'The settings in force, secrets masked (the read scope)', {
        description:
          'Every environment variable the settings were read from that is set: a secret’s value (a name with SECRET, ' +
          'PASSWORD, TOKEN, PRIVATE or ending in _JWK) is never shown, and a URL’s password is `***`. `defaulted` ' +
          'names the variables left to their defaults (docs/configuration.md).',
        security: OPERATOR_TOKEN,
        response: {
          200: Type.Object(
            {
              ok: Type.Literal(true),
              set: Type.Array(Type.Object({ name: Type.String(), value: NullableString(), secret: Type.Boolean() })),
              defaulted: Type.Array(Type.String()),
            },
            answer('The settings', {
              ok: true,
              set: [
                { name: 'PUBLIC_URL', value: 'https://auth.example.com', secret: false },
                { name: 'OC_SERVER_SECRET', value: null, secret: true },
                { name: 'SMTP_URL', value: 'smtps://mailer:***@smtp.example.com:465', secret: false },
              ],
              defaulted: ['LOG_LEVEL', 'PORT'],
            }),
          ),
          ...errorResponses(401, 403, 404, 429),
        },
      }),
      onRequest: deps.gate('read'),
    },
    async (_request, reply) => {
      reply.header('cache-control', 'no-store');
      return { ok: true as const, ...settingsInForce(deps.config) };
    },
  );

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
          ...errorResponses(401, 403, 404, 429),
        },
      }),
      onRequest: deps.gate('read'),
    },
    async (_request, reply) => {
      reply.header('cache-control', 'no-store');
      return { ok: true as const, keys: await deps.keys.list() };
    },
  );

  app.post(
    '/api/admin/keys/:use/rotate',
    {
      ...route(
        POLICY.operator,
        'admin',
        'Rotate the session key, the OpenID provider’s keys or the webhook key (the write scope; audited)',
        {
          description:
            'As `oc-host keys rotate` (`session`) or `oc-host keys rotate --oidc` (`oidc`), or the webhook key (`webhook`): ' +
            'the new key is published at once; a session key signs from 90 s later, once every instance has read it, and a ' +
            'webhook key from 6 minutes later, once receivers’ cached key sets have it too; the keys it replaces stay ' +
            'published for their overlap (a webhook key 7 days), ' +
            'so no cookie, token or webhook they signed stops verifying. Audited as `keys.rotate`.',
          security: OPERATOR_TOKEN,
          params: Type.Object({
            use: Type.Union([Type.Literal('session'), Type.Literal('oidc'), Type.Literal('webhook')], { examples: ['session'] }),
          }),
          body: Type.Object(
            { reason: Type.Optional(Reason) },
            { additionalProperties: false, ...example({ reason: 'Quarterly rotation' }) },
          ),
          response: {
            200: Type.Object(
              { ok: Type.Literal(true), kids: Type.Array(Type.String(), { description: 'The new keys’ ids' }) },
              answer('Rotated', { ok: true, kids: ['k-2026-11-29'] }),
            ),
            ...errorResponses(400, 401, 403, 404, 413, 415, 429),
          },
        },
      ),
      onRequest: deps.gate({ scope: 'write', destructive: true }),
    },
    async (request, reply) => {
      reply.header('cache-control', 'no-store');
      return {
        ok: true as const,
        kids: await deps.keys.rotate(request.params.use, request.body.reason ?? null, actorOf(deps.gate, request)),
      };
    },
  );
}
