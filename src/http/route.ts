/**
 * One route's options from what sets it apart: its policy (`config`), and
 * for the OpenAPI document its tag, its summary and the rest of its schema.
 * `app.get(url, route(POLICY.read, 'auth', 'What it does', { response }), handler)`
 * registers the same route as the options written out, so a route file
 * states only what differs from route to route.
 */
import type { FastifySchema } from 'fastify';
import type { RoutePolicy } from './policy.js';

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

/** {@link route} for a route that needs the session cookie: the document says so (`security`). */
export function sessionRoute<Schema extends FastifySchema>(
  policy: RoutePolicy,
  tag: string,
  summary: string,
  schema: Schema,
): { config: { policy: RoutePolicy }; schema: { tags: string[]; summary: string; security: typeof SESSION_COOKIE } & Schema } {
  return route(policy, tag, summary, { ...schema, security: SESSION_COOKIE });
}
