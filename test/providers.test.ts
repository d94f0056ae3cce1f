/**
 * External identity providers (docs/api.md "External identity providers",
 * docs/protocol.md §6 "Providers"), run against a real OpenID provider
 * (`oidc-provider` on loopback) and a loopback GitHub fake. Each flow is
 * driven end to end: `start`, the provider's own redirects followed by hand,
 * then `callback` with the query and cookie a browser would bring back.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { originMatches, type OAuthProviderConfig } from '../src/platform/config.js';
import {
  OAUTH_STATE_COOKIE_NAME,
  OAUTH_STATE_TTL_SECONDS,
  PROVIDER_ERROR_CODES,
  ProviderError,
  RETURN_TO_DETAIL,
  checkReturnTo,
  createProviderRegistry,
  type ProviderErrorCode,
  type ProviderRegistry,
  type ProviderRegistryOptions,
  type StartOptions,
} from '../src/features/providers/providers.js';
import { deriveStateKey, openState, sealState } from '../src/features/providers/oauth-state.js';
import { failureOf, ocFailure } from './support/errors.js';
import { hostileReturnTo } from './support/return-to.js';
import { DEFAULT_GITHUB_USER, startGitHubFake, type GitHubFake } from './support/github-fake.js';
import {
  followRedirects,
  startOidcProvider,
  type IdTokenTamper,
  type OidcTestAccount,
  type TestOidcProvider,
} from './support/oidc-provider.js';

const PUBLIC_URL = 'https://auth.example.com';
const FAMILY_ORIGINS = ['https://auth.example.com', 'https://*.example.com'];
const SECRET = new Uint8Array(32).fill(7);
const OIDC_ID = 'acme';
const OIDC_REDIRECT = `${PUBLIC_URL}/api/auth/${OIDC_ID}/callback`;
const GITHUB_REDIRECT = `${PUBLIC_URL}/api/auth/github/callback`;
const CLIENT_ID = 'oc-host-test';
const CLIENT_SECRET = randomBytes(24).toString('hex');

/** The family rule the route passes in: the URL's origin must match FAMILY_ORIGINS. */
function isAllowedReturnTo(url: string): boolean {
  const origin = new URL(url).origin;
  return FAMILY_ORIGINS.some((pattern) => originMatches(pattern, origin));
}

let op: TestOidcProvider;
let github: GitHubFake;
/** Offset added to the real clock; tests move it to expire cookies. */
let clockOffsetMs = 0;
const now = (): Date => new Date(Date.now() + clockOffsetMs);

function oidcConfig(issuer: string, id = OIDC_ID): OAuthProviderConfig {
  return { id, clientId: CLIENT_ID, clientSecret: CLIENT_SECRET, issuer };
}

function githubConfig(): OAuthProviderConfig {
  return { id: 'github', clientId: 'gh-client', clientSecret: 'gh-secret', issuer: undefined };
}

function registryFor(overrides: Partial<ProviderRegistryOptions> = {}): ProviderRegistry {
  return createProviderRegistry({
    providers: [oidcConfig(op.issuer), githubConfig()],
    publicUrl: PUBLIC_URL,
    secret: SECRET,
    now,
    githubAuthBase: github.url,
    githubApiBase: github.url,
    isAllowedReturnTo,
    ...overrides,
  });
}

interface Flow {
  /** What the provider sent the browser back to. */
  callbackUrl: URL;
  cookie: string;
  redirectUrl: URL;
}

async function runFlow(registry: ProviderRegistry, id: string, options?: StartOptions): Promise<Flow> {
  const started = await registry.start(id, options);
  const redirect = id === 'github' ? GITHUB_REDIRECT : `${PUBLIC_URL}/api/auth/${id}/callback`;
  const callbackUrl = await followRedirects(started.redirectUrl, redirect);
  return { callbackUrl, cookie: started.stateCookie.value, redirectUrl: new URL(started.redirectUrl) };
}

function providerFailure(promise: Promise<unknown>): Promise<ProviderError> {
  return failureOf(ProviderError, promise);
}

/**
 * A provider that keeps the claims out of the ID token (the conforming way,
 * userinfo carries them), signed in as `account`, as provider "strict" of the
 * registry `test` gets; stopped after.
 */
async function withClaimlessProvider(
  account: OidcTestAccount | undefined,
  test: (registry: ProviderRegistry, provider: TestOidcProvider) => Promise<void>,
): Promise<void> {
  const provider = await startOidcProvider({
    clientId: CLIENT_ID,
    clientSecret: CLIENT_SECRET,
    redirectUri: `${PUBLIC_URL}/api/auth/strict/callback`,
    claimsInIdToken: false,
    ...(account === undefined ? {} : { account }),
  });
  try {
    await test(registryFor({ providers: [oidcConfig(provider.issuer, 'strict')] }), provider);
  } finally {
    await provider.close();
  }
}

/** Runs a flow of `id` on a new registry, lets `edit` change the query its callback comes back with, and returns how that callback fails. */
async function callbackFailure(id: string, edit: (query: URLSearchParams) => void = () => {}): Promise<ProviderError> {
  const registry = registryFor();
  const flow = await runFlow(registry, id);
  const query = new URLSearchParams(flow.callbackUrl.searchParams);
  edit(query);
  return providerFailure(registry.callback(id, { query, stateCookie: flow.cookie }));
}

beforeAll(async () => {
  op = await startOidcProvider({ clientId: CLIENT_ID, clientSecret: CLIENT_SECRET, redirectUri: OIDC_REDIRECT });
  github = await startGitHubFake({ clientId: 'gh-client', clientSecret: 'gh-secret', redirectUri: GITHUB_REDIRECT });
});

afterAll(async () => {
  await op?.close();
  await github?.close();
});

beforeEach(() => {
  clockOffsetMs = 0;
  op.setDenyConsent(false);
  op.setIdTokenTamper(undefined);
  op.setAccount({ sub: 'user-1', email: 'alice@example.org', emailVerified: true, name: 'Alice Example' });
  github.setDeny(false);
  github.setFailure(undefined);
  github.setUser(DEFAULT_GITHUB_USER);
});

describe('providers: list and lookup', () => {
  it('lists configured providers with their labels, without touching the network', () => {
    const registry = createProviderRegistry({
      providers: [
        githubConfig(),
        { id: 'google', clientId: 'g', clientSecret: 's', issuer: 'https://accounts.google.com' },
        oidcConfig('https://login.example.net', 'my-corp'),
      ],
      publicUrl: PUBLIC_URL,
      secret: SECRET,
      now,
      fetch: () => Promise.reject(new Error('no network expected')),
      isAllowedReturnTo,
    });
    expect(registry.list()).toEqual([
      { id: 'github', label: 'GitHub' },
      { id: 'google', label: 'Google' },
      { id: 'my-corp', label: 'My Corp' },
    ]);
    expect(registry.has('google')).toBe(true);
    expect(registry.has('facebook')).toBe(false);
  });

  it('refuses an unknown provider at start with 404 unknown_provider', async () => {
    const error = await ocFailure(registryFor().start('facebook'));
    expect(error.code).toBe('unknown_provider');
    expect(error.status).toBe(404);
  });

  it('refuses an unknown provider at callback with unknown_provider', async () => {
    const error = await providerFailure(registryFor().callback('facebook', { query: {}, stateCookie: undefined }));
    expect(error.code).toBe('unknown_provider');
  });

  it('refuses misuse at construction: short secret, http issuer off loopback, http GitHub base off loopback', () => {
    const base = { providers: [], publicUrl: PUBLIC_URL, secret: SECRET, now, isAllowedReturnTo };
    expect(() => createProviderRegistry({ ...base, secret: new Uint8Array(16) })).toThrow(/secret/);
    expect(() => createProviderRegistry({ ...base, providers: [oidcConfig('http://login.example.net')] })).toThrow(/https/);
    expect(() => createProviderRegistry({ ...base, githubApiBase: 'http://api.example.net' })).toThrow(/https/);
  });

  it('keeps every failure code in the exported list', () => {
    const expected: ProviderErrorCode[] = [
      'state_mismatch',
      'access_denied',
      'provider_error',
      'token_exchange_failed',
      'id_token_invalid',
      'userinfo_failed',
      'unknown_provider',
      'provider_unavailable',
    ];
    expect([...PROVIDER_ERROR_CODES].sort()).toEqual([...expected].sort());
  });
});

describe('providers: OpenID Connect against a real provider', () => {
  it('signs in: subject, e-mail, name, return_to and add come back', async () => {
    const registry = registryFor();
    const flow = await runFlow(registry, OIDC_ID, { returnTo: '/account?tab=ids' });

    // The authorization request of OIDC Core §3.1.2.1 with PKCE (RFC 7636).
    const params = flow.redirectUrl.searchParams;
    expect(flow.redirectUrl.origin).toBe(op.issuer);
    expect(params.get('response_type')).toBe('code');
    expect(params.get('client_id')).toBe(CLIENT_ID);
    expect(params.get('redirect_uri')).toBe(OIDC_REDIRECT);
    expect(params.get('scope')).toBe('openid email profile');
    expect(params.get('code_challenge_method')).toBe('S256');
    expect(params.get('code_challenge')).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(params.get('nonce')).toMatch(/^[A-Za-z0-9_-]{20,}$/);
    expect(params.get('state')).toMatch(/^[A-Za-z0-9_-]{20,}$/);

    const result = await registry.callback(OIDC_ID, { query: flow.callbackUrl.searchParams, stateCookie: flow.cookie });
    expect(result).toEqual({
      provider: OIDC_ID,
      subject: 'user-1',
      email: 'alice@example.org',
      emailVerified: true,
      name: 'Alice Example',
      returnTo: '/account?tab=ids',
      add: false,
    });
  });

  it('hands out the state cookie the route sets, with nothing readable in it', async () => {
    const started = await registryFor().start(OIDC_ID, { returnTo: '/secret-path' });
    expect(started.stateCookie.name).toBe(OAUTH_STATE_COOKIE_NAME);
    expect(started.stateCookie.name).toBe('oc_oauth');
    expect(started.stateCookie.maxAgeSeconds).toBe(OAUTH_STATE_TTL_SECONDS);
    expect(OAUTH_STATE_TTL_SECONDS).toBe(600);
    const url = new URL(started.redirectUrl);
    const decoded = Buffer.from(started.stateCookie.value.replace(/^v1\./, ''), 'base64url').toString('latin1');
    // Encrypted, not only signed: neither the state, the nonce nor the path shows.
    for (const plain of [url.searchParams.get('state') ?? 'x', url.searchParams.get('nonce') ?? 'x', '/secret-path']) {
      expect(started.stateCookie.value).not.toContain(plain);
      expect(decoded).not.toContain(plain);
    }
    expect(started.stateCookie.value).toMatch(/^v1\.[A-Za-z0-9_-]+$/);
  });

  it('carries add=1 and a family URL return_to through the round trip', async () => {
    const registry = registryFor();
    const flow = await runFlow(registry, OIDC_ID, { add: true, returnTo: 'https://app.example.com/after?x=1' });
    const result = await registry.callback(OIDC_ID, { query: flow.callbackUrl.searchParams, stateCookie: flow.cookie });
    expect(result.add).toBe(true);
    expect(result.returnTo).toBe('https://app.example.com/after?x=1');
  });

  it('defaults return_to to / and add to false', async () => {
    const registry = registryFor();
    const flow = await runFlow(registry, OIDC_ID);
    const result = await registry.callback(OIDC_ID, { query: flow.callbackUrl.searchParams, stateCookie: flow.cookie });
    expect(result.returnTo).toBe('/');
    expect(result.add).toBe(false);
  });

  it('accepts the query as a plain record, as a framework parses it', async () => {
    const registry = registryFor();
    const flow = await runFlow(registry, OIDC_ID);
    const query = Object.fromEntries(flow.callbackUrl.searchParams);
    const result = await registry.callback(OIDC_ID, { query, stateCookie: flow.cookie });
    expect(result.subject).toBe('user-1');
  });

  it('reads e-mail and name from userinfo when the ID token does not carry them', async () => {
    await withClaimlessProvider({ sub: 'user-9', email: 'bob@example.org', emailVerified: false, name: 'Bob' }, async (registry) => {
      const flow = await runFlow(registry, 'strict');
      const result = await registry.callback('strict', { query: flow.callbackUrl.searchParams, stateCookie: flow.cookie });
      expect(result).toMatchObject({ subject: 'user-9', email: 'bob@example.org', emailVerified: false, name: 'Bob' });
    });
  });

  it('reports a failing userinfo endpoint as userinfo_failed when the ID token has no e-mail', async () => {
    await withClaimlessProvider(undefined, async (registry, conforming) => {
      conforming.setUserinfoDown(true);
      const flow = await runFlow(registry, 'strict');
      const error = await providerFailure(registry.callback('strict', { query: flow.callbackUrl.searchParams, stateCookie: flow.cookie }));
      expect(error.code).toBe('userinfo_failed');
    });
  });

  it('leaves e-mail out when the provider has none', async () => {
    op.setAccount({ sub: 'user-2', name: 'No Mail' });
    const registry = registryFor();
    const flow = await runFlow(registry, OIDC_ID);
    const result = await registry.callback(OIDC_ID, { query: flow.callbackUrl.searchParams, stateCookie: flow.cookie });
    expect(result.subject).toBe('user-2');
    expect(result).not.toHaveProperty('email');
    expect(result).not.toHaveProperty('emailVerified');
  });

  it('refuses a replayed callback (same cookie and query twice) and exchanges the code once', async () => {
    const registry = registryFor();
    const flow = await runFlow(registry, OIDC_ID);
    const before = op.tokenRequests;
    await registry.callback(OIDC_ID, { query: flow.callbackUrl.searchParams, stateCookie: flow.cookie });
    const error = await providerFailure(registry.callback(OIDC_ID, { query: flow.callbackUrl.searchParams, stateCookie: flow.cookie }));
    expect(error.code).toBe('state_mismatch');
    expect(op.tokenRequests - before).toBe(1);
  });

  it('refuses a replay on another instance through the shared consumeOnce store', async () => {
    const used = new Map<string, Date>();
    const consumeOnce = async (stateId: string, expiresAt: Date): Promise<boolean> => {
      if (used.has(stateId)) return false;
      used.set(stateId, expiresAt);
      return true;
    };
    const first = registryFor({ consumeOnce });
    const second = registryFor({ consumeOnce });
    const flow = await runFlow(first, OIDC_ID);
    await first.callback(OIDC_ID, { query: flow.callbackUrl.searchParams, stateCookie: flow.cookie });
    expect(used.size).toBe(1);
    const [stateId, expiresAt] = [...used][0]!;
    expect(stateId).toMatch(/^[0-9a-f]{32}$/);
    expect(expiresAt.getTime()).toBeGreaterThan(Date.now() + (OAUTH_STATE_TTL_SECONDS - 5) * 1000);
    const error = await providerFailure(second.callback(OIDC_ID, { query: flow.callbackUrl.searchParams, stateCookie: flow.cookie }));
    expect(error.code).toBe('state_mismatch');
  });

  const stateEdits: ReadonlyArray<readonly [name: string, edit: (query: URLSearchParams) => void]> = [
    ['refuses a state that differs from the one sent', (query) => query.set('state', `${query.get('state')}x`)],
    ['refuses a callback without state', (query) => query.delete('state')],
  ];
  for (const [name, edit] of stateEdits) {
    it(name, async () => {
      const error = await callbackFailure(OIDC_ID, edit);
      expect(error.code).toBe('state_mismatch');
    });
  }

  it('refuses a callback without the state cookie', async () => {
    const registry = registryFor();
    const flow = await runFlow(registry, OIDC_ID);
    const error = await providerFailure(registry.callback(OIDC_ID, { query: flow.callbackUrl.searchParams, stateCookie: undefined }));
    expect(error.code).toBe('state_mismatch');
  });

  it('refuses a tampered state cookie', async () => {
    const registry = registryFor();
    const flow = await runFlow(registry, OIDC_ID);
    const at = Math.floor(flow.cookie.length / 2);
    const flipped = flow.cookie[at] === 'A' ? 'B' : 'A';
    const tampered = flow.cookie.slice(0, at) + flipped + flow.cookie.slice(at + 1);
    for (const stateCookie of [tampered, flow.cookie.slice(0, -4), `${flow.cookie}AAAA`, 'v1.', 'garbage']) {
      const error = await providerFailure(registry.callback(OIDC_ID, { query: flow.callbackUrl.searchParams, stateCookie }));
      expect(error.code).toBe('state_mismatch');
    }
    // The genuine cookie still works: the failures above consumed nothing.
    const result = await registry.callback(OIDC_ID, { query: flow.callbackUrl.searchParams, stateCookie: flow.cookie });
    expect(result.subject).toBe('user-1');
  });

  it('refuses a state cookie sealed under another server secret', async () => {
    const flow = await runFlow(registryFor({ secret: new Uint8Array(32).fill(8) }), OIDC_ID);
    const error = await providerFailure(
      registryFor().callback(OIDC_ID, { query: flow.callbackUrl.searchParams, stateCookie: flow.cookie }),
    );
    expect(error.code).toBe('state_mismatch');
  });

  it('refuses a state cookie of another provider', async () => {
    const registry = registryFor();
    const flow = await runFlow(registry, 'github');
    const error = await providerFailure(registry.callback(OIDC_ID, { query: flow.callbackUrl.searchParams, stateCookie: flow.cookie }));
    expect(error.code).toBe('state_mismatch');
  });

  it('refuses an expired state cookie (ten minutes, by the injected clock)', async () => {
    const registry = registryFor();
    const flow = await runFlow(registry, OIDC_ID);
    clockOffsetMs = (OAUTH_STATE_TTL_SECONDS + 1) * 1000;
    const error = await providerFailure(registry.callback(OIDC_ID, { query: flow.callbackUrl.searchParams, stateCookie: flow.cookie }));
    expect(error.code).toBe('state_mismatch');
  });

  it('still accepts the state cookie just before it expires', async () => {
    const registry = registryFor();
    const flow = await runFlow(registry, OIDC_ID);
    clockOffsetMs = (OAUTH_STATE_TTL_SECONDS - 30) * 1000;
    const result = await registry.callback(OIDC_ID, { query: flow.callbackUrl.searchParams, stateCookie: flow.cookie });
    expect(result.subject).toBe('user-1');
  });

  it('judges the ID token times by the injected clock', async () => {
    // Two hours ahead, the state cookie (made on the same clock) is fresh,
    // but the provider's one-hour ID token is already past its exp.
    clockOffsetMs = 2 * 3600 * 1000;
    const error = await callbackFailure(OIDC_ID);
    expect(error.code).toBe('id_token_invalid');
    expect(error.detail).toMatch(/"exp"/);
  });

  it('reports a denied consent as access_denied', async () => {
    op.setDenyConsent(true);
    const registry = registryFor();
    const flow = await runFlow(registry, OIDC_ID);
    expect(flow.callbackUrl.searchParams.get('error')).toBe('access_denied');
    const error = await providerFailure(registry.callback(OIDC_ID, { query: flow.callbackUrl.searchParams, stateCookie: flow.cookie }));
    expect(error.code).toBe('access_denied');
  });

  it('reports another provider error as provider_error', async () => {
    const registry = registryFor();
    const started = await registry.start(OIDC_ID);
    const state = new URL(started.redirectUrl).searchParams.get('state') ?? '';
    const query = new URLSearchParams({ error: 'temporarily_unavailable', state, iss: op.issuer });
    const error = await providerFailure(registry.callback(OIDC_ID, { query, stateCookie: started.stateCookie.value }));
    expect(error.code).toBe('provider_error');
  });

  it('reports a refused code as token_exchange_failed', async () => {
    const error = await callbackFailure(OIDC_ID, (query) => {
      query.set('code', `${query.get('code')}x`);
    });
    expect(error.code).toBe('token_exchange_failed');
  });

  it('refuses a response whose RFC 9207 iss parameter names another issuer', async () => {
    const error = await callbackFailure(OIDC_ID, (query) => {
      expect(query.get('iss')).toBe(op.issuer);
      query.set('iss', 'https://issuer.example.net');
    });
    expect(error.code).toBe('provider_error');
  });

  it('accepts an ID token re-signed unchanged by the rewriting proxy (control for the cases below)', async () => {
    op.setIdTokenTamper('resign-unchanged');
    const registry = registryFor();
    const flow = await runFlow(registry, OIDC_ID);
    const result = await registry.callback(OIDC_ID, { query: flow.callbackUrl.searchParams, stateCookie: flow.cookie });
    expect(result.subject).toBe('user-1');
  });

  // The detail names the check that failed (OIDC Core §3.1.3.7), never a value.
  const badTokens: Array<[IdTokenTamper, RegExp]> = [
    ['wrong-audience', /"aud"/],
    ['wrong-nonce', /"nonce"/],
    ['expired', /"exp"/],
    ['wrong-issuer', /"iss"/],
    ['bad-signature', /signature/],
  ];
  it.each(badTokens)('refuses an ID token with %s as id_token_invalid', async (mode, check) => {
    op.setIdTokenTamper(mode);
    const registry = registryFor();
    const flow = await runFlow(registry, OIDC_ID);
    const error = await providerFailure(registry.callback(OIDC_ID, { query: flow.callbackUrl.searchParams, stateCookie: flow.cookie }));
    expect(error.code).toBe('id_token_invalid');
    expect(error.detail).toMatch(check);
    // No claims, tokens or e-mail addresses ride along into logs.
    expect(error.message).not.toContain('alice@example.org');
    expect(error.message).not.toContain(flow.callbackUrl.searchParams.get('code') ?? 'x');
    expect(error.cause).toBeUndefined();
  });

  it('gives a clean provider_unavailable when the issuer is down, and retries discovery once it is back', async () => {
    await op.stop();
    let registry: ProviderRegistry;
    try {
      registry = registryFor();
      const error = await providerFailure(registry.start(OIDC_ID));
      expect(error.code).toBe('provider_unavailable');
      expect(error.detail).toContain(OIDC_ID);
    } finally {
      await op.restart();
    }
    const flow = await runFlow(registry, OIDC_ID);
    const result = await registry.callback(OIDC_ID, { query: flow.callbackUrl.searchParams, stateCookie: flow.cookie });
    expect(result.subject).toBe('user-1');
  });

  it('gives provider_unavailable when discovery answers a different issuer', async () => {
    const registry = registryFor({ providers: [oidcConfig(`${op.issuer}/elsewhere`)] });
    const error = await providerFailure(registry.start(OIDC_ID));
    expect(error.code).toBe('provider_unavailable');
  });
});

describe('providers: return_to', () => {
  const refused = [
    'https://evil.com/x',
    '//evil.com',
    '//evil.com/path',
    '/\\evil.com',
    '/\t/evil.com',
    ' /ok',
    'javascript:alert(1)',
    'https://evil.com@app.example.com.evil.com/',
    'https://user:pw@app.example.com/',
    'ftp://app.example.com/',
    'http://app.example.com/',
    'evil.com',
    `/${'a'.repeat(3000)}`,
  ];
  it.each(refused)('refuses %j at start with bad_request', async (returnTo) => {
    const error = await ocFailure(registryFor().start(OIDC_ID, { returnTo }));
    expect(error.code).toBe('bad_request');
    expect(error.status).toBe(400);
    expect(error.detail).toBe(RETURN_TO_DETAIL);
  });

  const accepted: Array<[string, string]> = [
    ['/', '/'],
    ['/account?tab=ids#top', '/account?tab=ids#top'],
    ['https://app.example.com/x', 'https://app.example.com/x'],
    ['https://auth.example.com', 'https://auth.example.com/'],
  ];
  it.each(accepted)('accepts %j', async (returnTo, expected) => {
    const registry = registryFor();
    const flow = await runFlow(registry, OIDC_ID, { returnTo });
    const result = await registry.callback(OIDC_ID, { query: flow.callbackUrl.searchParams, stateCookie: flow.cookie });
    expect(result.returnTo).toBe(expected);
  });

  it('normalises with the URL parser: dot segments go, what is not ASCII is percent-encoded; refuses a lone surrogate', () => {
    const check = (value: string) => checkReturnTo(value, 'https://auth.example.com', isAllowedReturnTo);
    expect(check('/\u2215\u2215evil.com')).toBe('/%E2%88%95%E2%88%95evil.com');
    expect(check('/a%20b/../c?x=\u00e9')).toBe('/c?x=%C3%A9');
    expect(check('https://app.example.com/\u00e9')).toBe('https://app.example.com/%C3%A9');
    expect(check('https://app.example.com/a/..//evil.example/x')).toBe('https://app.example.com//evil.example/x');
    expect(() => check('/a\ud800b')).toThrow(RETURN_TO_DETAIL);
    // A PUBLIC_URL with a path: a path return_to is still a path of its origin.
    expect(checkReturnTo('/a/../b', 'https://auth.example.com/oc', isAllowedReturnTo)).toBe('/b');
    expect(() => checkReturnTo('/.//evil.example', 'https://auth.example.com/oc', isAllowedReturnTo)).toThrow(RETURN_TO_DETAIL);
  });

  // docs/protocol.md §6 "return_to": what comes out is what a browser follows, so it must stay on this service.
  it.each(hostileReturnTo(PUBLIC_URL))(
    'hostile %j: refused at start, or normalised to a path that stays here',
    async (returnTo, normalised) => {
      if (normalised === null) {
        expect(() => checkReturnTo(returnTo, PUBLIC_URL, isAllowedReturnTo)).toThrow(RETURN_TO_DETAIL);
        const error = await ocFailure(registryFor().start(OIDC_ID, { returnTo }));
        expect(error.code).toBe('bad_request');
        return;
      }
      const checked = checkReturnTo(returnTo, PUBLIC_URL, isAllowedReturnTo);
      expect(checked).toBe(normalised);
      expect(checked).toMatch(/^\/(?![/\\])/);
      expect(new URL(checked, PUBLIC_URL).origin).toBe(PUBLIC_URL);
      // Stable: checked again, it is the same.
      expect(checkReturnTo(checked, PUBLIC_URL, isAllowedReturnTo)).toBe(checked);
    },
  );

  it('sends the callback to / when a saved return_to resolves to another host (a state sealed before the normalisation)', async () => {
    const registry = registryFor();
    const flow = await runFlow(registry, OIDC_ID, { returnTo: '/account' });
    const key = deriveStateKey(SECRET);
    const saved = openState(key, flow.cookie)!;
    const cookie = sealState(key, { ...saved, returnTo: '/.//evil.example/x' });
    const result = await registry.callback(OIDC_ID, { query: flow.callbackUrl.searchParams, stateCookie: cookie });
    expect(result.returnTo).toBe('/');
  });

  it('checks return_to before reaching the provider', async () => {
    await op.stop();
    try {
      const error = await ocFailure(registryFor().start(OIDC_ID, { returnTo: '//evil.com' }));
      expect(error.code).toBe('bad_request');
    } finally {
      await op.restart();
    }
  });

  it('falls back to / when the family no longer allows the saved return_to', async () => {
    let allowApp = true;
    const registry = registryFor({
      isAllowedReturnTo: (url) => allowApp && isAllowedReturnTo(url),
    });
    const flow = await runFlow(registry, OIDC_ID, { returnTo: 'https://app.example.com/x' });
    allowApp = false;
    const result = await registry.callback(OIDC_ID, { query: flow.callbackUrl.searchParams, stateCookie: flow.cookie });
    expect(result.returnTo).toBe('/');
  });
});

describe('providers: GitHub', () => {
  it('signs in: numeric id as subject, verified primary e-mail, name', async () => {
    const registry = registryFor();
    const flow = await runFlow(registry, 'github', { returnTo: '/welcome' });
    const params = flow.redirectUrl.searchParams;
    expect(flow.redirectUrl.href.startsWith(`${github.url}/login/oauth/authorize?`)).toBe(true);
    expect(params.get('client_id')).toBe('gh-client');
    expect(params.get('redirect_uri')).toBe(GITHUB_REDIRECT);
    expect(params.get('code_challenge_method')).toBe('S256');
    expect(params.has('nonce')).toBe(false);
    expect(github.lastScope).toBe('read:user user:email');

    const result = await registry.callback('github', { query: flow.callbackUrl.searchParams, stateCookie: flow.cookie });
    expect(result).toEqual({
      provider: 'github',
      subject: '583231',
      email: 'octocat@example.org',
      emailVerified: true,
      name: 'The Octocat',
      returnTo: '/welcome',
      add: false,
    });
  });

  it('carries add=1 through', async () => {
    const registry = registryFor();
    const flow = await runFlow(registry, 'github', { add: true });
    const result = await registry.callback('github', { query: flow.callbackUrl.searchParams, stateCookie: flow.cookie });
    expect(result.add).toBe(true);
  });

  it('leaves e-mail out when the primary address is not verified, and ignores the public profile e-mail', async () => {
    github.setUser({
      ...DEFAULT_GITHUB_USER,
      name: null,
      emails: [
        { email: 'unverified@example.org', primary: true, verified: false, visibility: 'public' },
        { email: 'other@example.org', primary: false, verified: true, visibility: null },
      ],
    });
    const registry = registryFor();
    const flow = await runFlow(registry, 'github');
    const result = await registry.callback('github', { query: flow.callbackUrl.searchParams, stateCookie: flow.cookie });
    expect(result.subject).toBe('583231');
    expect(result).not.toHaveProperty('email');
    expect(result).not.toHaveProperty('name');
  });

  it('reports a denied authorization as access_denied', async () => {
    github.setDeny(true);
    const error = await callbackFailure('github');
    expect(error.code).toBe('access_denied');
  });

  it('reports a bad code (GitHub answers 200 with error) as token_exchange_failed', async () => {
    const error = await callbackFailure('github', (query) => {
      query.set('code', 'not-a-code');
    });
    expect(error.code).toBe('token_exchange_failed');
  });

  it.each(['user-error', 'emails-error'] as const)('reports %s as userinfo_failed', async (failure) => {
    github.setFailure(failure);
    const error = await callbackFailure('github');
    expect(error.code).toBe('userinfo_failed');
  });

  it('refuses a replayed callback and exchanges the code once', async () => {
    const registry = registryFor();
    const flow = await runFlow(registry, 'github');
    const before = github.tokenRequests;
    await registry.callback('github', { query: flow.callbackUrl.searchParams, stateCookie: flow.cookie });
    const error = await providerFailure(registry.callback('github', { query: flow.callbackUrl.searchParams, stateCookie: flow.cookie }));
    expect(error.code).toBe('state_mismatch');
    expect(github.tokenRequests - before).toBe(1);
  });

  it('gives token_exchange_failed when GitHub cannot be reached', async () => {
    const registry = registryFor({ githubAuthBase: 'http://127.0.0.1:9' });
    const started = await registry.start('github');
    const state = new URL(started.redirectUrl).searchParams.get('state') ?? '';
    const error = await providerFailure(
      registry.callback('github', { query: { code: 'abc', state }, stateCookie: started.stateCookie.value }),
    );
    expect(error.code).toBe('token_exchange_failed');
  });
});
