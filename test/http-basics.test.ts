import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { testApp } from './support/app.js';
// Every feature's page words, joined to the shared ones (src/page-words.ts), as the app does at start.
import '../src/page-words.js';
import { PAGE_CSP } from '../src/web/pages.js';

let app: FastifyInstance;

beforeAll(async () => {
  app = await testApp({ PUBLIC_URL: 'https://auth.example.com', COOKIE_DOMAIN: '.example.com' });
});
afterAll(async () => {
  await app.close();
});

/** A CORS preflight from `origin` asking for `method` on `url`. */
function corsPreflight(url: string, origin: string, method = 'POST') {
  return app.inject({ method: 'OPTIONS', url, headers: { origin, 'access-control-request-method': method } });
}

/** POST /api/verify with `payload` sent as it is, under `contentType`. */
function postVerifyAs(contentType: string, payload: string) {
  return app.inject({ method: 'POST', url: '/api/verify', headers: { 'content-type': contentType }, payload });
}

describe('health', () => {
  it('GET /healthz answers while the process lives', async () => {
    const response = await app.inject({ method: 'GET', url: '/healthz' });
    expect(response.statusCode).toBe(200);
    expect(response.json()).toEqual({ ok: true });
  });

  it('GET /readyz reports each check', async () => {
    const response = await app.inject({ method: 'GET', url: '/readyz' });
    expect(response.statusCode).toBe(200);
    expect(response.json().ok).toBe(true);
    expect(response.json().checks.config).toBe('ok');
  });
});

describe('request ids', () => {
  it('echoes a sane x-request-id and makes one up otherwise', async () => {
    const given = await app.inject({ method: 'GET', url: '/healthz', headers: { 'x-request-id': 'abc-123' } });
    expect(given.headers['x-request-id']).toBe('abc-123');
    const hostile = await app.inject({ method: 'GET', url: '/healthz', headers: { 'x-request-id': 'a b<script>' } });
    expect(hostile.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
  });
});

describe('OpenAPI and explorer', () => {
  it('GET /api/openapi is an OpenAPI 3.1 document with the tags of docs/api.md', async () => {
    const response = await app.inject({ method: 'GET', url: '/api/openapi' });
    expect(response.statusCode).toBe(200);
    expect(response.headers['access-control-allow-origin']).toBe('*');
    expect(response.headers['cache-control']).toBe('public, max-age=300');
    const doc = response.json();
    expect(doc.openapi).toBe('3.1.0');
    const tags = doc.tags.map((tag: { name: string }) => tag.name);
    for (const tag of ['auth', 'challenge', 'email-otp', 'oauth', 'connect', 'public', 'forms', 'attestation']) {
      expect(tags).toContain(tag);
    }
    expect(doc.servers[0].url).toBe('https://auth.example.com');
    const verify = doc.paths['/api/verify'].post;
    expect(verify.tags).toEqual(['attestation']);
    expect(verify.requestBody.content['application/json'].schema.required).toEqual(['addr', 'msg', 'sig']);
    expect(Object.keys(verify.responses)).toEqual(expect.arrayContaining(['200', '400', '413']));
    expect(JSON.stringify(verify.responses['400'])).toContain('ErrorBody');
    expect(doc.components.schemas.ErrorBody.required).toEqual(['ok', 'error', 'reason']);
    // The account's security center is in the document, each route with its methods.
    const routes: Array<[string, string]> = [
      ['/api/auth/sessions', 'get'],
      ['/api/auth/sessions/{id}', 'delete'],
      ['/api/auth/sessions/revoke-others', 'post'],
      ['/api/auth/revocations', 'get'],
      ['/api/auth/activity', 'get'],
      ['/api/auth/account/export', 'get'],
      ['/api/auth/account', 'delete'],
      ['/api/connect/apps/{id}/webhook', 'put'],
      ['/api/connect/apps/{id}/deliveries', 'get'],
      ['/api/connect/webhook-keys', 'get'],
    ];
    for (const [path, method] of routes) expect(doc.paths[path]?.[method]?.summary, `${method} ${path}`).toEqual(expect.any(String));
  });

  it('serves the explorer and its assets itself', async () => {
    for (const url of ['/api-explorer', '/api-explorer/']) {
      const page = await app.inject({ method: 'GET', url });
      expect(page.statusCode).toBe(200);
      expect(page.headers['content-type']).toContain('text/html');
      expect(page.headers['content-security-policy']).toBe(PAGE_CSP);
      expect(page.body).toContain('<title>API explorer · oc-host</title>');
      expect(page.body).toMatch(/src="\/assets\/explorer-page\.[0-9a-f]{16}\.js"/);
    }
    for (const asset of ['explorer.js', 'explorer.css'])
      expect((await app.inject({ method: 'GET', url: `/assets/${asset}` })).statusCode).toBe(200);
  });
});

describe('bad input', () => {
  it('malformed JSON is 400 bad_request', async () => {
    const response = await postVerifyAs('application/json', '{"addr": ');
    expect(response.statusCode).toBe(400);
    expect(response.json()).toMatchObject({ ok: false, error: 'bad_request', reason: 'bad_request', reasons: ['bad_request'] });
  });

  it('a missing field is 400 naming the field', async () => {
    const response = await app.inject({ method: 'POST', url: '/api/verify', payload: { msg: 'x', sig: 'y' } });
    expect(response.statusCode).toBe(400);
    expect(response.json().error).toBe('bad_request');
    expect(response.json().detail).toContain('addr');
  });

  it('a wrong type is 400, not coerced', async () => {
    const response = await app.inject({ method: 'POST', url: '/api/verify', payload: { addr: 12, msg: 'x', sig: 'y' } });
    expect(response.statusCode).toBe(400);
    expect(response.json().detail).toContain('addr');
  });

  it('a body over 64 KiB is 413', async () => {
    const response = await app.inject({
      method: 'POST',
      url: '/api/verify',
      payload: { addr: 'a', msg: 'x'.repeat(70_000), sig: 'y' },
    });
    expect(response.statusCode).toBe(413);
    expect(response.json().error).toBe('payload_too_large');
  });

  it('a body that is not JSON is 415', async () => {
    const response = await postVerifyAs('text/plain', 'addr=1');
    expect(response.statusCode).toBe(415);
    expect(response.json().error).toBe('unsupported_media_type');
  });

  it('an unknown route is 404 not_found', async () => {
    const response = await app.inject({ method: 'GET', url: '/api/nothing-here' });
    expect(response.statusCode).toBe(404);
    expect(response.json()).toMatchObject({ ok: false, error: 'not_found', reason: 'not_found' });
  });
});

describe('CORS', () => {
  it('public routes allow any origin without credentials', async () => {
    const response = await corsPreflight('/api/verify', 'https://elsewhere.test');
    expect(response.statusCode).toBe(204);
    expect(response.headers['access-control-allow-origin']).toBe('*');
    expect(response.headers['access-control-allow-credentials']).toBeUndefined();
    expect(response.headers['access-control-allow-methods']).toContain('POST');
  });

  it('browser-only routes answer preflight only to family origins', async () => {
    const family = await corsPreflight('/api/auth/logout', 'https://shop.example.com');
    expect(family.headers['access-control-allow-origin']).toBe('https://shop.example.com');
    expect(family.headers['access-control-allow-credentials']).toBe('true');
    const stranger = await corsPreflight('/api/auth/logout', 'https://evil.test');
    expect(stranger.headers['access-control-allow-origin']).toBeUndefined();
    expect(stranger.headers['access-control-allow-methods']).toBeUndefined();
  });

  it('allows from a family origin the method of every registered family route, and lists exactly the family methods', async () => {
    const family = app.routePolicies.routes().filter(({ method, url }) => app.routePolicies.of(method, url)?.cors === 'family');
    const methods = [...new Set(family.map(({ method }) => method))].sort();
    // The documented PUT /api/connect/apps/<id>/webhook, and the edits and removals.
    expect(methods).toEqual(expect.arrayContaining(['PUT', 'PATCH', 'DELETE', 'POST', 'GET']));
    for (const { method, url } of family) {
      const path = url.replace(/:\w+/g, 'x');
      const preflight = await corsPreflight(path, 'https://shop.example.com', method);
      const route = `${method} ${url}`;
      expect(preflight.statusCode, route).toBe(204);
      expect(preflight.headers['access-control-allow-origin'], route).toBe('https://shop.example.com');
      expect(preflight.headers['access-control-allow-credentials'], route).toBe('true');
      expect(String(preflight.headers['access-control-allow-methods']).split(', '), route).toEqual(methods);
    }
  });

  it('refuses a cross-site POST to a browser-only route with 403 cross_site', async () => {
    const byOrigin = await app.inject({ method: 'POST', url: '/api/auth/logout', headers: { origin: 'https://evil.test' } });
    expect(byOrigin.statusCode).toBe(403);
    expect(byOrigin.json()).toMatchObject({ ok: false, error: 'cross_site', reason: 'cross_site' });
    const byFetchMetadata = await app.inject({ method: 'POST', url: '/api/auth/logout', headers: { 'sec-fetch-site': 'cross-site' } });
    expect(byFetchMetadata.statusCode).toBe(403);
  });

  it('refuses origins that only look like family origins: no reflection, no credentials, 403 on POST', async () => {
    for (const origin of [
      'https://evil.io?.example.com',
      'https://evil.io@x.example.com',
      'https://evil.io#.example.com',
      'https://example.com.evil.io',
      'https://xexample.com',
    ]) {
      const read = await app.inject({ method: 'GET', url: '/api/auth/me', headers: { origin } });
      expect(read.headers['access-control-allow-origin'], origin).toBeUndefined();
      expect(read.headers['access-control-allow-credentials'], origin).toBeUndefined();
      const preflight = await corsPreflight('/api/auth/logout', origin);
      expect(preflight.headers['access-control-allow-origin'], origin).toBeUndefined();
      const post = await app.inject({ method: 'POST', url: '/api/auth/logout', headers: { origin } });
      expect(post.statusCode, origin).toBe(403);
      expect(post.json().error).toBe('cross_site');
    }
  });

  it('classifies by the matched route, so an encoded path cannot dodge the cross-site rule', async () => {
    for (const url of ['/api/%61uth/signin', '/api/auth/%73ignin', '/api/connect/%61pps']) {
      const reply = await app.inject({ method: 'POST', url, headers: { origin: 'https://evil.test' }, payload: {} });
      expect(reply.statusCode, url).toBe(403);
      expect(reply.json().error).toBe('cross_site');
    }
  });
});

describe('security headers', () => {
  it('sends nosniff and HSTS (PUBLIC_URL is https) on JSON, errors, 404s, pages and the explorer', async () => {
    const requests = [
      { method: 'GET' as const, url: '/healthz' },
      { method: 'GET' as const, url: '/api/openapi' },
      { method: 'GET' as const, url: '/api/auth/me' },
      { method: 'GET' as const, url: '/api/check' },
      { method: 'GET' as const, url: '/no/such/route' },
      { method: 'POST' as const, url: '/api/auth/logout', headers: { origin: 'https://evil.test' } },
      { method: 'GET' as const, url: '/signin' },
      { method: 'GET' as const, url: '/api-explorer/' },
      { method: 'OPTIONS' as const, url: '/api/check', headers: { origin: 'https://a.test', 'access-control-request-method': 'GET' } },
    ];
    for (const request of requests) {
      const response = await app.inject(request);
      expect(response.headers['x-content-type-options'], request.url).toBe('nosniff');
      expect(response.headers['strict-transport-security'], request.url).toBe('max-age=31536000');
    }
  });

  it('sends no HSTS when PUBLIC_URL is http', async () => {
    const plain = await testApp({});
    try {
      const response = await plain.inject({ method: 'GET', url: '/healthz' });
      expect(response.headers['x-content-type-options']).toBe('nosniff');
      expect(response.headers['strict-transport-security']).toBeUndefined();
    } finally {
      await plain.close();
    }
  });
});
