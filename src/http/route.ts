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
