/**
 * The contact relay's route (docs/api.md "Public and form routes",
 * docs/protocol.md §6): POST /api/contact, same origin only (src/web/cors.ts).
 * Thin: a schema, one domain call, a reply.
 */
import { Type } from 'typebox';
import type { ContactRelay } from './contact.js';
import { answer, EXAMPLE, errorResponses, example } from '../../platform/http/schemas.js';
import { POLICY } from '../../platform/http/policy.js';
import type { TypedApp } from '../../platform/http/schema-types.js';
import { route } from '../../web/route.js';

const ContactBody = Type.Object(
  {
    email: Type.String({ maxLength: 320, description: "The sender's address; replies go there" }),
    message: Type.String({ maxLength: 10_000, description: 'At most 5,000 characters' }),
    name: Type.Optional(Type.String({ maxLength: 400, description: 'At most 100 characters, one line' })),
    subject: Type.Optional(Type.String({ maxLength: 800, description: 'At most 200 characters, one line' })),
    website: Type.Optional(Type.String({ maxLength: 2048, description: 'Leave empty (a field people never see)' })),
  },
  example({ email: EXAMPLE.email, name: 'Alice', subject: 'A question', message: 'Hello, how do I link a second address?' }),
);

/** What the contact relay uses. */
export interface ContactRoutes {
  readonly contact: ContactRelay;
}

export function registerContactRoutes(app: TypedApp, deps: ContactRoutes): void {
  app.post(
    '/api/contact',
    route({ ...POLICY.sameOrigin, extra: 'contact' }, 'forms', 'Relay a contact-form message to the operators (same origin only)', {
      description:
        'Mailed to `CONTACT_TO` with Reply-To set to `email`. A request from another site is 403 `cross_site`; when ' +
        '`CONTACT_TO` is not set, 404 `not_found`.',
      body: ContactBody,
      response: {
        200: Type.Object({ ok: Type.Literal(true) }, answer('The message is on its way to the operators', { ok: true })),
        ...errorResponses(400, 403, 404, 413, 415, 429, 503),
      },
    }),
    async (request, reply) => {
      const result = await deps.contact.relay(request.body);
      reply.header('cache-control', 'no-store');
      return result;
    },
  );
}
