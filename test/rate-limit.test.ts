/**
 * Rate limits (docs/protocol.md §4 "Rate limits", docs/api.md Limits): the
 * classes and their numbers, the headers on every limited response, the
 * 429 body, the hourly e-mail and contact limits, TRUST_PROXY, a class
 * turned off, and Redis down. The HTTP cases run twice: on the in-memory
 * limiter and on a real Redis.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { createMemoryRateLimiter, createRedisRateLimiter, gcraStep } from '../src/platform/limits/index.js';
import { clientKey } from '../src/web/rate-limit.js';
import { unmatchedPolicy, type LimitClass } from '../src/platform/http/policy.js';
import type { Mailer } from '../src/platform/mail/index.js';
import { testApp } from './support/app.js';
import { closedRedisUrl, redisSkipReason, testRedis, type TestRedis } from './support/redis.js';

const MINUTE = 60_000;
const HOUR = 3_600_000;
const ORIGIN = 'http://localhost:8787';

const redisSkip = await redisSkipReason();
let redis: TestRedis;
beforeAll(() => {
  redis = testRedis();
});
afterAll(async () => {
  await redis.cleanup();
});

const sentMail: string[] = [];
const quietMailer: Mailer = {
  async send(message) {
    sentMail.push(message.to);
  },
  async close() {},
};

const apps: FastifyInstance[] = [];
afterEach(async () => {
  await Promise.all(apps.splice(0).map((app) => app.close()));
});

async function appWith(env: Record<string, string>, clock?: { ms: number }): Promise<FastifyInstance> {
  const app = await testApp(
    { CONTACT_TO: 'ops@example.org', ...env },
    { mailer: quietMailer, ...(clock ? { now: () => new Date(clock.ms) } : {}) },
  );
  apps.push(app);
  return app;
}

/**
 * The limit class a route declares in its policy (src/platform/http/policy.ts); the
 * preflight catch-all's for OPTIONS, and the path's for a path no route matches.
 */
async function limitClassOf(method: string, route: string, built?: FastifyInstance): Promise<LimitClass | undefined> {
  // The policies are declared by the routes: one app answers for every route.
  const app = built ?? (await appWith({}));
  const policies = app.routePolicies;
  return (policies.of(method, route) ?? policies.of(method, '*') ?? unmatchedPolicy(route)).limit ?? undefined;
}

function send(
  app: FastifyInstance,
  method: 'GET' | 'POST' | 'OPTIONS',
  url: string,
  options: { ip?: string; body?: Record<string, unknown>; headers?: Record<string, string> } = {},
): Promise<LightMyRequestResponse> {
  return app.inject({
    method,
    url,
    remoteAddress: options.ip ?? '203.0.113.7',
    headers: { ...(method === 'POST' ? { origin: ORIGIN } : {}), ...options.headers },
    ...(options.body === undefined ? (method === 'POST' ? { payload: {} } : {}) : { payload: options.body }),
  });
}

/** Sends `count` requests one after another; answers the responses and how long it took. */
async function burst(
  count: number,
  request: () => Promise<LightMyRequestResponse>,
): Promise<{ responses: LightMyRequestResponse[]; elapsedMs: number }> {
  const started = Date.now();
  const responses: LightMyRequestResponse[] = [];
  for (let i = 0; i < count; i++) responses.push(await request());
  return { responses, elapsedMs: Date.now() - started };
}

/**
 * A real clock (Redis's) refills one token per window/limit while the burst
 * runs, so up to that many more may pass; with a frozen clock it is exact.
 */
function expectAllowedCount(
  responses: LightMyRequestResponse[],
  limit: number,
  windowMs: number,
  elapsedMs: number,
  frozen: boolean,
): number {
  const allowed = responses.filter((response) => response.statusCode !== 429).length;
  expect(allowed).toBeGreaterThanOrEqual(limit);
  expect(allowed).toBeLessThanOrEqual(frozen ? limit : limit + Math.floor(elapsedMs / (windowMs / limit)));
  return allowed;
}

function expectRateLimited(response: LightMyRequestResponse, limit: number): void {
  expect(response.statusCode).toBe(429);
  const body = response.json();
  expect(body).toMatchObject({ ok: false, error: 'rate_limited', reason: 'rate_limited' });
  expect(Number.isInteger(body.retry_after_seconds)).toBe(true);
  expect(body.retry_after_seconds).toBeGreaterThanOrEqual(1);
  expect(response.headers['retry-after']).toBe(String(body.retry_after_seconds));
  expect(response.headers['x-ratelimit-limit']).toBe(String(limit));
  expect(response.headers['x-ratelimit-remaining']).toBe('0');
  expect(Number(response.headers['x-ratelimit-reset'])).toBeGreaterThan(0);
}

function expectLimitHeaders(response: LightMyRequestResponse, limit: number): void {
  expect(response.headers['x-ratelimit-limit']).toBe(String(limit));
  expect(response.headers['x-ratelimit-remaining']).toMatch(/^\d+$/);
  expect(response.headers['x-ratelimit-reset']).toMatch(/^\d+$/);
}

describe('GCRA arithmetic (src/platform/limits/limiter.ts)', () => {
  it('allows `limit` at once, then one per window/limit, and says when', () => {
    let tat: number | undefined;
    const now = 1_000_000;
    for (let i = 0; i < 5; i++) {
      const step = gcraStep(tat, now, 5, HOUR);
      expect(step.decision).toMatchObject({ allowed: true, remaining: 4 - i, retryAfterSeconds: 0 });
      tat = step.tat;
    }
    const refused = gcraStep(tat, now, 5, HOUR);
    expect(refused.decision).toEqual({ allowed: false, remaining: 0, resetMs: HOUR, retryAfterSeconds: 720 });
    expect(refused.tat).toBe(tat);
    // One token back after 12 minutes.
    expect(gcraStep(tat, now + 720_000, 5, HOUR).decision).toMatchObject({ allowed: true, remaining: 0 });
    expect(gcraStep(tat, now + 719_000, 5, HOUR).decision.allowed).toBe(false);
  });

  it('the in-memory limiter drops idle keys and never holds more than maxKeys', () => {
    let ms = 0;
    const limiter = createMemoryRateLimiter({ now: () => ms, maxKeys: 50 });
    for (let i = 0; i < 200; i++) limiter.hit(`client-${i}`, 10, MINUTE);
    expect(limiter.size).toBe(50);
    // A whole window later every bucket is full again; hits sweep the idle keys away.
    ms += MINUTE + 1;
    for (let i = 0; i < 20; i++) limiter.hit('fresh', 1000, MINUTE);
    expect(limiter.size).toBeLessThan(50);
    expect(limiter.size).toBeGreaterThanOrEqual(1);
  });

  it.skipIf(redisSkip !== undefined)('the Redis script is atomic: 60 concurrent hits from two clients let exactly 20 through', async () => {
    const one = createRedisRateLimiter(redis.client());
    const two = createRedisRateLimiter(redis.client());
    const decisions = await Promise.all(Array.from({ length: 60 }, (_, i) => (i % 2 === 0 ? one : two).hit('atomic', 20, HOUR)));
    expect(decisions.filter((decision) => decision.allowed)).toHaveLength(20);
    const remaining = decisions
      .filter((decision) => decision.allowed)
      .map((decision) => decision.remaining)
      .sort((a, b) => a - b);
    expect(remaining).toEqual(Array.from({ length: 20 }, (_, i) => i));
    const refused = decisions.find((decision) => !decision.allowed)!;
    expect(refused.retryAfterSeconds).toBe(180);
  });
});

describe('which route is in which class (docs/protocol.md §4)', () => {
  it.each([
    ['GET', '/api/check', 'read'],
    ['POST', '/api/verify', 'read'],
    ['GET', '/api/discover', 'read'],
    ['GET', '/api/challenge', 'read'],
    ['GET', '/api/family-stats', 'read'],
    ['GET', '/api/auth/me', 'read'],
    ['GET', '/api/auth/providers', 'read'],
    ['GET', '/api/auth/jwks', 'read'],
    ['GET', '/.well-known/jwks.json', 'read'],
    ['GET', '/api/openapi', 'read'],
    ['POST', '/api/challenge', 'auth'],
    ['POST', '/api/auth/signin', 'auth'],
    ['POST', '/api/auth/logout', 'auth'],
    ['POST', '/api/auth/switch', 'auth'],
    ['PATCH', '/api/auth/account', 'auth'],
    ['GET', '/api/auth/identities', 'auth'],
    ['POST', '/api/auth/email-otp/start', 'auth'],
    ['GET', '/api/auth/:provider/start', 'auth'],
    ['GET', '/api/auth/:provider/callback', 'auth'],
    ['POST', '/api/attestations', 'auth'],
    ['POST', '/api/connect/provision', 'auth'],
    ['GET', '/api/connect/apps', 'auth'],
    ['POST', '/api/contact', 'auth'],
    ['GET', '/api/no-such-route', 'read'],
    ['OPTIONS', '/api/auth/signin', undefined],
    ['GET', '/healthz', undefined],
    ['GET', '/readyz', undefined],
    ['GET', '/metrics', undefined],
    ['GET', '/api-explorer', undefined],
  ])('%s %s → %s', async (method, route, expected) => {
    expect(await limitClassOf(method, route)).toBe(expected);
  });

  it('counts IPv6 clients per /64 and IPv4-mapped addresses as IPv4', () => {
    expect(clientKey('203.0.113.7')).toBe('203.0.113.7');
    expect(clientKey('::ffff:203.0.113.7')).toBe('203.0.113.7');
    expect(clientKey('2001:db8:1:2:3:4:5:6')).toBe('2001:db8:1:2::/64');
    expect(clientKey('2001:db8:1:2::9')).toBe('2001:db8:1:2::/64');
    expect(clientKey('2001:DB8:0001:0002:ffff::1')).toBe('2001:db8:1:2::/64');
    expect(clientKey('2001:db8::1')).toBe('2001:db8:0:0::/64');
  });
});

const backends = [
  { name: 'in-memory', env: (): Record<string, string> => ({}), frozen: true, skip: undefined as string | undefined },
  { name: 'Redis', env: (): Record<string, string> => ({ REDIS_URL: redis.url }), frozen: false, skip: redisSkip },
];

describe.each(backends)('rate limits over HTTP ($name)', (backend) => {
  const limits = (values: Record<string, string>) => ({ ...backend.env(), ...values });
  const clock = () => (backend.frozen ? { ms: Date.parse('2026-06-01T00:00:00Z') } : undefined);
  /** `limits` with the read and auth limits out of the way, for the tests of another class. */
  const quietLimits = (values: Record<string, string>) =>
    limits({ RATE_LIMIT_READ_PER_MIN: '1000', RATE_LIMIT_AUTH_PER_MIN: '1000', ...values });
  let networkCounter = 0;
  // Redis keys outlive an app: every test counts from its own addresses, each
  // in a /24 of its own (the e-mail start counts per address and /24).
  const freshNetwork = () => {
    networkCounter = (networkCounter + 1) % 250;
    return `198.18.${networkCounter + 1}`;
  };
  const freshIp = () => `${freshNetwork()}.7`;
  afterEach(async () => {
    if (backend.skip === undefined && backend.name === 'Redis') await redis.flush();
  });

  it.skipIf(backend.skip !== undefined)(
    'read class: 60 a minute per IP, then 429 with Retry-After; another IP is not affected',
    async () => {
      const app = await appWith(limits({ RATE_LIMIT_READ_PER_MIN: '60', RATE_LIMIT_AUTH_PER_MIN: '20' }), clock());
      const ip = freshIp();
      const { responses, elapsedMs } = await burst(64, () => send(app, 'GET', '/api/auth/jwks', { ip }));
      const allowed = expectAllowedCount(responses, 60, MINUTE, elapsedMs, backend.frozen);
      responses.slice(0, allowed).forEach((response, index) => {
        expect(response.statusCode).toBe(200);
        expectLimitHeaders(response, 60);
        if (index < 60) expect(response.headers['x-ratelimit-remaining']).toBe(String(Math.max(0, 59 - index)));
      });
      expectRateLimited(responses.at(-1)!, 60);
      expect(responses.at(-1)!.headers['access-control-allow-origin']).toBe('*');
      const other = await send(app, 'GET', '/api/auth/jwks', { ip: freshIp() });
      expect(other.statusCode).toBe(200);
      expect(other.headers['x-ratelimit-remaining']).toBe('59');
    },
  );

  it.skipIf(backend.skip !== undefined)(
    'auth class: 20 a minute per IP across every auth route, GET /api/challenge is read, POST is auth',
    async () => {
      const app = await appWith(limits({ RATE_LIMIT_READ_PER_MIN: '60', RATE_LIMIT_AUTH_PER_MIN: '20' }), clock());
      const ip = freshIp();
      const logouts = await burst(10, () => send(app, 'POST', '/api/auth/logout', { ip }));
      for (const response of logouts.responses) {
        expect(response.statusCode).toBe(401); // not signed in: still counted, still with headers
        expectLimitHeaders(response, 20);
      }
      const challenge = await send(
        app,
        'GET',
        '/api/challenge?addr=bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq&audience=http://localhost:8787&purpose=login',
        { ip },
      );
      expect(challenge.statusCode).toBe(200);
      expect(challenge.headers['x-ratelimit-limit']).toBe('60');
      const posts = await burst(14, () =>
        send(app, 'POST', '/api/challenge', {
          ip,
          body: { message: 'x', signature: 'y', expectedNonce: 'z', expectedAudience: 'a', expectedPurpose: 'login' },
        }),
      );
      const all = [...logouts.responses, ...posts.responses];
      expectAllowedCount(all, 20, MINUTE, logouts.elapsedMs + posts.elapsedMs, backend.frozen);
      expect(posts.responses[0]!.headers['x-ratelimit-limit']).toBe('20');
      expectRateLimited(posts.responses.at(-1)!, 20);
      // A percent-escaped path reaches the same route and counts in the same class.
      expect((await send(app, 'POST', '/api/%61uth/logout', { ip })).statusCode).toBe(429);
    },
  );

  it.skipIf(backend.skip !== undefined)('headers on every limited response (2xx, 401, 404), none where nothing is limited', async () => {
    const app = await appWith(limits({ RATE_LIMIT_READ_PER_MIN: '60', RATE_LIMIT_AUTH_PER_MIN: '20' }), clock());
    const ip = freshIp();
    const me = await send(app, 'GET', '/api/auth/me', { ip });
    expect(me.statusCode).toBe(401);
    expectLimitHeaders(me, 60);
    const missing = await send(app, 'GET', '/api/no-such-thing', { ip });
    expect(missing.statusCode).toBe(404);
    expectLimitHeaders(missing, 60);
    const jwks = await send(app, 'GET', '/.well-known/jwks.json', { ip });
    expect(jwks.statusCode).toBe(200);
    expectLimitHeaders(jwks, 60);
    // Exposed to cross-origin scripts on CORS answers.
    expect(jwks.headers['access-control-expose-headers']).toContain('x-ratelimit-remaining');
    for (const [method, url] of [
      ['GET', '/healthz'],
      ['GET', '/readyz'],
      ['OPTIONS', '/api/auth/signin'],
      ['GET', '/api-explorer'],
    ] as const) {
      for (let i = 0; i < 70; i++) {
        const response = await send(app, method, url, { ip, headers: method === 'OPTIONS' ? { origin: ORIGIN } : {} });
        expect(response.statusCode).not.toBe(429);
        expect(response.headers['x-ratelimit-limit']).toBeUndefined();
      }
    }
  });

  it.skipIf(backend.skip !== undefined)(
    'e-mail code start: 5 an hour per address and IP (any case), and the limit per IP as set',
    async () => {
      const app = await appWith(quietLimits({ RATE_LIMIT_OTP_PER_HOUR: '5', RATE_LIMIT_OTP_IP_PER_HOUR: '5' }), clock());
      const address = `limit-${freshIp()}@example.org`;
      // One client asking for one address, in either case: the sixth is refused.
      const stranger = freshIp();
      const perAddress: LightMyRequestResponse[] = [];
      for (let i = 0; i < 6; i++) {
        const email = i % 2 === 0 ? address : address.toUpperCase();
        perAddress.push(await send(app, 'POST', '/api/auth/email-otp/start', { ip: stranger, body: { email } }));
      }
      perAddress.slice(0, 5).forEach((response, index) => {
        expect(response.statusCode).toBe(200);
        expect(response.headers['x-ratelimit-limit']).toBe('5');
        expect(response.headers['x-ratelimit-remaining']).toBe(String(4 - index));
      });
      expectRateLimited(perAddress[5]!, 5);
      expect(perAddress[5]!.json().retry_after_seconds).toBeGreaterThan(700); // one code per 12 minutes
      // That client has not used up the address: its owner, elsewhere, still gets codes.
      expect((await send(app, 'POST', '/api/auth/email-otp/start', { ip: freshIp(), body: { email: address } })).statusCode).toBe(200);
      // Six addresses from one IP, with the per-IP limit set to 5: the sixth is refused by it, before the body is read.
      const ip = freshIp();
      const perIp: LightMyRequestResponse[] = [];
      for (let i = 0; i < 6; i++)
        perIp.push(await send(app, 'POST', '/api/auth/email-otp/start', { ip, body: { email: `ip-${i}-${ip}@example.org` } }));
      expect(perIp.slice(0, 5).map((response) => response.statusCode)).toEqual([200, 200, 200, 200, 200]);
      expectRateLimited(perIp[5]!, 5);
      // The refused start did not count against its address.
      expect(
        (await send(app, 'POST', '/api/auth/email-otp/start', { ip: freshIp(), body: { email: `ip-5-${ip}@example.org` } })).statusCode,
      ).toBe(200);
    },
  );

  it.skipIf(backend.skip !== undefined)(
    'e-mail code start: a ceiling per address from all clients, which refused starts do not use up',
    async () => {
      const app = await appWith(quietLimits({ RATE_LIMIT_OTP_PER_HOUR: '2', RATE_LIMIT_OTP_ADDRESS_PER_HOUR: '6' }), clock());
      const address = `ceiling-${freshIp()}@example.org`;
      // One client hammering the address spends only its own 2.
      const stranger = freshIp();
      const hammered = await burst(20, () => send(app, 'POST', '/api/auth/email-otp/start', { ip: stranger, body: { email: address } }));
      expect(hammered.responses.map((response) => response.statusCode)).toEqual([200, 200, ...Array<number>(18).fill(429)]);
      // Four more clients reach the ceiling of 6; the next one is refused by it, with its numbers.
      for (let i = 0; i < 4; i++)
        expect((await send(app, 'POST', '/api/auth/email-otp/start', { ip: freshIp(), body: { email: address } })).statusCode).toBe(200);
      expectRateLimited(await send(app, 'POST', '/api/auth/email-otp/start', { ip: freshIp(), body: { email: address } }), 6);
      // Another address is not affected.
      expect(
        (await send(app, 'POST', '/api/auth/email-otp/start', { ip: freshIp(), body: { email: `other-${address}` } })).statusCode,
      ).toBe(200);
    },
  );

  it.skipIf(backend.skip !== undefined)(
    'e-mail code start: 7 networks × 5 starts leave the owner a code; one network (an IPv4 /24, an IPv6 /48) stops at its 5',
    async () => {
      // The ceiling per address is left at its default: 10 networks' worth.
      const app = await appWith(quietLimits({ RATE_LIMIT_OTP_PER_HOUR: '5', RATE_LIMIT_OTP_ADDRESS_PER_HOUR: '' }), clock());
      const start = (ip: string, email: string) => send(app, 'POST', '/api/auth/email-otp/start', { ip, body: { email } });
      const address = `owner-${freshIp()}@example.org`;
      let last: LightMyRequestResponse | undefined;
      for (let network = 0; network < 7; network++) {
        const prefix = freshNetwork();
        // Five machines of the network, one start each: the per-IP limit is not what stops them.
        for (let host = 1; host <= 5; host++) {
          last = await start(`${prefix}.${host}`, address);
          expect(last.statusCode).toBe(200);
        }
        if (network === 6) expectRateLimited(await start(`${prefix}.6`, address), 5);
      }
      expect(last!.headers['x-ratelimit-limit']).toBe('5');
      // 35 starts later the owner, on a network of their own, still gets a code.
      expect((await start(freshIp(), address)).statusCode).toBe(200);

      // IPv6: the /64s of one /48 are one network.
      const v6Address = `v6-${freshIp()}@example.org`;
      const site = `2001:db8:${networkCounter.toString(16)}`;
      for (let subnet = 1; subnet <= 5; subnet++) expect((await start(`${site}:${subnet}::1`, v6Address)).statusCode).toBe(200);
      expectRateLimited(await start(`${site}:6::1`, v6Address), 5);
      expect((await start(`2001:db8:${(networkCounter + 1000).toString(16)}:1::1`, v6Address)).statusCode).toBe(200);
    },
  );

  it.skipIf(backend.skip !== undefined)(
    'e-mail code start: an office behind one IP is not locked out: 30 people ask for codes within five minutes, one each',
    async () => {
      // The limits per IP and per address left at their defaults (120 and 50 an hour).
      const time = backend.frozen ? { ms: Date.parse('2026-06-01T00:00:00Z') } : undefined;
      const app = await appWith(quietLimits({ RATE_LIMIT_OTP_PER_HOUR: '5', RATE_LIMIT_OTP_ADDRESS_PER_HOUR: '' }), time);
      const office = freshIp();
      const statuses: number[] = [];
      for (let person = 0; person < 30; person++) {
        const reply = await send(app, 'POST', '/api/auth/email-otp/start', {
          ip: office,
          body: { email: `person-${person}-${office}@example.org` },
        });
        statuses.push(reply.statusCode);
        if (time) time.ms += 10_000;
      }
      expect(statuses).toEqual(Array<number>(30).fill(200));
      // One address is still protected from that network: its sixth start within the hour is refused.
      const address = `person-0-${office}@example.org`;
      for (let i = 0; i < 4; i++)
        expect((await send(app, 'POST', '/api/auth/email-otp/start', { ip: office, body: { email: address } })).statusCode).toBe(200);
      expectRateLimited(await send(app, 'POST', '/api/auth/email-otp/start', { ip: office, body: { email: address } }), 5);
    },
  );

  it.skipIf(backend.skip !== undefined)(
    "e-mail code start: the asking browser's unexpired token resends after ten other networks spent the address's ceiling; without it a start is 429",
    async () => {
      // The memory limiter follows the app's clock; with Redis only the tokens do.
      const time = { ms: Date.parse('2026-06-01T00:00:00Z') };
      const app = await appWith(quietLimits({ RATE_LIMIT_OTP_PER_HOUR: '5', RATE_LIMIT_OTP_ADDRESS_PER_HOUR: '' }), time);
      const start = (ip: string, email: string, token?: string) =>
        send(app, 'POST', '/api/auth/email-otp/start', { ip, body: token === undefined ? { email } : { email, token } });
      const address = `resend-${freshIp()}@example.org`;
      const home = freshNetwork();
      const owner = await start(`${home}.1`, address);
      expect(owner.statusCode).toBe(200);
      const ownerToken: string = owner.json().token;
      // Ten other networks, five machines each: every start replaces the owner's code, and they spend the ceiling of 50.
      let strangerToken = '';
      const strangers: number[] = [];
      for (let network = 0; network < 10; network++) {
        const prefix = freshNetwork();
        for (let host = 1; host <= 5; host++) {
          const reply = await start(`${prefix}.${host}`, address);
          strangers.push(reply.statusCode);
          if (network === 0 && host === 1) strangerToken = reply.json().token;
        }
      }
      expect(strangers.filter((status) => status === 200)).toHaveLength(49);
      // Without a token (or with a forged one, or another address's) a start is refused by the ceiling.
      expectRateLimited(await start(freshIp(), address), 50);
      expectRateLimited(await start(`${home}.2`, address), 50);
      const forged = ownerToken.slice(0, -1) + (ownerToken.endsWith('0') ? '1' : '0');
      expectRateLimited(await start(freshIp(), address, forged), 50);
      expectRateLimited(await start(freshIp(), address, 'not a token'), 50);
      const elsewhere = await start(freshIp(), `elsewhere-${address}`);
      expect(elsewhere.statusCode).toBe(200);
      expectRateLimited(await start(freshIp(), address, elsewhere.json().token), 50);

      // The owner's token (its code long replaced by the strangers' starts) still gets its resend.
      const resent = await start(`${home}.1`, address, ownerToken);
      expect(resent.statusCode).toBe(200);
      expect(resent.headers['x-ratelimit-limit']).toBe('3');
      // A stranger's own chain spends only its own resends: 3, then it is a start like any other.
      const strangerChain: number[] = [];
      for (let i = 0; i < 4; i++) {
        const reply = await start(freshIp(), address, strangerToken);
        strangerChain.push(reply.statusCode);
        if (reply.statusCode === 200) strangerToken = reply.json().token;
      }
      expect(strangerChain).toEqual([200, 200, 200, 429]);
      // The owner's chain has two resends left, then it too counts like any start.
      let token: string = resent.json().token;
      for (let i = 0; i < 2; i++) {
        const again = await start(`${home}.1`, address, token);
        expect(again.statusCode).toBe(200);
        token = again.json().token;
      }
      expectRateLimited(await start(`${home}.1`, address, token), 50);

      // A token past its 10 minutes is no resend: it counts like any start.
      const fresh = await start(freshIp(), `expiring-${address}`);
      time.ms += 11 * MINUTE;
      const late = await start(freshIp(), `expiring-${address}`, fresh.json().token);
      expect(late.headers['x-ratelimit-limit']).not.toBe('3');
    },
  );

  it.skipIf(backend.skip !== undefined)(
    "e-mail code start: a chain's resends are bounded: passing the latest token from one IP to the next gets 2, then it counts like any start",
    async () => {
      const app = await appWith(quietLimits({ RATE_LIMIT_OTP_PER_HOUR: '2', RATE_LIMIT_OTP_ADDRESS_PER_HOUR: '3' }), clock());
      const start = (ip: string, email: string, token?: string) =>
        send(app, 'POST', '/api/auth/email-otp/start', { ip, body: token === undefined ? { email } : { email, token } });
      const address = `chain-${freshIp()}@example.org`;
      let token: string = (await start(freshIp(), address)).json().token;
      // Resends per chain are at most the limit per address and network (here 2); then two
      // ordinary starts (the address's 3 less the first), then the ceiling.
      const statuses: number[] = [];
      for (let i = 0; i < 7; i++) {
        const reply = await start(freshIp(), address, token);
        statuses.push(reply.statusCode);
        if (reply.statusCode === 200) token = reply.json().token;
      }
      expect(statuses).toEqual([200, 200, 200, 200, 429, 429, 429]);
    },
  );

  it.skipIf(backend.skip !== undefined)('contact form: 5 an hour per IP', async () => {
    const app = await appWith(quietLimits({ RATE_LIMIT_CONTACT_PER_HOUR: '5' }), clock());
    const ip = freshIp();
    const replies = await burst(6, () =>
      send(app, 'POST', '/api/contact', { ip, body: { email: 'visitor@example.org', message: 'hello' } }),
    );
    expect(replies.responses.slice(0, 5).map((response) => response.statusCode)).toEqual([200, 200, 200, 200, 200]);
    expect(replies.responses[4]!.headers['x-ratelimit-limit']).toBe('5');
    expectRateLimited(replies.responses[5]!, 5);
    expect(
      (await send(app, 'POST', '/api/contact', { ip: freshIp(), body: { email: 'visitor@example.org', message: 'hello' } })).statusCode,
    ).toBe(200);
  });

  it.skipIf(backend.skip !== undefined)(
    'TRUST_PROXY on: the address the proxy added counts; a spoofed left-most entry does not',
    async () => {
      const app = await appWith(limits({ TRUST_PROXY: 'true', RATE_LIMIT_READ_PER_MIN: '3', RATE_LIMIT_AUTH_PER_MIN: '3' }), clock());
      const proxy = freshIp();
      const client = freshIp();
      const spoofing = await burst(4, () =>
        send(app, 'GET', '/api/auth/jwks', {
          ip: proxy,
          headers: { 'x-forwarded-for': `10.9.${Math.floor(Math.random() * 250)}.1, ${client}` },
        }),
      );
      expect(spoofing.responses.map((response) => response.statusCode)).toEqual([200, 200, 200, 429]);
      const other = await send(app, 'GET', '/api/auth/jwks', { ip: proxy, headers: { 'x-forwarded-for': freshIp() } });
      expect(other.statusCode).toBe(200);
    },
  );

  it.skipIf(backend.skip !== undefined)('TRUST_PROXY off: X-Forwarded-For is ignored, the socket address counts', async () => {
    const app = await appWith(limits({ RATE_LIMIT_READ_PER_MIN: '3', RATE_LIMIT_AUTH_PER_MIN: '3' }), clock());
    const ip = freshIp();
    const replies = await burst(4, () => send(app, 'GET', '/api/auth/jwks', { ip, headers: { 'x-forwarded-for': freshIp() } }));
    expect(replies.responses.map((response) => response.statusCode)).toEqual([200, 200, 200, 429]);
  });

  it.skipIf(backend.skip !== undefined)('0 turns a class off: no headers, no 429; the other class still counts', async () => {
    const app = await appWith(limits({ RATE_LIMIT_READ_PER_MIN: '0', RATE_LIMIT_AUTH_PER_MIN: '2' }), clock());
    const ip = freshIp();
    const reads = await burst(80, () => send(app, 'GET', '/api/auth/jwks', { ip }));
    for (const response of reads.responses) {
      expect(response.statusCode).toBe(200);
      expect(response.headers['x-ratelimit-limit']).toBeUndefined();
    }
    const writes = await burst(3, () => send(app, 'POST', '/api/auth/logout', { ip }));
    expect(writes.responses.map((response) => response.statusCode)).toEqual([401, 401, 429]);
  });
});

describe('the OpenAPI document', () => {
  it('declares the 429 error body on every limited operation', async () => {
    const app = await appWith({});
    const document = (await app.inject({ method: 'GET', url: '/api/openapi' })).json();
    const missing: string[] = [];
    for (const [path, operations] of Object.entries(
      document.paths as Record<string, Record<string, { responses?: Record<string, unknown> }>>,
    )) {
      for (const [method, operation] of Object.entries(operations)) {
        const route = path.replace(/\{(\w+)\}/g, ':$1');
        if ((await limitClassOf(method.toUpperCase(), route, app)) === undefined) continue;
        if (operation.responses?.['429'] === undefined) missing.push(`${method.toUpperCase()} ${path}`);
      }
    }
    expect(missing).toEqual([]);
    expect(Object.keys(document.paths).length).toBeGreaterThan(10);
  });
});

describe('the in-memory limiter refills with the clock', () => {
  it('one read token a second after the 60 are spent', async () => {
    const clock = { ms: Date.parse('2026-06-01T00:00:00Z') };
    const app = await appWith({ RATE_LIMIT_READ_PER_MIN: '60' }, clock);
    for (let i = 0; i < 60; i++) expect((await send(app, 'GET', '/api/auth/jwks')).statusCode).toBe(200);
    const refused = await send(app, 'GET', '/api/auth/jwks');
    expectRateLimited(refused, 60);
    expect(refused.headers['retry-after']).toBe('1');
    expect(refused.headers['x-ratelimit-reset']).toBe('60');
    clock.ms += 1000;
    const again = await send(app, 'GET', '/api/auth/jwks');
    expect(again.statusCode).toBe(200);
    expect(again.headers['x-ratelimit-remaining']).toBe('0');
    expect((await send(app, 'GET', '/api/auth/jwks')).statusCode).toBe(429);
    clock.ms += MINUTE;
    expect((await send(app, 'GET', '/api/auth/jwks')).headers['x-ratelimit-remaining']).toBe('59');
  });
});

describe('Redis unreachable (REDIS_URL at a closed port)', () => {
  it('reads fail open to a per-instance count; sign-in and e-mail start fail closed with 503 and Retry-After; logout keeps working', async () => {
    const app = await appWith({ REDIS_URL: await closedRedisUrl(), RATE_LIMIT_READ_PER_MIN: '60', RATE_LIMIT_AUTH_PER_MIN: '20' });
    const ip = '192.0.2.10';
    const reads = await burst(61, () => send(app, 'GET', '/api/auth/jwks', { ip }));
    // Decided per instance: still limited, still with headers.
    expect(reads.responses.slice(0, 60).every((response) => response.statusCode === 200)).toBe(true);
    expectLimitHeaders(reads.responses[0]!, 60);
    expect(reads.responses[60]!.statusCode).toBe(429);

    for (const [url, body] of [
      ['/api/auth/signin', { message: 'm', signature: 's', nonce: 'n' }],
      ['/api/auth/email-otp/start', { email: 'someone@example.org' }],
      ['/api/auth/email-otp/verify', { email: 'someone@example.org', code: '123456' }],
      ['/api/contact', { email: 'someone@example.org', message: 'hi' }],
    ] as const) {
      const refused = await send(app, 'POST', url, { ip, body });
      expect(refused.statusCode, url).toBe(503);
      expect(refused.json()).toMatchObject({ ok: false, error: 'not_ready', reason: 'not_ready', retry_after_seconds: 5 });
      expect(refused.headers['retry-after']).toBe('5');
    }
    const logout = await send(app, 'POST', '/api/auth/logout', { ip });
    expect(logout.statusCode).toBe(401);
    expectLimitHeaders(logout, 20);
    expect(sentMail.filter((to) => to === 'someone@example.org')).toEqual([]);

    const ready = await send(app, 'GET', '/readyz');
    expect(ready.statusCode).toBe(503);
    expect(ready.json().checks.redis).toBe('unreachable');
  });

  it.skipIf(redisSkip !== undefined)('with Redis up, two instances share one count', async () => {
    const env = { REDIS_URL: redis.url, RATE_LIMIT_READ_PER_MIN: '60', RATE_LIMIT_AUTH_PER_MIN: '6' };
    const [one, two] = [await appWith(env), await appWith(env)];
    const ip = '192.0.2.20';
    let turn = 0;
    const replies = await burst(8, () => send(turn++ % 2 === 0 ? one! : two!, 'POST', '/api/auth/logout', { ip }));
    expect(replies.responses.map((response) => response.statusCode)).toEqual([401, 401, 401, 401, 401, 401, 429, 429]);
    expect((await send(one, 'GET', '/readyz')).json().checks.redis).toBe('ok');
  });
});
