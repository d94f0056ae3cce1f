/**
 * Session endpoints (docs/api.md "Session endpoints", docs/protocol.md §3):
 * JWKS, me, logout, switch, tab. Every way in ends in the session these
 * read and end; the ways in are features of their own (src/features/wallet,
 * email-code, providers, passkeys, phone). Thin: a schema, one domain call,
 * a reply.
 */
import { Type } from 'typebox';
import { OcError } from '../../platform/errors.js';
import { clientFacts } from '../../identity/session/index.js';
import type { KeyRing, SessionService } from '../../identity/session/index.js';
import type { DeviceService } from '../devices/devices.js';
import { foreignSessionSeen, noStore, pinnedToken, presentedTokens, signedIn, sessionBody, type SessionDoor } from '../../web/session.js';
import {
  ANSWER,
  answer,
  EXAMPLE,
  EXAMPLE_ACCOUNT,
  EXAMPLE_OTHER_ACCOUNT,
  errorResponses,
  example,
  SessionIssued,
  SignedOutSwitch,
  StringEnum,
} from '../../platform/http/schemas.js';
import { POLICY } from '../../platform/http/policy.js';
import type { TypedApp } from '../../platform/http/schema-types.js';
import { route, sessionRoute } from '../../web/route.js';

const LogoutQuery = Type.Object({
  scope: Type.Optional(Type.Union([Type.Literal('current'), Type.Literal('all')], { description: 'Default `all`' })),
});
const SwitchBody = Type.Object({ did_oc: Type.String({ minLength: 1, maxLength: 128 }) }, example({ did_oc: EXAMPLE.didOc }));
const TabBody = Type.Object({ did_oc: Type.Optional(Type.String({ minLength: 1, maxLength: 128 })) }, example({ did_oc: EXAMPLE.didOc }));

const PublicJwk = Type.Object({
  kty: Type.Literal('OKP'),
  crv: Type.Literal('Ed25519'),
  x: Type.String(),
  kid: Type.String({ description: 'RFC 7638 thumbprint' }),
  alg: Type.Literal('EdDSA'),
  use: Type.Literal('sig'),
});
const Jwks = Type.Object(
  { keys: Type.Array(PublicJwk) },
  answer('The public keys that verify session tokens: pick the one whose `kid` the JWT header names', {
    keys: [{ kty: 'OKP', crv: 'Ed25519', x: ANSWER.jwkX, kid: ANSWER.kid, alg: 'EdDSA', use: 'sig' }],
  }),
);
const Me = Type.Object(
  { ok: Type.Literal(true), account: Type.Ref('Account'), roster: Type.Array(Type.Ref('RosterEntry')) },
  answer('The active account, and the other accounts signed in in this browser', {
    ok: true,
    account: EXAMPLE_ACCOUNT,
    roster: [{ ...EXAMPLE_OTHER_ACCOUNT, last_seen_at: '2026-04-22T09:12:00.000Z' }],
  }),
);
const LoggedOut = Type.Object(
  {
    ok: Type.Literal(true),
    scope: StringEnum(['current', 'all'] as const),
    ...SignedOutSwitch,
  },
  answer(
    'Signed out (`scope=all`, the default, as here). With `scope=current`, `switched_to` names the account of the roster ' +
      'now active, with its `account` and `token`, or is null when none is left',
    { ok: true, scope: 'all' },
  ),
);

/** What the session reads use (the JWKS, me). */
export interface SessionReadRoutes {
  readonly door: SessionDoor;
  readonly sessions: SessionService;
  readonly keyRing: () => KeyRing;
}

export function registerSessionReadRoutes(app: TypedApp, deps: SessionReadRoutes): void {
  for (const url of ['/api/auth/jwks', '/.well-known/jwks.json']) {
    app.get(
      url,
      route(POLICY.publicRead, 'auth', 'Ed25519 public keys that verify `oc_session`', {
        response: { 200: Jwks, ...errorResponses(429) },
      }),
      async (_request, reply) => {
        reply.header('cache-control', 'public, max-age=300');
        return deps.keyRing().jwks();
      },
    );
  }

  app.get(
    '/api/auth/me',
    sessionRoute(
      POLICY.familyRead,
      'auth',
      'The active account and the other accounts of this browser',
      {
        response: {
          200: Me,
          ...errorResponses(401, 429),
        },
        // Its own lookup: one statement without a tab pin, and a strict one with it.
      },
      { login: 'handler' },
    ),
    async (request, reply) => {
      let me;
      if (pinnedToken(request) === undefined) {
        const tokens = presentedTokens(request);
        me =
          tokens.length === 0
            ? null
            : await deps.sessions.meByTokens(tokens, deps.door.ownRosterCheck(request), foreignSessionSeen(request));
      } else {
        // A pinned tab's token may be a tab token, which the one-statement path does not look up.
        // A superseded one answers 401 here only: the client's cue to pin again (docs/protocol.md §3 "Pinned tabs").
        const current = await deps.door.current(request, true);
        me = current === null ? null : await deps.sessions.me(current);
      }
      if (me === null) throw new OcError('not_authenticated', 'session: sign in first');
      noStore(reply);
      return { ok: true, ...me };
    },
  );
}

/** What signing out, switching and pinning a tab use. */
export interface SessionChangeRoutes {
  readonly door: SessionDoor;
  readonly sessions: SessionService;
  readonly devices: DeviceService;
}

/**
 * Signing out, switching and pinning a tab. Registered after the wallet's
 * sign-in (src/features/wallet), which the API document lists between these
 * and the reads above.
 */
export function registerSessionChangeRoutes(app: TypedApp, deps: SessionChangeRoutes): void {
  app.post(
    '/api/auth/logout',
    sessionRoute(
      POLICY.family,
      'auth',
      'Sign out of this account (scope=current) or of every account of this browser (scope=all)',
      {
        querystring: LogoutQuery,
        response: {
          200: LoggedOut,
          ...errorResponses(401, 403, 429),
        },
        // Its own lookup: a dead cookie is cleared as it answers 401.
      },
      { login: 'handler' },
    ),
    async (request, reply) => {
      const scope = request.query.scope ?? 'all';
      const current = await deps.door.current(request);
      if (!current) {
        // Whatever the browser held is not a live session: make sure it holds nothing.
        deps.door.clearCookie(reply);
        throw new OcError('not_authenticated', 'session: sign in first');
      }
      if (scope === 'all') {
        await deps.sessions.logout(current, scope);
        deps.door.clearCookie(reply);
        return { ok: true, scope };
      }
      return { scope, ...(await deps.door.signOutCurrent(request, reply, current)) };
    },
  );

  app.post(
    '/api/auth/tab',
    {
      ...sessionRoute(
        POLICY.family,
        'auth',
        'A token for one browser tab: pins the tab to this account or to another account of the roster',
        {
          description:
            'Answers a session token of its own for the account `did_oc` names (default: the active account), which must have a live ' +
            "session in this browser's roster. The tab sends it in `x-oc-tab-session`; the cookie is not changed, and re-minting " +
            "the cookie (a switch in another tab) does not end it. It ends with the account's session in this browser. A token " +
            "for an account other than the active one is recorded in that account's activity (`tab_pinned`).",
          body: TabBody,
          response: { 200: SessionIssued, ...errorResponses(400, 401, 403, 404, 409, 413, 415, 429) },
        },
      ),
      // The client's first pin is a bodiless POST: no body means `{}`.
      preValidation: async (request) => {
        if (request.body === undefined) request.body = {};
      },
    },
    async (request, reply) => {
      const current = signedIn(request);
      const issued = await deps.devices.tab(current, request.body.did_oc, clientFacts(request.headers['user-agent'], request.ip));
      noStore(reply);
      return sessionBody(issued);
    },
  );

  app.post(
    '/api/auth/switch',
    sessionRoute(POLICY.family, 'auth', 'Make another account of this browser active, without re-authenticating', {
      body: SwitchBody,
      response: { 200: SessionIssued, ...errorResponses(400, 401, 403, 404, 409, 429) },
    }),
    async (request, reply) => {
      const current = signedIn(request);
      const issued = await deps.sessions.switchTo(current, request.body.did_oc);
      return deps.door.answerIssued(reply, issued);
    },
  );
}
