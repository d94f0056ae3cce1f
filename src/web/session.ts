/**
 * Reading and writing the session on a request: the `oc_session` cookies
 * (every one of them) or `Authorization: Bearer`, and the cookie headers of
 * docs/protocol.md §3.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { isOcError, OcError } from '../platform/errors.js';
import {
  clearedSessionCookies,
  readRosterCookie,
  readSessionCookies,
  serializeClearedRosterCookie,
  serializeRosterCookie,
  serializeSessionCookie,
  SESSION_COOKIE_NAME,
  isRosterBinding,
  rosterBinding,
  MAX_TOKEN_LENGTH,
  clientFacts,
} from '../identity/session/index.js';
import { requireFreshness, type FreshnessNeed, type SignInTarget } from '../identity/account/index.js';
import type { AccountView, Authenticated, IssuedSession } from '../identity/session/index.js';
import type { Config } from '../platform/config.js';
import type { SessionService } from '../identity/session/index.js';
import { requestLocale } from './locale.js';

const BEARER = /^Bearer ([A-Za-z0-9_.-]+)$/;
const BEARER_TOKEN = /^[A-Za-z0-9_.-]+$/;

/** The methods that change nothing, the only ones a superseded tab token is served on. */
const READING_METHODS: ReadonlySet<string> = new Set(['GET', 'HEAD']);

/** The header a pinned browser tab sends its own session token in (the OrangeCheck client's `TAB_SESSION_HEADER`). */
const TAB_SESSION_HEADER = 'x-oc-tab-session';

/**
 * What reading and writing the session takes: the session service, the
 * clock, the cookie's domain and the server secret that binds a roster to
 * its browser. Only the session door ({@link sessionDoor}) and the login
 * gate hold these; a route is handed the door, whose functions keep the
 * secret inside.
 */
export interface SessionParts {
  readonly sessions: SessionService;
  readonly serverSecret: Uint8Array;
  readonly now: () => Date;
  readonly config: Pick<Config, 'cookieDomain'>;
}

/** The body every successful sign-in, switch or re-mint answers (docs/protocol.md §3). */
export interface SessionBody {
  readonly ok: true;
  readonly account: IssuedSession['account'];
  readonly token: string;
}

/**
 * The session as a route sees it (docs/architecture.md "Routes get what they
 * use"): the session of a request, where a sign-in goes, and the cookies of
 * an answer. Built once by the app; a route holds this, never the parts.
 */
export interface SessionDoor {
  /** The request's session, or null (see {@link currentSession}). */
  current(request: FastifyRequest, strict?: boolean): Promise<Authenticated | null>;
  /** Whether a roster is this browser's own (see {@link ownRosterCheck}). */
  ownRosterCheck(request: { readonly headers: FastifyRequest['headers'] }): ((rosterId: string) => boolean) | undefined;
  /** Where a sign-in goes (see {@link signInTarget}). */
  signInTarget(request: FastifyRequest, add: boolean): Promise<SignInTarget>;
  setCookie(reply: FastifyReply, issued: IssuedSession): void;
  /** The Set-Cookie lines of a re-minted session, for an answer Fastify does not send (see {@link sessionCookieLines}). */
  cookieLines(issued: IssuedSession): string[];
  /** The Set-Cookie lines that leave a browser with no session. */
  clearedCookieLines(): string[];
  clearCookie(reply: FastifyReply): void;
  /** Sets the cookie of a session just issued and answers with its body. */
  answerIssued(reply: FastifyReply, issued: IssuedSession): SessionBody;
  /** Signs the active account out of this browser (see {@link signOutCurrent}). */
  signOutCurrent(request: FastifyRequest, reply: FastifyReply, current: Authenticated): ReturnType<typeof signOutCurrent>;
}

export function sessionDoor(parts: SessionParts): SessionDoor {
  return {
    current: (request, strict) => currentSession(parts, request, strict),
    ownRosterCheck: (request) => ownRosterCheck(parts, request),
    signInTarget: (request, add) => signInTarget(parts, request, add),
    setCookie: (reply, issued) => setSessionCookie(parts, reply, issued),
    cookieLines: (issued) => sessionCookieLines(parts, issued),
    clearedCookieLines: () => clearedSessionCookieLines(parts),
    clearCookie: (reply) => clearSessionCookie(parts, reply),
    answerIssued: (reply, issued) => answerIssued(parts, reply, issued),
    signOutCurrent: (request, reply, current) => signOutCurrent(parts, request, reply, current),
  };
}

/**
 * Every token the request presents in its cookies and `Authorization`,
 * cookies first. A tab pin (`x-oc-tab-session`, {@link pinnedToken}) is not
 * among them: when present it alone decides the session ({@link currentSession}).
 */
export function presentedTokens(request: FastifyRequest): string[] {
  const tokens = readSessionCookies(request.headers.cookie);
  const authorization = request.headers.authorization;
  if (typeof authorization === 'string') {
    const match = BEARER.exec(authorization);
    if (match?.[1] && match[1].length <= MAX_TOKEN_LENGTH) tokens.push(match[1]);
  }
  return tokens;
}

/** Whether a roster is this browser's own, by its `__Host-oc_roster` cookie (identity/session/roster-binding.ts). */
function ownRosterCheck(
  context: SessionParts,
  request: { readonly headers: FastifyRequest['headers'] },
): ((rosterId: string) => boolean) | undefined {
  const binding = readRosterCookie(request.headers.cookie);
  if (binding === undefined) return undefined;
  // The session lookup and the route may ask about the same roster: its MAC is computed once.
  let last: { readonly rosterId: string; readonly own: boolean } | undefined;
  return (rosterId) => {
    if (last?.rosterId !== rosterId) last = { rosterId, own: isRosterBinding(context.serverSecret, rosterId, binding) };
    return last.own;
  };
}

declare module 'fastify' {
  interface FastifyInstance {
    /** The freshness each route declares (`sessionRoute(…, { fresh })`), by `METHOD /url/:param`. */
    declaredFreshness: ReadonlyMap<string, FreshnessNeed>;
  }
  interface FastifyRequest {
    /** The request's session once looked up: undefined before, null when there is none (see {@link currentSession}). */
    authenticated: Authenticated | null | undefined;
    /** Set when the request's only live sessions belong to a roster its binding does not name: its cookies are cleared. */
    foreignSession: boolean;
  }
}

/** Marks `request` as carrying only planted sessions (SessionService.authenticate): its answer clears the cookies. */
export function foreignSessionSeen(request: FastifyRequest): () => void {
  return () => {
    request.foreignSession = true;
  };
}

/**
 * The current session, or null; looked up once per request. `strict` (GET
 * /api/auth/me) refuses a superseded tab token (SessionService.authenticatePinned).
 */
async function currentSession(context: SessionParts, request: FastifyRequest, strict = false): Promise<Authenticated | null> {
  if (request.authenticated === undefined) {
    const isOwn = ownRosterCheck(context, request);
    const pinned = pinnedToken(request);
    let found: Authenticated | null;
    if (pinned !== undefined) {
      found = pinned === null ? null : await context.sessions.authenticatePinned(pinned, strict);
      // A superseded tab token may still read through the host, but changes
      // nothing (docs/protocol.md §3 "Freshness"): to every other method it is no session.
      if (found?.superseded === true && !READING_METHODS.has(request.method)) found = null;
    } else {
      const tokens = presentedTokens(request);
      found = tokens.length === 0 ? null : await context.sessions.authenticate(tokens, isOwn, foreignSessionSeen(request));
    }
    // Whether the browser's binding names the session's roster: decided here once for every route that asks.
    const rosterId = found?.session.roster_id ?? null;
    request.authenticated = found === null ? null : { ...found, ownBrowser: rosterId !== null && isOwn?.(rosterId) === true };
  }
  return request.authenticated;
}

/**
 * The `x-oc-tab-session` token of a tab pinned to one account of the roster
 * (the row's own token or a tab token of it, docs/protocol.md §3), so each
 * tab acts as the account it shows: undefined when the request has none,
 * null when it has one that cannot be a token (then the request has no session).
 */
export function pinnedToken(request: FastifyRequest): string | null | undefined {
  const pinned = request.headers[TAB_SESSION_HEADER];
  if (typeof pinned !== 'string' || pinned === '') return undefined;
  return BEARER_TOKEN.test(pinned) && pinned.length <= MAX_TOKEN_LENGTH ? pinned : null;
}

/**
 * The session of the browser's own cookies, ignoring a tab pin (logout of a
 * pinned tab checks what the cookie still holds): undefined when the request
 * carries no session cookie at all, null when the cookies hold no live session.
 */
async function cookieSession(context: SessionParts, request: FastifyRequest): Promise<Authenticated | null | undefined> {
  const tokens = readSessionCookies(request.headers.cookie);
  if (tokens.length === 0) return undefined;
  try {
    return await context.sessions.authenticate(tokens, ownRosterCheck(context, request), foreignSessionSeen(request));
  } catch (error) {
    if (isOcError(error) && error.code === 'ambiguous_session') return null;
    throw error;
  }
}

/**
 * The session the login gate found for a {@link sessionRoute} (docs/architecture.md
 * "Login by declaration"): a handler of such a route reads it here instead of looking it up.
 */
export function signedIn(request: FastifyRequest): Authenticated {
  const found = request.authenticated;
  if (found == null) throw new OcError('not_authenticated', 'session: sign in first');
  return found;
}

/**
 * The login gate: every route declared with `sessionRoute` (config `login: 'gate'`)
 * has its session looked up by {@link requireSession} in `onRequest`, before
 * its body is parsed or checked, so a request without a live session answers
 * 401 `not_authenticated` whatever its body. A route that declares a
 * freshness (`fresh`, route.ts) is refused 401 `sudo_required` here too,
 * by the one check every door's token goes through (identity/account/step-up.ts
 * `requireFreshness`). Registered after the rate limits, so a refused
 * request still counts against them.
 */
export function registerLoginGate(app: FastifyInstance, context: SessionParts): void {
  // What each route declares, for the OpenAPI walk of test/login-gate.test.ts to hold to the document.
  const declared = new Map<string, FreshnessNeed>();
  app.addHook('onRoute', (route) => {
    const need = route.config?.fresh?.need;
    if (need === undefined) return;
    for (const method of [route.method].flat()) if (method !== 'HEAD') declared.set(`${method} ${route.url}`, need);
  });
  app.decorate('declaredFreshness', declared);
  app.addHook('onRequest', async (request) => {
    const { login, fresh } = request.routeOptions.config;
    if (login !== 'gate') return;
    const current = await requireSession(context, request);
    if (fresh !== undefined && fresh.unless?.(request, current) !== true) {
      requireFreshness(fresh.need, current, context.now().getTime(), fresh.what);
    }
  });
}

/** The current session, or 401 `not_authenticated` (docs/api.md Authentication 6). */
async function requireSession(context: SessionParts, request: FastifyRequest): Promise<Authenticated> {
  const session = await currentSession(context, request);
  if (!session) throw new OcError('not_authenticated', 'session: sign in first');
  return session;
}

/** Session-bearing responses are never cached (docs/protocol.md §4). */
export function noStore(reply: FastifyReply): void {
  reply.header('cache-control', 'no-store, private');
}

/** The Set-Cookie lines of a browser's (not a pinned tab's) re-minted session: its cookie and its roster binding. */
function sessionCookieLines(context: SessionParts, issued: IssuedSession): string[] {
  const lines = [serializeSessionCookie(issued.token, { maxAgeSeconds: issued.maxAgeSeconds, domain: context.config.cookieDomain })];
  const rosterId = issued.session.roster_id;
  if (rosterId !== null) lines.push(serializeRosterCookie(rosterBinding(context.serverSecret, rosterId), issued.maxAgeSeconds));
  return lines;
}

/** The Set-Cookie lines that leave a browser with no session. */
function clearedSessionCookieLines(context: SessionParts): string[] {
  return [...clearedSessionCookies({ domain: context.config.cookieDomain }), serializeClearedRosterCookie()];
}

/** Sets the cookie to `issued`; a pinned tab's token is only answered, never set (docs/protocol.md §3). */
function setSessionCookie(context: SessionParts, reply: FastifyReply, issued: IssuedSession): void {
  noStore(reply);
  if (issued.forTab === true) {
    // A step-up from a pinned tab also re-mints the cookie (SessionService.reissue).
    if (issued.cookie !== undefined) setSessionCookie(context, reply, issued.cookie);
    return;
  }
  // The roster binding keeps a planted oc_session of another roster from
  // being taken for this browser's own (identity/session/roster-binding.ts).
  reply.header('set-cookie', sessionCookieLines(context, issued));
}

function clearSessionCookie(context: SessionParts, reply: FastifyReply): void {
  noStore(reply);
  reply.header('set-cookie', clearedSessionCookieLines(context));
}

/**
 * Where a sign-in goes: with `add`, into the roster of the caller's session,
 * but only when this browser proves that roster is its own by its
 * `__Host-oc_roster` binding (docs/protocol.md §3 "Planted cookies"). A
 * session without that proof (no binding, or a planted cookie, or a header
 * token of another roster) is not added to: the sign-in starts a new roster.
 * Call it before the proof is checked: a refused request
 * (`ambiguous_session`) must not have consumed the proof or made an account.
 */
async function signInTarget(context: SessionParts, request: FastifyRequest, add: boolean): Promise<SignInTarget> {
  const client = { ...clientFacts(request.headers['user-agent'], request.ip), locale: requestLocale(request) };
  if (!add) return { add, current: null, client };
  const current = await currentSession(context, request);
  return { add, current: current?.ownBrowser === true ? current : null, client };
}

/** The body every successful sign-in, switch or re-mint answers (docs/protocol.md §3). */
export function sessionBody(issued: IssuedSession): SessionBody {
  return { ok: true, account: issued.account, token: issued.token };
}

/** Sets the cookie of a session just issued and answers with its body: how a sign-in or a re-mint ends. */
function answerIssued(context: SessionParts, reply: FastifyReply, issued: IssuedSession): SessionBody {
  setSessionCookie(context, reply, issued);
  return sessionBody(issued);
}

/**
 * Gives every request its `authenticated` slot, and makes a request refused
 * as `ambiguous_session` also lose the host's cookies (the family one, the
 * host-only shadow and the roster binding): the next sign-in then starts a
 * fresh roster with its own binding, and a planted family cookie at the same
 * path is overwritten by the clearing.
 */
export function registerSessions(app: FastifyInstance, context: SessionParts): void {
  app.decorateRequest('authenticated', undefined);
  app.decorateRequest('foreignSession', false);
  app.addHook('onError', (_request, reply, error, done) => {
    if (isOcError(error) && error.code === 'ambiguous_session') clearSessionCookie(context, reply);
    done();
  });
  // A request whose only sessions were planted (another roster than its
  // binding names) is answered as signed out and loses them, unless the
  // answer itself set a session of this browser's own (a sign-in).
  app.addHook('onSend', (request, reply, payload, done) => {
    if (request.foreignSession && !setsSession(reply.getHeader('set-cookie'))) clearSessionCookie(context, reply);
    done(null, payload);
  });
}

function setsSession(header: ReturnType<FastifyReply['getHeader']>): boolean {
  const lines = Array.isArray(header) ? header : typeof header === 'string' ? [header] : [];
  return lines.some((line) => typeof line === 'string' && line.startsWith(`${SESSION_COOKIE_NAME}=`));
}

/**
 * Logout with `scope=current` (and DELETE /api/auth/sessions/<this session>):
 * signs the active account out of this browser and moves to the most recently
 * seen other member, setting or clearing the cookie as docs/protocol.md §3 says.
 */
async function signOutCurrent(
  context: SessionParts,
  request: FastifyRequest,
  reply: FastifyReply,
  current: Authenticated,
): Promise<{ ok: true; switched_to: { did_oc: string } | null; account?: AccountView; token?: string }> {
  const { next } = await context.sessions.logout(current, 'current');
  if (current.pinned === true) {
    // A pinned tab signed its own account out: the cookie moves on only
    // when it held that account (docs/protocol.md §3); a caller without
    // one (a header-only client) is given none.
    if ((await cookieSession(context, request)) === null) {
      if (next === null) clearSessionCookie(context, reply);
      else setSessionCookie(context, reply, await context.sessions.remint(next.session));
    }
    noStore(reply);
  } else if (next === null) {
    clearSessionCookie(context, reply);
  } else {
    setSessionCookie(context, reply, next);
  }
  if (next === null) return { ok: true, switched_to: null };
  return { ok: true, switched_to: { did_oc: next.account.did_oc }, account: next.account, token: next.token };
}

export function wantsAdd(query: { add?: string | undefined }, bodyAdd: boolean | undefined): boolean {
  return query.add === '1' || query.add === 'true' || bodyAdd === true;
}
