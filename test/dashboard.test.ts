/**
 * The console's dashboard (docs/api.md "Admin", `GET /api/admin/dashboard`)
 * on every engine: what the answers count (sign-ins by way in, refusals by
 * way and error code, OpenID sign-ins by client, /api/verify by outcome),
 * the accounts created per day, the sessions live now and each client's
 * consents, written in batches that several instances add to.
 */
import * as client from 'openid-client';
import { expect, it } from 'vitest';
import type { DashboardCounter } from '../src/features/admin/dashboard.js';
import { countAnswer } from '../src/features/admin/dashboard-routes.js';
import { newWallet } from './support/auth-client.js';
import { forEachEngine, useAuthSuite } from './support/auth-harness.js';
import { DAY } from './support/clock.js';
import { discover, ProviderBrowser } from './support/oidc-rp.js';
import { operatorWithToken } from './support/operators.js';

const REDIRECT = 'https://app.example/callback';

function dashboardSuite(engine: 'sqlite' | 'postgres'): void {
  const auth = useAuthSuite(engine);

  /** An operator's token with `scopes`. */
  const operatorToken = async (scopes: string[]) => (await operatorWithToken(auth.harness, auth.app, scopes)).token;

  const admin = (token: string, method: 'GET' | 'POST', url: string, body?: unknown) =>
    auth.app.inject({
      method,
      url,
      headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      ...(body === undefined ? {} : { payload: JSON.stringify(body) }),
    });

  it('counts each way in’s sign-ins and refusals, OpenID sign-ins by client, verifications, new accounts and live sessions', async () => {
    const token = await operatorToken(['read', 'write']);
    const before = (await admin(token, 'GET', '/api/admin/dashboard?days=1')).json();
    const today = before.days.at(-1);

    // Two wallet sign-ins and one refused (the signature of another message).
    const first = auth.harness.browser(auth.app);
    const wallet = newWallet();
    expect((await first.signIn(wallet)).status).toBe(200);
    expect((await auth.harness.browser(auth.app).signIn(newWallet())).status).toBe(200);
    const proof = await first.prove(wallet, 'login');
    const other = await first.prove(wallet, 'login');
    expect((await first.post('/api/auth/signin', { ...proof, signature: other.signature })).status).toBe(401);
    // A verification refused for its body.
    expect((await first.post('/api/verify', { nothing: true })).status).toBe(400);

    // An OpenID sign-in to an app registered from the admin API.
    const created = await admin(token, 'POST', '/api/admin/clients', { client_name: 'Counted app', redirect_uris: [REDIRECT] });
    expect(created.statusCode, created.body).toBe(201);
    const { client_id: clientId, client_secret: secret } = created.json().client;
    const config = await discover(auth.app, clientId, secret);
    const browser = new ProviderBrowser(auth.app, first);
    const verifier = client.randomPKCECodeVerifier();
    const url = client.buildAuthorizationUrl(config, {
      redirect_uri: REDIRECT,
      scope: 'openid',
      state: 'st',
      code_challenge: await client.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
    });
    let hop = await browser.follow(url.href);
    if (hop.status === 200 && hop.url.includes('/oidc/interaction/')) hop = await browser.allow(hop);
    expect(hop.location).toMatch(/^https:\/\/app\.example\/callback\?code=/);

    const after = await admin(token, 'GET', '/api/admin/dashboard?days=1');
    expect(after.statusCode, after.body).toBe(200);
    const view = after.json();
    expect(view.days).toHaveLength(1);
    const day = view.days[0];
    expect(day.day).toBe(new Date(auth.harness.clock.now().getTime()).toISOString().slice(0, 10));
    expect(day.signins.bip322 - (today.signins.bip322 ?? 0)).toBe(2);
    expect(day.failures['bip322 invalid_challenge'] - (today.failures['bip322 invalid_challenge'] ?? 0)).toBe(1);
    expect(day.verify.refused - today.verify.refused).toBe(1);
    expect(day.oidc[clientId]).toBe(1);
    expect(day.new_accounts - today.new_accounts).toBe(2);
    expect(view.active_sessions).toBeGreaterThanOrEqual(3);
    expect(view.clients).toEqual(expect.arrayContaining([{ client_id: clientId, name: 'Counted app', consents: 1 }]));
    // Nothing of a person: no did, no address.
    expect(after.body).not.toContain('did:oc:');
    expect(after.body).not.toContain(wallet.address);
  });

  it('keeps the days apart, adds the counts of every instance, and answers a bad range with 400', async () => {
    const token = await operatorToken(['read']);
    const second = await auth.harness.app();
    const signInOn = async (app: typeof auth.app) => {
      const reply = await auth.harness.browser(app).signIn(newWallet());
      expect(reply.status).toBe(200);
    };
    await signInOn(auth.app);
    await signInOn(second);
    const now = (await admin(token, 'GET', '/api/admin/dashboard?days=2')).json();
    const todayCount = now.days[1].signins.bip322 as number;
    // Both instances counted into one row: the second's pending count is written when it is asked.
    const asked = await second.inject({ method: 'GET', url: '/api/admin/dashboard?days=2', headers: { authorization: `Bearer ${token}` } });
    expect(asked.json().days[1].signins.bip322).toBeGreaterThanOrEqual(todayCount + 1);
    auth.harness.clock.advance(DAY);
    await signInOn(auth.app);
    const next = (await admin(token, 'GET', '/api/admin/dashboard?days=2')).json();
    expect(next.days[1].signins.bip322).toBe(1);
    expect(next.days[0].signins.bip322).toBeGreaterThanOrEqual(todayCount + 1);
    for (const days of ['0', '91', 'x']) {
      expect((await admin(token, 'GET', `/api/admin/dashboard?days=${days}`)).statusCode, days).toBe(400);
    }
  });
}

it('counts /api/check by its cache result and a provider sign-in by where its callback sends the browser', () => {
  const counted: string[] = [];
  const counter = { count: (metric: string, label: string) => counted.push(`${metric} ${label}`) } as unknown as DashboardCounter;
  const answer = (
    url: string,
    status: number,
    headers: Record<string, string>,
    params: Record<string, string> = {},
    payload: unknown = '',
  ) =>
    countAnswer(
      counter,
      new Set(['github']),
      { routeOptions: { url }, method: url.startsWith('/api/auth/') && !url.includes('callback') ? 'POST' : 'GET', params } as never,
      { statusCode: status, getHeader: (name: string) => headers[name] } as never,
      payload,
    );
  answer('/api/check', 200, { 'x-cache': 'hit' });
  answer('/api/check', 200, { 'x-cache': 'miss' });
  answer('/api/check', 400, {});
  answer('/api/auth/:provider/callback', 302, { location: '/account' }, { provider: 'github' });
  answer('/api/auth/:provider/callback', 302, { location: '/signin?oauth_error=state_mismatch' }, { provider: 'github' });
  answer('/api/auth/:provider/callback', 404, {}, { provider: 'gitlab' });
  answer('/api/auth/email-otp/verify', 401, {}, {}, '{"ok":false,"error":"invalid_code","detail":"x"}');
  answer('/api/auth/passkey/signin', 404, {}, {}, '{"ok":false,"error":"not_found"}');
  answer('/assets/:file', 200, {});
  expect(counted).toEqual([
    'check hit',
    'check miss',
    'signin oauth:github',
    'signin_failed oauth:github state_mismatch',
    'signin_failed email_otp invalid_code',
  ]);
});

await forEachEngine('the console’s dashboard', dashboardSuite);
