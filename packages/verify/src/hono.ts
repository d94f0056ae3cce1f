/**
 * Hono middleware: `async (c, next)`.
 *
 *   const app = new Hono<{ Variables: OcSessionVariables }>();
 *   app.use(ocSession({ jwksUrl, issuer }));            // c.get('ocSession'): claims or null
 *   app.get('/me', requireSession(), (c) => c.json(c.get('ocSession')));
 *   app.post('/keys', requireFreshSudo(300), handler);
 *   app.post('/pay', requireFreshStepUp(300), handler);
 *
 * An API that takes the provider's access tokens (docs/protocol.md §8 "APIs"):
 *
 *   const api = new Hono<{ Variables: OcAccessTokenVariables }>();
 *   api.get('/invoices', requireAccessToken({ issuer, audience, scopes: ['read:invoices'] }), handler);
 *   // c.get('ocAccessToken'): the token's claims; 401 invalid_token, 403 insufficient_scope
 *
 * Written against the public shape of Hono's Context (`c.req.header()`,
 * `c.set()`, `c.get()`, `c.header()`, `c.json()`), so this package does not
 * depend on Hono, and it uses only web-standard APIs (WebCrypto through
 * jose, fetch), so it runs wherever Hono does.
 */
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
import { TAB_SESSION_HEADER } from './tokens.js';
import { toVerifier, type VerifierInput } from './verifier-input.js';

/**
 * The context variables this middleware sets: `new Hono<{ Variables: OcSessionVariables }>()`.
 * `ocSessionReason` says why `ocSession` is null: `no_session`, or
 * `tab_invalid` for a pinned tab's token that does not verify; null with a session.
 */
export type OcSessionVariables = { ocSession: OcSessionClaims | null; ocSessionReason: NoSessionReason | null };

/**
 * The parts of Hono's Context used here. Methods (not function-typed
 * properties) so that Hono's own, more precise signatures fit.
 */
export interface HonoLikeContext {
  readonly req: { header(name: string): string | undefined };
  set(key: 'ocSession', value: OcSessionClaims | null): void;
  set(key: 'ocSessionReason', value: NoSessionReason | null): void;
  get(key: 'ocSession'): unknown;
  get(key: 'ocSessionReason'): unknown;
  header(name: string, value: string): void;
  json(body: unknown, status?: number): Response;
}

export type HonoLikeNext = () => Promise<void>;

/** The context variable `requireAccessToken()` sets: `new Hono<{ Variables: OcAccessTokenVariables }>()`. */
export type OcAccessTokenVariables = { ocAccessToken: AccessTokenClaims };

/** The parts of Hono's Context `requireAccessToken()` uses. */
export interface HonoLikeApiContext {
  readonly req: { header(name: string): string | undefined };
  set(key: 'ocAccessToken', value: AccessTokenClaims): void;
  header(name: string, value: string): void;
  json(body: unknown, status?: number): Response;
}

/**
 * Lets the request through only with a valid access token of the API
 * (`Authorization: Bearer`) carrying every scope in `scopes`, and sets
 * `c.get('ocAccessToken')`. Else 401 `not_authenticated` (no token) or
 * `invalid_token`, or 403 `insufficient_scope`, with RFC 6750's
 * `WWW-Authenticate`. Throws at setup for bad options.
 */
export function requireAccessToken(
  options: AccessTokenGuardOptions,
  // biome-ignore lint/suspicious/noConfusingVoidType: Hono's own MiddlewareHandler answers Promise<Response | void>; this type must match it.
): (c: HonoLikeApiContext, next: HonoLikeNext) => Promise<Response | void> {
  const guard = accessTokenGuard(options);
  return async (c, next) => {
    const { claims, refusal } = await guard(c.req.header('authorization'));
    if (refusal !== null) {
      for (const [name, value] of Object.entries(refusal.headers)) c.header(name, value);
      return c.json(refusal.body, refusal.status);
    }
    c.set('ocAccessToken', claims);
    await next();
    return undefined;
  };
}

// biome-ignore lint/suspicious/noConfusingVoidType: Hono's own MiddlewareHandler answers Promise<Response | void>; this type must match it.
export type HonoMiddleware = (c: HonoLikeContext, next: HonoLikeNext) => Promise<Response | void>;

/**
 * Verifies the request's session locally (a pinned tab's `x-oc-tab-session`
 * alone when present, else every `oc_session` cookie and a Bearer token;
 * resolve.ts) and sets `c.get('ocSession')` to the session's claims, or null,
 * and `c.get('ocSessionReason')` to why it is null. Throws at setup for bad
 * options.
 */
export function ocSession(options: VerifierInput): HonoMiddleware {
  const verifier = toVerifier(options);
  return async (c, next) => {
    const resolution = await resolveSession(verifier, {
      cookie: c.req.header('cookie'),
      authorization: c.req.header('authorization'),
      [TAB_SESSION_HEADER]: c.req.header(TAB_SESSION_HEADER),
    });
    const { session, reason } = sessionAndReason(resolution);
    c.set('ocSession', session);
    c.set('ocSessionReason', reason);
    await next();
  };
}

function guarded(guard: SessionGuard): HonoMiddleware {
  return async (c, next) => {
    const session = c.get('ocSession');
    if (session === undefined) throw new Error(MIDDLEWARE_MISSING);
    const refusal = guard(session as OcSessionClaims | null, (c.get('ocSessionReason') ?? null) as NoSessionReason | null);
    if (refusal !== null) {
      for (const [name, value] of Object.entries(refusal.headers)) c.header(name, value);
      return c.json(refusal.body, refusal.status);
    }
    await next();
    return undefined;
  };
}

/** 401 `{ok: false, error: 'not_authenticated', reason: 'not_authenticated'}` without a session (`tab_invalid` for a pinned tab's bad token). */
export function requireSession(): HonoMiddleware {
  return guarded(sessionGuard());
}

/** 401 `sudo_required` unless the session's `sudo_at` is at most `maxAgeSeconds` old. */
export function requireFreshSudo(maxAgeSeconds: number, options?: FreshSudoOptions): HonoMiddleware {
  return guarded(freshSudoGuard(maxAgeSeconds, options));
}

/** 401 `step_up_required` unless the session's `step_up_at` (a key tapped on the host) is at most `maxAgeSeconds` old. */
export function requireFreshStepUp(maxAgeSeconds: number, options?: FreshStepUpOptions): HonoMiddleware {
  return guarded(freshStepUpGuard(maxAgeSeconds, options));
}

export type { AccessTokenClaims } from './access-tokens.js';
export type { AccessTokenGuardOptions } from './access-guards.js';
export type { OcSessionClaims } from './claims.js';
export type { VerifierInput } from './verifier-input.js';
export type { NoSessionReason } from './resolve.js';
