/**
 * Fastify (v5) plugin and hooks.
 *
 *   await app.register(ocSession, { jwksUrl, issuer }); // request.ocSession: claims or null
 *   app.get('/me', { preHandler: requireSession() }, handler);
 *   app.post('/keys', { preHandler: requireFreshSudo(300) }, handler);
 *   app.post('/pay', { preHandler: requireFreshStepUp(300) }, handler);
 *
 * The plugin decorates `request.ocSession` and fills it in an `onRequest`
 * hook: authentication runs before the body is read, and the route-level
 * `preHandler` guards see it. The plugin is not encapsulated (the
 * `skip-override` mark that fastify-plugin sets), so registering it on the
 * root covers every route. `ocSessionHook()` gives the same hook for a single
 * route or scope.
 *
 * An API that takes the provider's access tokens (docs/protocol.md §8 "APIs"):
 *
 *   app.get('/invoices', { preHandler: requireAccessToken({ issuer, audience, scopes: ['read:invoices'] }) }, handler);
 *   // request.ocAccessToken: the token's claims; 401 invalid_token, 403 insufficient_scope
 */
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import type { OcSessionClaims } from './claims.js';
import type { AccessTokenClaims } from './access-tokens.js';
import { accessTokenGuard, type AccessTokenGuardOptions } from './access-guards.js';
import {
  freshStepUpGuard,
  freshSudoGuard,
  MIDDLEWARE_MISSING,
  sessionGuard,
  type FreshStepUpOptions,
  type FreshSudoOptions,
  type SessionGuard,
} from './guards.js';
import { resolveSession, sessionAndReason, type NoSessionReason } from './resolve.js';
import type { SessionVerifier, VerifySessionOptions } from './verifier.js';
import { toVerifier } from './verifier-input.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** The verified `oc_session` claims, or null; set by the `@oc-host/verify` plugin. */
    ocSession: OcSessionClaims | null;
    /** Why `ocSession` is null: `no_session`, or `tab_invalid` for a pinned tab's token that does not verify; null with a session. */
    ocSessionReason: NoSessionReason | null;
    /** The verified access token's claims, set by `requireAccessToken()`; undefined on routes without it. */
    ocAccessToken?: AccessTokenClaims;
  }
}

/** Verifier options, or `{ verifier }` to share one made with `createSessionVerifier()`. */
export type OcSessionPluginOptions = VerifySessionOptions | { readonly verifier: SessionVerifier };

export type OcSessionHook = (request: FastifyRequest) => Promise<void>;
export type OcGuardHook = (request: FastifyRequest, reply: FastifyReply) => Promise<FastifyReply | undefined>;

function verifierOf(options: OcSessionPluginOptions): SessionVerifier {
  return 'verifier' in options && options.verifier !== undefined ? options.verifier : toVerifier(options as VerifySessionOptions);
}

/**
 * An `onRequest`/`preHandler` hook that sets `request.ocSession` and
 * `request.ocSessionReason` (a pinned tab's `x-oc-tab-session` alone when
 * present, else the cookies and a Bearer token; resolve.ts). Throws at setup
 * for bad options.
 */
export function ocSessionHook(options: OcSessionPluginOptions): OcSessionHook {
  const verifier = verifierOf(options);
  return async (request) => {
    const { session, reason } = sessionAndReason(await resolveSession(verifier, request.headers));
    request.ocSession = session;
    request.ocSessionReason = reason;
  };
}

const plugin: FastifyPluginAsync<OcSessionPluginOptions> = async (fastify, options) => {
  const hook = ocSessionHook(options);
  // null, not an object: Fastify shares decorator values between requests.
  if (!fastify.hasRequestDecorator('ocSession')) fastify.decorateRequest('ocSession', null);
  if (!fastify.hasRequestDecorator('ocSessionReason')) fastify.decorateRequest('ocSessionReason', null);
  fastify.addHook('onRequest', hook);
};

/** The Fastify plugin; register it once, on the root instance or the scope that needs sessions. */
export const ocSession: FastifyPluginAsync<OcSessionPluginOptions> = Object.assign(plugin, {
  // What fastify-plugin sets: hooks and decorators reach the parent scope.
  [Symbol.for('skip-override')]: true,
  [Symbol.for('fastify.display-name')]: '@oc-host/verify',
  [Symbol.for('plugin-meta')]: { name: '@oc-host/verify', fastify: '5.x' },
});

function guarded(guard: SessionGuard): OcGuardHook {
  return async (request, reply) => {
    const { ocSession: session, ocSessionReason: reason } = request as {
      ocSession?: OcSessionClaims | null;
      ocSessionReason?: NoSessionReason | null;
    };
    if (session === undefined) throw new Error(MIDDLEWARE_MISSING);
    const refusal = guard(session, reason);
    if (refusal === null) return undefined;
    return reply.code(refusal.status).headers(refusal.headers).send(refusal.body);
  };
}

/** A `preHandler`: 401 `{ok: false, error: 'not_authenticated', reason: 'not_authenticated'}` without a session (`tab_invalid` for a pinned tab's bad token). */
export function requireSession(): OcGuardHook {
  return guarded(sessionGuard());
}

/** A `preHandler`: 401 `sudo_required` unless the session's `sudo_at` is at most `maxAgeSeconds` old. */
export function requireFreshSudo(maxAgeSeconds: number, options?: FreshSudoOptions): OcGuardHook {
  return guarded(freshSudoGuard(maxAgeSeconds, options));
}

/** A `preHandler`: 401 `step_up_required` unless the session's `step_up_at` (a key tapped on the host) is at most `maxAgeSeconds` old. */
export function requireFreshStepUp(maxAgeSeconds: number, options?: FreshStepUpOptions): OcGuardHook {
  return guarded(freshStepUpGuard(maxAgeSeconds, options));
}

/**
 * A `preHandler` (or `onRequest`) hook: lets the request through only with a
 * valid access token of the API (`Authorization: Bearer`) carrying every
 * scope in `scopes`, and sets `request.ocAccessToken`. Else 401
 * `not_authenticated` (no token) or `invalid_token`, or 403
 * `insufficient_scope`, with RFC 6750's `WWW-Authenticate`. Throws at setup
 * for bad options.
 */
export function requireAccessToken(options: AccessTokenGuardOptions): OcGuardHook {
  const guard = accessTokenGuard(options);
  return async (request, reply) => {
    const { claims, refusal } = await guard(request.headers.authorization);
    if (refusal === null) {
      request.ocAccessToken = claims;
      return undefined;
    }
    return reply.code(refusal.status).headers(refusal.headers).send(refusal.body);
  };
}

export type { AccessTokenClaims } from './access-tokens.js';
export type { AccessTokenGuardOptions } from './access-guards.js';
export type { OcSessionClaims } from './claims.js';
export type { NoSessionReason } from './resolve.js';
