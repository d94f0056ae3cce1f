/**
 * Languages (docs/pages.md "Languages"): which of the shipped languages a request
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
import { en, type MailMessageKey } from './messages/en.js';
import { es } from './messages/es.js';
import { fr } from './messages/fr.js';
import { pagesDe } from './pages/de.js';
import { pagesEn, type SharedPageMessageKey } from './pages/en.js';
import { pagesEs } from './pages/es.js';
import { pagesFr } from './pages/fr.js';

export const LOCALES = ['en', 'de', 'es', 'fr'] as const;
export type Locale = (typeof LOCALES)[number];
const DEFAULT_LOCALE: Locale = 'en';
/** The cookie that keeps a person's choice of language. */
export const LANGUAGE_COOKIE = 'oc_lang';

/** What a language is called in itself, for the language form. */
export const LANGUAGE_NAMES: Readonly<Record<Locale, string>> = { en: 'English', de: 'Deutsch', es: 'Español', fr: 'Français' };

/**
 * The keys of the pages' words: the shared ones of `./pages/`, and each
 * feature's, which its `words.ts` adds to this interface by declaration
 * merging; src/page-words.ts adds the words themselves
 * ({@link addPageWords}) from the list of the features. The platform names
 * no feature.
 *
 * @public (reached by that declaration, not by an import)
 */
export interface PageWords extends Readonly<Record<SharedPageMessageKey, string>> {}
export type PageMessageKey = keyof PageWords;
/** One feature's page words in every language. */
export type PageWordSet = Readonly<Record<Locale, Readonly<Record<string, string>>>>;
export type MessageKey = MailMessageKey | PageMessageKey;
type Catalog<Key extends string> = Readonly<Record<Key, string>>;

const pageCatalogs: Record<Locale, Record<string, string>> = {
  en: { ...pagesEn },
  de: { ...pagesDe },
  es: { ...pagesEs },
  fr: { ...pagesFr },
};
const allCatalogs: Record<Locale, Record<string, string>> = {
  en: { ...en, ...pagesEn },
  de: { ...de, ...pagesDe },
  es: { ...es, ...pagesEs },
  fr: { ...fr, ...pagesFr },
};

/**
 * The pages' messages per language: served to the browser (src/web/pages.ts) as well as used in the HTML.
 * The shared words, and each feature's once src/page-words.ts has added them.
 */
export const PAGE_CATALOGS = pageCatalogs as unknown as Readonly<Record<Locale, Catalog<PageMessageKey>>>;
/** Every message per language: the e-mails' and the pages'. */
export const CATALOGS = allCatalogs as unknown as Readonly<Record<Locale, Catalog<MessageKey>>>;

/**
 * Adds a feature's page words, in every language, to the catalogs
 * (src/page-words.ts, once, before a page is made). A page key already
 * there is a programming error: one key, one place. A page's word wins over
 * a mail's of the same key, as in the catalogs above (the device names of
 * the account page and of the mails are the same words).
 */
export function addPageWords(words: PageWordSet): void {
  for (const locale of LOCALES) {
    for (const [key, text] of Object.entries(words[locale])) {
      if (Object.hasOwn(pageCatalogs[locale], key)) throw new Error(`i18n: the page message ${key} is defined twice`);
      pageCatalogs[locale][key] = text;
      allCatalogs[locale][key] = text;
    }
  }
}

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
      format = new IntlMessageFormat(catalog[key], locale, undefined, { ignoreTag: true });
      formats.set(cacheKey, format);
    }
    return String(format.format(values));
  };
}

/** A date and time in `locale`, in UTC and saying so (mails cannot know the reader's zone). */
export function formatUtc(date: Date, locale: Locale): string {
  return `${new Intl.DateTimeFormat(locale, { dateStyle: 'medium', timeStyle: 'short', timeZone: 'UTC' }).format(date)} UTC`;
}

/**
 * The day and the time of `date` in UTC apart, for a sentence that puts its
 * own words between them ("on {date} at {time}", "am {date} um {time}"):
 * the time says its zone.
 */
export function formatUtcParts(date: Date, locale: Locale): { readonly date: string; readonly time: string } {
  return {
    date: new Intl.DateTimeFormat(locale, { dateStyle: 'medium', timeZone: 'UTC' }).format(date),
    time: `${new Intl.DateTimeFormat(locale, { timeStyle: 'short', timeZone: 'UTC' }).format(date)} UTC`,
  };
}

/** Escapes text for HTML text and attribute values, and the page templates' braces. */
export function escapeHtml(value: string): string {
  return value.replace(/[&<>"'{}]/g, (character) => `&#${character.charCodeAt(0)};`);
}

/**
 * A message as HTML: its text escaped, and each `<name>…</name>` of the
 * message wrapped in the opening tag `tags[name]` gives (markup the caller
 * owns, such as `<a href="/api/openapi">`) and its closing tag.
 */
export function formatHtml(
  locale: Locale,
  key: MessageKey,
  values: Readonly<Record<string, string | number>> = {},
  tags: Readonly<Record<string, string>> = {},
): string {
  const names = Object.keys(tags);
  // Sentinels stand for the tags until the text is escaped; values cannot carry them.
  const plain = Object.fromEntries(
    Object.entries(values).map(([name, value]) => [name, typeof value === 'string' ? value.replace(/[\u0001\u0002]/g, '') : value]),
  );
  const wrappers = Object.fromEntries(
    names.map((name, index) => [name, (chunks: unknown[]) => `\u0001${index}\u0002${chunks.join('')}\u0001/${index}\u0002`]),
  );
  const formatted = new IntlMessageFormat(CATALOGS[locale][key], locale).format({ ...plain, ...wrappers });
  const text = Array.isArray(formatted) ? formatted.join('') : String(formatted);
  return escapeHtml(text).replace(/\u0001(\/?)(\d+)\u0002/g, (_whole, closing: string, index: string) => {
    const open = tags[names[Number(index)]!]!;
    return closing === '' ? open : `</${/^<([a-z0-9]+)/.exec(open)![1]}>`;
  });
}
