/**
 * A running oc-host for the consumer-package tests (packages/verify): the
 * real app on a loopback port, as a consumer site meets it, plus the
 * sign-in paths that end in an `oc_session` cookie (docs/api.md
 * Authentication 3): BIP-322, e-mail code, and providers.
 */
import type { AddressInfo } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { decodeJwt } from 'jose';
import { buildApp, type AppDeps } from '../../src/app.js';
import { testConfig } from './app.js';
import { Browser, newWallet, type Reply, type Wallet } from './auth-client.js';
import { extractCode, type TestSmtpServer } from './smtp-server.js';

/** The host's PUBLIC_URL, so the `iss` of every token. */
export const ISSUER = 'https://auth.example.com';
/** A consumer site of the family (COOKIE_DOMAIN `.example.com`). */
const CONSUMER_ORIGIN = 'https://app.example.com';
const FAMILY_ENV: Readonly<Record<string, string>> = { PUBLIC_URL: ISSUER, COOKIE_DOMAIN: '.example.com' };

export interface RunningHost {
  readonly app: FastifyInstance;
  /** `http://127.0.0.1:<port>` */
  readonly url: string;
  readonly port: number;
  readonly jwksUrl: string;
  browser(): Browser;
  close(): Promise<void>;
}

/** Builds the real app over the quiet test config and listens on loopback (`port` 0: a free one). */
export async function startHost(env: Record<string, string> = {}, deps: AppDeps = {}, port = 0): Promise<RunningHost> {
  const app = await buildApp(testConfig({ ...FAMILY_ENV, ...env }), { logger: false, ...deps });
  await app.listen({ port, host: '127.0.0.1' });
  const bound = (app.server.address() as AddressInfo).port;
  const url = `http://127.0.0.1:${bound}`;
  return {
    app,
    url,
    port: bound,
    jwksUrl: `${url}/api/auth/jwks`,
    browser: () => new Browser(app, CONSUMER_ORIGIN),
    close: () => app.close(),
  };
}

/** The `oc_session` value a reply set (the family cookie), failing loudly when there is none. */
function sessionCookieOf(reply: Reply): string {
  if (reply.status !== 200) throw new Error(`consumer test: sign-in failed with ${reply.status}: ${JSON.stringify(reply.body)}`);
  for (const line of reply.setCookies) {
    const match = /^oc_session=([^;]+);/.exec(line);
    if (match?.[1]) return match[1];
  }
  throw new Error('consumer test: no oc_session cookie was set');
}

export interface IssuedCookie {
  readonly path: string;
  readonly token: string;
  readonly browser: Browser;
}

export async function signInWithWallet(host: RunningHost, wallet: Wallet = newWallet()): Promise<IssuedCookie> {
  const browser = host.browser();
  const token = sessionCookieOf(await browser.signIn(wallet));
  return { path: 'bip322', token, browser };
}

export async function signInWithEmail(host: RunningHost, smtp: TestSmtpServer, email: string): Promise<IssuedCookie> {
  const browser = host.browser();
  const before = smtp.messages().length;
  const started = await browser.post('/api/auth/email-otp/start', { email });
  if (started.status !== 200) throw new Error(`consumer test: e-mail start failed: ${JSON.stringify(started.body)}`);
  const mail = await smtp.waitForMessage(
    (message) => message.envelope.to.includes(email) && smtp.messages().indexOf(message) >= before,
    5000,
  );
  const reply = await browser.post('/api/auth/email-otp/verify', { email, code: extractCode(mail), token: started.body.token });
  return { path: 'email_otp', token: sessionCookieOf(reply), browser };
}

/** start → the provider's redirects (followed over HTTP) → callback, as a browser does. */
export async function signInWithProvider(host: RunningHost, provider: string): Promise<IssuedCookie> {
  const browser = host.browser();
  const start = await browser.get(`/api/auth/${provider}/start`);
  if (start.status !== 302) throw new Error(`consumer test: ${provider} start answered ${start.status}`);
  const state = start.setCookies.map((line) => /^oc_oauth=([^;]*);/.exec(line)?.[1]).find((value) => value !== undefined);
  // Loaded here: it pulls in oidc-provider, which only the provider tests need.
  const { followRedirects } = await import('./oidc-provider.js');
  const back = await followRedirects(start.headers.location as string, `${ISSUER}/api/auth/${provider}/callback`);
  const callback = await browser.request('GET', `${back.pathname}${back.search}`, undefined, { cookie: `oc_oauth=${state}` });
  if (callback.status !== 302 || browser.cookie === undefined)
    throw new Error(`consumer test: ${provider} callback answered ${callback.status}`);
  return { path: `oauth:${provider}`, token: browser.cookie, browser };
}

/** The `exp` of a token, unverified (for choosing `now` in expiry tests). */
export function expiryOf(token: string): number {
  const { exp } = decodeJwt(token);
  if (typeof exp !== 'number') throw new Error('consumer test: token without exp');
  return exp;
}
