/**
 * Request types from the route schemas: `request.body`, `query` and
 * `params` get the TypeBox `Static` type of the schema that validated them,
 * so a handler cannot read a field the schema does not declare.
 *
 * Replies are deliberately not typed from the response schemas (that is the
 * only difference from `@fastify/type-provider-typebox`): hot paths answer
 * with pre-serialised JSON or shared readonly values, which the response
 * serializer handles and a reply type would reject. The response schemas
 * still serialise and document every answer.
 */
import type { FastifyInstance, FastifyTypeProvider } from 'fastify';
import type { Static, TSchema } from 'typebox';

export interface RequestTypes extends FastifyTypeProvider {
  validator: this['schema'] extends TSchema ? Static<this['schema']> : unknown;
  serializer: unknown;
}

/** The same app, with request types taken from each route's schema. */
export function typed(app: FastifyInstance) {
  return app.withTypeProvider<RequestTypes>();
}

/** The app the route files declare their routes on: typed once, in `buildApp`. */
export type TypedApp = ReturnType<typeof typed>;
