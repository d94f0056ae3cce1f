/**
 * Reading and writing the session on a request: the `oc_session` cookies
 * (every one of them) or `Authorization: Bearer`, and the cookie headers of
 * PROTOCOL.md §3.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { OcError } from '../errors.js';
import { clearedSessionCookies, readSessionCookies, serializeSessionCookie } from '../session/cookie.js';
import { MAX_TOKEN_LENGTH } from '../session/jwt.js';
import type { Authenticated, IssuedSession, SigningMethod } from '../session/service.js';
import type { IdentityKind } from '../storage/index.js';
import type { ServiceContext } from './context.js';

const BEARER = /^Bearer ([A-Za-z0-9_.-]+)$/;

/** Every token the request presents, cookies first. */
export function presentedTokens(request: FastifyRequest): string[] {
  const tokens = readSessionCookies(request.headers.cookie);
  const authorization = request.headers.authorization;
  if (typeof authorization === 'string') {
    const match = BEARER.exec(authorization);
    if (match?.[1] && match[1].length <= MAX_TOKEN_LENGTH) tokens.push(match[1]);
  }
  return tokens;
}

const AUTHENTICATED = Symbol('oc.authenticated');
type WithSession = FastifyRequest & { [AUTHENTICATED]?: Authenticated | null };

/** The current session, or null; looked up once per request. */
export async function currentSession(context: ServiceContext, request: FastifyRequest): Promise<Authenticated | null> {
  const holder = request as WithSession;
  if (holder[AUTHENTICATED] === undefined) {
    const tokens = presentedTokens(request);
    holder[AUTHENTICATED] = tokens.length === 0 ? null : await context.sessions.authenticate(tokens);
  }
  return holder[AUTHENTICATED] ?? null;
}

/** The current session, or 401 `not_authenticated` (INTERFACE.md Authentication 6). */
export async function requireSession(context: ServiceContext, request: FastifyRequest): Promise<Authenticated> {
  const session = await currentSession(context, request);
  if (!session) throw new OcError('not_authenticated', 'session: sign in first');
  return session;
}

/** Session-bearing responses are never cached (PROTOCOL.md §4). */
export function noStore(reply: FastifyReply): void {
  reply.header('cache-control', 'no-store, private');
}

export function setSessionCookie(context: ServiceContext, reply: FastifyReply, issued: IssuedSession): void {
  noStore(reply);
  reply.header('set-cookie', serializeSessionCookie(issued.token, { maxAgeSeconds: issued.maxAgeSeconds, domain: context.config.cookieDomain }));
}

export function clearSessionCookie(context: ServiceContext, reply: FastifyReply): void {
  noStore(reply);
  reply.header('set-cookie', clearedSessionCookies({ domain: context.config.cookieDomain }));
}

/**
 * The end of every sign-in path (BIP-322, e-mail code, provider): the account
 * signed in, into the caller's roster with `add`, and the cookie set.
 */
export async function signInWithCookie(
  context: ServiceContext,
  request: FastifyRequest,
  reply: FastifyReply,
  input: { accountId: string; method: SigningMethod; add: boolean; identity: { kind: IdentityKind; value: string } },
): Promise<IssuedSession> {
  const issued = await context.sessions.signIn({ ...input, current: input.add ? await currentSession(context, request) : null });
  setSessionCookie(context, reply, issued);
  return issued;
}

/** The body every successful sign-in, switch or re-mint answers (PROTOCOL.md §3). */
export function sessionBody(issued: IssuedSession): { ok: true; account: IssuedSession['account']; token: string } {
  return { ok: true, account: issued.account, token: issued.token };
}
