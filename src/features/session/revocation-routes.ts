/**
 * GET /api/auth/revocations (docs/protocol.md §3 "Revocations"): the
 * sessions the host revoked whose tokens have not expired, for consumer
 * sites to refuse them before `exp`. Public (a jti reveals nothing), cached
 * a second, and answered 304 to a matching If-None-Match.
 */
import { Type } from 'typebox';
import type { RevocationFeed } from '../../identity/session/index.js';
import { ANSWER, answer, errorResponses } from '../../platform/http/schemas.js';
import { POLICY } from '../../platform/http/policy.js';
import type { TypedApp } from '../../platform/http/schema-types.js';
import { route } from '../../web/route.js';

const RevocationsQuery = Type.Object({
  since: Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: 128,
      description: 'The `cursor` of the previous answer; absent: every revocation still in force',
    }),
  ),
});

/** What the revocation feed's route uses. */
export interface RevocationRoutes {
  readonly revocations: RevocationFeed;
}

export function registerRevocationRoutes(app: TypedApp, deps: RevocationRoutes): void {
  app.get(
    '/api/auth/revocations',
    route(POLICY.publicRead, 'auth', 'Sessions revoked before their expiry, for consumer sites to refuse', {
      description:
        'Each entry is a revoked session whose token has not expired: keep its `jti` until `exp`. Entries with a `kind` end ' +
        'the OpenID provider\'s JWT access tokens for APIs (docs/protocol.md §8 "Revoking API tokens"). Poll with `since=<cursor>`; ' +
        'when `more` is true, ask again at once. At most 1000 entries per answer; cached 1 second; send If-None-Match with the ' +
        'ETag to get 304.',
      querystring: RevocationsQuery,
      response: {
        200: Type.Object(
          {
            ok: Type.Literal(true),
            revocations: Type.Array(
              Type.Object({
                jti: Type.String({ description: "The session's jti; for an access token, its jti; for a cut-off, the entry's id" }),
                exp: Type.Integer({ description: "Unix seconds: the token's own exp (for a cut-off, the last exp it covers)" }),
                kind: Type.Optional(
                  Type.Union([Type.Literal('access_token'), Type.Literal('grant'), Type.Literal('client')], {
                    description: 'Absent for a session; else what the entry ends of the JWT access tokens for APIs (docs/protocol.md §8)',
                  }),
                ),
                grant: Type.Optional(Type.String({ description: "kind grant: the grant's reference, the `oc_grant` claim of its tokens" })),
                client_id: Type.Optional(Type.String({ description: 'kind client: the client whose tokens end' })),
                iat_before: Type.Optional(
                  Type.Integer({ description: 'kind grant or client: tokens issued (iat) at or before this Unix second end' }),
                ),
              }),
            ),
            cursor: Type.String({ description: 'Pass as `since` next time' }),
            more: Type.Boolean({ description: 'Another page follows' }),
          },
          answer('The revoked sessions whose tokens have not expired: refuse each `jti` until its `exp`', {
            ok: true,
            revocations: [{ jti: ANSWER.otherSession, exp: 1779452520 }],
            cursor: Buffer.from(`${Date.parse('2026-04-22T12:25:00.000Z')}.${ANSWER.otherSession}`).toString('base64url'),
            more: false,
          }),
        ),
        304: Type.Null({ description: 'Unchanged since the ETag sent in If-None-Match' }),
        ...errorResponses(400, 429),
      },
    }),
    async (request, reply) => {
      const page = await deps.revocations.page(request.query.since);
      reply.header('etag', page.etag);
      reply.header('cache-control', 'public, max-age=1');
      const match = request.headers['if-none-match'];
      if (typeof match === 'string' && match.split(',').some((tag) => tag.trim().replace(/^W\//, '') === page.etag)) {
        return reply.code(304).send();
      }
      return { ok: true, revocations: page.revocations, cursor: page.cursor, more: page.more };
    },
  );
}
