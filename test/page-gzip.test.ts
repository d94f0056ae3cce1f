/**
 * Pages compressed once and filled per request (src/platform/http/page-gzip.ts):
 * the gzip answer is the page exactly as renderTemplate fills it, for any
 * template and any value, and it is what the inline pages are answered with.
 */
import { gunzipSync } from 'node:zlib';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { gzipTemplate } from '../src/platform/http/page-gzip.js';
// Every feature's page words, joined to the shared ones (src/page-words.ts), as the app does at start.
import '../src/page-words.js';
import { renderTemplate } from '../src/web/pages.js';
import { testApp } from './support/app.js';
import { Browser, newWallet } from './support/auth-client.js';

describe('gzipTemplate', () => {
  const values = { a: 'plain', b: `"><script>'&{{a}}`, c: '', d: 'ünïcödé ✓ 🟧', e: 'x'.repeat(70_000) };

  it.each([
    ['a page without placeholders', '<!doctype html><p>fixed</p>'.repeat(500)],
    ['placeholders at the start and the end, side by side', '{{a}}{{b}}<p>middle</p>{{c}}{{d}}'],
    ['an empty template', ''],
    ['only a placeholder', '{{e}}'],
    ['a value that is the same as text around it', `${'<body data-a="{{a}}">'.repeat(40)}plain plain plain`],
  ])('decodes to the filled template: %s', (_name, template) => {
    const filled = gzipTemplate(template).fill(values);
    expect(gunzipSync(filled).toString('utf8')).toBe(renderTemplate(template, values));
  });

  it('decodes to the filled template for random templates and values', () => {
    const pieces = ['<p>', 'text ', '{{a}}', '{{b}}', '{{c}}', '{{d}}', 'é', '\n', '{', '}}'];
    for (let round = 0; round < 200; round++) {
      const template = Array.from(
        { length: 1 + Math.floor(Math.random() * 40) },
        () => pieces[Math.floor(Math.random() * pieces.length)],
      ).join('');
      const random = { a: String(Math.random()), b: 'ä'.repeat(round), c: '', d: '<>&"\'' };
      expect(gunzipSync(gzipTemplate(template).fill(random)).toString('utf8'), template).toBe(renderTemplate(template, random));
    }
  });

  it('refuses a missing value, as renderTemplate does', () => {
    expect(() => gzipTemplate('<b>{{other}}</b>').fill({})).toThrow(/no value for \{\{other\}\}/);
  });
});

describe('the inline pages over HTTP', () => {
  let app: FastifyInstance;
  beforeAll(async () => {
    app = await testApp({ PUBLIC_URL: 'http://localhost:8787' });
  });
  afterAll(async () => {
    await app.close();
  });

  it('answers gzip from the parts compressed at start wherever gzip is accepted, the same page as the text', async () => {
    const browser = new Browser(app);
    expect((await browser.signIn(newWallet())).status).toBe(200);
    const cookie = `oc_session=${browser.cookie}`;
    for (const url of [
      '/signin',
      `/signin?return_to=${encodeURIComponent('/account?x="<b>"&y={{z}}')}&login_hint=${encodeURIComponent('ünï@example.com')}&add=1`,
      '/signin?return_to=https%3A%2F%2Fevil.example%2F',
      '/sudo?purpose=register%20a%20key&require=key',
      '/account',
      '/signin/phone',
    ]) {
      const plain = await app.inject({ method: 'GET', url, headers: { cookie } });
      expect(plain.statusCode, url).toBe(200);
      expect(plain.headers['content-encoding'], url).toBeUndefined();
      for (const accept of ['gzip, deflate, br, zstd', 'gzip', '*']) {
        const reply = await app.inject({ method: 'GET', url, headers: { cookie, 'accept-encoding': accept } });
        expect(reply.headers['content-encoding'], `${url} ${accept}`).toBe('gzip');
        expect(reply.headers.vary, url).toBe('Accept-Language, Cookie, Accept-Encoding');
        expect(reply.headers['content-security-policy'], url).toBe(plain.headers['content-security-policy']);
        expect(gunzipSync(reply.rawPayload).toString('utf8'), `${url} ${accept}`).toBe(plain.body);
        expect(reply.rawPayload.length, url).toBeLessThan(plain.rawPayload.length / 3);
      }
      // Without gzip: brotli from the compression hook.
      const br = await app.inject({ method: 'GET', url, headers: { cookie, 'accept-encoding': 'br' } });
      expect(br.headers['content-encoding'], url).toBe('br');
    }
  });

  it('leaves the linked explorer page to the compression hook', async () => {
    const reply = await app.inject({ method: 'GET', url: '/api-explorer', headers: { 'accept-encoding': 'gzip, br' } });
    expect(reply.statusCode).toBe(200);
    expect(reply.headers['content-encoding']).toBe('br');
  });
});
