/**
 * The session of a request, as the host decides it (docs/protocol.md §3) and
 * as the OrangeCheck client libraries expect of every consumer (auth-core's
 * `resolveSessionFromRequest`):
 *
 * 1. a non-empty `x-oc-tab-session` header alone decides. The tab's token is
 *    verified exactly like a cookie (signature, issuer, expiry, the
 *    revocation feed when configured). One that does not verify is no
 *    session, reason `tab_invalid`, and the cookies are never read instead:
 *    falling back would act as another account than the one the tab shows;
 * 2. otherwise every `oc_session` cookie and a Bearer token, the most
 *    recently minted one that verifies (verifier.ts `verifyAny`).
 */
import type { OcSessionClaims } from './claims.js';
import { presentedSessionTokens, tabSessionToken, TAB_SESSION_HEADER, type HeaderValue } from './tokens.js';
import type { SessionVerifier } from './verifier.js';

/** Why a request has no session: nothing that verifies, or a pinned tab's token that does not. */
export type NoSessionReason = 'no_session' | 'tab_invalid';

export type SessionResolution =
  /** `via`: `tab` when the `x-oc-tab-session` header decided, `cookie` for the cookies or a Bearer token. */
  | { readonly ok: true; readonly session: OcSessionClaims; readonly via: 'tab' | 'cookie' }
  | { readonly ok: false; readonly reason: NoSessionReason };

/** The request headers read, as node (string or list) or a test (absent) presents them. */
export interface SessionRequestHeaders {
  readonly cookie?: HeaderValue;
  readonly authorization?: HeaderValue;
  readonly [TAB_SESSION_HEADER]?: HeaderValue;
}

const NO_SESSION: SessionResolution = Object.freeze({ ok: false, reason: 'no_session' });
const TAB_INVALID: SessionResolution = Object.freeze({ ok: false, reason: 'tab_invalid' });

/** The request's session, or why it has none. Never throws for bad tokens. */
export async function resolveSession(verifier: SessionVerifier, headers: SessionRequestHeaders): Promise<SessionResolution> {
  const pinned = tabSessionToken(headers[TAB_SESSION_HEADER]);
  if (pinned !== undefined) {
    const session = pinned === null ? null : await verifier.verify(pinned);
    return session === null ? TAB_INVALID : { ok: true, session, via: 'tab' };
  }
  const session = await verifier.verifyAny(presentedSessionTokens(headers));
  return session === null ? NO_SESSION : { ok: true, session, via: 'cookie' };
}

/** The two values the adapters put on a request: the session, and why it is null. */
export function sessionAndReason(resolution: SessionResolution): { session: OcSessionClaims | null; reason: NoSessionReason | null } {
  return resolution.ok ? { session: resolution.session, reason: null } : { session: null, reason: resolution.reason };
}
