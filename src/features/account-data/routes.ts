/**
 * Leaving (docs/protocol.md §6 "Export", §2 "Disabling and deleting"): GET
 * /api/auth/account/export and DELETE /api/auth/account. Thin: a schema,
 * one call to src/features/account-data/lifecycle.ts, a reply.
 */
import { Type } from 'typebox';
import type { AccountLifecycle } from './lifecycle.js';
import { ANSWER, answer, EXAMPLE, EXAMPLE_ACCOUNT, EXAMPLE_IDENTITIES, errorResponses, example } from '../../platform/http/schemas.js';
import { noStore, signedIn, type SessionDoor } from '../../web/session.js';
import { POLICY } from '../../platform/http/policy.js';
import type { TypedApp } from '../../platform/http/schema-types.js';
import { sessionRoute } from '../../web/route.js';
import { didOf } from '../../identity/session/index.js';

const Loose = Type.Array(Type.Object({}, { additionalProperties: true }));

const DeleteBody = Type.Object(
  { confirm: Type.String({ maxLength: 64, description: "The active account's `did_oc`, typed or copied: the explicit confirmation" }) },
  { additionalProperties: false, ...example({ confirm: EXAMPLE.didOc }) },
);

/** What export and deletion use. */
export interface LifecycleRoutes {
  readonly door: SessionDoor;
  readonly lifecycle: AccountLifecycle;
}

export function registerLifecycleRoutes(app: TypedApp, deps: LifecycleRoutes): void {
  app.get(
    '/api/auth/account/export',
    sessionRoute(
      POLICY.familyRead,
      'auth',
      'Everything stored about the active account, as one JSON file; needs a re-proof younger than 5 minutes',
      {
        description:
          'The account, its identities, the accounts merged into it, every session row (without token hashes), security keys ' +
          '(public keys and labels), Connect apps (without key hashes), the Connect e-mail hint and the activity log. ' +
          'Sent as an attachment; 401 `sudo_required` without a fresh POST /api/auth/sudo.',
        response: {
          200: Type.Object(
            {
              format: Type.Literal('oc-host.account-export.v1'),
              exported_at: Type.String(),
              service: Type.String(),
              account: Type.Object({}, { additionalProperties: true }),
              identities: Loose,
              merged_from: Loose,
              sessions: Loose,
              keys: Loose,
              connect_apps: Loose,
              connect_email_hint: Type.Union([Type.String(), Type.Null()]),
              activity: Loose,
            },
            {
              additionalProperties: true,
              ...answer('The export (format `oc-host.account-export.v1`), sent as a file to save', {
                format: 'oc-host.account-export.v1',
                exported_at: ANSWER.now,
                service: 'https://auth.example.com',
                account: {
                  did_oc: EXAMPLE.didOc,
                  kind: EXAMPLE_ACCOUNT.kind,
                  display_name: EXAMPLE_ACCOUNT.display_name,
                  display_identity_kind: null,
                  primary_btc: EXAMPLE.address,
                  created_at: ANSWER.signedInAt,
                  updated_at: '2026-04-22T12:20:00.000Z',
                  disabled_at: null,
                },
                identities: EXAMPLE_IDENTITIES,
                merged_from: [],
                sessions: [
                  {
                    id: EXAMPLE.id,
                    signing_method: 'bip322',
                    created_at: ANSWER.signedInAt,
                    last_seen_at: ANSWER.now,
                    expires_at: '2026-05-22T12:01:00.000Z',
                    revoked_at: null,
                    step_up_at: null,
                    sudo_at: '2026-04-22T12:28:00.000Z',
                    device: 'Chrome 156 on Linux',
                    network: '203.0.113.0/24',
                    current: true,
                  },
                  {
                    id: ANSWER.otherSession,
                    signing_method: 'email_otp',
                    created_at: '2026-04-22T12:22:00.000Z',
                    last_seen_at: '2026-04-22T12:24:00.000Z',
                    expires_at: '2026-05-22T12:22:00.000Z',
                    revoked_at: null,
                    step_up_at: null,
                    sudo_at: null,
                    device: 'Safari 19 on iOS',
                    network: '198.51.100.0/24',
                    current: false,
                  },
                ],
                keys: [],
                connect_apps: [{ id: EXAMPLE.id, name: 'Example shop', created_at: ANSWER.signedInAt, rotated_at: null }],
                connect_email_hint: null,
                activity: [
                  {
                    id: '019db510a4600001e5b38d2c7f91a064',
                    at: ANSWER.signedInAt,
                    kind: 'signin',
                    detail: { method: 'bip322', device: 'Chrome 156 on Linux', network: '203.0.113.0/24', added: false },
                  },
                ],
              }),
            },
          ),
          ...errorResponses(401, 403, 429),
        },
      },
      { fresh: { need: 'sudo', what: 'step-up' } },
    ),
    async (request, reply) => {
      const current = signedIn(request);
      const document = await deps.lifecycle.export(current);
      noStore(reply);
      const day = document.exported_at.slice(0, 10);
      reply.header('content-disposition', `attachment; filename="account-${current.account.id.slice(0, 12)}-${day}.json"`);
      return document;
    },
  );

  app.delete(
    '/api/auth/account',
    sessionRoute(
      POLICY.family,
      'auth',
      'Delete the active account for good; needs a re-proof younger than 5 minutes and `confirm`',
      {
        description:
          "Revokes every session of the account (every browser's roster loses it), removes its identities (free for new " +
          'sign-ups), security keys, Connect apps, activity and pending codes, and keeps a tombstone so its did is never issued ' +
          "again. 400 `confirmation_mismatch` when `confirm` is not the account's `did_oc`. This browser moves on to the next " +
          'account of its roster, as after a logout.',
        body: DeleteBody,
        response: {
          200: Type.Object(
            {
              ok: Type.Literal(true),
              deleted: Type.Object({
                did_oc: Type.String(),
                identities: Type.Integer(),
                sessions: Type.Integer({ description: 'Sessions revoked' }),
                keys: Type.Integer(),
                connect_apps: Type.Integer(),
              }),
              switched_to: Type.Union([Type.Object({ did_oc: Type.String() }), Type.Null()]),
              account: Type.Optional(Type.Ref('Account')),
              token: Type.Optional(Type.String()),
            },
            answer('Deleted, with what went with it; `switched_to` names the account of this browser now active, or is null', {
              ok: true,
              deleted: { did_oc: EXAMPLE.didOc, identities: 2, sessions: 2, keys: 0, connect_apps: 1 },
              switched_to: null,
            }),
          ),
          ...errorResponses(400, 401, 403, 413, 415, 429),
        },
      },
      { fresh: { need: 'sudo', what: 'step-up' } },
    ),
    async (request, reply) => {
      const current = signedIn(request);
      const deleted = await deps.lifecycle.delete(current, request.body.confirm);
      const next = await deps.door.signOutCurrent(request, reply, current);
      return {
        ...next,
        deleted: {
          did_oc: didOf(current.account.id),
          identities: deleted.identities,
          sessions: deleted.revoked_sessions,
          keys: deleted.keys,
          connect_apps: deleted.connect_apps,
        },
      };
    },
  );
}
