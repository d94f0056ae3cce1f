/**
 * The admin API (docs/api.md "Admin"), for an operator's API token: the
 * audit log, one person's account, and the hold with a reason. Whatever a request lacks (no token, a
 * malformed, unknown, revoked or expired one, a removed operator's, an
 * account that may not act, a token without the scope), it is answered
 * exactly as a path no route serves: 404 `not_found`, `no route <method>
 * <path>`, before its query is read, so a caller without an operator's token
 * learns nothing of what is here.
 */
import { Type } from 'typebox';
import { OcError } from '../../platform/errors.js';
import { POLICY } from '../../platform/http/policy.js';
import { answer, errorResponses, example, NullableString } from '../../platform/http/schemas.js';
import type { TypedApp } from '../../platform/http/schema-types.js';
import { route } from '../../web/route.js';
import type { AdminAccounts } from './accounts.js';
import { actorOf, type AdminGate } from './gate-routes.js';
import { auditLine, type OperatorService } from './operators.js';

/** What the admin routes use. */
export interface AdminRoutes {
  readonly gate: AdminGate;
  readonly operators: OperatorService;
  readonly accounts: AdminAccounts;
}

const MAX_AUDIT_PAGE = 500;
const DEFAULT_AUDIT_PAGE = 100;
const MAX_PEOPLE_PAGE = 100;
const DEFAULT_PEOPLE_PAGE = 20;
/** The most lines one export holds: a year of a busy console. */
const MAX_EXPORT = 100_000;

const AuditQuery = Type.Object({
  actor: Type.Optional(Type.String({ minLength: 1, maxLength: 100, description: '`cli` or an operator’s `did:oc`' })),
  action: Type.Optional(Type.String({ minLength: 1, maxLength: 64, description: 'An action, e.g. `account.disable`' })),
  target: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: 'What was acted on, e.g. a `did:oc`' })),
  since: Type.Optional(Type.String({ format: 'date-time', description: 'Entries at or after this time (ISO 8601)' })),
  order: Type.Optional(
    Type.Union([Type.Literal('newest'), Type.Literal('oldest')], { description: 'Newest first (the default) or oldest first' }),
  ),
  before: Type.Optional(
    Type.String({ pattern: '^[0-9]{1,15}\\.[0-9a-f]{32}$', description: 'The `next` of the previous page, in the same order' }),
  ),
  limit: Type.Optional(
    Type.String({ pattern: '^[0-9]{1,3}$', description: `Entries per page, 1 to ${MAX_AUDIT_PAGE}; default ${DEFAULT_AUDIT_PAGE}` }),
  ),
});

const AuditEntry = Type.Object({
  id: Type.String(),
  at: Type.String({ description: 'ISO 8601 UTC' }),
  actor: Type.String({ description: '`cli`, or the operator’s `did:oc`' }),
  via: Type.String({ description: '`cli`, `console`, or `token:<id>`' }),
  action: Type.String(),
  target: NullableString(),
  reason: NullableString(),
  network: NullableString({ description: 'The coarse network (/24, /48) of the request; null from the command line' }),
  detail: Type.Union([Type.Object({}, { additionalProperties: true }), Type.Null()]),
});

/**
 * How an admin route is authenticated, as the OpenAPI document says it: an
 * operator's API token, or the console's session cookie with a fresh key
 * step-up (src/features/admin/gate-routes.ts).
 */
export const OPERATOR_TOKEN = [{ bearerAuth: [] }, { consoleAuth: [] }];

const DidParams = Type.Object({
  did: Type.String({
    pattern: '^did:oc:[0-9a-f]{32}$',
    description: 'The account’s `did:oc`',
    examples: ['did:oc:0123456789abcdef0123456789abcdef'],
  }),
});

export const Reason = Type.String({ minLength: 1, maxLength: 500, description: 'Why; kept in the audit log' });

export function registerAdminRoutes(app: TypedApp, deps: AdminRoutes): void {
  app.get(
    '/api/admin/audit',
    {
      ...route(POLICY.operator, 'admin', 'The audit log, newest or oldest first, with filters (the read scope)', {
        description:
          'Every action of the console, the admin API and the command line that changes something or reads one ' +
          'person’s data. Mint a token with `oc-host operators tokens mint`. Without a valid operator token the ' +
          'answer is the one a path no route serves: 404 `not_found`.',
        security: OPERATOR_TOKEN,
        querystring: AuditQuery,
        response: {
          200: Type.Object(
            {
              ok: Type.Literal(true),
              entries: Type.Array(AuditEntry),
              next: NullableString({ description: 'Pass as `before` for older entries; null on the last page' }),
            },
            answer('A page of the audit log, newest first', {
              ok: true,
              entries: [
                {
                  id: '4f3c2b1a0e9d8c7b6a5f4e3d2c1b0a99',
                  at: '2026-11-28T10:00:00.000Z',
                  actor: 'cli',
                  via: 'cli',
                  action: 'account.disable',
                  target: 'did:oc:0123456789abcdef0123456789abcdef',
                  reason: null,
                  network: null,
                  detail: null,
                },
              ],
              next: null,
            }),
          ),
          ...errorResponses(400, 401, 403, 404, 429),
        },
      }),
      onRequest: deps.gate('read'),
    },
    async (request, reply) => {
      reply.header('cache-control', 'no-store');
      const { actor, action, target, since, order, before, limit } = request.query;
      const size = limit === undefined ? DEFAULT_AUDIT_PAGE : Number(limit);
      if (!(size >= 1 && size <= MAX_AUDIT_PAGE)) throw new OcError('bad_request', `admin: limit must be 1 to ${MAX_AUDIT_PAGE}`);
      let cursor: { at: number; id: string } | undefined;
      if (before !== undefined) {
        const dot = before.indexOf('.');
        cursor = { at: Number(before.slice(0, dot)), id: before.slice(dot + 1) };
      }
      const rows = await deps.operators.listAudit({
        ...(actor === undefined ? {} : { actor }),
        ...(action === undefined ? {} : { action }),
        ...(target === undefined ? {} : { target }),
        ...(since === undefined ? {} : { since: Date.parse(since) }),
        ...(order === undefined ? {} : { order }),
        ...(cursor === undefined ? {} : { before: cursor }),
        limit: size + 1,
      });
      const page = rows.slice(0, size);
      const last = page.at(-1);
      return {
        ok: true,
        entries: page.map(auditLine),
        next: rows.length > size && last !== undefined ? `${last.at}.${last.id}` : null,
      };
    },
  );

  app.get(
    '/api/admin/accounts',
    {
      ...route(POLICY.operator, 'admin', 'Find people by did:oc, Bitcoin address, e-mail or provider subject (the read scope; audited)', {
        description:
          'Every account with an identity whose value starts with `q`, case-insensitively: a Bitcoin address, an e-mail ' +
          'address, or `<provider>:<subject>` for an identity provider’s account; or, when `q` starts with `did:oc:`, ' +
          'every account whose `did:oc` starts with it. One match per identity, in the order of its value; pass `next` ' +
          'as `after` for the next page. Written to the audit log as `account.search`, with `q`.',
        security: OPERATOR_TOKEN,
        querystring: Type.Object({
          q: Type.String({
            minLength: 1,
            maxLength: 200,
            description: 'What the identity or the `did:oc` starts with',
            examples: ['alice@'],
          }),
          after: Type.Optional(Type.String({ pattern: '^[0-9a-f]{32}$', description: 'The `next` of the previous page' })),
          limit: Type.Optional(
            Type.String({
              pattern: '^[0-9]{1,3}$',
              description: `Matches per page, 1 to ${MAX_PEOPLE_PAGE}; default ${DEFAULT_PEOPLE_PAGE}`,
            }),
          ),
        }),
        response: {
          200: Type.Object(
            {
              ok: Type.Literal(true),
              people: Type.Array(
                Type.Object({
                  did_oc: Type.String(),
                  status: Type.Union([Type.Literal('active'), Type.Literal('disabled'), Type.Literal('deleted'), Type.Literal('merged')]),
                  kind: Type.String({ description: '`btc` (a wallet’s account) or `federated` (an e-mail’s, a provider’s or an app’s)' }),
                  display_name: NullableString(),
                  created_at: Type.String({ description: 'ISO 8601 UTC' }),
                  matched: Type.Union([
                    Type.Object({ kind: Type.String(), value: Type.String() }, { description: 'The identity that matched' }),
                    Type.Null(),
                  ]),
                }),
              ),
              next: NullableString({ description: 'Pass as `after` for the next page; null on the last page' }),
            },
            answer('A page of matches', {
              ok: true,
              people: [
                {
                  did_oc: 'did:oc:0123456789abcdef0123456789abcdef',
                  status: 'active',
                  kind: 'federated',
                  display_name: null,
                  created_at: '2026-11-01T09:00:00.000Z',
                  matched: { kind: 'email', value: 'alice@example.org' },
                },
              ],
              next: null,
            }),
          ),
          ...errorResponses(400, 401, 403, 404, 429),
        },
      }),
      onRequest: deps.gate('read'),
    },
    async (request, reply) => {
      reply.header('cache-control', 'no-store');
      const { q, after, limit } = request.query;
      const size = limit === undefined ? DEFAULT_PEOPLE_PAGE : Number(limit);
      if (!(size >= 1 && size <= MAX_PEOPLE_PAGE)) throw new OcError('bad_request', `admin: limit must be 1 to ${MAX_PEOPLE_PAGE}`);
      return { ok: true, ...(await deps.accounts.search(q, after, size, actorOf(deps.gate, request))) };
    },
  );

  const AccountView = Type.Object({}, { additionalProperties: true });
  app.get(
    '/api/admin/accounts/:did',
    {
      ...route(POLICY.operator, 'admin', 'One account as an operator sees it (the read scope; audited)', {
        description:
          'Its status, identities, live sessions (device, network, last seen), keys and passkeys, the Connect apps it ' +
          'owns, the apps it signed in to and its latest 20 events. Written to the audit log as `account.view`.',
        security: OPERATOR_TOKEN,
        params: DidParams,
        response: {
          200: Type.Object(
            { ok: Type.Literal(true), account: AccountView },
            answer('The account', {
              ok: true,
              account: {
                did_oc: 'did:oc:0123456789abcdef0123456789abcdef',
                status: 'active',
                kind: 'btc',
                display_name: null,
                created_at: '2026-11-01T09:00:00.000Z',
                disabled_at: null,
                identities: [],
                sessions: [],
                keys: [],
                connect_apps: [],
                signed_in_apps: [],
                activity: [],
              },
            }),
          ),
          ...errorResponses(400, 401, 403, 404, 429),
        },
      }),
      onRequest: deps.gate('read'),
    },
    async (request, reply) => {
      reply.header('cache-control', 'no-store');
      return { ok: true, account: await deps.accounts.view(request.params.did, actorOf(deps.gate, request)) };
    },
  );

  for (const action of ['disable', 'enable'] as const) {
    const disabling = action === 'disable';
    app.post(
      `/api/admin/accounts/:did/${action}`,
      {
        ...route(
          POLICY.operator,
          'admin',
          disabling
            ? 'Hold an account: its sessions and the tokens apps hold for it end (the write scope; audited)'
            : 'Lift the hold on an account (the write scope; audited)',
          {
            description: disabling
              ? 'As `oc-host accounts disable`: every sign-in, switch and Connect key of the account then answers 403 ' +
                '`account_disabled`. The reason is kept in the audit log with `account.disable`.'
              : 'As `oc-host accounts enable`. The reason, when given, is kept in the audit log with `account.enable`.',
            security: OPERATOR_TOKEN,
            params: DidParams,
            body: Type.Object(
              { reason: disabling ? Reason : Type.Optional(Reason) },
              { additionalProperties: false, ...example({ reason: disabling ? 'Fraud report #12' : 'Cleared after review' }) },
            ),
            response: {
              200: Type.Object(
                {
                  ok: Type.Literal(true),
                  changed: Type.Boolean({ description: 'False when the account already was so' }),
                  revoked_sessions: Type.Integer({ minimum: 0 }),
                },
                answer(disabling ? 'Held' : 'The hold is lifted', { ok: true, changed: true, revoked_sessions: disabling ? 2 : 0 }),
              ),
              ...errorResponses(400, 401, 403, 404, 413, 415, 429),
            },
          },
        ),
        onRequest: deps.gate('write'),
      },
      async (request, reply) => {
        reply.header('cache-control', 'no-store');
        const result = await deps.accounts.setDisabled(
          request.params.did,
          disabling,
          request.body.reason ?? null,
          actorOf(deps.gate, request),
        );
        return { ok: true, ...result };
      },
    );
  }

  app.post(
    '/api/admin/accounts/:did/sessions/revoke',
    {
      ...route(POLICY.operator, 'admin', 'Sign an account out of one browser or of all (the write scope; audited)', {
        description:
          'With `session` (an id of the account view’s `sessions`), that one; without, every live session. Consumer ' +
          'sites that poll the revocation feed refuse the cookies too. The person’s activity says an operator did it; ' +
          'the reason is kept in the audit log with `sessions.revoke`.',
        security: OPERATOR_TOKEN,
        params: DidParams,
        body: Type.Object(
          {
            reason: Reason,
            session: Type.Optional(Type.String({ pattern: '^[0-9a-f]{32}$', description: 'One session’s id; all when left out' })),
          },
          { additionalProperties: false, ...example({ reason: 'Lost laptop, reported by phone' }) },
        ),
        response: {
          200: Type.Object(
            { ok: Type.Literal(true), revoked_sessions: Type.Integer({ minimum: 0 }) },
            answer('Signed out', { ok: true, revoked_sessions: 2 }),
          ),
          ...errorResponses(400, 401, 403, 404, 413, 415, 429),
        },
      }),
      onRequest: deps.gate('write'),
    },
    async (request, reply) => {
      reply.header('cache-control', 'no-store');
      const { reason, session } = request.body;
      return {
        ok: true,
        revoked_sessions: await deps.accounts.signOut(request.params.did, session ?? null, reason, actorOf(deps.gate, request)),
      };
    },
  );

  app.get(
    '/api/admin/audit/export',
    {
      ...route(POLICY.operator, 'admin', 'The audit log as JSON lines, oldest first (the read scope)', {
        description:
          'One entry a line, in the form of `GET /api/admin/audit`’s entries, at or after `since` (all of it when left out) ' +
          `and at most ${MAX_EXPORT} lines; the same as \`oc-host operators audit --jsonl\`.`,
        security: OPERATOR_TOKEN,
        querystring: Type.Object({
          since: Type.Optional(Type.String({ format: 'date-time', description: 'Entries at or after this time (ISO 8601)' })),
        }),
        response: {
          200: {
            description: 'JSON lines (`application/jsonl`), oldest first',
            content: { 'application/jsonl': { schema: { type: 'string' } } },
          },
          ...errorResponses(400, 401, 403, 404, 429),
        },
      }),
      onRequest: deps.gate('read'),
    },
    async (request, reply) => {
      const since = request.query.since === undefined ? undefined : Date.parse(request.query.since);
      const rows = await deps.operators.listAudit({ ...(since === undefined ? {} : { since }), limit: MAX_EXPORT });
      reply.header('cache-control', 'no-store').type('application/jsonl; charset=utf-8');
      return rows
        .reverse()
        .map((row) => `${JSON.stringify(auditLine(row))}\n`)
        .join('');
    },
  );

  app.post(
    '/api/admin/accounts/:did/keys/:key/remove',
    {
      ...route(POLICY.operator, 'admin', 'Remove one security key or passkey of an account (the write scope; audited)', {
        description:
          'For a lost or stolen key the person cannot remove themselves. `key` is an id of the account view’s `keys`. ' +
          'The person’s activity records `key_removed` with `by: "operator"`; the reason is kept in the audit log with ' +
          '`key.remove`. 404 `not_found` for a key the account does not hold.',
        security: OPERATOR_TOKEN,
        params: Type.Object({
          did: DidParams.properties.did,
          key: Type.String({
            minLength: 1,
            maxLength: 1400,
            pattern: '^[A-Za-z0-9_-]+$',
            description: 'The key’s id (base64url)',
            examples: ['AQIDBAUGBwgJCgsMDQ4PEA'],
          }),
        }),
        body: Type.Object({ reason: Reason }, { additionalProperties: false, ...example({ reason: 'Key reported stolen' }) }),
        response: {
          200: Type.Object({ ok: Type.Literal(true) }, answer('Removed', { ok: true })),
          ...errorResponses(400, 401, 403, 404, 413, 415, 429),
        },
      }),
      onRequest: deps.gate({ scope: 'write', destructive: true }),
    },
    async (request, reply) => {
      reply.header('cache-control', 'no-store');
      await deps.accounts.removeKey(request.params.did, request.params.key, request.body.reason, actorOf(deps.gate, request));
      return { ok: true as const };
    },
  );

  app.get(
    '/api/admin/accounts/:did/export',
    {
      ...route(POLICY.operator, 'admin', 'Everything stored about an account, as the person’s own export (the read scope; audited)', {
        description:
          'The document `GET /api/auth/account/export` gives the person (format `oc-host.account-export.v1`), sent as a ' +
          'file: keep it before a deletion. Written to the audit log as `account.export`.',
        security: OPERATOR_TOKEN,
        params: DidParams,
        response: {
          200: Type.Object(
            { format: Type.Literal('oc-host.account-export.v1') },
            {
              additionalProperties: true,
              ...answer('The export, sent as a file to save', { format: 'oc-host.account-export.v1' }),
            },
          ),
          ...errorResponses(400, 401, 403, 404, 429),
        },
      }),
      onRequest: deps.gate('read'),
    },
    async (request, reply) => {
      const document = await deps.accounts.exportOf(request.params.did, actorOf(deps.gate, request));
      reply.header('cache-control', 'no-store');
      const hex = request.params.did.slice('did:oc:'.length, 'did:oc:'.length + 12);
      reply.header('content-disposition', `attachment; filename="account-${hex}-${document.exported_at.slice(0, 10)}.json"`);
      return document;
    },
  );

  app.post(
    '/api/admin/accounts/:did/delete',
    {
      ...route(POLICY.operator, 'admin', 'Delete an account (the write scope; audited)', {
        description:
          'As `oc-host accounts delete`: the deletion the person can make themselves (docs/protocol.md §2), recorded as ' +
          '`by: "operator"`. `confirm` must be the account’s `did:oc` (400 `confirmation_mismatch` otherwise). Take the ' +
          'export first (`GET /api/admin/accounts/{did}/export`): nothing brings the data back. The reason and what went ' +
          'are kept in the audit log with `account.delete`.',
        security: OPERATOR_TOKEN,
        params: DidParams,
        body: Type.Object(
          { confirm: Type.String({ minLength: 1, maxLength: 100, description: 'The account’s `did:oc`, again' }), reason: Reason },
          {
            additionalProperties: false,
            ...example({ confirm: 'did:oc:0123456789abcdef0123456789abcdef', reason: 'Deletion requested by e-mail, ticket 88' }),
          },
        ),
        response: {
          200: Type.Object(
            {
              ok: Type.Literal(true),
              identities: Type.Integer({ minimum: 0 }),
              revoked_sessions: Type.Integer({ minimum: 0 }),
            },
            answer('Deleted', { ok: true, identities: 2, revoked_sessions: 1 }),
          ),
          ...errorResponses(400, 401, 403, 404, 413, 415, 429),
        },
      }),
      onRequest: deps.gate({ scope: 'write', destructive: true }),
    },
    async (request, reply) => {
      reply.header('cache-control', 'no-store');
      const { confirm, reason } = request.body;
      return { ok: true as const, ...(await deps.accounts.delete(request.params.did, confirm, reason, actorOf(deps.gate, request))) };
    },
  );
}
