/**
 * Where a request carries its session: every `oc_session` cookie in the
 * Cookie header (docs/api.md "Session cookie"), or `Authorization: Bearer
 * <jwt>` for callers that cannot send cookies (docs/protocol.md §3: sign-in
 * answers also carry the token).
 *
 * Every `oc_session` cookie counts, not only the first: a host-only cookie
 * left from before the family `Domain` cookie was set travels in the same
 * header and can come first (RFC 6265 §5.4 orders by path length, then
 * creation time), so stopping at the first would shadow the live session.
 *
 * A pinned browser tab sends its own session token in `x-oc-tab-session`
 * (docs/protocol.md §3, the OrangeCheck client's `TAB_SESSION_HEADER`): when
 * that header is present it alone decides (resolve.ts), as on the host.
 */
import { MAX_TOKEN_LENGTH } from './verifier.js';

export const SESSION_COOKIE_NAME = 'oc_session';

/** The header a pinned browser tab sends its own session token in (lower case, as node and fetch present it). */
export const TAB_SESSION_HEADER = 'x-oc-tab-session';

/** At most this many tokens are taken from one request. */
const MAX_PRESENTED_TOKENS = 8;

/** Header values as node (a string or a list), fetch (a string) or a test (absent) presents them. */
export type HeaderValue = string | readonly string[] | null | undefined;

const TOKEN_CHARACTERS = /^[A-Za-z0-9_.-]+$/;
// RFC 7235 §2.1: the scheme is case-insensitive.
const BEARER = /^\s*bearer\s+([A-Za-z0-9_.-]+)\s*$/i;

function asList(value: HeaderValue): readonly string[] {
  if (value === undefined || value === null) return [];
  return typeof value === 'string' ? [value] : value;
}

function usable(token: string): boolean {
  return token.length > 0 && token.length <= MAX_TOKEN_LENGTH && TOKEN_CHARACTERS.test(token);
}

/** Every `oc_session` value of the Cookie header(s), in order, without duplicates. */
export function sessionCookieValues(cookieHeader: HeaderValue): string[] {
  const found: string[] = [];
  for (const header of asList(cookieHeader)) {
    // `;` separates cookies (RFC 6265 §4.2.1); `,` appears where a fetch
    // Headers object joined several Cookie headers into one value.
    for (const pair of header.split(/[;,]/)) {
      const equals = pair.indexOf('=');
      if (equals === -1 || pair.slice(0, equals).trim() !== SESSION_COOKIE_NAME) continue;
      let value = pair.slice(equals + 1).trim();
      // RFC 6265 §4.1.1 allows the value in double quotes.
      if (value.length >= 2 && value.startsWith('"') && value.endsWith('"')) value = value.slice(1, -1);
      if (usable(value) && !found.includes(value)) found.push(value);
      if (found.length >= MAX_PRESENTED_TOKENS) return found;
    }
  }
  return found;
}

/** The token of an `Authorization: Bearer` header, or undefined. */
export function bearerToken(authorizationHeader: HeaderValue): string | undefined {
  const [first] = asList(authorizationHeader);
  const token = first === undefined ? undefined : BEARER.exec(first)?.[1];
  return token !== undefined && usable(token) ? token : undefined;
}

/** Every session token a request presents: the `oc_session` cookies, then a Bearer token. */
export function presentedSessionTokens(headers: { readonly cookie?: HeaderValue; readonly authorization?: HeaderValue }): string[] {
  const tokens = sessionCookieValues(headers.cookie);
  const bearer = bearerToken(headers.authorization);
  if (bearer !== undefined && !tokens.includes(bearer) && tokens.length < MAX_PRESENTED_TOKENS) tokens.push(bearer);
  return tokens;
}

/**
 * The token of an `x-oc-tab-session` header: undefined when the request has
 * none (absent or empty), null when it has one that cannot be a token (the
 * request then has no session: a pin never falls back to the cookies).
 */
export function tabSessionToken(tabHeader: HeaderValue): string | null | undefined {
  const values = asList(tabHeader).filter((value) => value !== '');
  if (values.length === 0) return undefined;
  // Two pins in one request name no single tab: refused like a malformed one.
  const [only] = values;
  return values.length === 1 && only !== undefined && usable(only) ? only : null;
}
