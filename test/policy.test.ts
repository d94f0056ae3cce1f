/**
 * Route policy (src/platform/http/policy.ts): every route declares its CORS class,
 * rate-limit class, behaviour with the limit store down and error shape; a
 * route without one cannot be registered.
 */
import Fastify from 'fastify';
import { afterAll, describe, expect, it } from 'vitest';
import { POLICY, requirePolicies, unmatchedPolicy } from '../src/platform/http/policy.js';
import { testApp } from './support/app.js';

const app = await testApp({});
afterAll(() => app.close());

describe('route policy', () => {
  it('refuses to register a route that declares no policy', async () => {
    const bare = Fastify();
    requirePolicies(bare);
    expect(() => bare.get('/api/new', async () => ({ ok: true }))).toThrow(/GET \/api\/new declares no policy/);
    bare.get('/api/declared', { config: { policy: POLICY.publicRead } }, async () => ({ ok: true }));
    await bare.close();
  });

  it('gives routes a plugin registers the policy of their prefix', async () => {
    const bare = Fastify();
    requirePolicies(bare, { '/docs': POLICY.unlimited });
    await bare.register(async (plugin) => {
      plugin.get('/docs/static/x.js', async () => '');
    });
    await bare.ready();
    expect(bare.routePolicies.of('GET', '/docs/static/x.js')).toBe(POLICY.unlimited);
    await bare.close();
  });

  it('reads the declared policy of the service routes', () => {
    const policies = app.routePolicies;
    expect(policies.of('POST', '/api/auth/signin')).toBe(POLICY.familyCredential);
    expect(policies.of('GET', '/api/check')).toBe(POLICY.attestationRead);
    expect(policies.of('POST', '/api/auth/email-otp/start')).toMatchObject({ limit: 'auth', extra: 'otp', storeDown: 'closed' });
    expect(policies.of('GET', '/healthz')).toBe(POLICY.unlimited);
  });

  it('finds the route a preflight asks about, static patterns before parameters', () => {
    const policies = app.routePolicies;
    expect(policies.reachedBy('POST', '/api/auth/email-otp/start')?.extra).toBe('otp');
    expect(policies.reachedBy('GET', '/api/auth/github/start')).toBe(POLICY.family);
    expect(policies.reachedBy('GET', '/api/auth/providers')).toBe(POLICY.familyRead);
    expect(policies.reachedBy('DELETE', '/api/connect/apps/app_1')).toBe(POLICY.family);
    expect(policies.reachedBy('GET', '/api/nothing-here')).toBeUndefined();
  });

  it('classes a path no route matches by where it is', () => {
    expect(unmatchedPolicy('/api/auth/unknown')).toBe(POLICY.family);
    expect(unmatchedPolicy('/api/unknown')).toMatchObject({ cors: 'none', limit: 'read' });
    expect(unmatchedPolicy('/favicon.ico')).toBe(POLICY.unlimited);
  });

  it("answers a route under a method it lacks with the route's CORS and error shape", async () => {
    const response = await app.inject({ method: 'GET', url: '/api/verify', headers: { origin: 'https://elsewhere.test' } });
    expect(response.statusCode).toBe(404);
    expect(response.headers['access-control-allow-origin']).toBe('*');
    expect(response.json()).toMatchObject({ error: 'not_found', reasons: ['not_found'] });
  });

  it('answers an unknown /api path with a 404 that spends a read budget', async () => {
    const limited = await testApp({ RATE_LIMIT_READ_PER_MIN: '60' });
    const response = await limited.inject({ method: 'GET', url: '/api/unknown' });
    await limited.close();
    expect(response.statusCode).toBe(404);
    expect(response.json()).toMatchObject({ error: 'not_found' });
    expect(response.headers['x-ratelimit-limit']).toBe('60');
    expect(response.headers['x-ratelimit-remaining']).toBe('59');
  });
});
