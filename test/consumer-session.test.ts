/**
 * @oc-host/verify against a running oc-host (docs/api.md Authentication 2,
 * docs/protocol.md §3): every sign-in path's cookie verifies locally with
 * `verifySession`, through every key form a consumer may hold (the JWK of
 * /api/auth/jwks, `OC_AUTH_PUBLIC_JWK` as JSON or base64url, the JWKS URL);
 * forgeries and expired or foreign tokens give null; a revoked session keeps
 * verifying locally until `exp` (the documented limit); a key rotation is
 * followed through the JWKS URL with exactly one refetch.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SignJWT, decodeJwt, decodeProtectedHeader, exportJWK, generateKeyPair, type CryptoKey, type JWK } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createSessionVerifier,
  verifySession,
  type OcSessionClaims,
  type SigningMethod,
  type VerifySessionOptions,
} from '../packages/verify/src/index.js';
import { rotateSigningKey } from '../src/identity/session/keystore.js';
import { KEY_PUBLISH_LEAD_MS } from '../src/identity/session/index.js';
import { openStore, type Store } from '../src/store.js';
import { newWallet } from './support/auth-client.js';
import {
  ISSUER,
  expiryOf,
  signInWithEmail,
  signInWithProvider,
  signInWithWallet,
  startHost,
  type IssuedCookie,
  type RunningHost,
} from './support/consumer-host.js';
import { startGitHubFake, type GitHubFake } from './support/github-fake.js';
import { startOidcProvider, type TestOidcProvider } from './support/oidc-provider.js';
import { startSmtpServer, type TestSmtpServer } from './support/smtp-server.js';

const OIDC_SECRET = randomBytes(24).toString('hex');

let smtp: TestSmtpServer;
let github: GitHubFake;
let oidc: TestOidcProvider;
let host: RunningHost;
let publishedKeys: JWK[];

async function jwksOf(running: RunningHost): Promise<{ keys: JWK[] }> {
  const response = await fetch(running.jwksUrl);
  expect(response.status).toBe(200);
  return (await response.json()) as { keys: JWK[] };
}

function base64urlJson(value: unknown): string {
  return Buffer.from(JSON.stringify(value), 'utf8').toString('base64url');
}

/** A fetch that counts the requests it makes (the JWKS fetches of a verifier). */
function countingFetch(): { fetch: typeof fetch; count: () => number } {
  let count = 0;
  return {
    fetch: (input, init) => {
      count += 1;
      return fetch(input, init);
    },
    count: () => count,
  };
}

function tamperPayload(token: string, change: (claims: Record<string, unknown>) => void): string {
  const [header, payload, signature] = token.split('.') as [string, string, string];
  const claims = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
  change(claims);
  return `${header}.${Buffer.from(JSON.stringify(claims)).toString('base64url')}.${signature}`;
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

async function until(condition: () => boolean, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('consumer test: condition not met in time');
    await sleep(10);
  }
}

beforeAll(async () => {
  smtp = await startSmtpServer();
  github = await startGitHubFake({ clientId: 'gh-client', clientSecret: 'gh-secret', redirectUri: `${ISSUER}/api/auth/github/callback` });
  oidc = await startOidcProvider({ clientId: 'oc-client', clientSecret: OIDC_SECRET, redirectUri: `${ISSUER}/api/auth/acme/callback` });
  host = await startHost(
    {
      SMTP_URL: smtp.url,
      MAIL_FROM: 'oc-host <no-reply@example.com>',
      OAUTH_GITHUB_CLIENT_ID: 'gh-client',
      OAUTH_GITHUB_CLIENT_SECRET: 'gh-secret',
      OAUTH_ACME_CLIENT_ID: 'oc-client',
      OAUTH_ACME_CLIENT_SECRET: OIDC_SECRET,
      OAUTH_ACME_ISSUER: oidc.issuer,
    },
    { githubAuthBase: github.url, githubApiBase: github.url },
  );
  publishedKeys = (await jwksOf(host)).keys;
});

afterAll(async () => {
  await host?.close();
  await Promise.all([smtp?.close(), github?.close(), oidc?.close()]);
});

describe('verifySession: cookies of every sign-in path', () => {
  it('the host publishes the key forms a consumer uses', () => {
    expect(publishedKeys.length).toBeGreaterThanOrEqual(1);
    expect(publishedKeys[0]).toMatchObject({ kty: 'OKP', crv: 'Ed25519', alg: 'EdDSA', use: 'sig', kid: expect.any(String) });
  });

  it('BIP-322, e-mail code, GitHub and OpenID Connect cookies verify with the JWK object, its JSON, OC_AUTH_PUBLIC_JWK (base64url, from the environment) and the JWKS URL', async () => {
    const issued: IssuedCookie[] = [
      await signInWithWallet(host, newWallet()),
      await signInWithWallet(host, newWallet('p2tr')),
      await signInWithEmail(host, smtp, 'dana@example.org'),
      await signInWithProvider(host, 'github'),
      await signInWithProvider(host, 'acme'),
    ];
    expect(issued.map((cookie) => decodeJwt(cookie.token).signing_method)).toEqual([
      'bip322',
      'bip322',
      'email_otp',
      'oauth:github',
      'oauth:acme',
    ]);
    // How each signed in, by RFC 8176 (docs/protocol.md §3); a provider sign-in carries none.
    const amrByPath: Record<string, readonly string[] | undefined> = {
      bip322: ['swk'],
      email_otp: ['otp'],
      'oauth:github': undefined,
      'oauth:acme': undefined,
    };

    const key = publishedKeys[0]!;
    const jwksFetch = countingFetch();
    const keyForms: Array<[string, VerifySessionOptions]> = [
      ['JWK object', { publicJwk: key, issuer: ISSUER }],
      ['JWKS object', { publicJwk: { keys: publishedKeys }, issuer: ISSUER }],
      ['JWK JSON', { publicJwk: JSON.stringify(key), issuer: ISSUER }],
      ['OC_AUTH_PUBLIC_JWK base64url', { publicJwk: base64urlJson(key), issuer: ISSUER }],
      ['JWKS URL', { jwksUrl: host.jwksUrl, issuer: ISSUER, fetch: jwksFetch.fetch }],
    ];

    const previous = process.env.OC_AUTH_PUBLIC_JWK;
    process.env.OC_AUTH_PUBLIC_JWK = base64urlJson(key);
    try {
      for (const { path, token, browser } of issued) {
        // The host's own view of the same cookie: the account /me reports.
        const me = await browser.me();
        expect(me.status).toBe(200);
        const expected = me.body.account.did_oc as string;

        const results: Array<OcSessionClaims | null> = [];
        for (const [form, options] of keyForms) {
          const claims = await verifySession(token, options);
          expect(claims, `${path} via ${form}`).not.toBeNull();
          results.push(claims);
        }
        results.push(await verifySession(token, { issuer: ISSUER })); // OC_AUTH_PUBLIC_JWK from the environment
        for (const claims of results) expect(claims).toEqual(results[0]);

        const claims = results[0]!;
        expect(claims.did_oc).toBe(expected);
        expect(claims.did_oc).toBe(`did:oc:${claims.sub}`);
        expect(claims).toMatchObject({ iss: ISSUER, signing_method: path, jti: expect.any(String), exp: expect.any(Number) });
        const amr: readonly string[] | undefined = claims.amr;
        expect(amr, path).toEqual(amrByPath[path]);
      }
    } finally {
      if (previous === undefined) delete process.env.OC_AUTH_PUBLIC_JWK;
      else process.env.OC_AUTH_PUBLIC_JWK = previous;
    }
    // verifySession shares its key cache between calls: one JWKS fetch for all five cookies.
    expect(jwksFetch.count()).toBe(1);
  });
});

describe('verifySession: tokens that are not a valid session give null', () => {
  let token: string;
  let claims: OcSessionClaims;
  const options = (): VerifySessionOptions => ({ publicJwk: publishedKeys[0]!, issuer: ISSUER });

  beforeAll(async () => {
    token = (await signInWithWallet(host)).token;
    claims = (await verifySession(token, options()))!;
    expect(claims).not.toBeNull();
  });

  it('a tampered payload or signature', async () => {
    const otherAccount = tamperPayload(token, (payload) => {
      payload.sub = '0'.repeat(32);
      payload.did_oc = `did:oc:${'0'.repeat(32)}`;
    });
    const laterExpiry = tamperPayload(token, (payload) => {
      payload.exp = (payload.exp as number) + 86_400;
    });
    const [header, payload, signature] = token.split('.') as [string, string, string];
    const flipped = `${header}.${payload}.${signature.startsWith('A') ? 'B' : 'A'}${signature.slice(1)}`;
    for (const bad of [otherAccount, laterExpiry, flipped]) expect(await verifySession(bad, options())).toBeNull();
  });

  it('an expired token (the consumer clock past exp), and exp honours clockToleranceSeconds', async () => {
    const exp = expiryOf(token);
    expect(await verifySession(token, { ...options(), now: new Date((exp + 1) * 1000) })).toBeNull();
    expect(await verifySession(token, { ...options(), now: new Date((exp - 60) * 1000) })).toEqual(claims);
    expect(await verifySession(token, { ...options(), now: () => new Date((exp + 30) * 1000), clockToleranceSeconds: 60 })).toEqual(claims);
    expect(await verifySession(token, { ...options(), now: () => new Date((exp + 90) * 1000), clockToleranceSeconds: 60 })).toBeNull();
  });

  it('another issuer', async () => {
    expect(await verifySession(token, { ...options(), issuer: 'https://auth.evil.example' })).toBeNull();
    expect(await verifySession(token, { ...options(), issuer: `${ISSUER}/` })).toBeNull();
  });

  it('a token signed by another Ed25519 key, even under the real kid', async () => {
    const other = await generateKeyPair('EdDSA', { crv: 'Ed25519' });
    const forged = await new SignJWT({ ...claims })
      .setProtectedHeader({ alg: 'EdDSA', typ: 'JWT', kid: publishedKeys[0]!.kid! })
      .sign(other.privateKey);
    expect(await verifySession(forged, options())).toBeNull();
    expect(await verifySession(forged, { jwksUrl: host.jwksUrl, issuer: ISSUER })).toBeNull();
  });

  it('alg none, HS256 keyed with the public key, and RS256', async () => {
    const body = token.split('.')[1]!;
    const none = `${base64urlJson({ alg: 'none', typ: 'JWT' })}.${body}.`;
    const noneWithSignature = `${base64urlJson({ alg: 'none', typ: 'JWT' })}.${body}.${token.split('.')[2]}`;
    // The classic confusion: the public key's bytes used as an HMAC secret.
    const hmacSecret = Buffer.from(publishedKeys[0]!.x!, 'base64url');
    const hs256 = await new SignJWT({ ...claims })
      .setProtectedHeader({ alg: 'HS256', typ: 'JWT', kid: publishedKeys[0]!.kid! })
      .sign(hmacSecret);
    const hs256OnJson = await new SignJWT({ ...claims })
      .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
      .sign(new TextEncoder().encode(JSON.stringify(publishedKeys[0])));
    const rsa = await generateKeyPair('RS256');
    const rs256 = await new SignJWT({ ...claims })
      .setProtectedHeader({ alg: 'RS256', typ: 'JWT', kid: publishedKeys[0]!.kid! })
      .sign(rsa.privateKey);
    for (const bad of [none, noneWithSignature, hs256, hs256OnJson, rs256]) {
      expect(await verifySession(bad, options())).toBeNull();
      expect(await verifySession(bad, { jwksUrl: host.jwksUrl, issuer: ISSUER })).toBeNull();
    }
  });

  it('garbage of every shape, without throwing', async () => {
    const inputs: unknown[] = [
      '',
      'abc',
      'a.b.c',
      '..',
      `${token}.extra`,
      token.replace('.', '..'),
      'x'.repeat(10_000),
      `${token} `,
      undefined,
      null,
      42,
      {},
      [token],
    ];
    for (const input of inputs) await expect(verifySession(input, options())).resolves.toBeNull();
  });

  describe('claims the package requires (tokens minted with a local key, so only the claims differ)', () => {
    let localOptions: VerifySessionOptions;
    let privateKey: CryptoKey;
    const sub = 'ab'.repeat(16);

    beforeAll(async () => {
      const pair = await generateKeyPair('EdDSA', { crv: 'Ed25519' });
      privateKey = pair.privateKey;
      localOptions = { publicJwk: await exportJWK(pair.publicKey), issuer: ISSUER };
    });

    async function mint(payload: Record<string, unknown>, header: Record<string, unknown> = { alg: 'EdDSA', typ: 'JWT' }): Promise<string> {
      return new SignJWT(payload).setProtectedHeader(header as { alg: string }).sign(privateKey);
    }

    const now = () => Math.floor(Date.now() / 1000);
    const complete = () => ({ iss: ISSUER, sub, did_oc: `did:oc:${sub}`, jti: 'cd'.repeat(16), iat: now(), exp: now() + 3600 });

    it('a complete token verifies', async () => {
      expect(await verifySession(await mint(complete()), localOptions)).toMatchObject({ sub, did_oc: `did:oc:${sub}` });
    });

    it.each(['exp', 'sub', 'did_oc', 'jti', 'iss'])('without %s: null', async (claim) => {
      const payload: Record<string, unknown> = complete();
      delete payload[claim];
      expect(await verifySession(await mint(payload), localOptions)).toBeNull();
    });

    it('did_oc that is not did:oc:<sub>, a non-numeric sudo_at, a typ other than JWT: null', async () => {
      expect(await verifySession(await mint({ ...complete(), did_oc: `did:oc:${'ef'.repeat(16)}` }), localOptions)).toBeNull();
      expect(await verifySession(await mint({ ...complete(), did_oc: sub }), localOptions)).toBeNull();
      expect(await verifySession(await mint({ ...complete(), sudo_at: 'now' }), localOptions)).toBeNull();
      expect(await verifySession(await mint(complete(), { alg: 'EdDSA', typ: 'at+jwt' }), localOptions)).toBeNull();
      expect(await verifySession(await mint(complete(), { alg: 'EdDSA' }), localOptions)).toBeNull();
    });

    it('merged_from is handed on as the list of dids it is, and a token whose merged_from is not a list of strings is null', async () => {
      const merged = [`did:oc:${'01'.repeat(16)}`, `did:oc:${'02'.repeat(16)}`];
      const session = await verifySession(await mint({ ...complete(), merged_from: merged }), localOptions);
      const mergedFrom: readonly string[] | undefined = session?.merged_from;
      expect(mergedFrom).toEqual(merged);
      for (const wrong of ['did:oc:x', [1], [''], { 0: 'did:oc:x' }, null]) {
        expect(await verifySession(await mint({ ...complete(), merged_from: wrong }), localOptions), JSON.stringify(wrong)).toBeNull();
      }
    });

    it("amr is handed on as its list beside signing_method, each of the host's methods as it is", async () => {
      const stepped = await verifySession(
        await mint({ ...complete(), signing_method: 'bip322', amr: ['swk', 'hwk', 'mfa'] }),
        localOptions,
      );
      expect(stepped).toMatchObject({ signing_method: 'bip322', amr: ['swk', 'hwk', 'mfa'] });
      for (const [word, amr] of [
        ['email_otp', ['otp']],
        ['passkey', ['hwk', 'user']],
        ['oauth:github', undefined],
      ] as const) {
        const session = await verifySession(
          await mint({ ...complete(), signing_method: word, ...(amr === undefined ? {} : { amr }) }),
          localOptions,
        );
        const method: SigningMethod | undefined = session?.signing_method;
        expect(method, word).toBe(word);
        expect(session?.amr, word).toEqual(amr);
      }
      for (const wrong of [{ amr: 'otp' }, { amr: [1] }, { amr: [''] }, { signing_method: 7 }, { signing_method: '' }]) {
        expect(await verifySession(await mint({ ...complete(), ...wrong }), localOptions), JSON.stringify(wrong)).toBeNull();
      }
    });

    it('a kid the configured key does not carry: null', async () => {
      const withKid = { ...(localOptions.publicJwk as JWK), kid: 'site-key-1' };
      const token = await mint(complete(), { alg: 'EdDSA', typ: 'JWT', kid: 'site-key-2' });
      expect(await verifySession(token, { ...localOptions, publicJwk: withKid })).toBeNull();
      expect(
        await verifySession(await mint(complete(), { alg: 'EdDSA', typ: 'JWT', kid: 'site-key-1' }), {
          ...localOptions,
          publicJwk: withKid,
        }),
      ).not.toBeNull();
    });
  });
});

describe('verifySession: misconfiguration throws at setup', () => {
  it('no key anywhere, both key options, a bad issuer, a bad clock', async () => {
    const previous = process.env.OC_AUTH_PUBLIC_JWK;
    delete process.env.OC_AUTH_PUBLIC_JWK;
    try {
      await expect(verifySession('a.b.c', { issuer: ISSUER })).rejects.toThrow(/OC_AUTH_PUBLIC_JWK/);
      expect(() => createSessionVerifier({ issuer: ISSUER })).toThrow(/give publicJwk or jwksUrl, or set OC_AUTH_PUBLIC_JWK/);
    } finally {
      if (previous !== undefined) process.env.OC_AUTH_PUBLIC_JWK = previous;
    }
    const key = publishedKeys[0]!;
    expect(() => createSessionVerifier({ publicJwk: key, jwksUrl: host.jwksUrl, issuer: ISSUER })).toThrow(/not both/);
    expect(() => createSessionVerifier({ publicJwk: key, issuer: '' })).toThrow(/issuer/);
    expect(() => createSessionVerifier({ publicJwk: key } as VerifySessionOptions)).toThrow(/issuer/);
    expect(() => createSessionVerifier({ publicJwk: key, issuer: ISSUER, now: new Date('nope') })).toThrow(/now/);
    expect(() => createSessionVerifier({ publicJwk: key, issuer: ISSUER, clockToleranceSeconds: -1 })).toThrow(/clockToleranceSeconds/);
  });

  it('keys that cannot verify oc_session: private, RSA, P-256, short, not JSON', async () => {
    const ed = await generateKeyPair('EdDSA', { crv: 'Ed25519', extractable: true });
    const rsa = await generateKeyPair('RS256', { extractable: true });
    const ec = await generateKeyPair('ES256', { extractable: true });
    const cases: Array<[unknown, RegExp]> = [
      [await exportJWK(ed.privateKey), /private key/],
      [await exportJWK(rsa.publicKey), /Ed25519/],
      [await exportJWK(ec.publicKey), /Ed25519/],
      [{ ...publishedKeys[0], x: 'AAAA' }, /32 bytes/],
      [{ ...publishedKeys[0], alg: 'RS256' }, /alg/],
      [{ keys: [] }, /no key/],
      ['{not json', /does not parse/],
      ['not a key!', /JSON or as base64url/],
      [base64urlJson('a string'), /JWK or a JWKS/],
      ['', /empty/],
    ];
    for (const [publicJwk, message] of cases) {
      expect(() => createSessionVerifier({ publicJwk: publicJwk as JWK, issuer: ISSUER }), JSON.stringify(publicJwk)).toThrow(message);
    }
  });

  it('a JWKS URL over plain http off loopback, or not a URL', () => {
    expect(() => createSessionVerifier({ jwksUrl: 'http://auth.example.com/api/auth/jwks', issuer: ISSUER })).toThrow(/https/);
    expect(() => createSessionVerifier({ jwksUrl: 'ftp://auth.example.com/jwks', issuer: ISSUER })).toThrow(/https/);
    expect(() => createSessionVerifier({ jwksUrl: 'not a url', issuer: ISSUER })).toThrow(/not a URL/);
    expect(() =>
      createSessionVerifier({ jwksUrl: 'http://auth.internal/api/auth/jwks', issuer: ISSUER, allowInsecureJwksUrl: true }),
    ).not.toThrow();
    expect(() => createSessionVerifier({ jwksUrl: 'https://auth.example.com/api/auth/jwks', issuer: ISSUER })).not.toThrow();
  });
});

describe('revoked sessions (docs/protocol.md §3: consumers learn of a logout at exp)', () => {
  it('after POST /api/auth/logout the host refuses the cookie at once, yet it still verifies locally until exp', async () => {
    const { token, browser } = await signInWithWallet(host);
    const before = await verifySession(token, { jwksUrl: host.jwksUrl, issuer: ISSUER });
    expect(before).not.toBeNull();

    const logout = await browser.logout();
    expect(logout.status).toBe(200);
    expect(logout.setCookies.some((line) => /^oc_session=;.*Max-Age=0/.test(line))).toBe(true);

    const me = await host.app.inject({ method: 'GET', url: '/api/auth/me', headers: { cookie: `oc_session=${token}` } });
    expect(me.statusCode).toBe(401);
    expect(me.json()).toMatchObject({ ok: false, error: 'not_authenticated' });

    // Documented behaviour, not a bug: the signature and exp are all a consumer checks.
    expect(await verifySession(token, { jwksUrl: host.jwksUrl, issuer: ISSUER })).toEqual(before);
    expect(await verifySession(token, { publicJwk: publishedKeys[0]!, issuer: ISSUER })).toEqual(before);
    // ... and stops at exp.
    expect(
      await verifySession(token, { publicJwk: publishedKeys[0]!, issuer: ISSUER, now: new Date((expiryOf(token) + 1) * 1000) }),
    ).toBeNull();
  });
});

describe('key rotation through the JWKS URL', () => {
  let directory: string;
  let store: Store;

  beforeAll(async () => {
    directory = mkdtempSync(join(tmpdir(), 'oc-consumer-'));
    store = await openStore(`sqlite:${join(directory, 'oc.sqlite')}`);
  });
  afterAll(async () => {
    await store?.close();
    rmSync(directory, { recursive: true, force: true });
  });

  it('an old-key token keeps verifying (overlap); a new kid costs exactly one refetch; a flood of unknown kids costs none beyond the cool-down', async () => {
    const first = await startHost({}, { store });
    const oldToken = (await signInWithWallet(first)).token;
    const oldKid = decodeProtectedHeader(oldToken).kid;
    const jwksUrl = first.jwksUrl;

    const counted = countingFetch();
    const verifier = createSessionVerifier({ jwksUrl, issuer: ISSUER, fetch: counted.fetch, jwksCooldownSeconds: 0.2 });
    expect(await verifier.verify(oldToken)).not.toBeNull();
    expect(await verifier.verify(oldToken)).not.toBeNull();
    expect(counted.count(), 'keys are cached').toBe(1);

    // The operator rotates; the host restarts on the same store and address.
    // A rotation made a publish lead ago: the new key signs from the restart on.
    await rotateSigningKey(store, new Date(Date.now() - KEY_PUBLISH_LEAD_MS));
    await first.close();
    // Let this process's fetch pool see the old host's connections end before one is reused for the new host.
    await sleep(50);
    const second = await startHost({}, { store }, first.port);
    try {
      expect(second.jwksUrl).toBe(jwksUrl);
      const { keys } = await jwksOf(second);
      expect(keys.map((key) => key.kid)).toContain(oldKid);
      const newToken = (await signInWithWallet(second)).token;
      const newKid = decodeProtectedHeader(newToken).kid;
      expect(newKid).not.toBe(oldKid);
      expect(keys[0]!.kid).toBe(newKid);

      await sleep(250); // past the cool-down of the first fetch
      // Many requests at once with the new kid: one refetch, shared.
      const results = await Promise.all(Array.from({ length: 20 }, () => verifier.verify(newToken)));
      for (const claims of results) expect(claims).toMatchObject({ iss: ISSUER });
      expect(counted.count(), 'one refetch for the new kid').toBe(2);
      expect(await verifier.verify(newToken)).not.toBeNull();
      expect(await verifier.verify(oldToken), 'the old key is still published').not.toBeNull();
      expect(counted.count()).toBe(2);

      // A static copy of the new keys[0] alone no longer verifies the old token: why jwksUrl (or the whole JWKS) is the way to follow rotations.
      expect(await verifySession(oldToken, { publicJwk: keys[0]!, issuer: ISSUER })).toBeNull();
      expect(await verifySession(oldToken, { publicJwk: { keys }, issuer: ISSUER })).not.toBeNull();

      // A flood of made-up kids under the default 30 s cool-down: no fetch beyond the first.
      const flood = countingFetch();
      const guarded = createSessionVerifier({ jwksUrl, issuer: ISSUER, fetch: flood.fetch });
      expect(await guarded.verify(newToken)).not.toBeNull();
      const attacker = await generateKeyPair('EdDSA', { crv: 'Ed25519' });
      const forged = await Promise.all(
        Array.from({ length: 50 }, (_, index) =>
          new SignJWT({ ...decodeJwt(newToken) })
            .setProtectedHeader({ alg: 'EdDSA', typ: 'JWT', kid: `made-up-${index}` })
            .sign(attacker.privateKey),
        ),
      );
      const answers = await Promise.all(forged.map((token) => guarded.verify(token)));
      expect(answers.every((answer) => answer === null)).toBe(true);
      expect(flood.count()).toBe(1);
      // A token whose header cannot be ours is refused before any key is looked up.
      const hs = await new SignJWT({ ...decodeJwt(newToken) }).setProtectedHeader({ alg: 'HS256', kid: 'x' }).sign(new Uint8Array(32));
      expect(await guarded.verify(hs)).toBeNull();
      expect(flood.count()).toBe(1);
    } finally {
      await second.close();
    }
  });
});

describe('the JWKS URL when the host misbehaves', () => {
  let server: Server;
  let mode: 'ok' | 'hang' | 'error' | 'garbage' = 'ok';
  let served = 0;
  let url: string;

  beforeAll(async () => {
    const body = JSON.stringify({ keys: publishedKeys });
    server = createServer((_request, response) => {
      served += 1;
      if (mode === 'hang') return; // never answers
      if (mode === 'error') {
        response.writeHead(500).end('{"ok":false}');
        return;
      }
      response.writeHead(200, { 'content-type': 'application/json' }).end(mode === 'garbage' ? '{"keys": "nope"' : body);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/jwks`;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  it('a hanging JWKS: null within the timeout, no throw', async () => {
    const token = (await signInWithWallet(host)).token;
    mode = 'hang';
    const verifier = createSessionVerifier({ jwksUrl: url, issuer: ISSUER, jwksTimeoutMs: 200 });
    const started = performance.now();
    expect(await verifier.verify(token)).toBeNull();
    expect(performance.now() - started).toBeLessThan(2000);
    mode = 'ok';
  });

  it('garbage or 500: null; held keys survive later failures (stale-if-error)', async () => {
    const token = (await signInWithWallet(host)).token;
    for (const failing of ['garbage', 'error'] as const) {
      mode = failing;
      expect(await createSessionVerifier({ jwksUrl: url, issuer: ISSUER, jwksCooldownSeconds: 0 }).verify(token)).toBeNull();
    }
    mode = 'ok';
    const verifier = createSessionVerifier({ jwksUrl: url, issuer: ISSUER, jwksCooldownSeconds: 0, jwksCacheMaxAgeSeconds: 0 });
    expect(await verifier.verify(token)).not.toBeNull();
    mode = 'error';
    const before = served;
    expect(await verifier.verify(token)).not.toBeNull();
    await until(() => served > before); // the refresh behind that request reached the failing server
    await sleep(50); // ... and its failure has been handled
    expect(await verifier.verify(token), 'the held keys outlive a failed refresh').not.toBeNull();
    await until(() => served > before + 1);
    await sleep(50);
    expect(await verifier.verify(token)).not.toBeNull();
    mode = 'ok';
  });
});
