/**
 * Languages (src/i18n): every catalog has every key of the English one and
 * each message parses and formats; a request's language comes from its
 * cookie, else Accept-Language by q-value with a region falling back to its
 * language, else English; e-mail codes are mailed in it (a real SMTP server
 * on loopback).
 */
import { IntlMessageFormat } from 'intl-messageformat';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CATALOGS, formatUtc, LOCALES, negotiateLocale, translator } from '../src/i18n/index.js';
import { testApp } from './support/app.js';
import { startSmtpServer, type TestSmtpServer } from './support/smtp-server.js';

const SAMPLE = { name: 'Acme ID', code: '123456', minutes: 10, time: '12:10', provider: 'github', contact: 'help@acme.example' };

describe('catalogs', () => {
  const english = Object.keys(CATALOGS.en).sort();

  it.each(LOCALES)('%s has exactly the English keys, and every message formats', (locale) => {
    expect(Object.keys(CATALOGS[locale]).sort()).toEqual(english);
    const t = translator(locale);
    for (const key of english) {
      expect(() => new IntlMessageFormat(CATALOGS[locale][key as keyof (typeof CATALOGS)['en']], locale), `${locale} ${key}`).not.toThrow();
      const text = t(key as keyof (typeof CATALOGS)['en'], SAMPLE);
      expect(text, `${locale} ${key}`).not.toMatch(/[{}]/);
      expect(text.length).toBeGreaterThan(0);
    }
  });

  it('formats plurals and dates in the language', () => {
    expect(translator('en')('code.expires', { minutes: 1, time: 'x' })).toContain('1 minute ');
    expect(translator('de')('code.expires', { minutes: 10, time: 'x' })).toContain('10 Minuten');
    expect(translator('fr')('code.expires', { minutes: 1, time: 'x' })).toContain('1 minute');
    const at = new Date('2026-11-25T10:05:00Z');
    expect(formatUtc(at, 'en')).toBe('Nov 25, 2026, 10:05 AM UTC');
    expect(formatUtc(at, 'de')).toBe('25.11.2026, 10:05 UTC');
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

describe('mail in the request language', () => {
  let smtp: TestSmtpServer;
  beforeAll(async () => {
    smtp = await startSmtpServer();
  });
  afterAll(async () => {
    await smtp?.close();
  });

  it('e-mail codes follow Accept-Language, and the oc_lang cookie over it', async () => {
    const app = await testApp({ SMTP_URL: smtp.url, RATE_LIMIT_OTP_PER_HOUR: '0' });
    try {
      for (const [headers, email, subject, sentence] of [
        [{ 'accept-language': 'de-DE,de;q=0.9' }, 'sprache@example.org', / ist Ihr Anmeldecode für localhost:8787$/, 'Er läuft in 10 Minuten ab'],
        [{ 'accept-language': 'de-DE', cookie: 'oc_lang=es' }, 'idioma@example.org', / es tu código de acceso a localhost:8787$/, 'Caduca en 10 minutos'],
        [{}, 'language@example.org', / is your sign-in code for localhost:8787$/, 'It expires in 10 minutes'],
      ] as const) {
        const started = await app.inject({ method: 'POST', url: '/api/auth/email-otp/start', headers: { origin: 'http://localhost:8787', ...headers }, payload: { email } });
        expect(started.statusCode).toBe(200);
        const mail = await smtp.waitForMessage((received) => received.envelope.to.includes(email));
        expect(mail.subject).toMatch(subject);
        expect(mail.text).toContain(sentence);
      }
    } finally {
      await app.close();
    }
  });
});
