/**
 * The active account's security events (docs/protocol.md §6 "Activity"):
 * GET /api/auth/activity, newest first, paged. Thin: a schema, one call to
 * src/identity/account/activity.ts, a reply.
 */
import { Type } from 'typebox';
import { ACTIVITY_KINDS, DEFAULT_ACTIVITY_PAGE, MAX_ACTIVITY_PAGE } from '../../identity/account/index.js';
import type { ActivityLog } from '../../identity/account/index.js';
import { ANSWER, answer, EXAMPLE, errorResponses, NullableString, StringEnum } from '../../platform/http/schemas.js';
import { noStore, signedIn } from '../../web/session.js';
import { POLICY } from '../../platform/http/policy.js';
import type { TypedApp } from '../../platform/http/schema-types.js';
import { sessionRoute } from '../../web/route.js';

const ActivityQuery = Type.Object({
  before: Type.Optional(Type.String({ minLength: 1, maxLength: 128, description: 'The `next` of the previous page' })),
  limit: Type.Optional(
    Type.String({ pattern: '^[0-9]{1,3}$', description: `Events per page, 1 to ${MAX_ACTIVITY_PAGE}; default ${DEFAULT_ACTIVITY_PAGE}` }),
  ),
});

const Event = Type.Object({
  id: Type.String(),
  at: Type.String({ description: 'ISO 8601 UTC' }),
  kind: StringEnum(ACTIVITY_KINDS, { description: 'docs/protocol.md §6 "Activity" lists each kind and its detail' }),
  detail: Type.Object(
    {},
    { additionalProperties: true, description: 'A flat object; never a secret, a code, a token or a full IP address' },
  ),
});

/** What the activity route uses. */
export interface ActivityRoutes {
  readonly activity: ActivityLog;
}

export function registerActivityRoutes(app: TypedApp, deps: ActivityRoutes): void {
  app.get(
    '/api/auth/activity',
    sessionRoute(POLICY.familyRead, 'auth', 'The security events of the active account, newest first', {
      querystring: ActivityQuery,
      response: {
        200: Type.Object(
          {
            ok: Type.Literal(true),
            events: Type.Array(Event),
            next: NullableString({ description: 'Pass as `before` for older events; null on the last page' }),
          },
          answer('A page of events, newest first', {
            ok: true,
            events: [
              {
                id: '019db52209800001c4e7a19b3d5f2086',
                at: '2026-04-22T12:20:00.000Z',
                kind: 'identity_linked',
                detail: { kind: 'email', value: EXAMPLE.email },
              },
              {
                id: '019db510a4600001e5b38d2c7f91a064',
                at: ANSWER.signedInAt,
                kind: 'signin',
                detail: { method: 'bip322', device: 'Chrome 156 on Linux', network: '203.0.113.0/24', added: false },
              },
            ],
            next: null,
          }),
        ),
        ...errorResponses(400, 401, 429),
      },
    }),
    async (request, reply) => {
      const current = signedIn(request);
      noStore(reply);
      const { before, limit } = request.query;
      return {
        ok: true,
        ...(await deps.activity.page(current.account.id, { before, limit: limit === undefined ? undefined : Number(limit) })),
      };
    },
  );
}
