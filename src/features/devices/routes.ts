/**
 * Where the active account is signed in (docs/protocol.md §3 "Devices",
 * docs/api.md "Devices"): GET /api/auth/sessions, DELETE
 * /api/auth/sessions/:id, POST /api/auth/sessions/revoke-others. Thin: a
 * schema, one call to src/features/devices/devices.ts, a reply.
 */
import type { FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import type { Authenticated } from '../../identity/session/index.js';
import type { DeviceService } from './devices.js';
import { ANSWER, answer, EXAMPLE, errorResponses, example, NullableString, SignedOutSwitch } from '../../platform/http/schemas.js';
import { noStore, signedIn, type SessionDoor } from '../../web/session.js';
import { POLICY } from '../../platform/http/policy.js';
import type { TypedApp } from '../../platform/http/schema-types.js';
import { sessionRoute } from '../../web/route.js';

const Device = Type.Object({
  id: Type.String({ description: 'The session id (its `jti`)' }),
  created_at: Type.String({ description: 'ISO 8601 UTC: the sign-in' }),
  last_seen_at: Type.String({ description: 'ISO 8601 UTC, to within a minute' }),
  signing_method: NullableString({ description: '`bip322`, `email_otp`, `oauth:<provider>`, `passkey`' }),
  device: NullableString({ description: 'A coarse label from the User-Agent at sign-in, e.g. "Chrome 156 on Linux"' }),
  network: NullableString({ description: "The sign-in's IPv4 /24 or IPv6 /48; never the full address" }),
  current: Type.Boolean({ description: "This browser's session" }),
});

const SessionParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 64, pattern: '^[0-9a-f]+$', ...example(EXAMPLE.id) }) });

/**
 * DELETE /api/auth/sessions/:id of this browser's own session is a logout,
 * which needs no step-up: known from the path before the body, so the login
 * gate can tell (route.ts `FreshRule.unless`).
 */
function isOwnSession(request: FastifyRequest, current: Authenticated): boolean {
  return (request.params as { id?: unknown }).id === current.session.jti;
}

/** What the devices routes use. */
export interface DeviceRoutes {
  readonly door: SessionDoor;
  readonly devices: DeviceService;
}

export function registerDeviceRoutes(app: TypedApp, deps: DeviceRoutes): void {
  app.get(
    '/api/auth/sessions',
    sessionRoute(
      POLICY.familyRead,
      'auth',
      'Every live session of the active account, in every browser: this one first, then by last use',
      {
        response: {
          200: Type.Object(
            { ok: Type.Literal(true), sessions: Type.Array(Device) },
            answer('The sessions: this browser first, then the others by last use', {
              ok: true,
              sessions: [
                {
                  id: EXAMPLE.id,
                  created_at: ANSWER.signedInAt,
                  last_seen_at: ANSWER.now,
                  signing_method: 'bip322',
                  device: 'Chrome 156 on Linux',
                  network: '203.0.113.0/24',
                  current: true,
                },
                {
                  id: ANSWER.otherSession,
                  created_at: '2026-04-22T12:22:00.000Z',
                  last_seen_at: '2026-04-22T12:24:00.000Z',
                  signing_method: 'email_otp',
                  device: 'Safari 19 on iOS',
                  network: '198.51.100.0/24',
                  current: false,
                },
              ],
            }),
          ),
          ...errorResponses(401, 429),
        },
      },
    ),
    async (request, reply) => {
      const current = signedIn(request);
      noStore(reply);
      return { ok: true, sessions: await deps.devices.list(current) };
    },
  );

  app.delete(
    '/api/auth/sessions/:id',
    sessionRoute(
      POLICY.family,
      'auth',
      'Sign one device out; another device needs a step-up younger than 5 minutes',
      {
        description:
          "Another device's session is revoked at once (its browser's roster loses this account); that needs `sudo_at` or " +
          "`step_up_at` younger than 5 minutes, else 401 `sudo_required`. This browser's own session is a logout with " +
          '`scope=current` and answers like one.',
        params: SessionParams,
        response: {
          200: Type.Object(
            {
              ok: Type.Literal(true),
              current: Type.Boolean({ description: 'This browser signed itself out' }),
              ...SignedOutSwitch,
            },
            answer(
              "Signed out. For this browser's own session (as here) the answer of a logout with `scope=current`: `switched_to` " +
                'names the account now active, or is null when none is left',
              { ok: true, current: true, switched_to: null },
            ),
          ),
          ...errorResponses(400, 401, 403, 404, 429),
        },
      },
      { fresh: { need: 'step-up', what: 'sessions: signing another device out', unless: isOwnSession } },
    ),
    async (request, reply) => {
      const current = signedIn(request);
      if (request.params.id === current.session.jti) return { current: true, ...(await deps.door.signOutCurrent(request, reply, current)) };
      await deps.devices.revoke(current, request.params.id);
      noStore(reply);
      return { ok: true as const, current: false };
    },
  );

  app.post(
    '/api/auth/sessions/revoke-others',
    sessionRoute(
      POLICY.family,
      'auth',
      'Sign every other device of the active account out; needs a step-up younger than 5 minutes',
      {
        description: 'Needs `sudo_at` or `step_up_at` younger than 5 minutes, else 401 `sudo_required`.',
        response: {
          200: Type.Object(
            { ok: Type.Literal(true), revoked: Type.Integer({ description: 'Sessions signed out' }) },
            answer('Every other device is signed out; this one stays', { ok: true, revoked: 1 }),
          ),
          ...errorResponses(401, 403, 429),
        },
      },
      { fresh: { need: 'step-up', what: 'sessions: signing the other devices out' } },
    ),
    async (request, reply) => {
      const current = signedIn(request);
      const revoked = await deps.devices.revokeOthers(current);
      noStore(reply);
      return { ok: true as const, revoked };
    },
  );
}
