/**
 * The consumer middleware inside the real frameworks (Express 5 and Hono 4,
 * development dependencies only): a session from a cookie or a Bearer token,
 * the valid one of two `oc_session` cookies, a pinned tab's
 * `x-oc-tab-session` over the cookie (and `tab_invalid` for a bad one), and
 * the guards.
 */
import type { AddressInfo } from 'node:net';
import { createServer, type Server } from 'node:http';
import express from 'express';
import { Hono } from 'hono';
import { exportJWK, generateKeyPair, SignJWT, type CryptoKey } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as forExpress from '../packages/verify/src/express.js';
import * as forHono from '../packages/verify/src/hono.js';

const ISSUER = 'https://auth.example.com';
const SUB = '0123456789abcdef0123456789abcdef';
let privateKey: CryptoKey;
let publicJwk: Record<string, unknown>;

const TAB_SUB = 'fedcba9876543210fedcba9876543210';

async function token(claims: Record<string, unknown> = {}, sub = SUB): Promise<string> {
  const now = Math.floor(Date.now() / 1000);
  return new SignJWT({ did_oc: `did:oc:${sub}`, ...claims })
    .setProtectedHeader({ alg: 'EdDSA', typ: 'JWT', kid: 'test' })
    .setIssuer(ISSUER)
    .setSubject(sub)
    .setJti('f'.repeat(32))
    .setIssuedAt(now)
    .setExpirationTime(now + 3600)
    .sign(privateKey);
}

beforeAll(async () => {
  const pair = await generateKeyPair('EdDSA', { crv: 'Ed25519', extractable: true });
  privateKey = pair.privateKey;
  publicJwk = { ...(await exportJWK(pair.publicKey)), kid: 'test', alg: 'EdDSA', use: 'sig' };
});

describe('Express 5', () => {
  let server: Server;
  let base: string;

  beforeAll(async () => {
    const app = express();
    app.use(forExpress.ocSession({ publicJwk, issuer: ISSUER }));
    app.get('/whoami', (request, response) => {
      response.json({ did: request.ocSession?.did_oc ?? null });
    });
    app.get('/private', forExpress.requireSession(), (request, response) => {
      response.json({ did: request.ocSession?.did_oc });
    });
    app.post('/payout', forExpress.requireFreshSudo(300), (_request, response) => {
      response.json({ ok: true });
    });
    app.post('/spend', forExpress.requireFreshStepUp(300), (_request, response) => {
      response.json({ ok: true });
    });
    server = createServer(app);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await new Promise((resolve) => server.close(resolve));
  });

  it('puts the session from a cookie or a Bearer token on the request', async () => {
    const jwt = await token();
    expect(await (await fetch(`${base}/whoami`, { headers: { cookie: `theme=dark; oc_session=${jwt}` } })).json()).toEqual({
      did: `did:oc:${SUB}`,
    });
    expect(await (await fetch(`${base}/whoami`, { headers: { authorization: `Bearer ${jwt}` } })).json()).toEqual({ did: `did:oc:${SUB}` });
    expect(await (await fetch(`${base}/whoami`)).json()).toEqual({ did: null });
  });

  it('picks the valid one of two oc_session cookies', async () => {
    const jwt = await token();
    const reply = await fetch(`${base}/private`, { headers: { cookie: `oc_session=not.a.token; oc_session=${jwt}` } });
    expect(reply.status).toBe(200);
  });

  it('a pinned tab: its x-oc-tab-session over the cookie; a bad one is tab_invalid, not the cookie', async () => {
    const cookie = `oc_session=${await token()}`;
    const pinned = await fetch(`${base}/private`, { headers: { cookie, 'x-oc-tab-session': await token({}, TAB_SUB) } });
    expect(await pinned.json()).toEqual({ did: `did:oc:${TAB_SUB}` });
    const bad = await fetch(`${base}/private`, { headers: { cookie, 'x-oc-tab-session': 'not.a.token' } });
    expect(bad.status).toBe(401);
    expect(await bad.json()).toEqual({ ok: false, error: 'tab_invalid', reason: 'tab_invalid' });
    expect(await (await fetch(`${base}/whoami`, { headers: { cookie, 'x-oc-tab-session': 'not.a.token' } })).json()).toEqual({ did: null });
  });

  it('requireSession and requireFreshSudo answer 401 with the documented codes', async () => {
    const anonymous = await fetch(`${base}/private`);
    expect(anonymous.status).toBe(401);
    expect(await anonymous.json()).toEqual({ ok: false, error: 'not_authenticated', reason: 'not_authenticated' });
    const stale = await fetch(`${base}/payout`, {
      method: 'POST',
      headers: { cookie: `oc_session=${await token({ sudo_at: Math.floor(Date.now() / 1000) - 3600 })}` },
    });
    expect(stale.status).toBe(401);
    expect(((await stale.json()) as { error: string }).error).toBe('sudo_required');
    const fresh = await fetch(`${base}/payout`, {
      method: 'POST',
      headers: { cookie: `oc_session=${await token({ sudo_at: Math.floor(Date.now() / 1000) - 10 })}` },
    });
    expect(fresh.status).toBe(200);
  });

  it('requireFreshStepUp answers 401 step_up_required without a fresh step_up_at', async () => {
    const now = Math.floor(Date.now() / 1000);
    const sudoOnly = await fetch(`${base}/spend`, { method: 'POST', headers: { cookie: `oc_session=${await token({ sudo_at: now })}` } });
    expect(sudoOnly.status).toBe(401);
    expect(await sudoOnly.json()).toEqual({ ok: false, error: 'step_up_required', reason: 'step_up_required' });
    expect(sudoOnly.headers.get('cache-control')).toBe('no-store');
    const stale = await fetch(`${base}/spend`, {
      method: 'POST',
      headers: { cookie: `oc_session=${await token({ step_up_at: now - 3600 })}` },
    });
    expect(stale.status).toBe(401);
    const fresh = await fetch(`${base}/spend`, {
      method: 'POST',
      headers: { cookie: `oc_session=${await token({ step_up_at: now - 10 })}` },
    });
    expect(fresh.status).toBe(200);
  });
});

describe('Hono 4', () => {
  const app = new Hono<{ Variables: forHono.OcSessionVariables }>();
  beforeAll(() => {
    app.use('*', forHono.ocSession({ publicJwk, issuer: ISSUER }));
    app.get('/whoami', (c) => c.json({ did: c.get('ocSession')?.did_oc ?? null }));
    app.get('/private', forHono.requireSession(), (c) => c.json({ did: c.get('ocSession')?.did_oc }));
    app.post('/payout', forHono.requireFreshSudo(300), (c) => c.json({ ok: true }));
    app.post('/spend', forHono.requireFreshStepUp(300), (c) => c.json({ ok: true }));
  });

  it('puts the session from a cookie or a Bearer token on the context', async () => {
    const jwt = await token();
    expect(await (await app.request('/whoami', { headers: { cookie: `oc_session=${jwt}` } })).json()).toEqual({ did: `did:oc:${SUB}` });
    expect(await (await app.request('/whoami', { headers: { authorization: `Bearer ${jwt}` } })).json()).toEqual({ did: `did:oc:${SUB}` });
    expect(await (await app.request('/whoami')).json()).toEqual({ did: null });
  });

  it('a pinned tab: its x-oc-tab-session over the cookie; a bad one is tab_invalid, not the cookie', async () => {
    const cookie = `oc_session=${await token()}`;
    const pinned = await app.request('/private', { headers: { cookie, 'x-oc-tab-session': await token({}, TAB_SUB) } });
    expect(await pinned.json()).toEqual({ did: `did:oc:${TAB_SUB}` });
    const bad = await app.request('/private', { headers: { cookie, 'x-oc-tab-session': 'not.a.token' } });
    expect(bad.status).toBe(401);
    expect(await bad.json()).toEqual({ ok: false, error: 'tab_invalid', reason: 'tab_invalid' });
  });

  it('refuses a token with a tampered payload', async () => {
    const [header, , signature] = (await token()).split('.');
    const forged = `${header}.${Buffer.from(JSON.stringify({ sub: SUB, did_oc: `did:oc:${SUB}`, iss: ISSUER, jti: 'x', exp: 9_999_999_999 })).toString('base64url')}.${signature}`;
    expect((await app.request('/private', { headers: { cookie: `oc_session=${forged}` } })).status).toBe(401);
  });

  it('requireSession and requireFreshSudo answer 401 with the documented codes', async () => {
    const anonymous = await app.request('/private');
    expect(anonymous.status).toBe(401);
    expect(await anonymous.json()).toEqual({ ok: false, error: 'not_authenticated', reason: 'not_authenticated' });
    const stale = await app.request('/payout', { method: 'POST', headers: { authorization: `Bearer ${await token()}` } });
    expect(stale.status).toBe(401);
    expect(((await stale.json()) as { error: string }).error).toBe('sudo_required');
    const fresh = await app.request('/payout', {
      method: 'POST',
      headers: { authorization: `Bearer ${await token({ sudo_at: Math.floor(Date.now() / 1000) })}` },
    });
    expect(fresh.status).toBe(200);
  });

  it('requireFreshStepUp answers 401 step_up_required without a fresh step_up_at', async () => {
    const now = Math.floor(Date.now() / 1000);
    const anonymous = await app.request('/spend', { method: 'POST' });
    expect(await anonymous.json()).toEqual({ ok: false, error: 'not_authenticated', reason: 'not_authenticated' });
    const sudoOnly = await app.request('/spend', { method: 'POST', headers: { authorization: `Bearer ${await token({ sudo_at: now })}` } });
    expect(sudoOnly.status).toBe(401);
    expect(await sudoOnly.json()).toEqual({ ok: false, error: 'step_up_required', reason: 'step_up_required' });
    const fresh = await app.request('/spend', { method: 'POST', headers: { authorization: `Bearer ${await token({ step_up_at: now })}` } });
    expect(fresh.status).toBe(200);
  });
});
