/**
 * External identity provider sign-in (docs/api.md "External identity
 * providers", docs/protocol.md §6): list, start (redirect to the provider),
 * callback (verify, sign in, redirect back). The callback is protected by its
 * state, not by the cross-site rule: it arrives as a GET from the provider.
 */
import { Type } from 'typebox';
import type { FastifyReply } from 'fastify';
import { isOcError, OcError } from '../../platform/errors.js';
import { readCookie } from '../../identity/session/index.js';
import { isProviderError, OAUTH_STATE_COOKIE_NAME, withTabAdoptMarker } from './providers.js';
import type { ProviderSignIn } from '../../identity/account/index.js';
import { oauthErrorLocation } from './oauth-errors.js';
import type { ProviderRegistry } from './providers.js';
import type { SignInService } from '../../identity/account/index.js';
import { answer, errorResponses, example } from '../../platform/http/schemas.js';
import { noStore, type SessionDoor } from '../../web/session.js';
import type { SignInTarget } from '../../identity/account/index.js';
import { POLICY } from '../../platform/http/policy.js';
import type { TypedApp } from '../../platform/http/schema-types.js';
import { route } from '../../web/route.js';

const ProviderParams = Type.Object({ provider: Type.String({ pattern: '^[a-z0-9][a-z0-9-]{0,31}$', ...example('github') }) });
const StartQuery = Type.Object({
  return_to: Type.Optional(Type.String({ maxLength: 2048, description: 'A path, or a URL of the family' })),
  add: Type.Optional(Type.String({ enum: ['1', '0', 'true', 'false'] })),
});
const Providers = Type.Object(
  { providers: Type.Array(Type.Object({ id: Type.String(), label: Type.String() })) },
  answer('The providers this host is configured for, in the order of their buttons', {
    providers: [
      { id: 'github', label: 'GitHub' },
      { id: 'google', label: 'Google' },
    ],
  }),
);

/** The state cookie lives only where the callback can read it (docs/protocol.md §6). */
function stateCookie(value: string, maxAgeSeconds: number): string {
  return `${OAUTH_STATE_COOKIE_NAME}=${value}; Path=/api/auth; HttpOnly; Secure; SameSite=Lax; Max-Age=${maxAgeSeconds}`;
}

/** What a Location header can carry as is: printable ASCII. */
const HEADER_SAFE = /^[\u0021-\u007e]+$/;

function redirect(reply: FastifyReply, location: string): FastifyReply {
  noStore(reply);
  return reply.code(302).header('location', location).send();
}

/** What signing in with an external provider uses. */
export interface ProviderRoutes {
  readonly door: SessionDoor;
  readonly providers: ProviderRegistry;
  readonly signIn: SignInService;
  readonly publicUrl: string;
}

export function registerProviderRoutes(app: TypedApp, deps: ProviderRoutes): void {
  app.get(
    '/api/auth/providers',
    route(POLICY.familyRead, 'oauth', 'The configured identity providers, for sign-in buttons', {
      response: { 200: Providers, ...errorResponses(429) },
    }),
    async (_request, reply) => {
      reply.header('cache-control', 'public, max-age=60');
      return { providers: deps.providers.list() };
    },
  );

  app.get(
    '/api/auth/:provider/start',
    route(POLICY.family, 'oauth', 'Redirect to the provider (authorization code with PKCE, state and nonce)', {
      params: ProviderParams,
      querystring: StartQuery,
      response: { 302: Type.Null({ description: 'Redirect to the provider' }), ...errorResponses(400, 404, 429, 503) },
    }),
    async (request, reply) => {
      const { provider } = request.params;
      const query = request.query;
      if (!deps.providers.has(provider)) throw new OcError('unknown_provider', `provider: "${provider}" is not configured`);
      let started;
      try {
        started = await deps.providers.start(provider, {
          ...(query.return_to === undefined ? {} : { returnTo: query.return_to }),
          add: query.add === '1' || query.add === 'true',
        });
      } catch (error) {
        if (isProviderError(error)) throw new OcError('provider_unavailable', `provider: ${error.code}`);
        throw error;
      }
      reply.header('set-cookie', stateCookie(started.stateCookie.value, started.stateCookie.maxAgeSeconds));
      return redirect(reply, started.redirectUrl);
    },
  );

  app.get(
    '/api/auth/:provider/callback',
    route(
      POLICY.family,
      'oauth',
      'The provider returns here; sets oc_session and redirects to return_to, or to /signin?oauth_error=<code>',
      {
        params: ProviderParams,
        querystring: Type.Object(
          {
            code: Type.Optional(Type.String({ description: 'The authorization code (RFC 6749 §4.1.2)' })),
            state: Type.Optional(Type.String({ description: 'Must match the state of this browser' })),
            error: Type.Optional(Type.String({ description: 'The provider refused, e.g. `access_denied` (RFC 6749 §4.1.2.1)' })),
            error_description: Type.Optional(Type.String()),
            error_uri: Type.Optional(Type.String()),
            iss: Type.Optional(Type.String({ description: 'The issuer (RFC 9207)' })),
          },
          {
            additionalProperties: Type.String(),
            description: 'What the provider sends back; other parameters are passed to the provider library',
          },
        ),
        response: {
          302: Type.Null({ description: 'Redirect to return_to, or to /signin?oauth_error=<code>' }),
          ...errorResponses(404, 429),
        },
      },
    ),
    async (request, reply) => {
      const { provider } = request.params;
      if (!deps.providers.has(provider)) throw new OcError('unknown_provider', `provider: "${provider}" is not configured`);
      // The state cookie is single-use whatever happens next.
      reply.header('set-cookie', stateCookie('', 0));
      let result: ProviderSignIn;
      try {
        result = await deps.providers.callback(provider, {
          query: request.query,
          stateCookie: readCookie(request.headers.cookie, OAUTH_STATE_COOKIE_NAME),
        });
      } catch (error) {
        if (!isProviderError(error)) throw error;
        request.log.info({ provider, code: error.code }, 'oauth: sign-in refused');
        return redirect(reply, oauthErrorLocation(error.code));
      }
      // With add, the roster to join must be this browser's own
      // (identity/session/roster-binding.ts); checked before an account is made.
      let target: SignInTarget;
      try {
        target = await deps.door.signInTarget(request, result.add);
      } catch (error) {
        if (!(isOcError(error) && error.code === 'ambiguous_session')) throw error;
        deps.door.clearCookie(reply);
        return redirect(reply, oauthErrorLocation('ambiguous_session'));
      }
      // The Location value is settled before any session exists: if it could
      // not be sent, no row may be left behind. checkReturnTo already made it
      // ASCII; a value that is not (a state sealed by an older version) goes home.
      // Back on another family site, a pinned tab takes up the account just
      // signed in (#oc-adopt, docs/protocol.md §6 "return_to").
      const location = HEADER_SAFE.test(result.returnTo) ? withTabAdoptMarker(result.returnTo, deps.publicUrl) : '/';
      // Fastify appends Set-Cookie headers: the spent state's, then the session's.
      try {
        deps.door.setCookie(reply, await deps.signIn.withProvider(result, target.current, target.client));
      } catch (error) {
        if (!(isOcError(error) && error.code === 'account_disabled')) throw error;
        return redirect(reply, oauthErrorLocation('account_disabled'));
      }
      return redirect(reply, location);
    },
  );
}
