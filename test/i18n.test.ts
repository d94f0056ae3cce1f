/**
 * Languages (src/platform/i18n): every catalog has every key of the English one, the
 * same values and tags in each message, and each message parses and formats;
 * every key the pages and their scripts use exists and every key is used; a
 * request's language comes from `?lang=` on a page, else its cookie, else
 * Accept-Language by q-value with a region falling back to its language,
 * else English; pages are served in it and e-mail codes are mailed in it (a
 * real SMTP server on loopback).
 */
import { readFileSync } from 'node:fs';
import { IntlMessageFormat } from 'intl-messageformat';
import { describe, expect, it } from 'vitest';
import {
  addPageWords,
  CATALOGS,
  formatHtml,
  formatUtc,
  formatUtcParts,
  LOCALES,
  negotiateLocale,
  PAGE_CATALOGS,
  translator,
  type MessageKey,
} from '../src/platform/i18n/index.js';
// Every feature's page words, joined to the shared ones (src/page-words.ts), as the app does at start.
import '../src/page-words.js';
import { findPageRoot, pageFilesOf } from '../src/web/pages.js';
import { testApp } from './support/app.js';
import { useSmtpServer } from './support/auth-harness.js';

interface Arguments {
  readonly values: Map<string, string>;
  readonly tags: Set<string>;
}

/**
 * The values and tags a message takes, read from its parsed form
 * (intl-messageformat's AST: 1 argument, 2 number, 3 date, 4 time, 5 select,
 * 6 plural, 8 tag), each value with its kind.
 */
function argumentsOf(message: string, locale: string): Arguments {
  const values = new Map<string, string>();
  const tags = new Set<string>();
  const walk = (elements: any[]): void => {
    for (const element of elements) {
      if (element.type === 1 || element.type === 2 || element.type === 3 || element.type === 4)
        values.set(element.value, element.type === 2 ? 'number' : 'text');
      if (element.type === 5 || element.type === 6) {
        values.set(element.value, element.type === 6 ? 'number' : 'select');
        for (const option of Object.values(element.options) as Array<{ value: any[] }>) walk(option.value);
      }
      if (element.type === 8) {
        tags.add(element.value);
        walk(element.children);
      }
    }
  };
  walk(new IntlMessageFormat(message, locale).getAst() as any[]);
  return { values, tags };
}

/** Sample values for a message: 2 for numbers, a word for text and for selects (their `other`). */
function sampleFor(args: Arguments): Record<string, string | number> {
  return Object.fromEntries(
    [...args.values].map(([name, kind]) => [name, kind === 'number' ? 2 : kind === 'select' ? 'sample' : `<${name}>`]),
  );
}

describe('catalogs', () => {
  const english = Object.keys(CATALOGS.en).sort() as MessageKey[];

  it("holds every feature's page words beside the shared ones, each key in one place: a second definition stops the start", () => {
    // Joined by src/page-words.ts, imported above as the app does at start: the OpenID provider's words and the wallet's.
    expect(PAGE_CATALOGS.en['oidc.an_app']).toBeTypeOf('string');
    expect(PAGE_CATALOGS.de['wallet.connect']).toBeTypeOf('string');
    const twice = { 'error.network': 'again' };
    expect(() => addPageWords({ en: twice, de: twice, es: twice, fr: twice })).toThrow(
      'i18n: the page message error.network is defined twice',
    );
    expect(PAGE_CATALOGS.en['error.network']).not.toBe('again');
  });

  it.each(LOCALES)('%s has exactly the English keys, with the same values and tags, and every message formats', (locale) => {
    expect(Object.keys(CATALOGS[locale]).sort()).toEqual(english);
    const t = translator(locale);
    for (const key of english) {
      const reference = argumentsOf(CATALOGS.en[key], 'en');
      const own = argumentsOf(CATALOGS[locale][key], locale);
      expect([...own.values.keys()].sort(), `${locale} ${key}: values`).toEqual([...reference.values.keys()].sort());
      expect([...own.tags].sort(), `${locale} ${key}: tags`).toEqual([...reference.tags].sort());
      const sample = sampleFor(reference);
      const text =
        reference.tags.size > 0
          ? formatHtml(locale, key, sample, Object.fromEntries([...reference.tags].map((tag) => [tag, '<b>'])))
          : t(key, sample);
      expect(text, `${locale} ${key}`).not.toMatch(/[{}]/);
      expect(text.trim().length, `${locale} ${key}`).toBeGreaterThan(0);
      // Typographic apostrophes outside English: a straight one next to a brace would quote it in ICU.
      if (locale !== 'en') expect(CATALOGS[locale][key], `${locale} ${key}: apostrophe`).not.toMatch(/'[{}]/);
    }
  });

  it('every message key the pages use exists, and every page message is used', () => {
    // Every page folder's templates and scripts: the shared one's and each feature's.
    const sources = [...pageFilesOf(findPageRoot())]
      .filter(([name]) => /\.(html|js)$/.test(name))
      .map(([, path]) => readFileSync(path, 'utf8'));
    const server = ['../src/web/pages.ts', '../src/platform/http/brand.ts', '../src/features/oidc/page-routes.ts'].map((path) =>
      readFileSync(new URL(path, import.meta.url), 'utf8'),
    );
    const used = new Set<string>();
    for (const source of sources) {
      for (const match of source.matchAll(/\{\{t:([a-z0-9_.]+)/g)) used.add(match[1]!);
      for (const match of source.matchAll(/<!--head title=([a-z0-9_.]+)/g)) used.add(match[1]!);
      for (const match of source.matchAll(/\bt(?:Nodes)?\('([a-z0-9_.]+)'/g)) used.add(match[1]!);
    }
    const pageKeys = Object.keys(PAGE_CATALOGS.en);
    for (const key of used) expect(pageKeys, `used but missing: ${key}`).toContain(key);
    // A key may also be named in a table of codes (`network: 'error.network'`) or by the server.
    const everything = [...sources, ...server].join('\n');
    const unused = pageKeys.filter(
      (key) => !everything.includes(`'${key}'`) && !everything.includes(`{{t:${key}`) && !everything.includes(`<!--head title=${key}`),
    );
    expect(unused).toEqual([]);
  });

  it('formats plurals and dates in the language', () => {
    expect(translator('en')('code.expires', { minutes: 1, date: 'd', time: 'x' })).toContain('1 minute (on d at x)');
    expect(translator('de')('code.expires', { minutes: 10, date: 'd', time: 'x' })).toContain('10 Minuten ab (am d um x)');
    expect(translator('fr')('code.expires', { minutes: 1, date: 'd', time: 'x' })).toContain('1 minute (le d à x)');
    expect(translator('es')('code.expires', { minutes: 1, date: 'd', time: 'x' })).toContain('1 minuto (el d a las x)');
    const at = new Date('2026-11-25T10:05:00Z');
    expect(formatUtc(at, 'en')).toBe('Nov 25, 2026, 10:05 AM UTC');
    expect(formatUtc(at, 'de')).toBe('25.11.2026, 10:05 UTC');
    expect(formatUtcParts(at, 'de')).toEqual({ date: '25.11.2026', time: '10:05 UTC' });
    expect(formatUtcParts(at, 'fr')).toEqual({ date: '25 nov. 2026', time: '10:05 UTC' });
  });
});

describe('negotiation', () => {
  it.each([
    [undefined, undefined, 'en'],
    ['de-AT,de;q=0.9,en;q=0.5', undefined, 'de'],
    ['en;q=0.4, fr-CA;q=0.8', undefined, 'fr'],
    ['ja, es-419;q=0.9', undefined, 'es'],
    ['pt-BR, ja', undefined, 'en'],
    ['de;q=0, fr;q=0.1', undefined, 'fr'],
    ['*;q=0.5, de;q=garbage', undefined, 'de'],
    ['de', 'fr', 'fr'],
    ['de', 'xx', 'de'],
    ['x'.repeat(2000), undefined, 'en'],
  ])('Accept-Language %s with cookie %s → %s', (header, cookie, expected) => {
    expect(negotiateLocale(header, cookie)).toBe(expected);
  });
});

describe('pages in the request language', () => {
  it('are rendered in the language of ?lang=, else the cookie, else Accept-Language, with Content-Language and Vary', async () => {
    const app = await testApp({ BRAND_SUPPORT_URL: 'https://help.example/' });
    try {
      for (const [url, headers, lang, title] of [
        ['/signin', {}, 'en', 'Sign in'],
        ['/signin', { 'accept-language': 'de-CH, en;q=0.5' }, 'de', 'Anmelden'],
        ['/signin', { 'accept-language': 'de', cookie: 'oc_lang=fr' }, 'fr', 'Connexion'],
        ['/signin?lang=es', { cookie: 'oc_lang=fr' }, 'es', 'Iniciar sesión'],
        ['/signin?lang=xx', { 'accept-language': 'fr' }, 'fr', 'Connexion'],
        ['/api-explorer', { 'accept-language': 'es' }, 'es', 'Explorador de la API'],
      ] as const) {
        const page = await app.inject({ method: 'GET', url, headers });
        expect(page.statusCode).toBe(200);
        expect(page.headers['content-language']).toBe(lang);
        expect(page.headers.vary).toBe('Accept-Language, Cookie, Accept-Encoding');
        expect(page.body).toContain(`<html lang="${lang}">`);
        expect(page.body).toContain(`<title>${title} · oc-host</title>`);
        expect(page.body).toContain(`<option value="${lang}" lang="${lang}" selected>`);
        expect(page.body).not.toMatch(/\{\{t:|<!--languages-->/);
      }
      const german = await app.inject({ method: 'GET', url: '/signin?lang=de' });
      expect(german.body).toContain(
        '<p class="support">Brauchen Sie Hilfe? <a href="https://help.example/" rel="noopener">Support von oc-host kontaktieren</a>.</p>',
      );
      const explorer = await app.inject({ method: 'GET', url: '/api-explorer?lang=fr' });
      expect(explorer.body).toContain('d’après son <a href="/api/openapi">document OpenAPI 3.1</a>.');
      for (const locale of LOCALES) {
        const catalog = await app.inject({ method: 'GET', url: `/assets/messages-${locale}.js` });
        expect(catalog.statusCode).toBe(200);
        expect(catalog.headers['content-type']).toBe('text/javascript; charset=utf-8');
        const messages = JSON.parse(catalog.body.replace(/^export const messages = /, '').replace(/;\n$/, ''));
        expect(messages).toEqual(PAGE_CATALOGS[locale]);
      }
    } finally {
      await app.close();
    }
  });
});

describe('mail in the request language', () => {
  const smtp = useSmtpServer();

  it('e-mail codes follow Accept-Language, and the oc_lang cookie over it', async () => {
    const app = await testApp({ SMTP_URL: smtp.url, RATE_LIMIT_OTP_PER_HOUR: '0' });
    try {
      // The expiry names the day and the time apart, in each language's words, and the time zone.
      for (const [headers, email, subject, sentence, when] of [
        [
          { 'accept-language': 'de-DE,de;q=0.9' },
          'sprache@example.org',
          / ist Ihr Anmeldecode für localhost:8787$/,
          'Er läuft in 10 Minuten ab',
          /\(am \d{2}\.\d{2}\.\d{4} um \d{2}:\d{2} UTC\)/,
        ],
        [
          { 'accept-language': 'de-DE', cookie: 'oc_lang=es' },
          'idioma@example.org',
          / es tu código de acceso a localhost:8787$/,
          'Caduca en 10 minutos',
          /\(el \d{1,2} \p{L}+\.? \d{4} a las \d{1,2}:\d{2} UTC\)/u,
        ],
        [
          { 'accept-language': 'fr-FR' },
          'langue@example.org',
          / est votre code de connexion à localhost:8787$/,
          'Il expire dans 10 minutes',
          /\(le \d{1,2} \p{L}+\.? \d{4} à \d{2}:\d{2} UTC\)/u,
        ],
        [
          {},
          'language@example.org',
          / is your sign-in code for localhost:8787$/,
          'It expires in 10 minutes',
          /\(on [A-Z][a-z]{2} \d{1,2}, \d{4} at \d{1,2}:\d{2}\s[AP]M UTC\)/,
        ],
      ] as const) {
        const started = await app.inject({
          method: 'POST',
          url: '/api/auth/email-otp/start',
          headers: { origin: 'http://localhost:8787', ...headers },
          payload: { email },
        });
        expect(started.statusCode).toBe(200);
        const mail = await smtp.waitForMessage((received) => received.envelope.to.includes(email));
        expect(mail.subject).toMatch(subject);
        expect(mail.text).toContain(sentence);
        expect(mail.text).toMatch(when);
      }
    } finally {
      await app.close();
    }
  });
});
