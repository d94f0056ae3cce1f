/**
 * A real OpenID provider on loopback for tests (docs/architecture.md "Tests": a real
 * OpenID provider), built on the `oidc-provider` package: discovery, the
 * authorization endpoint with PKCE required, the token endpoint, JWKS and
 * userinfo are the package's own. Plain http on 127.0.0.1; the registry
 * allows http for loopback issuers only.
 *
 * The only part written here is the interaction (the login and consent
 * pages): it logs in the configured account and consents at once, or denies
 * (`setDenyConsent(true)`), which sends `error=access_denied` back to the
 * redirect URI. So a test drives the whole flow with fetch and manual
 * redirects ({@link followRedirects}), no browser.
 *
 * Bad ID tokens: oidc-provider will not issue a token with a wrong audience,
 * nonce, issuer or an expired one, so `setIdTokenTamper(mode)` rewrites the
 * token endpoint's answer on its way out of this server: the ID token's
 * claims are changed and it is signed again with the provider's own key (or,
 * for `bad-signature`, with another key under the same `kid`). Everything
 * else in the answer is the provider's.
 *
 * `setUserinfoDown(true)` makes the userinfo endpoint (`/me`) answer 503.
 * `stop()` and `restart()` take the listener down and bring it back on the
 * same port, to show an issuer that is down and then recovers.
 */
import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { SignJWT, exportJWK, generateKeyPair, type CryptoKey, type JWTPayload } from 'jose';
import Provider from 'oidc-provider';

export interface OidcTestAccount {
  sub: string;
  email?: string;
  emailVerified?: boolean;
  name?: string;
}

/**
 * How the token endpoint's ID token is rewritten. `resign-unchanged` signs
 * the same claims again with the right key: a control showing the rewriting
 * itself breaks nothing.
 */
export type IdTokenTamper = 'wrong-audience' | 'wrong-nonce' | 'expired' | 'wrong-issuer' | 'bad-signature' | 'resign-unchanged';

export interface TestOidcProviderOptions {
  clientId: string;
  clientSecret: string;
  redirectUri: string;
  account?: OidcTestAccount;
  /**
   * true (default): scope claims (email, name) go into the ID token as well,
   * as Google does. false: only userinfo carries them, oidc-provider's
   * conforming default (OIDC Core §5.4).
   */
  claimsInIdToken?: boolean;
}

export interface TestOidcProvider {
  /** `http://127.0.0.1:<port>`, the issuer identifier. */
  readonly issuer: string;
  setAccount(account: OidcTestAccount): void;
  setDenyConsent(deny: boolean): void;
  setIdTokenTamper(mode: IdTokenTamper | undefined): void;
  /** When true, the userinfo endpoint answers 503. */
  setUserinfoDown(down: boolean): void;
  /** Requests to the token endpoint since start. */
  readonly tokenRequests: number;
  /** Stops listening (the issuer is down); `restart()` listens again on the same port. */
  stop(): Promise<void>;
  restart(): Promise<void>;
  close(): Promise<void>;
}

const DEFAULT_ACCOUNT: OidcTestAccount = {
  sub: 'user-1',
  email: 'alice@example.org',
  emailVerified: true,
  name: 'Alice Example',
};

export async function startOidcProvider(options: TestOidcProviderOptions): Promise<TestOidcProvider> {
  let account: OidcTestAccount = options.account ?? DEFAULT_ACCOUNT;
  let denyConsent = false;
  let tamper: IdTokenTamper | undefined;
  let userinfoDown = false;
  let tokenRequests = 0;

  const signing = await generateKeyPair('RS256', { extractable: true });
  const rogue = await generateKeyPair('RS256', { extractable: true });
  const kid = 'test-key-1';
  const privateJwk = { ...(await exportJWK(signing.privateKey)), kid, alg: 'RS256', use: 'sig' };

  // Listen first: the issuer identifier must carry the port.
  let handler: (req: IncomingMessage, res: ServerResponse) => void = (_req, res) => {
    res.statusCode = 503;
    res.end();
  };
  const server: Server = createServer((req, res) => handler(req, res));
  await listen(server, 0);
  const port = (server.address() as AddressInfo).port;
  const issuer = `http://127.0.0.1:${port}`;

  const provider = new Provider(issuer, {
    clients: [
      {
        client_id: options.clientId,
        client_secret: options.clientSecret,
        redirect_uris: [options.redirectUri],
        grant_types: ['authorization_code'],
        response_types: ['code'],
        token_endpoint_auth_method: 'client_secret_basic',
      },
    ],
    // RFC 7636 for every client, not only public ones (the package's default).
    pkce: { required: () => true },
    features: { devInteractions: { enabled: false } },
    interactions: { url: (_ctx: unknown, interaction: { uid: string }) => `/interaction/${interaction.uid}` },
    claims: { openid: ['sub'], email: ['email', 'email_verified'], profile: ['name'] },
    conformIdTokenClaims: options.claimsInIdToken === false,
    findAccount: async (_ctx: unknown, sub: string) => ({
      accountId: sub,
      claims: async () => ({
        sub,
        ...(account.email === undefined ? {} : { email: account.email, email_verified: account.emailVerified ?? false }),
        ...(account.name === undefined ? {} : { name: account.name }),
      }),
    }),
    jwks: { keys: [privateJwk] },
    // Explicit lifetimes (seconds); ID tokens live one hour, which the clock test relies on.
    ttl: { AccessToken: 3600, AuthorizationCode: 60, Grant: 3600, IdToken: 3600, Interaction: 600, Session: 3600 },
    cookies: { keys: [randomBytes(32).toString('hex')] },
    // Errors as JSON, so a failing test shows what the provider said.
    renderError: async (ctx: { type: string; body: unknown }, out: unknown) => {
      ctx.type = 'json';
      ctx.body = out;
    },
  });
  const providerCallback = provider.callback();

  async function interaction(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const details = await provider.interactionDetails(req, res);
    if (denyConsent) {
      await provider.interactionFinished(
        req,
        res,
        { error: 'access_denied', error_description: 'End-User denied consent' },
        { mergeWithLastSubmission: false },
      );
      return;
    }
    const clientId = String(details.params.client_id);
    const grant =
      (details.grantId === undefined ? undefined : await provider.Grant.find(details.grantId)) ??
      new provider.Grant({ accountId: account.sub, clientId });
    grant.addOIDCScope(String(details.params.scope ?? 'openid'));
    const grantId = await grant.save();
    await provider.interactionFinished(
      req,
      res,
      { login: { accountId: account.sub }, consent: { grantId } },
      { mergeWithLastSubmission: false },
    );
  }

  /** Rewrites the token endpoint's JSON answer on its way out (see file comment). */
  function rewriteTokenResponse(res: ServerResponse, mode: IdTokenTamper): void {
    const originalEnd = res.end.bind(res) as (chunk?: unknown) => ServerResponse;
    res.end = ((chunk?: unknown) => {
      void (async () => {
        let body = chunk;
        if (res.statusCode === 200 && chunk !== undefined && chunk !== null) {
          const json = JSON.parse(Buffer.from(chunk as string | Uint8Array).toString('utf8')) as Record<string, unknown>;
          if (typeof json.id_token === 'string') json.id_token = await tamperIdToken(json.id_token, mode);
          body = JSON.stringify(json);
          res.setHeader('content-length', Buffer.byteLength(body as string));
        }
        originalEnd(body);
      })().catch((error: unknown) => {
        res.destroy(error instanceof Error ? error : new Error(String(error)));
      });
      return res;
    }) as ServerResponse['end'];
  }

  async function tamperIdToken(idToken: string, mode: IdTokenTamper): Promise<string> {
    const claims = JSON.parse(Buffer.from(idToken.split('.')[1] ?? '', 'base64url').toString('utf8')) as JWTPayload;
    const nowSeconds = Math.floor(Date.now() / 1000);
    let key: CryptoKey = signing.privateKey;
    switch (mode) {
      case 'wrong-audience':
        claims.aud = 'some-other-client';
        break;
      case 'wrong-nonce':
        claims.nonce = randomBytes(16).toString('base64url');
        break;
      case 'expired':
        claims.iat = nowSeconds - 7200;
        claims.exp = nowSeconds - 3600;
        break;
      case 'wrong-issuer':
        claims.iss = 'https://issuer.example.net';
        break;
      case 'bad-signature':
        key = rogue.privateKey;
        break;
      case 'resign-unchanged':
        break;
    }
    return new SignJWT(claims).setProtectedHeader({ alg: 'RS256', kid }).sign(key);
  }

  handler = (req, res) => {
    // No keep-alive: `stop()` must not leave the client a pooled socket that
    // the next request, after `restart()`, would find closed.
    res.setHeader('connection', 'close');
    const path = new URL(req.url ?? '/', issuer).pathname;
    if (path.startsWith('/interaction/')) {
      interaction(req, res).catch((error: unknown) => {
        res.statusCode = 500;
        res.end(`interaction failed: ${error instanceof Error ? error.message : String(error)}`);
      });
      return;
    }
    if (path === '/me' && userinfoDown) {
      res.statusCode = 503;
      res.end();
      return;
    }
    if (req.method === 'POST' && path === '/token') {
      tokenRequests += 1;
      if (tamper !== undefined) rewriteTokenResponse(res, tamper);
    }
    providerCallback(req, res);
  };

  return {
    issuer,
    setAccount(next) {
      account = next;
    },
    setDenyConsent(deny) {
      denyConsent = deny;
    },
    setIdTokenTamper(mode) {
      tamper = mode;
    },
    setUserinfoDown(down) {
      userinfoDown = down;
    },
    get tokenRequests() {
      return tokenRequests;
    },
    async stop() {
      await closeServer(server);
    },
    async restart() {
      await listen(server, port);
    },
    async close() {
      if (server.listening) await closeServer(server);
    },
  };
}

function listen(server: Server, port: number): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
}

function closeServer(server: Server): Promise<void> {
  return new Promise((resolve, reject) => {
    server.close((error) => (error ? reject(error) : resolve()));
    // Pooled keep-alive sockets of the client would otherwise keep it up.
    server.closeAllConnections();
  });
}

/**
 * Follows redirects by hand from `url` until one points at `stopAt` (the
 * relying party's redirect URI), carrying cookies like a browser would for
 * one host, and answers that last URL. Throws on any non-redirect answer.
 */
export async function followRedirects(url: string, stopAt: string, maxHops = 20): Promise<URL> {
  const jar = new Map<string, string>();
  let current = url;
  for (let hop = 0; hop < maxHops; hop += 1) {
    if (current.startsWith(stopAt)) return new URL(current);
    const cookie = [...jar].map(([name, value]) => `${name}=${value}`).join('; ');
    const response = await fetch(current, { redirect: 'manual', headers: cookie === '' ? {} : { cookie } });
    for (const line of response.headers.getSetCookie()) {
      const [pair = '', ...attributes] = line.split(';');
      const equals = pair.indexOf('=');
      const name = pair.slice(0, equals).trim();
      const value = pair.slice(equals + 1).trim();
      const expired = attributes.some((attribute) => {
        const [key = '', attributeValue = ''] = attribute.split('=').map((part) => part.trim());
        if (key.toLowerCase() === 'max-age') return Number(attributeValue) <= 0;
        if (key.toLowerCase() === 'expires') return Date.parse(attributeValue) <= Date.now();
        return false;
      });
      if (expired || value === '') jar.delete(name);
      else jar.set(name, value);
    }
    const location = response.headers.get('location');
    if (response.status < 300 || response.status >= 400 || location === null) {
      const text = await response.text();
      throw new Error(`followRedirects: HTTP ${response.status} at ${current}: ${text.slice(0, 500)}`);
    }
    await response.body?.cancel();
    current = new URL(location, current).href;
  }
  throw new Error(`followRedirects: more than ${maxHops} redirects from ${url}`);
}
