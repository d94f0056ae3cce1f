/**
 * The page's language (docs/pages.md "Languages"). The server picked it (the
 * `oc_lang` cookie, else Accept-Language, else English), translated the
 * page's HTML and wrote it into `<html lang>`; the scripts' own sentences
 * come from the same catalogs (src/platform/i18n/pages/) and are formatted with ICU
 * MessageFormat (./message-format.js). The page's own catalog (the
 * language's messages this page's scripts use, src/web/pages.ts) has the id
 * `page-messages`: a JSON data block in the page itself, or, on a page that
 * links its assets, a `<link rel="modulepreload">` of the catalog's module,
 * fetched beside the script; a page with neither (one from before) loads the
 * language's whole catalog, `/assets/messages-<lang>.js`.
 *
 * The footer's language form stores a choice in the `oc_lang` cookie for a
 * year and reloads the page in that language.
 */
import { formatMessage, parseMessage } from './message-format.js';

const SHIPPED = ['en', 'de', 'es', 'fr'];
const asked = document.documentElement.lang;
/** The page's language: one of the shipped ones. */
export const locale = SHIPPED.includes(asked) ? asked : 'en';
/** @returns {Promise<Readonly<Record<string, string>>>} */
async function loadMessages() {
  const named = document.getElementById('page-messages');
  // In the page itself: a JSON data block (no request, no code run).
  if (named instanceof HTMLScriptElement) return JSON.parse(named.textContent ?? '{}');
  // Linked: the module the preload names, else the whole catalog.
  /** @type {{messages: Readonly<Record<string, string>>}} */
  const module = await import(named instanceof HTMLLinkElement ? named.href : `/assets/messages-${locale}.js`);
  return module.messages;
}
const messages = await loadMessages();

/** @type {Map<string, import('./message-format.js').Part[]>} */
const formats = new Map();

/** @param {string} key */
function formatOf(key) {
  let format = formats.get(key);
  if (format === undefined) {
    const source = messages[key];
    // A key the catalog lacks is a programming error (test/i18n.test.ts checks every key the scripts use).
    if (typeof source !== 'string') throw new Error(`i18n: no message ${key}`);
    format = parseMessage(source);
    formats.set(key, format);
  }
  return format;
}

/**
 * A sentence in the page's language: `t('signin.code_sent', {email})`.
 *
 * @param {string} key
 * @param {Record<string, string | number>} [values]
 * @returns {string}
 */
export function t(key, values) {
  const formatted = formatMessage(formatOf(key), locale, values);
  return Array.isArray(formatted) ? formatted.join('') : formatted;
}

/**
 * A sentence with elements in it (a link, a bold name), as nodes for
 * `replaceChildren`: values that are nodes stay nodes.
 *
 * @param {string} key
 * @param {Record<string, string | number | Node>} values
 * @returns {Array<string | Node>}
 */
export function tNodes(key, values) {
  const formatted = formatMessage(formatOf(key), locale, values);
  const parts = Array.isArray(formatted) ? formatted : [formatted];
  return parts.map((part) => (part instanceof Node ? part : String(part)));
}

/**
 * A formatter made at its first use, then kept: the first Intl formatter of
 * a page loads the language's locale data, 37 to 77 ms measured in a new tab
 * (docs/performance.md "Page weight"), which a page that shows no date at
 * start should not spend before it is usable.
 *
 * @template T
 * @param {() => T} make
 * @returns {() => T}
 */
function once(make) {
  /** @type {T | undefined} */
  let made;
  return () => {
    if (made === undefined) made = make();
    return made;
  };
}

const dateFormat = once(() => new Intl.DateTimeFormat(locale, { dateStyle: 'medium' }));
const dateTimeFormat = once(() => new Intl.DateTimeFormat(locale, { dateStyle: 'medium', timeStyle: 'short' }));
const timeFormat = once(() => new Intl.DateTimeFormat(locale, { hour: '2-digit', minute: '2-digit' }));
const listFormat = once(() => new Intl.ListFormat(locale, { type: 'conjunction' }));

/** A day in the page's language and this device's time zone (`25 Nov 2026`); '' for a bad value. @param {string} iso */
export function formatDate(iso) {
  const date = new Date(iso);
  return Number.isNaN(date.getTime()) ? '' : dateFormat().format(date);
}

/** A day and time in the page's language and this device's time zone. @param {string} iso */
export function formatDateTime(iso) {
  const date = new Date(iso);
  return Number.isNaN(date.getTime()) ? '' : dateTimeFormat().format(date);
}

/** A time of day such as `14:05` or `2:05 PM`. @param {string} iso */
export function formatTime(iso) {
  const date = new Date(iso);
  return Number.isNaN(date.getTime()) ? '' : timeFormat().format(date);
}

/** Words joined as the language joins a list: `a, b and c`. @param {string[]} items */
export function formatList(items) {
  return listFormat().format(items);
}

/** The language cookie: a year, this site only, sent on top-level navigations. @param {string} language */
function rememberLanguage(language) {
  const secure = window.location.protocol === 'https:' ? '; Secure' : '';
  // biome-ignore lint/suspicious/noDocumentCookie: the server reads this cookie to answer in the chosen language; the Cookie Store API is not in every browser the pages serve.
  document.cookie = `oc_lang=${language}; Path=/; Max-Age=31536000; SameSite=Lax${secure}`;
}

/** The footer's language form (rendered by the server on every page). */
function setUpLanguageForm() {
  const form = document.getElementById('language-form');
  const select = document.getElementById('language');
  if (!(form instanceof HTMLFormElement) || !(select instanceof HTMLSelectElement)) return;
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    if (!SHIPPED.includes(select.value)) return;
    rememberLanguage(select.value);
    // A `?lang=` in the address would outvote the new choice: drop it.
    const url = new URL(window.location.href);
    url.searchParams.delete('lang');
    if (url.href === window.location.href) window.location.reload();
    else window.location.replace(url.href);
  });
}

setUpLanguageForm();
