/**
 * Express middleware (also fits Connect-style stacks): `(req, res, next)`.
 *
 *   app.use(ocSession({ jwksUrl, issuer }));          // req.ocSession: claims or null
 *   app.post('/admin', requireSession(), handler);     // 401 not_authenticated
 *   app.post('/keys', requireFreshSudo(300), handler); // 401 sudo_required
 *   app.post('/pay', requireFreshStepUp(300), handler); // 401 step_up_required
 *
 * An API that takes the provider's access tokens (docs/protocol.md §8 "APIs"):
 *
 *   app.get('/invoices', requireAccessToken({ issuer, audience, scopes: ['read:invoices'] }), handler);
 *   // req.ocAccessToken: the token's claims; 401 invalid_token, 403 insufficient_scope
 *
 * Written against the public shapes of Express's request and response (node's
 * IncomingMessage headers; `res.status().json()`, `res.setHeader()`), so this
 * package does not depend on Express.
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
import { resolveSession, sessionAndReason, type NoSessionReason, type SessionRequestHeaders } from './resolve.js';
import { toVerifier, type VerifierInput } from './verifier-input.js';

declare global {
  // The Express convention for typing request additions (as passport does):
  // merges into Express's Request when @types/express is present.
  namespace Express {
    interface Request {
      ocSession?: OcSessionClaims | null;
      ocSessionReason?: NoSessionReason | null;
      /** The verified access token's claims, set by `requireAccessToken()`. */
      ocAccessToken?: AccessTokenClaims;
    }
  }
}

/** The parts of an Express request this middleware reads and writes. */
export interface ExpressLikeRequest {
  readonly headers: SessionRequestHeaders;
  ocSession?: OcSessionClaims | null;
  /** Why `ocSession` is null: `no_session`, or `tab_invalid` for a pinned tab's token that does not verify; null with a session. */
  ocSessionReason?: NoSessionReason | null;
  ocAccessToken?: AccessTokenClaims;
}

/** The parts of an Express response the guards use. */
export interface ExpressLikeResponse {
  status(code: number): ExpressLikeResponse;
  json(body: unknown): unknown;
  setHeader(name: string, value: string): unknown;
}

export type ExpressLikeNext = (error?: unknown) => void;

export type ExpressMiddleware = (request: ExpressLikeRequest, response: ExpressLikeResponse, next: ExpressLikeNext) => void;

/**
 * Verifies the request's session locally (a pinned tab's `x-oc-tab-session`
 * alone when present, else every `oc_session` cookie and a Bearer token;
 * resolve.ts) and sets `req.ocSession` to the session's claims, or null, and
 * `req.ocSessionReason` to why it is null. Never answers the request itself:
 * pair it with the guards below where a session is needed. Throws at setup
 * for bad options.
 */
export function ocSession(options: VerifierInput): ExpressMiddleware {
  const verifier = toVerifier(options);
  return (request, _response, next) => {
    resolveSession(verifier, request.headers).then(
      (resolution) => {
        const { session, reason } = sessionAndReason(resolution);
        request.ocSession = session;
        request.ocSessionReason = reason;
        next();
      },
      // Verification does not reject for bad tokens; anything here is a bug worth a 500.
      (error: unknown) => next(error),
    );
  };
}

function guarded(guard: SessionGuard): ExpressMiddleware {
  return (request, response, next) => {
    const session = request.ocSession;
    if (session === undefined) {
      next(new Error(MIDDLEWARE_MISSING));
      return;
    }
    const refusal = guard(session, request.ocSessionReason);
    if (refusal === null) {
      next();
      return;
    }
    for (const [name, value] of Object.entries(refusal.headers)) response.setHeader(name, value);
    response.status(refusal.status).json(refusal.body);
  };
}

/** 401 `{ok: false, error: 'not_authenticated', reason: 'not_authenticated'}` without a session (`tab_invalid` for a pinned tab's bad token). */
export function requireSession(): ExpressMiddleware {
  return guarded(sessionGuard());
}

/** 401 `sudo_required` unless the session's `sudo_at` is at most `maxAgeSeconds` old. */
export function requireFreshSudo(maxAgeSeconds: number, options?: FreshSudoOptions): ExpressMiddleware {
  return guarded(freshSudoGuard(maxAgeSeconds, options));
}

/** 401 `step_up_required` unless the session's `step_up_at` (a key tapped on the host) is at most `maxAgeSeconds` old. */
export function requireFreshStepUp(maxAgeSeconds: number, options?: FreshStepUpOptions): ExpressMiddleware {
  return guarded(freshStepUpGuard(maxAgeSeconds, options));
}

/**
 * Lets the request through only with a valid access token of the API
 * (`Authorization: Bearer`) carrying every scope in `scopes`, and sets
 * `req.ocAccessToken`. Else 401 `not_authenticated` (no token) or
 * `invalid_token`, or 403 `insufficient_scope`, with RFC 6750's
 * `WWW-Authenticate`. Throws at setup for bad options.
 */
export function requireAccessToken(options: AccessTokenGuardOptions): ExpressMiddleware {
  const guard = accessTokenGuard(options);
  return (request, response, next) => {
    guard(request.headers.authorization).then(({ claims, refusal }) => {
      if (refusal === null) {
        request.ocAccessToken = claims;
        next();
        return;
      }
      for (const [name, value] of Object.entries(refusal.headers)) response.setHeader(name, value);
      response.status(refusal.status).json(refusal.body);
    }, next);
  };
}

export type { AccessTokenClaims } from './access-tokens.js';
export type { AccessTokenGuardOptions } from './access-guards.js';
export type { OcSessionClaims } from './claims.js';
export type { VerifierInput } from './verifier-input.js';
export type { NoSessionReason } from './resolve.js';
