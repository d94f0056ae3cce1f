/**
 * The public and form routes (docs/api.md "Public and form routes",
 * docs/protocol.md §6): GET /api/family-stats on every engine, and POST
 * /api/contact through a real SMTP server on loopback.
 */
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { testApp } from './support/app.js';
import { Browser, newWallet, type Reply } from './support/auth-client.js';
import { expectError, forEachEngine, LOCAL_ORIGIN, useAuthSuite } from './support/auth-harness.js';
import { DAY, HOUR, SECOND } from './support/clock.js';
import { startSmtpServer, type TestSmtpServer } from './support/smtp-server.js';
import { mergeEverything } from './support/merge.js';

const EVIL_ORIGIN = 'https://evil.example';

function familyStats(engine: 'sqlite' | 'postgres'): void {
  const auth = useAuthSuite(engine);

  async function stats(origin?: string): Promise<Reply> {
    const response = await auth.app.inject({ method: 'GET', url: '/api/family-stats', headers: origin === undefined ? {} : { origin } });
    return { status: response.statusCode, body: response.json(), headers: response.headers, setCookies: [] };
  }

  it('counts accounts, sessions, multi-account rosters and attestation calls; cached 60 s; no personal data', async () => {
    // Two Bitcoin accounts in one browser (a multi-account roster) ...
    const browser1 = auth.harness.browser(auth.app);
    const first = await browser1.signIn(newWallet());
    const second = await browser1.signIn(newWallet(), { add: true });
    // ... two federated accounts provisioned through Connect ...
    const created = await browser1.post('/api/connect/apps', { name: 'stats' });
    for (const user_id of ['u1', 'u2']) {
      const provisioned = await auth.app.inject({
        method: 'POST',
        url: '/api/connect/provision',
        headers: { authorization: `Bearer ${created.body.api_key}` },
        payload: { user_id },
      });
      expect(provisioned.statusCode).toBe(200);
    }
    // ... and a third Bitcoin account merged into the first: counted once, as its survivor.
    const browser3 = auth.harness.browser(auth.app);
    const third = await browser3.signIn(newWallet());
    await mergeEverything(auth.harness.store, third.body.account.id, first.body.account.id, auth.harness.clock.ms);
    // Two verifies and one check.
    for (let index = 0; index < 2; index += 1) {
      const verify = await auth.app.inject({
        method: 'POST',
        url: '/api/verify',
        payload: { addr: newWallet().address, msg: 'not canonical', sig: 'AA==' },
      });
      expect(verify.statusCode).toBe(200);
    }
    await auth.app.inject({ method: 'GET', url: `/api/check?addr=${newWallet().address}` });
    // The counts are written in batches within a second, without holding up the answers: wait until they land.
    await vi.waitFor(
      async () => {
        expect((await auth.harness.store.familyStats(auth.harness.clock.ms)).attest).toEqual({ checks_24h: 1, verifies_24h: 2 });
      },
      { timeout: 5000, interval: 100 },
    );

    const reply = await stats(EVIL_ORIGIN);
    expect(reply.status).toBe(200);
    expect(reply.headers['cache-control']).toBe('public, max-age=60');
    expect(reply.headers['access-control-allow-origin']).toBe('*');
    expect(reply.headers['access-control-allow-credentials']).toBeUndefined();
    expect(reply.body).toEqual({
      ok: true,
      generated_at: new Date(auth.harness.clock.ms).toISOString(),
      accounts: { total: 4, btc: 2, federated: 2 },
      // browser 1's two rows; browser 3's row went with the merge, which gives no roster the survivor.
      sessions: { active: 2 },
      rosters: { multi_account: 1 },
      attest: { checks_24h: 1, verifies_24h: 2 },
    });
    const text = JSON.stringify(reply.body);
    for (const account of [first, second, third]) {
      expect(text).not.toContain(account.body.account.id);
      expect(text).not.toContain(account.body.account.primary_btc);
    }

    // Within the minute the same counts are served, with the remaining lifetime.
    const takenAt = auth.harness.clock.ms;
    await auth.harness.browser(auth.app).signIn(newWallet());
    auth.harness.clock.set(takenAt + 30 * SECOND);
    const cached = await stats();
    expect(cached.body).toEqual(reply.body);
    expect(cached.headers['cache-control']).toBe('public, max-age=30');
    auth.harness.clock.set(takenAt + 60 * SECOND - 1);
    expect((await stats()).body.generated_at).toBe(reply.body.generated_at);

    // After it, the counts are taken again.
    auth.harness.clock.set(takenAt + 60 * SECOND);
    const fresh = await stats();
    expect(fresh.body.generated_at).toBe(new Date(auth.harness.clock.ms).toISOString());
    expect(fresh.body.accounts).toEqual({ total: 5, btc: 3, federated: 2 });
    expect(fresh.headers['cache-control']).toBe('public, max-age=60');

    // Attestation calls count for 24 hours.
    auth.harness.clock.advance(DAY + HOUR);
    const dayLater = await stats();
    expect(dayLater.body.attest).toEqual({ checks_24h: 0, verifies_24h: 0 });
  });

  it('answers a preflight from any origin, without credentials', async () => {
    const response = await auth.app.inject({
      method: 'OPTIONS',
      url: '/api/family-stats',
      headers: { origin: EVIL_ORIGIN, 'access-control-request-method': 'GET' },
    });
    expect(response.statusCode).toBe(204);
    expect(response.headers['access-control-allow-origin']).toBe('*');
    expect(response.headers['access-control-allow-credentials']).toBeUndefined();
  });
}

await forEachEngine('GET /api/family-stats', familyStats);

describe('POST /api/contact', () => {
  const CONTACT_TO = 'team@example.com';
  let smtp: TestSmtpServer;
  let app: FastifyInstance;

  beforeAll(async () => {
    smtp = await startSmtpServer();
    app = await testApp({ SMTP_URL: smtp.url, CONTACT_TO, RATE_LIMIT_CONTACT_PER_HOUR: '0', RATE_LIMIT_AUTH_PER_MIN: '0' });
  });
  afterAll(async () => {
    await app?.close();
    await smtp?.close();
  });

  /** Exactly the given headers: no Origin unless one is given. */
  async function post(body: unknown, headers: Record<string, string> = { origin: LOCAL_ORIGIN }): Promise<Reply> {
    const response = await app.inject({ method: 'POST', url: '/api/contact', headers, payload: body as Record<string, unknown> });
    return { status: response.statusCode, body: response.json(), headers: response.headers, setCookies: [] };
  }

  it('relays a same-origin message to CONTACT_TO through SMTP, Reply-To the sender', async () => {
    const reply = await post({ email: 'Visitor@Example.org', name: 'Ada', subject: 'Bonds', message: 'How do bonds work?\nThanks' });
    expect(reply.status, JSON.stringify(reply.body)).toBe(200);
    expect(reply.body).toEqual({ ok: true });
    expect(reply.headers['cache-control']).toBe('no-store');
    const mail = await smtp.waitForMessage((received) => received.subject?.includes('Bonds') === true);
    expect(mail.envelope.to).toEqual([CONTACT_TO]);
    expect(mail.header('Reply-To')).toContain('visitor@example.org');
    expect(mail.text).toContain('How do bonds work?\nThanks');
  });

  it('refuses a request that proves no origin (neither Origin nor Fetch Metadata), and accepts a same-origin Fetch Metadata', async () => {
    expectError(await post({ email: 'a@example.org', subject: 'No origin', message: 'hi' }, {}), 403, 'cross_site');
    expectError(
      await post({ email: 'a@example.org', subject: 'No origin', message: 'hi' }, { 'sec-fetch-site': 'none' }),
      403,
      'cross_site',
    );
    expect(
      (await post({ email: 'a@example.org', subject: 'Same origin', message: 'hi' }, { 'sec-fetch-site': 'same-origin' })).status,
    ).toBe(200);
    await smtp.waitForMessage((received) => received.subject?.includes('Same origin') === true);
  });

  it('takes `Origin: null` (a form post from a no-referrer page) as no Origin: Fetch Metadata decides', async () => {
    // Chromium sends `Origin: null` on a form post from a page whose Referrer-Policy is no-referrer, as ours are.
    expect(
      (await post({ email: 'a@example.org', subject: 'Null origin', message: 'hi' }, { origin: 'null', 'sec-fetch-site': 'same-origin' }))
        .status,
    ).toBe(200);
    await smtp.waitForMessage((received) => received.subject?.includes('Null origin') === true);
    for (const headers of [
      { origin: 'null' },
      { origin: 'null', 'sec-fetch-site': 'cross-site' },
      { origin: 'null', 'sec-fetch-site': 'same-site' },
    ]) {
      expectError(await post({ email: 'a@example.org', subject: 'Null from evil', message: 'x' }, headers), 403, 'cross_site');
    }
  });

  it('refuses other sites with 403 cross_site and sends nothing', async () => {
    expectError(await post({ email: 'a@example.org', subject: 'From evil', message: 'x' }, { origin: EVIL_ORIGIN }), 403, 'cross_site');
    expectError(
      await post({ email: 'a@example.org', subject: 'From evil', message: 'x' }, { 'sec-fetch-site': 'cross-site' }),
      403,
      'cross_site',
    );
    expectError(
      await post({ email: 'a@example.org', subject: 'From evil', message: 'x' }, { 'sec-fetch-site': 'same-site' }),
      403,
      'cross_site',
    );
    // A family origin other than the service's own is another site too.
    expectError(
      await post({ email: 'a@example.org', subject: 'From evil', message: 'x' }, { origin: 'http://localhost:9999' }),
      403,
      'cross_site',
    );
    expect((await post({ email: 'a@example.org', subject: 'Marker after evil', message: 'x' })).status).toBe(200);
    await smtp.waitForMessage((received) => received.subject?.includes('Marker after evil') === true);
    expect(smtp.messages().some((received) => received.subject?.includes('From evil'))).toBe(false);
  });

  it('answers a filled honeypot like a success and sends nothing', async () => {
    const trapped = await post({ email: 'bot@example.org', subject: 'Honeypot', message: 'buy now', website: 'https://spam.example' });
    expect(trapped.status).toBe(200);
    expect(trapped.body).toEqual({ ok: true });
    expect((await post({ email: 'a@example.org', subject: 'Marker after honeypot', message: 'x' })).status).toBe(200);
    await smtp.waitForMessage((received) => received.subject?.includes('Marker after honeypot') === true);
    expect(smtp.messages().some((received) => received.subject?.includes('Honeypot'))).toBe(false);
  });

  it.each([
    ['a missing e-mail', { message: 'hi' }, 'email'],
    ['a malformed e-mail', { email: 'nope', message: 'hi' }, 'email'],
    ['a missing message', { email: 'a@example.org' }, 'message'],
    ['a blank message', { email: 'a@example.org', message: '   ' }, 'message'],
    ['a message over 5,000 characters', { email: 'a@example.org', message: 'x'.repeat(5001) }, 'message'],
    ['a subject with a line break', { email: 'a@example.org', message: 'hi', subject: 'Hi\r\nBcc: x@example.org' }, 'subject'],
    ['a name that is not a string', { email: 'a@example.org', message: 'hi', name: 3 }, 'name'],
  ])('refuses %s with 400 bad_request naming the field', async (_label, body, field) => {
    const reply = await post(body);
    expectError(reply, 400, 'bad_request');
    expect(reply.body.detail).toContain(field);
  });

  it('refuses a body that is not JSON with 415', async () => {
    const response = await app.inject({
      method: 'POST',
      url: '/api/contact',
      headers: { origin: LOCAL_ORIGIN, 'content-type': 'text/plain' },
      payload: 'hello',
    });
    expect(response.statusCode).toBe(415);
    expect(response.json()).toMatchObject({ ok: false, error: 'unsupported_media_type' });
  });

  it('is 404 not_found where CONTACT_TO is not configured', async () => {
    const bare = await testApp({ SMTP_URL: smtp.url, RATE_LIMIT_CONTACT_PER_HOUR: '0' });
    try {
      expectError(await new Browser(bare).request('POST', '/api/contact', { email: 'a@example.org', message: 'hi' }), 404, 'not_found');
    } finally {
      await bare.close();
    }
  });
});
