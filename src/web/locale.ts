/**
 * The language of a request (src/platform/i18n): the `oc_lang` cookie a person's
 * choice set, else Accept-Language, else English.
 */
import type { IncomingHttpHeaders } from 'node:http';
import { LANGUAGE_COOKIE, negotiateLocale, type Locale } from '../platform/i18n/index.js';
import { readCookie } from '../identity/session/index.js';

export function requestLocale(request: { readonly headers: IncomingHttpHeaders }): Locale {
  const accept = request.headers['accept-language'];
  return negotiateLocale(typeof accept === 'string' ? accept : undefined, readCookie(request.headers.cookie, LANGUAGE_COOKIE));
}
