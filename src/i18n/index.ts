/**
 * Languages (README "Languages"): which of the shipped languages a request
 * gets, and its messages formatted with ICU MessageFormat (FormatJS's
 * intl-messageformat: plurals, selects, numbers).
 *
 * - A choice the person made (the `oc_lang` cookie) wins; otherwise the
 *   best match of `Accept-Language` by its q-values, a region falling back
 *   to its language (`de-AT` → `de`); otherwise English.
 * - Every catalog has exactly the keys of the English one
 *   (test/i18n.test.ts), so a missing translation is a failed test, not a
 *   blank in a mail.
 */
import { IntlMessageFormat } from 'intl-messageformat';
import { de } from './messages/de.js';
import { en, type MessageKey } from './messages/en.js';
import { es } from './messages/es.js';
import { fr } from './messages/fr.js';

export const LOCALES = ['en', 'de', 'es', 'fr'] as const;
export type Locale = (typeof LOCALES)[number];
export const DEFAULT_LOCALE: Locale = 'en';
/** The cookie that keeps a person's choice of language. */
export const LANGUAGE_COOKIE = 'oc_lang';

export type { MessageKey };
export const CATALOGS: Readonly<Record<Locale, Readonly<Record<MessageKey, string>>>> = { en, de, es, fr };

export function isLocale(value: unknown): value is Locale {
  return typeof value === 'string' && (LOCALES as readonly string[]).includes(value);
}

/** The ranges of an Accept-Language header, best first (RFC 9110 §12.5.4); malformed parts are skipped. */
function ranges(header: string): string[] {
  const weighted: Array<{ tag: string; q: number; index: number }> = [];
  header.split(',').forEach((part, index) => {
    const [tag, ...parameters] = part.trim().split(';');
    if (!tag || !/^[A-Za-z]{1,8}(-[A-Za-z0-9]{1,8})*$|^\*$/.test(tag.trim())) return;
    let q = 1;
    for (const parameter of parameters) {
      const match = /^\s*q\s*=\s*([01](\.\d{0,3})?)\s*$/.exec(parameter);
      if (match) q = Number(match[1]);
    }
    if (q > 0) weighted.push({ tag: tag.trim().toLowerCase(), q, index });
  });
  return weighted.sort((a, b) => b.q - a.q || a.index - b.index).map((entry) => entry.tag);
}

/** The language for a request: the `oc_lang` cookie, else Accept-Language, else English. */
export function negotiateLocale(acceptLanguage: string | undefined, chosen?: string | undefined): Locale {
  if (isLocale(chosen)) return chosen;
  if (acceptLanguage === undefined || acceptLanguage.length > 1024) return DEFAULT_LOCALE;
  for (const range of ranges(acceptLanguage)) {
    const language = range.split('-')[0]!;
    if (isLocale(language)) return language;
  }
  return DEFAULT_LOCALE;
}

const formats = new Map<string, IntlMessageFormat>();

/** A translator for `locale`: `t('key', {name: 'x'})`. */
export function translator(locale: Locale): (key: MessageKey, values?: Readonly<Record<string, string | number>>) => string {
  const catalog = CATALOGS[locale];
  return (key, values) => {
    const cacheKey = `${locale}\u0000${key}`;
    let format = formats.get(cacheKey);
    if (format === undefined) {
      format = new IntlMessageFormat(catalog[key], locale);
      formats.set(cacheKey, format);
    }
    return String(format.format(values));
  };
}

/** A date and time in `locale`, in UTC and saying so (mails cannot know the reader's zone). */
export function formatUtc(date: Date, locale: Locale): string {
  return `${new Intl.DateTimeFormat(locale, { dateStyle: 'medium', timeStyle: 'short', timeZone: 'UTC' }).format(date)} UTC`;
}
