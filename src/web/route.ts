/**
 * One route's options from what sets it apart: its policy (`config`), and
 * for the OpenAPI document its tag, its summary and the rest of its schema.
 * `app.get(url, route(POLICY.read, 'auth', 'What it does', { response }), handler)`
 * registers the same route as the options written out, so a route file
 * states only what differs from route to route.
 */
import type { FastifyRequest, FastifySchema } from 'fastify';
import type { FreshnessNeed } from '../identity/account/index.js';
import type { Authenticated } from '../identity/session/index.js';
import type { TSchema } from 'typebox';
import { POLICY, type RoutePolicy } from '../platform/http/policy.js';
import { AddQuery, errorResponses, SessionIssued } from '../platform/http/schemas.js';

export function route<Schema extends FastifySchema>(
  policy: RoutePolicy,
  tag: string,
  summary: string,
  schema: Schema,
): { config: { policy: RoutePolicy }; schema: { tags: string[]; summary: string } & Schema } {
  return { config: { policy }, schema: { tags: [tag], summary, ...schema } };
}

/** The session cookie, as the OpenAPI document names what authenticates a route (`cookieAuth` in openapi.ts). */
const SESSION_COOKIE = [{ cookieAuth: [] }];

/**
 * Who looks up the session of a {@link sessionRoute}: `gate` (the default),
 * the login gate before the body is parsed or checked, which answers 401
 * `not_authenticated` without one and hands the handler
 * {@link import('./session.js').signedIn}; `handler`, a route that reads the
 * session its own way and answers the same 401 itself (GET /api/auth/me's
 * strict tab lookup, logout's clearing of a dead cookie).
 */
export type LoginCheck = 'gate' | 'handler';

/**
 * The freshness a {@link sessionRoute} needs beyond a session
 * (identity/account/step-up.ts `FreshnessNeed`), which the login gate checks before
 * the body is parsed: a stale session answers 401 `sudo_required` whatever
 * the body. The route's summary or description says so in the OpenAPI
 * document, and test/login-gate.test.ts holds the two to the same set.
 */
export interface FreshRule {
  readonly need: FreshnessNeed;
  /** The operation, as the refusal names it ("webauthn: removing a key"). */
  readonly what: string;
  /**
   * A request the route serves without the freshness, decided from what is
   * known before the body: the path and the session (DELETE
   * /api/auth/sessions/:id of this browser's own session is a logout).
   */
  readonly unless?: (request: FastifyRequest, current: Authenticated) => boolean;
}

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Set by {@link sessionRoute}: who checks the route's session. */
    login?: LoginCheck;
    /** Set by {@link sessionRoute}: the freshness the login gate requires. */
    fresh?: FreshRule;
  }
}

/**
 * {@link route} for a route that needs a session: the document says so
 * (`security`), and the login gate enforces it (session.ts), with the
 * freshness `fresh` when given. `login: 'handler'` only for a route that
 * reads its session its own way, which then needs no freshness.
 */
export function sessionRoute<Schema extends FastifySchema>(
  policy: RoutePolicy,
  tag: string,
  summary: string,
  schema: Schema,
  needs: { readonly login: 'handler' } | { readonly fresh?: FreshRule } = {},
): {
  config: { policy: RoutePolicy; login: LoginCheck; fresh?: FreshRule };
  schema: { tags: string[]; summary: string; security: typeof SESSION_COOKIE } & Schema;
} {
  const options = route(policy, tag, summary, { ...schema, security: SESSION_COOKIE });
  if ('login' in needs) return { ...options, config: { ...options.config, login: needs.login } };
  return { ...options, config: { ...options.config, login: 'gate', ...(needs.fresh === undefined ? {} : { fresh: needs.fresh }) } };
}

/**
 * {@link route} for a way to sign in (docs/protocol.md §3): a credential
 * route of the family, `?add=1` to keep the caller's roster, the session as
 * the answer, and the errors every sign-in may answer.
 */
export function signInRoute<Body extends TSchema>(tag: string, summary: string, body: Body, description?: string) {
  return route(POLICY.familyCredential, tag, summary, {
    ...(description === undefined ? {} : { description }),
    querystring: AddQuery,
    body,
    response: { 200: SessionIssued, ...errorResponses(400, 401, 403, 413, 415, 429, 503) },
  });
}
