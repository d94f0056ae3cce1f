/**
 * The `oc_session` cookie (docs/api.md Session cookie; docs/protocol.md §3).
 *
 * Set:     `oc_session=<jwt>; Path=/; HttpOnly; Secure; SameSite=Lax; Max-Age=<n>`
 * Cleared: `oc_session=; Path=/; HttpOnly; Secure; SameSite=Lax; Max-Age=0`
 * each followed by `; Domain=<COOKIE_DOMAIN>` when one is configured.
 * `Secure` is always set: browsers accept it on `http://localhost` (docs/protocol.md §3).
 */
import { MAX_TOKEN_LENGTH } from './jwt.js';

export const SESSION_COOKIE_NAME = 'oc_session';
/**
 * The roster binding (roster-binding.ts). The `__Host-` prefix makes a
 * browser accept it only with Secure, Path=/ and no Domain, from this host.
 */
const ROSTER_COOKIE_NAME = '__Host-oc_roster';
const ROSTER_VALUE = /^[A-Za-z0-9_-]{22}$/;

/** At most this many `oc_session` values are taken from one request. */
export const MAX_SESSION_COOKIES = 8;

/** A compact JWS: base64url segments joined by dots; all cookie-safe (RFC 6265 §4.1.1). */
const TOKEN_CHARACTERS = /^[A-Za-z0-9_\-.]+$/;

/** A domain attribute value: labels of letters, digits and hyphens, an optional leading dot. */
const DOMAIN = /^\.?[A-Za-z0-9-]+(\.[A-Za-z0-9-]+)*$/;

export interface SessionCookieOptions {
  /** Seconds until the token's `exp` (docs/protocol.md §3); fractions are dropped. */
  readonly maxAgeSeconds: number;
  /** The family parent domain (`COOKIE_DOMAIN`); absent for a host-only cookie. */
  readonly domain?: string | undefined;
}

export interface ClearedSessionCookieOptions {
  readonly domain?: string | undefined;
}

function attributes(maxAgeSeconds: number, domain: string | undefined): string {
  let text = `; Path=/; HttpOnly; Secure; SameSite=Lax; Max-Age=${maxAgeSeconds}`;
  if (domain !== undefined) {
    // A `;` or space here would let configuration inject further attributes.
    if (!DOMAIN.test(domain)) throw new TypeError(`session cookie: invalid domain "${domain}"`);
    text += `; Domain=${domain}`;
  }
  return text;
}

/** The `Set-Cookie` value that carries a session token. */
export function serializeSessionCookie(token: string, options: SessionCookieOptions): string {
  if (typeof token !== 'string' || token.length > MAX_TOKEN_LENGTH || !TOKEN_CHARACTERS.test(token)) {
    throw new TypeError('session cookie: the value must be a compact JWT');
  }
  const { maxAgeSeconds } = options;
  if (!Number.isFinite(maxAgeSeconds) || maxAgeSeconds < 0) {
    throw new RangeError(`session cookie: Max-Age must be a non-negative number of seconds, got ${maxAgeSeconds}`);
  }
  return `${SESSION_COOKIE_NAME}=${token}${attributes(Math.floor(maxAgeSeconds), options.domain)}`;
}

/**
 * The `Set-Cookie` value that removes the session cookie. A browser deletes a
 * cookie only when name, path and domain match, hence the same attributes.
 */
export function serializeClearedSessionCookie(options: ClearedSessionCookieOptions = {}): string {
  return `${SESSION_COOKIE_NAME}=${attributes(0, options.domain)}`;
}

/**
 * Every `Set-Cookie` value a logout should send. With a cookie domain
 * configured, a host-only `oc_session` left from before (or set while no domain
 * was configured) would survive clearing the family cookie and shadow the next
 * sign-in, so both are cleared.
 */
export function clearedSessionCookies(options: ClearedSessionCookieOptions = {}): string[] {
  return options.domain === undefined
    ? [serializeClearedSessionCookie()]
    : [serializeClearedSessionCookie({ domain: options.domain }), serializeClearedSessionCookie()];
}

function sessionValueOf(pair: string): string | undefined {
  const equals = pair.indexOf('=');
  if (equals === -1 || pair.slice(0, equals).trim() !== SESSION_COOKIE_NAME) return undefined;
  let value = pair.slice(equals + 1).trim();
  // RFC 6265 §4.1.1 allows a cookie value in double quotes.
  if (value.length >= 2 && value.startsWith('"') && value.endsWith('"')) value = value.slice(1, -1);
  if (value.length === 0 || value.length > MAX_TOKEN_LENGTH || !TOKEN_CHARACTERS.test(value)) return undefined;
  return value;
}

/**
 * Every distinct `oc_session` value in a `Cookie` header, in header order.
 * A request can carry several: a stale host-only cookie and the family-domain
 * cookie have the same name, and the browser sends both, in an order the
 * server cannot rely on; the host tries each against its session rows.
 * Malformed pairs and values that cannot be a token are skipped; at most
 * {@link MAX_SESSION_COOKIES} values are returned, so one request cannot ask
 * for unbounded session lookups.
 */
export function readSessionCookies(cookieHeader: string | readonly string[] | undefined): string[] {
  const headers = typeof cookieHeader === 'string' ? [cookieHeader] : Array.isArray(cookieHeader) ? cookieHeader : [];
  const values: string[] = [];
  for (const header of headers) {
    if (typeof header !== 'string') continue;
    let start = 0;
    while (start < header.length && values.length < MAX_SESSION_COOKIES) {
      let end = header.indexOf(';', start);
      if (end === -1) end = header.length;
      const value = sessionValueOf(header.slice(start, end));
      if (value !== undefined && !values.includes(value)) values.push(value);
      start = end + 1;
    }
  }
  return values;
}

/** The `Set-Cookie` value of the roster binding, alongside a session cookie (same lifetime). */
export function serializeRosterCookie(binding: string, maxAgeSeconds: number): string {
  if (!ROSTER_VALUE.test(binding)) throw new TypeError('roster cookie: the value must be a roster binding');
  return `${ROSTER_COOKIE_NAME}=${binding}; Path=/; HttpOnly; Secure; SameSite=Lax; Max-Age=${Math.max(0, Math.floor(maxAgeSeconds))}`;
}

export function serializeClearedRosterCookie(): string {
  return `${ROSTER_COOKIE_NAME}=; Path=/; HttpOnly; Secure; SameSite=Lax; Max-Age=0`;
}

/** Every value of the cookie `name` in `Cookie` headers, trimmed, in header order. */
function cookieValues(cookieHeader: string | readonly string[] | undefined, name: string): string[] {
  const headers = typeof cookieHeader === 'string' ? [cookieHeader] : Array.isArray(cookieHeader) ? cookieHeader : [];
  const values: string[] = [];
  for (const header of headers) {
    if (typeof header !== 'string') continue;
    for (const pair of header.split(';')) {
      const equals = pair.indexOf('=');
      if (equals !== -1 && pair.slice(0, equals).trim() === name) values.push(pair.slice(equals + 1).trim());
    }
  }
  return values;
}

/** The first value of the cookie `name` (the OAuth state, the language choice), or undefined. */
export function readCookie(cookieHeader: string | readonly string[] | undefined, name: string): string | undefined {
  return cookieValues(cookieHeader, name)[0];
}

/** The `__Host-oc_roster` value of a `Cookie` header, when well formed. */
export function readRosterCookie(cookieHeader: string | readonly string[] | undefined): string | undefined {
  return cookieValues(cookieHeader, ROSTER_COOKIE_NAME).find((value) => ROSTER_VALUE.test(value));
}
