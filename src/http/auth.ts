/**
 * Session endpoints (docs/api.md "Session endpoints", docs/protocol.md §3, §5):
 * JWKS, me, BIP-322 sign-in, logout, switch. Thin: a schema, one domain
 * call, a reply.
 */
import { Type } from 'typebox';
import { OcError } from '../errors.js';
import { clientFacts } from '../session/index.js';
import type { KeyRing, SessionService } from '../session/index.js';
import type { DeviceService, SignInService } from '../account/index.js';
import { foreignSessionSeen, noStore, pinnedToken, presentedTokens, signedIn, sessionBody, wantsAdd, type SessionDoor } from './session.js';
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
} from './schemas.js';
import { POLICY } from './policy.js';
import type { TypedApp } from './schema-types.js';
import { route, sessionRoute, signInRoute } from './route.js';

const SignInBody = Type.Object(
  {
    address: Type.Optional(Type.String({ maxLength: 128, description: 'Bitcoin address (docs/api.md body)' })),
    message: Type.String({ minLength: 1, maxLength: 4096, description: 'The challenge message from GET /api/challenge?purpose=login' }),
    signature: Type.String({
      minLength: 1,
      maxLength: 8192,
      description: 'BIP-322 signature (base64 or hex), or legacy signmessage for P2PKH',
    }),
    nonce: Type.Optional(Type.String({ maxLength: 64 })),
    scheme: Type.Optional(Type.String({ maxLength: 16 })),
    expectedNonce: Type.Optional(Type.String({ maxLength: 64, description: 'Alternative body shape sent by existing client libraries' })),
    expectedAudience: Type.Optional(Type.String({ maxLength: 512 })),
    expectedPurpose: Type.Optional(Type.String({ maxLength: 64 })),
    add: Type.Optional(Type.Boolean({ description: 'Same as `?add=1`' })),
  },
  {
    description:
      '`{address, message, signature, nonce}`, or `{message, signature, scheme, expectedNonce, expectedAudience, expectedPurpose, add}`',
    ...example({ address: EXAMPLE.address, message: EXAMPLE.challenge, signature: EXAMPLE.attestation.signature, nonce: EXAMPLE.nonce }),
  },
);

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

/** What the session routes use (sign-in by address, me, logout, switch, tab). */
export interface AuthRoutes {
  readonly door: SessionDoor;
  readonly sessions: SessionService;
  readonly signIn: SignInService;
  readonly devices: DeviceService;
  readonly keyRing: () => KeyRing;
}

export function registerAuthRoutes(app: TypedApp, deps: AuthRoutes): void {
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

  app.post(
    '/api/auth/signin',
    signInRoute('auth', 'Sign in with a BIP-322 signed challenge (purpose=login)', SignInBody),
    async (request, reply) => {
      const body = request.body;
      const query = request.query;
      const nonce = body.nonce ?? body.expectedNonce;
      if (nonce === undefined) throw new OcError('bad_request', 'body.nonce: required (or expectedNonce)');
      const target = await deps.door.signInTarget(request, wantsAdd(query, body.add));
      const issued = await deps.signIn.withAddress(
        {
          message: body.message,
          signature: body.signature,
          nonce,
          address: body.address,
          scheme: body.scheme,
          expectedAudience: body.expectedAudience,
          expectedPurpose: body.expectedPurpose,
        },
        target,
      );
      return deps.door.answerIssued(reply, issued);
    },
  );

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
