/**
 * Where a provider sign-in sends the browser when it is done (docs/protocol.md §6
 * "Providers": `return_to` must be a family URL or a path). The callback
 * redirects there without asking again, so this check is the only thing that
 * keeps the service from being an open redirector (RFC 6749 §10.15): it runs
 * at `start`, and once more on the way out.
 */
import { OcError } from '../errors.js';

const MAX_RETURN_TO_LENGTH = 2048;
/**
 * Refused anywhere in the value: control characters and spaces, which the URL
 * parser strips or drops (`/\t/evil.com` parses as `//evil.com`), and the
 * backslash, which browsers read as a slash (`/\evil.com` is protocol-relative).
 */
const FORBIDDEN = /[\u0000-\u0020\u007f\\]/;

export const RETURN_TO_DETAIL = 'return_to: must be a path on this service (/…) or a URL of a family origin';

/**
 * The normalised `return_to`, or throws `bad_request`. A path must start with
 * one `/` (never `//`, which a browser reads as another host); a full URL must
 * be http(s), carry no credentials, and have an origin that `isAllowedOrigin`
 * accepts (the family origins of docs/protocol.md §1, `FAMILY_ORIGINS`).
 */
export function checkReturnTo(value: string, publicUrl: string, isAllowedOrigin: (origin: string) => boolean): string {
  if (typeof value !== 'string' || value.length === 0 || value.length > MAX_RETURN_TO_LENGTH || FORBIDDEN.test(value)) {
    throw new OcError('bad_request', RETURN_TO_DETAIL);
  }
  if (value.startsWith('/')) {
    if (value.startsWith('//')) throw new OcError('bad_request', RETURN_TO_DETAIL);
    // It goes into a Location header, which holds ASCII only: percent-encode
    // every other character, and nothing else. Not the URL parser's
    // serialization, which resolves dot segments and can turn `/.//evil.com`
    // into the protocol-relative `//evil.com`. `/∕∕evil.com` (U+2215) becomes
    // `/%E2%88%95%E2%88%95evil.com`, a harmless path on this service.
    const ascii = percentEncodeNonAscii(value);
    // Belt and braces: whatever the browser resolves the path against must stay on this service.
    const base = new URL(publicUrl);
    const resolved = new URL(ascii, base);
    if (resolved.origin !== base.origin) throw new OcError('bad_request', RETURN_TO_DETAIL);
    return ascii;
  }
  let parsed: URL;
  try {
    parsed = new URL(value);
  } catch {
    throw new OcError('bad_request', RETURN_TO_DETAIL);
  }
  if (
    (parsed.protocol !== 'https:' && parsed.protocol !== 'http:') ||
    parsed.username !== '' ||
    parsed.password !== '' ||
    !isAllowedOrigin(parsed.origin)
  ) {
    throw new OcError('bad_request', RETURN_TO_DETAIL);
  }
  return parsed.href;
}

/**
 * UTF-8 percent-encoding of every character outside printable ASCII (the
 * caller has refused controls and spaces already). A lone surrogate cannot
 * be encoded: bad_request.
 */
function percentEncodeNonAscii(value: string): string {
  try {
    return value.replace(/[^\u0021-\u007e]+/g, (run) => encodeURIComponent(run));
  } catch {
    throw new OcError('bad_request', RETURN_TO_DETAIL);
  }
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
