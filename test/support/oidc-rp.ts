/**
 * Relying parties of oc-host's OpenID provider for tests: `openid-client`
 * (a certified relying-party library nobody here wrote) talking to the app
 * through `inject`, and a browser that follows the provider's redirects
 * with a cookie jar of its own on top of the host session of a test
 * {@link Browser}.
 */
import type { FastifyInstance } from 'fastify';
import * as client from 'openid-client';
import { isDevelopmentUrl } from '../../src/features/connect/index.js';
import { OidcService, type OidcServiceDeps } from '../../src/features/oidc/index.js';
import { sessionCookieHeader, type Browser } from './auth-client.js';
import { LOCAL_ORIGIN } from './auth-harness.js';

/**
 * The provider's clients and keys on a test store, as the operator's commands
 * open them (no claims look-up): tests register their clients through it.
 */
export function operatorRegistry(store: OidcServiceDeps['store'], issuer: string, now: () => Date): Promise<OidcService> {
  return OidcService.open({ store, issuer, serverSecret: new Uint8Array(32), development: isDevelopmentUrl(issuer), now });
}

/** `fetch` for openid-client, answered by the app in process. */
export function injectFetch(app: FastifyInstance): client.CustomFetch {
  return async (url, options) => {
    const target = new URL(url);
    const headers: Record<string, string> = {};
    new Headers(options.headers as ConstructorParameters<typeof Headers>[0]).forEach((value, name) => {
      headers[name] = value;
    });
    const body = options.body;
    const reply = await app.inject({
      method: (options.method ?? 'GET') as 'GET',
      url: target.pathname + target.search,
      headers: { ...headers, host: target.host },
      ...(body === undefined || body === null ? {} : { payload: body.toString() }),
    });
    const responseHeaders = new Headers();
    for (const [name, value] of Object.entries(reply.headers)) {
      if (value === undefined) continue;
      for (const one of [value].flat()) responseHeaders.append(name, String(one));
    }
    return new Response(reply.statusCode === 204 || reply.statusCode === 304 ? null : reply.rawPayload, {
      status: reply.statusCode,
      headers: responseHeaders,
    });
  };
}

/** openid-client's configuration for a client of the app. */
export async function discover(
  app: FastifyInstance,
  clientId: string,
  secret?: string,
  options: { readonly auth?: 'basic' | 'post' | 'none' } = {},
): Promise<client.Configuration> {
  const auth =
    options.auth === 'none' || secret === undefined
      ? client.None()
      : options.auth === 'post'
        ? client.ClientSecretPost(secret)
        : client.ClientSecretBasic(secret);
  const fetcher = injectFetch(app);
  return client.discovery(new URL(LOCAL_ORIGIN), clientId, undefined, auth, {
    execute: [client.allowInsecureRequests],
    [client.customFetch]: fetcher,
  });
}

export interface Hop {
  readonly status: number;
  readonly url: string;
  readonly location: string | undefined;
  readonly body: string;
  readonly headers: Readonly<Record<string, string | string[] | number | undefined>>;
}

/**
 * A browser on the provider's pages: the host session cookies of `host`
 * (kept in step with it) plus its own jar for the provider's cookies. It
 * follows redirects on the host and stops at the first that leaves it (the
 * app's redirect URI) or at a page.
 */
/**
 * A browser that walks the provider's pages: its own cookie jar, redirects
 * followed while they stay on `origin`, the library's self-submitting forms
 * submitted (its script would), the consent page allowed. How one request is
 * made is the kind's own: in-process (ProviderBrowser) or over a real socket
 * (test/support/proxy.ts).
 */
export abstract class FollowingBrowser {
  readonly jar = new Map<string, string>();

  constructor(readonly origin: string) {}

  /** One request; a form body for a POST. */
  abstract request(method: 'GET' | 'POST', url: string, form?: Record<string, string>): Promise<Hop>;

  /** Keeps the cookies an answer set, and forgets the ones it cleared; `kept` picks which names this jar holds. */
  protected keep(setCookies: readonly string[], kept: (name: string) => boolean = () => true): void {
    for (const line of setCookies) {
      const match = /^([^=]+)=([^;]*)/.exec(line);
      if (!match?.[1] || !kept(match[1])) continue;
      if (/expires=Thu, 01 Jan 1970/i.test(line) || /Max-Age=0(;|$)/i.test(line) || match[2] === '') this.jar.delete(match[1]);
      else this.jar.set(match[1], match[2] ?? '');
    }
  }

  /** Follows redirects from `url` while they stay on `origin`, and submits the library's self-submitting forms; the last hop. */
  async follow(url: string, method: 'GET' | 'POST' = 'GET', form?: Record<string, string>): Promise<Hop> {
    let hop = await this.request(method, url, form);
    for (let count = 0; count < 20; count++) {
      if (hop.location !== undefined && hop.status >= 300 && hop.status < 400) {
        if (new URL(hop.location).origin !== this.origin) return hop;
        hop = await this.request('GET', hop.location);
        continue;
      }
      const posted = selfSubmitting(hop);
      if (posted === null) return hop;
      hop = await this.request('POST', posted.action, posted.fields);
    }
    return hop;
  }

  /** Allows the consent page at `hop` (a 200 page of /oidc/interaction/:uid) and follows on. */
  async allow(hop: Hop): Promise<Hop> {
    const action = /<form method="post" action="([^"]+)"/.exec(hop.body)?.[1];
    if (action === undefined) throw new Error(`not a consent page: ${hop.status} ${hop.url}\n${hop.body.slice(0, 400)}`);
    return this.follow(action.replaceAll('&amp;', '&'), 'POST');
  }
}

/** The host's cookies are the host browser's; the jar holds the provider's own. */
const HOST_COOKIES: ReadonlySet<string> = new Set(['oc_session', '__Host-oc_roster']);

export class ProviderBrowser extends FollowingBrowser {
  readonly #app: FastifyInstance;
  readonly host: Browser;

  constructor(app: FastifyInstance, host: Browser) {
    super(LOCAL_ORIGIN);
    this.#app = app;
    this.host = host;
  }

  #cookieHeader(): string {
    const own = [...this.jar].map(([name, value]) => `${name}=${value}`);
    return [sessionCookieHeader(this.host), ...own].filter((pair) => pair !== '').join('; ');
  }

  /** One request on the host. */
  async request(method: 'GET' | 'POST', url: string, form?: Record<string, string>): Promise<Hop> {
    const target = new URL(url, LOCAL_ORIGIN);
    const reply = await this.#app.inject({
      method,
      url: target.pathname + target.search,
      headers: {
        host: target.host,
        cookie: this.#cookieHeader(),
        ...(method === 'POST' ? { origin: LOCAL_ORIGIN, 'content-type': 'application/x-www-form-urlencoded' } : {}),
      },
      ...(form === undefined ? {} : { payload: new URLSearchParams(form).toString() }),
    });
    this.keep([reply.headers['set-cookie'] ?? []].flat(), (name) => !HOST_COOKIES.has(name));
    const location = reply.headers.location;
    return {
      status: reply.statusCode,
      url: target.href,
      location: typeof location === 'string' ? new URL(location, target).href : undefined,
      body: reply.body,
      headers: reply.headers,
    };
  }
}

function htmlDecoded(value: string): string {
  return value.replace(/&(amp|quot|lt|gt|#x27|#39);/g, (_whole, name: string) =>
    name === 'amp' ? '&' : name === 'quot' ? '"' : name === 'lt' ? '<' : name === 'gt' ? '>' : "'",
  );
}

/** The form of a page the provider library answers to be submitted by its own script (a form post), or null. */
function selfSubmitting(hop: Hop): { action: string; fields: Record<string, string> } | null {
  if (hop.status !== 200 || !hop.body.includes('document.forms[0].submit()')) return null;
  const action = /<form method="post" action="([^"]+)">/.exec(hop.body)?.[1];
  if (action === undefined) return null;
  const fields: Record<string, string> = {};
  for (const match of hop.body.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)"\/>/g)) {
    fields[htmlDecoded(match[1] as string)] = htmlDecoded(match[2] as string);
  }
  return { action: htmlDecoded(action), fields };
}

/** The anti-forgery value and target of the verification page's form (the code entry or the question). */
export function deviceForm(page: string): { action: string; xsrf: string } {
  const action = /<form method="post" action="([^"]+)" id="device-form">/.exec(page)?.[1];
  const xsrf = /name="xsrf" value="([^"]+)"/.exec(page)?.[1];
  if (action === undefined || xsrf === undefined) throw new Error(`not the device verification page:\n${page.slice(0, 600)}`);
  return { action: action.replaceAll('&amp;', '&'), xsrf };
}
