/**
 * One route's options from what sets it apart: its policy (`config`), and
 * for the OpenAPI document its tag, its summary and the rest of its schema.
 * `app.get(url, route(POLICY.read, 'auth', 'What it does', { response }), handler)`
 * registers the same route as the options written out, so a route file
 * states only what differs from route to route.
 */
import type { FastifySchema } from 'fastify';
import type { TSchema } from 'typebox';
import { POLICY, type RoutePolicy } from './policy.js';
import { AddQuery, errorResponses, SessionIssued } from './schemas.js';

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

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Set by {@link sessionRoute}: who checks the route's session. */
    login?: LoginCheck;
  }
}

/** {@link route} for a route that needs a session: the document says so (`security`), and the login gate enforces it (session.ts). */
export function sessionRoute<Schema extends FastifySchema>(
  policy: RoutePolicy,
  tag: string,
  summary: string,
  schema: Schema,
  login: LoginCheck = 'gate',
): {
  config: { policy: RoutePolicy; login: LoginCheck };
  schema: { tags: string[]; summary: string; security: typeof SESSION_COOKIE } & Schema;
} {
  const options = route(policy, tag, summary, { ...schema, security: SESSION_COOKIE });
  return { ...options, config: { ...options.config, login } };
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
