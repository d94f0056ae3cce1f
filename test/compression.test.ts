/**
 * Compressed answers (src/platform/http/compression.ts, docs/operations.md
 * "Compression"): the encoding by Accept-Encoding, brotli first; which
 * answers are compressed on the fly and which never are (BREACH: no-store
 * answers and everything under /oidc); the OpenAPI document and the pages
 * through the whole app.
 */
import Fastify from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import type { FastifyInstance } from 'fastify';
import { chooseEncoding, DYNAMIC_MIN_BYTES, registerCompression } from '../src/platform/http/compression.js';
import { testApp } from './support/app.js';

describe('chooseEncoding', () => {
  it.each([
    [undefined, null],
    ['', null],
    ['identity', null],
    ['gzip, deflate, br', 'br'],
    ['gzip, deflate, br, zstd', 'br'],
    ['gzip', 'gzip'],
    ['x-gzip', 'gzip'],
    ['br;q=0, gzip;q=0.5', 'gzip'],
    ['BR;Q=0.000, GZIP', 'gzip'],
    ['gzip;q=0, br;q=0', null],
    ['*', 'br'],
    ['*, br;q=0', 'gzip'],
    ['deflate', null],
  ])('Accept-Encoding %j → %s', (header, expected) => {
    expect(chooseEncoding(header)).toBe(expected);
  });

  it.each([
    ['gzip, deflate, br, zstd', 'gzip'],
    ['br', null],
    ['*', 'gzip'],
    ['*, gzip;q=0', null],
  ])('Accept-Encoding %j, offering gzip alone → %s', (header, expected) => {
    expect(chooseEncoding(header, ['gzip'])).toBe(expected);
  });
});

describe('answers compressed on the fly', () => {
  const big = JSON.stringify({ items: Array.from({ length: 200 }, (_, index) => ({ index, name: `item ${index}` })) });
  let app: FastifyInstance;

  beforeAll(async () => {
    app = Fastify();
    app.get('/big', async (_request, reply) => reply.type('application/json; charset=utf-8').send(big));
    app.get('/small', async () => ({ ok: true }));
    app.get('/secret', async (_request, reply) => reply.header('cache-control', 'no-store, private').type('application/json').send(big));
    app.get('/oidc/page', async (_request, reply) => reply.type('text/html; charset=utf-8').send(`<p>${big}</p>`));
    app.get('/cookie', async (_request, reply) => reply.header('set-cookie', 'a=b').type('application/json').send(big));
    app.get('/image', async (_request, reply) => reply.type('image/png').send(Buffer.alloc(4096)));
    app.get('/vary', async (_request, reply) => reply.header('vary', 'Accept-Language').type('text/html').send(big));
    registerCompression(app);
    await app.ready();
  });
  afterAll(async () => {
    await app.close();
  });

  const get = (url: string, acceptEncoding?: string) =>
    app.inject({ method: 'GET', url, headers: acceptEncoding === undefined ? {} : { 'accept-encoding': acceptEncoding } });

  it('compresses a JSON answer from the threshold up, brotli first, gzip else, and varies on Accept-Encoding', async () => {
    expect(big.length).toBeGreaterThan(DYNAMIC_MIN_BYTES);
    const br = await get('/big', 'gzip, br');
    expect(br.headers['content-encoding']).toBe('br');
    expect(brotliDecompressSync(br.rawPayload).toString('utf8')).toBe(big);
    expect(Number(br.headers['content-length'])).toBe(br.rawPayload.length);
    const gzip = await get('/big', 'gzip');
    expect(gzip.headers['content-encoding']).toBe('gzip');
    expect(gunzipSync(gzip.rawPayload).toString('utf8')).toBe(big);
    const plain = await get('/big');
    expect(plain.headers['content-encoding']).toBeUndefined();
    expect(plain.body).toBe(big);
    for (const reply of [br, gzip, plain]) expect(reply.headers.vary).toBe('Accept-Encoding');
    expect((await get('/vary', 'br')).headers.vary).toBe('Accept-Language, Accept-Encoding');
  });

  it('leaves small answers, images, no-store answers, answers setting a cookie and everything under /oidc as they are', async () => {
    for (const url of ['/small', '/image', '/secret', '/cookie', '/oidc/page']) {
      const reply = await get(url, 'br, gzip');
      expect(reply.headers['content-encoding'], url).toBeUndefined();
    }
    expect((await get('/secret', 'br')).body).toBe(big);
  });
});

describe('the app', () => {
  let app: FastifyInstance;
  beforeAll(async () => {
    app = await testApp();
  });
  afterAll(async () => {
    await app.close();
  });

  it('compresses the OpenAPI document and the pages', async () => {
    const plain = await app.inject({ method: 'GET', url: '/api/openapi' });
    const br = await app.inject({ method: 'GET', url: '/api/openapi', headers: { 'accept-encoding': 'gzip, deflate, br' } });
    expect(br.headers['content-encoding']).toBe('br');
    expect(br.headers.vary).toContain('Accept-Encoding');
    expect(JSON.parse(brotliDecompressSync(br.rawPayload).toString('utf8'))).toEqual(JSON.parse(plain.body));
    expect(br.rawPayload.length).toBeLessThan(plain.rawPayload.length / 4);
    // The same document again: the same bytes, compressed once.
    const again = await app.inject({ method: 'GET', url: '/api/openapi', headers: { 'accept-encoding': 'br' } });
    expect(again.rawPayload.equals(br.rawPayload)).toBe(true);
    const signin = await app.inject({ method: 'GET', url: '/signin', headers: { 'accept-encoding': 'gzip' } });
    expect(signin.headers['content-encoding']).toBe('gzip');
    expect(signin.headers.vary).toBe('Accept-Language, Cookie, Accept-Encoding');
    expect(gunzipSync(signin.rawPayload).toString('utf8')).toContain('<!doctype html>');
  });

  it('never compresses an error answer (no-store)', async () => {
    const missing = await app.inject({ method: 'GET', url: '/api/nothing-here', headers: { 'accept-encoding': 'br' } });
    expect(missing.statusCode).toBe(404);
    expect(missing.headers['content-encoding']).toBeUndefined();
  });
});
