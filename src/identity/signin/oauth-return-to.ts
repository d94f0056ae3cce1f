/**
 * Where a sign-in sends the browser when it is done (docs/protocol.md §6
 * "return_to": a path on this service or a URL of a family origin). The
 * pages render the value this returns and their scripts follow it as is, and
 * the provider callback redirects there without asking again, so this check
 * is the only thing that keeps the service from being an open redirector
 * (RFC 6749 §10.15): it runs when a page or the provider start receives the
 * value, and once more on the way out of the callback.
 */
import { OcError } from '../../platform/errors.js';

const MAX_RETURN_TO_LENGTH = 2048;
/**
 * Refused anywhere in the value: control characters and spaces, which the URL
 * parser strips or drops (`/\t/evil.com` parses as `//evil.com`), and the
 * backslash, which browsers read as a slash (`/\evil.com` is protocol-relative).
 */
const FORBIDDEN = /[\u0000-\u0020\u007f\\]/;
/** A lone UTF-16 surrogate, which the URL parser would silently turn into U+FFFD. */
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;
/**
 * A normalised path that another host could be read from: `//host`, `/\host`,
 * or the same with the second character percent-encoded, which a server or
 * proxy that decodes before it redirects turns back into `//host`.
 */
const HOST_LIKE_PATH = /^\/([/\\]|%2f|%5c)/i;

export const RETURN_TO_DETAIL = 'return_to: must be a path on this service (/…) or a URL of a family origin';

/**
 * The normalised `return_to`, or throws `bad_request` (docs/protocol.md §6
 * "return_to").
 *
 * The value is resolved once by the WHATWG URL parser against `publicUrl`,
 * which removes dot segments (also `%2e`) and percent-encodes what is not
 * printable ASCII, and the result is what the browser is given: a path
 * (path, query and fragment) whose origin is `publicUrl`'s, or the full href
 * of an http(s) URL without credentials whose origin `isAllowedOrigin`
 * accepts (the family origins of docs/protocol.md §1, `FAMILY_ORIGINS`).
 * Returning the parser's own result, and checking that parsing it again gives
 * it back, leaves nothing for a browser to resolve differently:
 * `/.//evil.com` resolves to `//evil.com` here and is refused, instead of
 * being handed on for a page script to resolve into another host.
 */
export function checkReturnTo(value: string, publicUrl: string, isAllowedOrigin: (origin: string) => boolean): string {
  if (
    typeof value !== 'string' ||
    value.length === 0 ||
    value.length > MAX_RETURN_TO_LENGTH ||
    FORBIDDEN.test(value) ||
    LONE_SURROGATE.test(value)
  ) {
    throw new OcError('bad_request', RETURN_TO_DETAIL);
  }
  if (value.startsWith('/')) {
    if (value.startsWith('//')) throw new OcError('bad_request', RETURN_TO_DETAIL);
    const base = new URL(publicUrl);
    const resolved = parse(value, base);
    if (resolved === undefined || resolved.origin !== base.origin) throw new OcError('bad_request', RETURN_TO_DETAIL);
    const path = pathOf(resolved);
    const again = parse(path, base);
    if (HOST_LIKE_PATH.test(path) || again === undefined || again.origin !== base.origin || pathOf(again) !== path) {
      throw new OcError('bad_request', RETURN_TO_DETAIL);
    }
    return path;
  }
  // Anything else must be a whole URL on its own: no base, so that `https:evil.com`
  // cannot become a path of this service here and another host in a browser.
  const parsed = parse(value);
  if (
    parsed === undefined ||
    (parsed.protocol !== 'https:' && parsed.protocol !== 'http:') ||
    parsed.username !== '' ||
    parsed.password !== '' ||
    !isAllowedOrigin(parsed.origin) ||
    parse(parsed.href)?.href !== parsed.href
  ) {
    throw new OcError('bad_request', RETURN_TO_DETAIL);
  }
  return parsed.href;
}

function parse(value: string, base?: URL): URL | undefined {
  try {
    return new URL(value, base);
  } catch {
    return undefined;
  }
}

/** What a same-origin `return_to` keeps: path, query and fragment, as the parser serialised them. */
function pathOf(url: URL): string {
  return `${url.pathname}${url.search}${url.hash}`;
}

/**
 * The `return_to` as {@link checkReturnTo} normalises it, or undefined when it
 * no longer passes; for the second look on the way out.
 */
export function safeReturnTo(value: string, publicUrl: string, isAllowedOrigin: (origin: string) => boolean): string | undefined {
  try {
    return checkReturnTo(value, publicUrl, isAllowedOrigin);
  } catch {
    return undefined;
  }
}

/**
 * The fragment a sign-in or a re-proof adds when it sends the browser back to
 * another site of the family (docs/protocol.md §6 "return_to"): the
 * OrangeCheck client drops a tab's pin to an account when it lands on it, so
 * the tab takes up the cookie's account with its fresh claims instead of
 * keeping a token minted before the ceremony.
 */
const TAB_ADOPT_HASH = '#oc-adopt';

/**
 * `returnTo` with {@link TAB_ADOPT_HASH}, when it is a URL of another origin
 * than `publicUrl`'s and has no fragment of its own (the client clears the
 * whole fragment when it reads the marker, and a page's own anchor must not
 * be lost). A path of this service is left as it is: its pages pin no tab.
 */
export function withTabAdoptMarker(returnTo: string, publicUrl: string): string {
  if (!/^https?:\/\//i.test(returnTo) || returnTo.includes('#')) return returnTo;
  try {
    return new URL(returnTo).origin === new URL(publicUrl).origin ? returnTo : `${returnTo}${TAB_ADOPT_HASH}`;
  } catch {
    return returnTo;
  }
}
