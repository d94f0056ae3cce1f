/**
 * A consumer site's view of `oc_session` (docs/api.md Authentication 2,
 * docs/protocol.md §3): every cookie the service issues verifies with `jose` alone
 * against the published JWK, carries the documented claims and nothing it
 * must not, and forgeries of every usual kind are refused. Key rotation keeps
 * old cookies verifiable.
 */
import {
  SignJWT,
  calculateJwkThumbprint,
  createLocalJWKSet,
  decodeProtectedHeader,
  generateKeyPair,
  importJWK,
  jwtVerify,
  type JWK,
  type JWTPayload,
} from 'jose';
import { describe, expect, it } from 'vitest';
import { rotateSigningKey } from '../src/identity/session/keystore.js';
import { KEY_PUBLISH_LEAD_MS } from '../src/identity/session/index.js';
import { newWallet, type Reply } from './support/auth-client.js';
import { UUID_ANYWHERE, expectError, expectSessionCookie, forEachEngine, type TimedBrowser, useAuthSuite } from './support/auth-harness.js';
import { DAY, HOUR } from './support/clock.js';
import { SESSION_CLAIMS } from './support/session-claims.js';

const ISSUER = 'https://auth.example.com';
const FAMILY_ENV = { PUBLIC_URL: ISSUER, COOKIE_DOMAIN: '.example.com' };
const CONSUMER_ORIGIN = 'https://app.example.com';

/** Every claim docs/protocol.md §3 allows; anything else (a roster id, an e-mail) must not be there. */
const ALLOWED_CLAIMS = new Set(SESSION_CLAIMS);

async function rejection(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
  } catch (error) {
    return (error as { code?: string }).code ?? String(error);
  }
  return 'accepted';
}

function tamperPayload(token: string, change: (payload: Record<string, unknown>) => void): string {
  const [header, payload, signature] = token.split('.') as [string, string, string];
  const claims = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
  change(claims);
  return `${header}.${Buffer.from(JSON.stringify(claims)).toString('base64url')}.${signature}`;
}

function consumerSuite(engine: 'sqlite' | 'postgres'): void {
  const auth = useAuthSuite(engine, FAMILY_ENV);

  const browser = (on = auth.app): TimedBrowser => auth.harness.browser(on, CONSUMER_ORIGIN);

  async function jwks(on = auth.app): Promise<{ keys: JWK[] }> {
    const reply = await on.inject({ method: 'GET', url: '/api/auth/jwks' });
    expect(reply.statusCode).toBe(200);
    return reply.json();
  }

  /**
   * What a consumer does with `OC_AUTH_PUBLIC_JWK`: parse, import, verify,
   * pinned to EdDSA and the issuer. The consumer's clock is the test clock.
   */
  async function verifyAsConsumer(token: string, publicJwkText: string, currentDate = auth.harness.clock.now()): Promise<JWTPayload> {
    const key = await importJWK(JSON.parse(publicJwkText), 'EdDSA');
    const { payload } = await jwtVerify(token, key, { algorithms: ['EdDSA'], issuer: ISSUER, currentDate });
    return payload;
  }

  function tokenOf(reply: Reply): string {
    expect(reply.status, JSON.stringify(reply.body)).toBe(200);
    return expectSessionCookie(reply, { domain: '.example.com' });
  }

  describe('the published keys', () => {
    it('GET /api/auth/jwks and /.well-known/jwks.json publish the same Ed25519 public JWK, CORS-open and cacheable', async () => {
      const replies = await Promise.all(
        ['/api/auth/jwks', '/.well-known/jwks.json'].map((url) =>
          auth.app.inject({ method: 'GET', url, headers: { origin: 'https://anywhere.test' } }),
        ),
      );
      for (const reply of replies) {
        expect(reply.statusCode).toBe(200);
        expect(reply.headers['access-control-allow-origin']).toBe('*');
        expect(reply.headers['access-control-allow-credentials']).toBeUndefined();
        expect(reply.headers['cache-control']).toMatch(/max-age=\d+/);
        expect(reply.headers['cache-control']).toMatch(/public/);
      }
      expect(replies[1]!.json()).toEqual(replies[0]!.json());
      const { keys } = replies[0]!.json() as { keys: JWK[] };
      expect(keys.length).toBeGreaterThanOrEqual(1);
      for (const key of keys) {
        expect(key).toEqual({
          kty: 'OKP',
          crv: 'Ed25519',
          x: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/),
          kid: expect.any(String),
          alg: 'EdDSA',
          use: 'sig',
        });
        expect(key.kid).toBe(await calculateJwkThumbprint({ kty: key.kty!, crv: key.crv!, x: key.x! }));
      }
    });
  });

  describe('every issued cookie', () => {
    it('verifies with jose and the published JWK: sign-in, add, switch and logout re-mint', async () => {
      const client = browser();
      const walletA = newWallet();
      const walletB = newWallet('p2tr');
      const issued: Array<{ what: string; token: string; address: string }> = [];
      issued.push({ what: 'sign-in', token: tokenOf(await client.signIn(walletA)), address: walletA.address });
      auth.harness.clock.advance(HOUR);
      issued.push({ what: 'add', token: tokenOf(await client.signIn(walletB, { add: true })), address: walletB.address });
      const didA = (await client.me()).body.roster[0].did_oc;
      auth.harness.clock.advance(HOUR);
      issued.push({ what: 'switch', token: tokenOf(await client.switchTo(didA)), address: walletA.address });
      issued.push({ what: 'logout current', token: tokenOf(await client.logout('current')), address: walletB.address });

      const { keys } = await jwks();
      const published = JSON.stringify(keys[0]);
      const keySet = createLocalJWKSet({ keys });
      for (const { what, token, address } of issued) {
        expect(decodeProtectedHeader(token), what).toEqual({ alg: 'EdDSA', typ: 'JWT', kid: keys[0]!.kid });
        const payload = await verifyAsConsumer(token, published);
        const viaSet = await jwtVerify(token, keySet, { algorithms: ['EdDSA'], issuer: ISSUER, currentDate: auth.harness.clock.now() });
        expect(viaSet.payload).toEqual(payload);

        expect(payload, what).toMatchObject({
          iss: ISSUER,
          sub: expect.stringMatching(/^[0-9a-f]{32}$/),
          jti: expect.stringMatching(/^[0-9a-f]{32}$/),
          iat: expect.any(Number),
          exp: expect.any(Number),
          signing_method: 'bip322',
          amr: ['swk'],
          primary_btc: address,
          display_identity: { kind: 'btc', value: address },
        });
        expect(payload.did_oc).toBe(`did:oc:${payload.sub}`);
        expect(payload.exp! - payload.iat!).toBeLessThanOrEqual(30 * 24 * 3600);
        for (const claim of Object.keys(payload)) expect(ALLOWED_CLAIMS, `${what}: claim ${claim}`).toContain(claim);
        const text = JSON.stringify(payload);
        expect(text).not.toMatch(UUID_ANYWHERE);
        expect(text).not.toContain('@');
        expect(text).not.toMatch(/roster/i);
        expect(text).not.toMatch(/email/i);
      }
    });

    it('refuses a tampered payload, an expired token, a wrong issuer, another key and alg none', async () => {
      const token = tokenOf(await browser().signIn(newWallet()));
      const { keys } = await jwks();
      const published = JSON.stringify(keys[0]);
      const payload = await verifyAsConsumer(token, published);

      const tampered = tamperPayload(token, (claims) => {
        claims.sub = '0'.repeat(32);
      });
      expect(await rejection(verifyAsConsumer(tampered, published))).toBe('ERR_JWS_SIGNATURE_VERIFICATION_FAILED');

      expect(await rejection(verifyAsConsumer(token, published, new Date((payload.exp! + 1) * 1000)))).toBe('ERR_JWT_EXPIRED');
      expect(await rejection(verifyAsConsumer(token, published, new Date((payload.exp! - 60) * 1000)))).toBe('accepted');

      const key = await importJWK(keys[0]!, 'EdDSA');
      expect(
        await rejection(
          jwtVerify(token, key, { algorithms: ['EdDSA'], issuer: 'https://evil.example.com', currentDate: auth.harness.clock.now() }),
        ),
      ).toBe('ERR_JWT_CLAIM_VALIDATION_FAILED');

      // Same header (even the real kid), signed by another Ed25519 key.
      const other = await generateKeyPair('EdDSA', { crv: 'Ed25519' });
      const forged = await new SignJWT({ ...payload })
        .setProtectedHeader({ alg: 'EdDSA', typ: 'JWT', kid: keys[0]!.kid! })
        .sign(other.privateKey);
      expect(await rejection(verifyAsConsumer(forged, published))).toBe('ERR_JWS_SIGNATURE_VERIFICATION_FAILED');

      const none = `${Buffer.from(JSON.stringify({ alg: 'none', typ: 'JWT' })).toString('base64url')}.${token.split('.')[1]}.`;
      expect(await rejection(verifyAsConsumer(none, published))).not.toBe('accepted');
      expect(
        await rejection(
          jwtVerify(none, createLocalJWKSet({ keys }), { algorithms: ['EdDSA'], issuer: ISSUER, currentDate: auth.harness.clock.now() }),
        ),
      ).not.toBe('accepted');

      // The host refuses the same forgeries.
      for (const bad of [tampered, forged, none]) {
        const reply = await auth.app.inject({ method: 'GET', url: '/api/auth/me', headers: { cookie: `oc_session=${bad}` } });
        expect(reply.statusCode).toBe(401);
      }
    });
  });

  describe('key rotation', () => {
    it('publishes old and new keys; a cookie signed by the old key still verifies with jose and still works on /me', async () => {
      const client = browser();
      const oldToken = tokenOf(await client.signIn(newWallet()));
      const before = await jwks();
      const oldKid = decodeProtectedHeader(oldToken).kid;
      expect(before.keys.map((key) => key.kid)).toContain(oldKid);

      auth.harness.clock.advance(DAY);
      const rotated = await rotateSigningKey(auth.harness.store, auth.harness.clock.now());
      // Published at once, before any instance signs with it (docs/operations.md "Signing keys").
      const waiting = await jwks(await auth.harness.app(FAMILY_ENV));
      expect(waiting.keys.map((key) => key.kid)).toEqual([oldKid, rotated.kid]);
      auth.harness.clock.advance(KEY_PUBLISH_LEAD_MS);
      const rebuilt = await auth.harness.app(FAMILY_ENV);

      const after = await jwks(rebuilt);
      const kids = after.keys.map((key) => key.kid);
      expect(kids[0], 'the new key signs now and comes first').toBe(rotated.kid);
      expect(kids).toContain(oldKid);
      expect(new Set(kids).size).toBe(kids.length);
      const wellKnown = await rebuilt.inject({ method: 'GET', url: '/.well-known/jwks.json' });
      expect(wellKnown.json()).toEqual(after);

      const keySet = createLocalJWKSet(after);
      const verified = await jwtVerify(oldToken, keySet, { algorithms: ['EdDSA'], issuer: ISSUER, currentDate: auth.harness.clock.now() });
      expect(verified.protectedHeader.kid).toBe(oldKid);
      const oldJwk = after.keys.find((key) => key.kid === oldKid)!;
      await verifyAsConsumer(oldToken, JSON.stringify(oldJwk));

      const onRebuilt = browser(rebuilt);
      onRebuilt.cookie = oldToken;
      onRebuilt.binding = client.binding;
      const me = await onRebuilt.me();
      expect(me.status).toBe(200);
      expect(me.body.account.id).toBe(verified.payload.sub);

      // New cookies carry the new kid and verify with the new key alone.
      const newToken = tokenOf(await browser(rebuilt).signIn(newWallet()));
      expect(decodeProtectedHeader(newToken).kid).toBe(rotated.kid);
      await verifyAsConsumer(newToken, JSON.stringify(after.keys[0]));
      expect(await rejection(verifyAsConsumer(newToken, JSON.stringify(oldJwk)))).toBe('ERR_JWS_SIGNATURE_VERIFICATION_FAILED');

      // A re-mint on the rebuilt app (a switch) moves the old session onto the new key.
      const second = await onRebuilt.signIn(newWallet(), { add: true });
      expect(second.status).toBe(200);
      const back = await onRebuilt.switchTo(me.body.account.did_oc);
      const remint = tokenOf(back);
      expect(decodeProtectedHeader(remint).kid).toBe(rotated.kid);
      expectError(await browser(rebuilt).switchTo(me.body.account.did_oc), 401, 'not_authenticated');
    });
  });
}

await forEachEngine('consumer verification of oc_session', consumerSuite);
