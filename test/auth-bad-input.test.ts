/**
 * Hostile and malformed input to the auth routes and the challenge (docs/architecture.md
 * Errors: "a clear error with a code, never a 500"; docs/protocol.md §4, §5):
 * shapes, sizes, cookies and tokens, cross-site requests, and every way a
 * sign-in proof can be wrong. Each refusal is checked to have no effect.
 */
import { randomBytes } from 'node:crypto';
import { SignJWT, generateKeyPair } from 'jose';
import { describe, expect, it } from 'vitest';
import { signBip322 } from './support/bitcoin-signer.js';
import { mintSessionJwt } from '../src/identity/session/jwt.js';
import { loadKeyRing } from '../src/identity/session/keystore.js';
import { newWallet, type Reply, sessionCookieHeader } from './support/auth-client.js';
import { LOCAL_ORIGIN, decodeJwt, expectError, forEachEngine, type TimedBrowser, useAuthSuite } from './support/auth-harness.js';
import { DAY, SECOND } from './support/clock.js';

const EVIL_ORIGIN = 'https://evil.example';

function badInputSuite(engine: 'sqlite' | 'postgres'): void {
  const auth = useAuthSuite(engine);

  const browser = (): TimedBrowser => auth.harness.browser(auth.app);

  async function raw(
    method: 'GET' | 'POST' | 'OPTIONS',
    url: string,
    options: { body?: string; headers?: Record<string, string> } = {},
  ): Promise<Reply> {
    const reply = await auth.app.inject({
      method,
      url,
      headers: { ...(method === 'POST' ? { origin: LOCAL_ORIGIN, 'content-type': 'application/json' } : {}), ...options.headers },
      ...(options.body === undefined ? {} : { payload: options.body }),
    });
    let body: unknown;
    try {
      body = reply.json();
    } catch {
      body = reply.body;
    }
    const cookies = reply.headers['set-cookie'];
    return {
      status: reply.statusCode,
      body,
      headers: reply.headers,
      setCookies: cookies === undefined ? [] : Array.isArray(cookies) ? cookies : [cookies],
    };
  }

  /** A bad_request whose detail names the field. */
  function expectBadField(reply: Reply, field: string): void {
    expectError(reply, 400, 'bad_request');
    expect(reply.body.detail).toContain(field);
  }

  async function signedIn(): Promise<{ client: TimedBrowser; token: string; did: string }> {
    const client = browser();
    const reply = await client.signIn(newWallet());
    expect(reply.status).toBe(200);
    return { client, token: reply.body.token, did: reply.body.account.did_oc };
  }

  /** A failed sign-in sets no cookie and creates no account. */
  async function expectNoSignIn(reply: Reply, address: string): Promise<void> {
    expect(reply.setCookies.filter((line) => !line.includes('Max-Age=0'))).toEqual([]);
    expect(await auth.harness.store.findAccountByIdentity('btc', address)).toBeNull();
  }

  describe('request shape', () => {
    it('malformed JSON is 400 bad_request', async () => {
      // Signed in: a route that needs a session answers 401 before it reads a body (test/login-gate.test.ts).
      const { client } = await signedIn();
      const headers = { cookie: sessionCookieHeader(client) };
      for (const url of ['/api/auth/signin', '/api/auth/switch', '/api/auth/logout', '/api/challenge']) {
        const reply = await raw('POST', url, { body: '{"message": "abc",', headers });
        expectError(reply, 400, 'bad_request');
        expect(JSON.stringify(reply.body)).not.toMatch(/at .*\.(ts|js):\d+/);
      }
    });

    it('wrong types are 400 naming the field', async () => {
      const { client } = await signedIn();
      expectBadField(await client.post('/api/auth/signin', { message: 5, signature: 'x', nonce: 'y' }), 'message');
      expectBadField(await client.post('/api/auth/signin', { message: 'm', signature: ['x'], nonce: 'y' }), 'signature');
      expectBadField(await client.post('/api/auth/signin', { message: 'm', signature: 's', nonce: 7 }), 'nonce');
      expectBadField(await client.post('/api/auth/signin', { message: 'm', signature: 's', nonce: 'n', add: 'yes' }), 'add');
      expectBadField(await client.post('/api/auth/signin?add=maybe', { message: 'm', signature: 's', nonce: 'n' }), 'add');
      expectBadField(await client.post('/api/auth/switch', { did_oc: 5 }), 'did_oc');
      expectBadField(await client.post('/api/auth/switch', { did_oc: null }), 'did_oc');
      expectBadField(await client.post('/api/auth/logout?scope=everything'), 'scope');
      expectBadField(await client.post('/api/challenge', { message: 'm', signature: 's', expectedNonce: 1 }), 'expectedNonce');
      // A body that is JSON but not an object.
      expectError(
        await raw('POST', '/api/auth/switch', { body: '["did:oc:00"]', headers: { cookie: sessionCookieHeader(client) } }),
        400,
        'bad_request',
      );
    });

    it('missing fields are 400 naming the field', async () => {
      const { client } = await signedIn();
      expectBadField(await client.post('/api/auth/signin', { signature: 's', nonce: 'n' }), 'message');
      expectBadField(await client.post('/api/auth/signin', { message: 'm', nonce: 'n' }), 'signature');
      expectBadField(await client.post('/api/auth/signin', { message: 'm', signature: 's' }), 'nonce');
      expectBadField(await client.post('/api/auth/switch', {}), 'did_oc');
      expectBadField(await client.post('/api/challenge', { signature: 's', expectedNonce: 'n' }), 'message');
    });

    it('a did_oc that is not did:oc:<32 hex> is 400', async () => {
      const { client } = await signedIn();
      for (const did of ['did:oc:XYZ', 'did:web:example.com', `did:oc:${'A'.repeat(32)}`, `did:oc:${'0'.repeat(31)}`, '']) {
        const reply = await client.switchTo(did);
        expectError(reply, 400, 'bad_request');
      }
    });

    it('bodies over 64 KiB are 413 payload_too_large', async () => {
      const { client } = await signedIn();
      const huge = JSON.stringify({ message: 'x'.repeat(70 * 1024), signature: 's', nonce: 'n' });
      for (const url of ['/api/auth/signin', '/api/challenge', '/api/auth/switch'])
        expectError(await raw('POST', url, { body: huge, headers: { cookie: sessionCookieHeader(client) } }), 413, 'payload_too_large');
    });

    it('a non-JSON body is 415', async () => {
      expectError(
        await raw('POST', '/api/auth/signin', { body: 'message=x', headers: { 'content-type': 'text/plain' } }),
        415,
        'unsupported_media_type',
      );
    });
  });

  describe('cookies and tokens', () => {
    it('garbage cookies are 401 not_authenticated, never 500', async () => {
      for (const cookie of [
        'oc_session=garbage',
        'oc_session=',
        'oc_session=a.b.c',
        'oc_session="quoted"',
        'oc_session=..',
        `oc_session=${'a'.repeat(9000)}`,
        `oc_session=${'e30.'.repeat(3)}`,
        Array.from({ length: 20 }, (_, index) => `oc_session=x${index}.y.z`).join('; '),
        'other=1; oc_session=%00%ff',
      ]) {
        expectError(await raw('GET', '/api/auth/me', { headers: { cookie: cookie } }), 401, 'not_authenticated');
      }
      expectError(await raw('GET', '/api/auth/me', { headers: { authorization: 'Bearer nonsense' } }), 401, 'not_authenticated');
    });

    it('a garbage or stale oc_session beside a valid one does not shadow it; Authorization: Bearer works too', async () => {
      const { token, did } = await signedIn();
      const stale = await signedIn();
      expect((await stale.client.logout('all')).status).toBe(200);
      for (const cookie of [
        `oc_session=garbage; oc_session=${token}`,
        `oc_session=${stale.token}; oc_session=${token}`,
        `oc_session=${token}; oc_session=garbage`,
      ]) {
        const reply = await raw('GET', '/api/auth/me', { headers: { cookie } });
        expect(reply.status, cookie).toBe(200);
        expect(reply.body.account.did_oc).toBe(did);
      }
      const bearer = await raw('GET', '/api/auth/me', { headers: { authorization: `Bearer ${token}` } });
      expect(bearer.status).toBe(200);
      expect(bearer.body.account.did_oc).toBe(did);
    });

    it('a JWT signed by another key, with the real kid and claims, is 401', async () => {
      const { token } = await signedIn();
      const { header, payload } = decodeJwt(token);
      const other = await generateKeyPair('EdDSA', { crv: 'Ed25519' });
      const forged = await new SignJWT(payload).setProtectedHeader(header as { alg: string }).sign(other.privateKey);
      expectError(await raw('GET', '/api/auth/me', { headers: { cookie: `oc_session=${forged}` } }), 401, 'not_authenticated');
      expectError(
        await raw('POST', '/api/auth/switch', {
          body: '{"did_oc":"did:oc:00000000000000000000000000000000"}',
          headers: { cookie: `oc_session=${forged}` },
        }),
        401,
        'not_authenticated',
      );
    });

    it('an alg none token is 401', async () => {
      const { token } = await signedIn();
      const none = `${Buffer.from('{"alg":"none","typ":"JWT"}').toString('base64url')}.${token.split('.')[1]}.`;
      expectError(await raw('GET', '/api/auth/me', { headers: { cookie: `oc_session=${none}` } }), 401, 'not_authenticated');
      expectError(await raw('GET', '/api/auth/me', { headers: { authorization: `Bearer ${none}` } }), 401, 'not_authenticated');
    });

    it('a valid JWT whose row was revoked is 401', async () => {
      const { client, token } = await signedIn();
      expect((await raw('GET', '/api/auth/me', { headers: { cookie: `oc_session=${token}` } })).status).toBe(200);
      expect((await client.logout('all')).status).toBe(200);
      expectError(await raw('GET', '/api/auth/me', { headers: { cookie: `oc_session=${token}` } }), 401, 'not_authenticated');
      expectError(await raw('GET', '/api/auth/me', { headers: { authorization: `Bearer ${token}` } }), 401, 'not_authenticated');
    });

    it('a JWT signed by the service key but with no session row is 401 (the host checks rows)', async () => {
      const { token } = await signedIn();
      const ring = await loadKeyRing(auth.harness.store, undefined, auth.harness.clock.now());
      const claims = decodeJwt(token).payload;
      const unstored = mintSessionJwt(ring.active, { ...claims, jti: randomBytes(16).toString('hex') } as never);
      expect(unstored).not.toBe(token);
      expectError(await raw('GET', '/api/auth/me', { headers: { cookie: `oc_session=${unstored}` } }), 401, 'not_authenticated');
    });
  });

  describe('cross-site requests (docs/protocol.md §4)', () => {
    it('a POST from a non-family Origin is 403 cross_site and changes nothing', async () => {
      const { client, token, did } = await signedIn();
      const headers = { origin: EVIL_ORIGIN, cookie: `oc_session=${token}` };
      expectError(await raw('POST', '/api/auth/logout', { body: '{}', headers }), 403, 'cross_site');
      expectError(await raw('POST', '/api/auth/switch', { body: JSON.stringify({ did_oc: did }), headers }), 403, 'cross_site');
      const proof = await client.prove(newWallet(), 'login');
      expectError(await raw('POST', '/api/auth/signin?add=1', { body: JSON.stringify(proof), headers }), 403, 'cross_site');
      const still = await client.me();
      expect(still.status).toBe(200);
      expect(still.body.roster).toEqual([]);
    });

    it('Sec-Fetch-Site: cross-site without Origin is 403; same-origin or a plain client without either is not', async () => {
      const { token } = await signedIn();
      const cookie = `oc_session=${token}`;
      const crossSite = await auth.app.inject({
        method: 'POST',
        url: '/api/auth/logout?scope=current',
        headers: { cookie, 'sec-fetch-site': 'cross-site' },
      });
      expect(crossSite.statusCode).toBe(403);
      expect(crossSite.json().error).toBe('cross_site');
      const sameOrigin = await auth.app.inject({
        method: 'POST',
        url: '/api/auth/switch',
        headers: { cookie, 'sec-fetch-site': 'same-origin' },
        payload: { did_oc: 'did:oc:00000000000000000000000000000000' },
      });
      expect(sameOrigin.statusCode).toBe(404);
      const plain = await auth.app.inject({
        method: 'POST',
        url: '/api/auth/switch',
        headers: { cookie },
        payload: { did_oc: 'did:oc:00000000000000000000000000000000' },
      });
      expect(plain.statusCode).toBe(404);
    });

    it('a family origin gets CORS with credentials; others get none', async () => {
      const family = await raw('GET', '/api/auth/me', { headers: { origin: LOCAL_ORIGIN } });
      expect(family.headers['access-control-allow-origin']).toBe(LOCAL_ORIGIN);
      expect(family.headers['access-control-allow-credentials']).toBe('true');
      expect(String(family.headers.vary)).toMatch(/Origin/i);
      const evil = await raw('GET', '/api/auth/me', { headers: { origin: EVIL_ORIGIN } });
      expect(evil.headers['access-control-allow-origin']).toBeUndefined();
      expect(evil.headers['access-control-allow-credentials']).toBeUndefined();

      const preflight = await raw('OPTIONS', '/api/auth/signin', {
        headers: { origin: LOCAL_ORIGIN, 'access-control-request-method': 'POST' },
      });
      expect(preflight.status).toBe(204);
      expect(preflight.headers['access-control-allow-origin']).toBe(LOCAL_ORIGIN);
      expect(preflight.headers['access-control-allow-credentials']).toBe('true');
      expect(String(preflight.headers['access-control-allow-methods'])).toContain('POST');
      const evilPreflight = await raw('OPTIONS', '/api/auth/signin', {
        headers: { origin: EVIL_ORIGIN, 'access-control-request-method': 'POST' },
      });
      expect(evilPreflight.headers['access-control-allow-origin']).toBeUndefined();
    });

    it('with a cookie domain, every subdomain is family and look-alike hosts are not', async () => {
      const familyApp = await auth.harness.app({ PUBLIC_URL: 'https://auth.example.com', COOKIE_DOMAIN: '.example.com' });
      for (const origin of ['https://app.example.com', 'https://example.com', 'https://auth.example.com']) {
        const reply = await familyApp.inject({ method: 'GET', url: '/api/auth/me', headers: { origin } });
        expect(reply.headers['access-control-allow-origin'], origin).toBe(origin);
        const client = auth.harness.browser(familyApp, origin);
        expect((await client.signIn(newWallet())).status, origin).toBe(200);
      }
      for (const origin of ['https://example.com.evil.com', 'http://app.example.com', 'https://evilexample.com']) {
        const reply = await familyApp.inject({ method: 'POST', url: '/api/auth/logout', headers: { origin } });
        expect(reply.statusCode, origin).toBe(403);
        expect(reply.json().error).toBe('cross_site');
      }
    });
  });

  describe('sign-in proofs that must fail', () => {
    it('an expired challenge is 401 invalid_challenge', async () => {
      const client = browser();
      const wallet = newWallet();
      const proof = await client.prove(wallet, 'login');
      auth.harness.clock.advance(300 * SECOND);
      const reply = await client.post('/api/auth/signin', proof);
      expectError(reply, 401, 'invalid_challenge');
      await expectNoSignIn(reply, wallet.address);
    });

    it('a message the client wrote itself (a nonce we never issued) is 401 invalid_challenge', async () => {
      const client = browser();
      const wallet = newWallet();
      const { message } = await client.prove(wallet, 'login');
      const nonce = randomBytes(16).toString('hex');
      const forged = message.replace(/^nonce: [0-9a-f]{32}$/m, `nonce: ${nonce}`);
      expect(forged).not.toBe(message);
      const signature = signBip322({ privateKey: wallet.privateKey, address: wallet.address, message: forged });
      const reply = await client.post('/api/auth/signin', { address: wallet.address, message: forged, signature, nonce });
      expectError(reply, 401, 'invalid_challenge');
      await expectNoSignIn(reply, wallet.address);
    });

    it('an audience that is not a family origin is 401 invalid_challenge', async () => {
      const client = browser();
      const wallet = newWallet();
      for (const audience of [EVIL_ORIGIN, 'not a url', 'http://localhost:8788']) {
        const proof = await client.prove(wallet, 'login', audience);
        const reply = await client.post('/api/auth/signin', proof);
        expectError(reply, 401, 'invalid_challenge');
        await expectNoSignIn(reply, wallet.address);
      }
      // A path on a family origin is fine: the origin is what counts.
      const ok = await client.post('/api/auth/signin', await client.prove(wallet, 'login', `${LOCAL_ORIGIN}/signin`));
      expect(ok.status, JSON.stringify(ok.body)).toBe(200);
    });

    it('a purpose other than login is 401 invalid_challenge', async () => {
      const client = browser();
      const wallet = newWallet();
      const proof = await client.prove(wallet, 'sudo');
      expectError(await client.post('/api/auth/signin', proof), 401, 'invalid_challenge');
      const login = await client.prove(wallet, 'login');
      const libraryBody = {
        message: login.message,
        signature: login.signature,
        expectedNonce: login.nonce,
        expectedAudience: LOCAL_ORIGIN,
        expectedPurpose: 'sudo',
      };
      const reply = await client.post('/api/auth/signin', libraryBody);
      expectError(reply, 401, 'invalid_challenge');
      await expectNoSignIn(reply, wallet.address);
    });

    it('a signature by another key is 401 invalid_challenge and does not use up the nonce', async () => {
      const client = browser();
      const wallet = newWallet();
      const thief = newWallet();
      const proof = await client.prove(wallet, 'login');
      const signature = signBip322({ privateKey: thief.privateKey, address: thief.address, message: proof.message });
      const reply = await client.post('/api/auth/signin', { ...proof, signature });
      expectError(reply, 401, 'invalid_challenge');
      await expectNoSignIn(reply, wallet.address);
      expectError(await client.post('/api/auth/signin', { ...proof, signature: 'AkgwRQIhAP' }), 401, 'invalid_challenge');
      // The owner's proof with the same nonce still works.
      expect((await client.post('/api/auth/signin', proof)).status).toBe(200);
    });

    it('an address in the body that differs from the message is 400', async () => {
      const client = browser();
      const wallet = newWallet();
      const proof = await client.prove(wallet, 'login');
      const reply = await client.post('/api/auth/signin', { ...proof, address: newWallet().address });
      expectBadField(reply, 'address');
      await expectNoSignIn(reply, wallet.address);
    });

    it('an unknown signature scheme is 401 invalid_challenge; the legacy scheme needs a legacy signature', async () => {
      const client = browser();
      const wallet = newWallet();
      const proof = await client.prove(wallet, 'login');
      const reply = await client.post('/api/auth/signin', { ...proof, scheme: 'ecdsa-magic' });
      expectError(reply, 401, 'invalid_challenge');
      expect(reply.body.detail).toContain('invalid_scheme');
      expectError(await client.post('/api/auth/signin', { ...proof, scheme: 'legacy' }), 401, 'invalid_challenge');
      await expectNoSignIn(reply, wallet.address);
    });

    it('a reused proof after a successful sign-in is 401 nonce_reused', async () => {
      const client = browser();
      const proof = await client.prove(newWallet(), 'login');
      expect((await client.post('/api/auth/signin', proof)).status).toBe(200);
      auth.harness.clock.advance(DAY);
      // Past expiry the replay is refused as expired before the nonce is even looked at.
      expectError(await client.post('/api/auth/signin', proof), 401, 'invalid_challenge');
      const fresh = await client.prove(newWallet(), 'login');
      expect((await client.post('/api/auth/signin', fresh)).status).toBe(200);
      expectError(await client.post('/api/auth/signin', fresh), 401, 'nonce_reused');
    });
  });

  describe('GET /api/challenge refuses bad parameters with 400', () => {
    const wallet = newWallet();
    const testnet = newWallet('p2wpkh', 'testnet');

    it.each([
      ['no addr', ''],
      ['a bad addr', `addr=${encodeURIComponent('bc1qnotanaddress')}`],
      ['a text addr', `addr=${encodeURIComponent('hello world')}`],
      ['a testnet addr on a mainnet service', `addr=${testnet.address}`],
      ['ttl below 30', `addr=${wallet.address}&ttl=29`],
      ['ttl above 3600', `addr=${wallet.address}&ttl=3601`],
      ['ttl not a number', `addr=${wallet.address}&ttl=abc`],
      ['ttl negative', `addr=${wallet.address}&ttl=-60`],
      ['an audience with a newline', `addr=${wallet.address}&audience=${encodeURIComponent('https://a.example\npurpose: login')}`],
      ['an audience with a line separator', `addr=${wallet.address}&audience=${encodeURIComponent('https://a.example\u2028x')}`],
      ['a purpose with a carriage return', `addr=${wallet.address}&purpose=${encodeURIComponent('login\r')}`],
      ['an audience of 513 characters', `addr=${wallet.address}&audience=${'a'.repeat(513)}`],
    ])('%s', async (_name, query) => {
      const reply = await raw('GET', `/api/challenge?${query}`);
      expectError(reply, 400, 'bad_request');
    });
  });
}

await forEachEngine('bad input to the auth routes', badInputSuite);
