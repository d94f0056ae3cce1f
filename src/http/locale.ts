/**
 * The language of a request (src/i18n): the `oc_lang` cookie a person's
 * choice set, else Accept-Language, else English.
 */
import type { FastifyRequest } from 'fastify';
import { LANGUAGE_COOKIE, negotiateLocale, type Locale } from '../i18n/index.js';

/** One cookie's value from a Cookie header, or undefined. */
export function readCookie(header: string | undefined, name: string): string | undefined {
  if (!header) return undefined;
  for (const pair of header.split(';')) {
    const equals = pair.indexOf('=');
    if (equals !== -1 && pair.slice(0, equals).trim() === name) return pair.slice(equals + 1).trim();
  }
  return undefined;
}

export function requestLocale(request: FastifyRequest): Locale {
  const accept = request.headers['accept-language'];
  return negotiateLocale(typeof accept === 'string' ? accept : undefined, readCookie(request.headers.cookie, LANGUAGE_COOKIE));
}
