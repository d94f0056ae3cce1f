/**
 * Route policy: what the shared hooks do for a route, declared on the route
 * itself (`config: { policy: POLICY.read }`) instead of in path tables kept
 * elsewhere. One policy says:
 *
 * - `cors`: who may call the route from a browser (docs/protocol.md §4
 *   "CORS"): `public` answers `*` without credentials, `family` answers family
 *   origins with credentials and refuses state-changing requests from other
 *   sites (403 `cross_site`), `same-origin` accepts posts only from this
 *   service's own pages, `none` adds nothing;
 * - `limit`: the per-IP rate-limit class (`read`, `auth`, or null for none),
 *   and `extra`, the hourly limits some routes count on top (docs/protocol.md
 *   §4 "Rate limits");
 * - `storeDown`: with the shared limit store unreachable, `open` lets the
 *   request through and `closed` answers 503 `not_ready`; routes that check
 *   a credential or send mail are closed;
 * - `errors`: `attestation` bodies also carry `reasons: [code]`, the shape of
 *   the attestation routes.
 *
 * Hooks read the policy of the matched route, so a percent-escaped path
 * (`/api/%61uth/signin`) gets the policy of the route it reaches. A request
 * that matches no route gets the policy of its path (see {@link policyOf}),
 * and a preflight the policy of the route it asks about.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';

export type CorsClass = 'public' | 'family' | 'same-origin' | 'none';
export type LimitClass = 'read' | 'auth';
/** `otp`: the e-mail start's limits per IP, per address and IP, and per address; `contact`: the contact form's per-IP limit. */
type ExtraLimit = 'otp' | 'contact';

export interface RoutePolicy {
  readonly cors: CorsClass;
  readonly limit: LimitClass | null;
  readonly extra?: ExtraLimit;
  readonly storeDown: 'open' | 'closed';
  readonly errors: 'plain' | 'attestation';
}

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Required on every route (see {@link requirePolicies}). */
    policy?: RoutePolicy;
  }
}

function policy(
  cors: CorsClass,
  limit: LimitClass | null,
  storeDown: 'open' | 'closed' = 'open',
  errors: 'plain' | 'attestation' = 'plain',
): RoutePolicy {
  return Object.freeze({ cors, limit, storeDown, errors });
}

/** The policies routes choose from; a route may also spread one and add `extra`. */
export const POLICY = Object.freeze({
  /** Health, pages, static assets: no CORS, no limit. */
  unlimited: policy('none', null),
  /** Public reads: JWKS, the OpenAPI document, statistics, a challenge by GET. */
  publicRead: policy('public', 'read'),
  /** Public writes that cost the service work: a challenge by POST. */
  publicWrite: policy('public', 'auth'),
  /** Attestation reads: check, discover, verify. */
  attestationRead: policy('public', 'read', 'open', 'attestation'),
  /** Publishing an attestation. */
  attestationWrite: policy('public', 'auth', 'open', 'attestation'),
  /** Session reads from family sites: me, the provider list. */
  familyRead: policy('family', 'read'),
  /** Session changes from family sites: switch, logout, edits, provider redirects. */
  family: policy('family', 'auth'),
  /** Routes that check a credential or send mail: closed while the limit store is down. */
  familyCredential: policy('family', 'auth', 'closed'),
  /** Server-to-server routes with their own credential (Connect provisioning). */
  serverCredential: policy('none', 'auth', 'closed'),
  /**
   * The admin API, for an operator's token: the CORS and limit of a path no
   * route serves, which is how it answers a request without one.
   */
  operator: policy('none', 'read'),
  /** Posts accepted only from this service's own pages (the contact form). */
  sameOrigin: policy('same-origin', 'auth', 'closed'),
});

/**
 * The policy of a path no route matched: an unknown /api/auth/* path is
 * treated like the family routes around it (a foreign site's post is still
 * refused as cross-site), any other /api/* path spends a read budget (a
 * scan is not free), and everything else is unlimited.
 */
export function unmatchedPolicy(path: string): RoutePolicy {
  if (path.startsWith('/api/auth/')) return POLICY.family;
  if (path.startsWith('/api/')) return UNMATCHED_API;
  return POLICY.unlimited;
}

const UNMATCHED_API = policy('none', 'read');

/**
 * The policy of the route a request matched. A request that matched none
 * (a 404) gets the policy of a route at the same path under another method
 * (`GET /api/verify` is answered like `POST /api/verify`), else that of its path.
 */
export function policyOf(request: FastifyRequest): RoutePolicy {
  const declared = request.routeOptions.config.policy;
  if (declared !== undefined) return declared;
  const path = decodedPathOf(request.url);
  return request.server.routePolicies.reachedBy(request.method, path) ?? unmatchedPolicy(path);
}

/** The path without the query, percent-decoded as the router decodes it. */
export function decodedPathOf(url: string): string {
  const query = url.indexOf('?');
  const raw = query === -1 ? url : url.slice(0, query);
  try {
    return decodeURIComponent(raw);
  } catch {
    return raw;
  }
}

interface DeclaredPolicies {
  /** The policy of `method route` (the route pattern, e.g. `/api/auth/:provider/start`), if declared. */
  of(method: string, route: string): RoutePolicy | undefined;
  /** The policy of the route that `method path` would reach, for a preflight. */
  reachedBy(method: string, path: string): RoutePolicy | undefined;
  /** Every registered route, as `{method, url}`. */
  routes(): Array<{ readonly method: string; readonly url: string }>;
}

declare module 'fastify' {
  interface FastifyInstance {
    routePolicies: DeclaredPolicies;
  }
}

/**
 * Makes a policy mandatory: registering a route without one throws, so a
 * new route cannot silently get no limit or no cross-site guard. Routes that
 * plugins register (the API explorer) get the policy of their prefix from
 * `byPrefix`. Call before any route is registered.
 */
export function requirePolicies(app: FastifyInstance, byPrefix: Readonly<Record<string, RoutePolicy>> = {}): void {
  const declared = new Map<string, RoutePolicy>();
  // Patterns in registration order with a matcher each, for preflights:
  // static patterns are tried before those with parameters, as the router does.
  const patterns: { readonly method: string; readonly matches: RegExp; readonly dynamic: boolean; readonly policy: RoutePolicy }[] = [];
  app.addHook('onRoute', (route) => {
    const prefix = Object.keys(byPrefix).find((candidate) => route.url === candidate || route.url.startsWith(`${candidate}/`));
    route.config ??= {};
    if (route.config.policy === undefined && prefix !== undefined) route.config.policy = byPrefix[prefix]!;
    const declaredPolicy = route.config.policy;
    if (declaredPolicy === undefined)
      throw new Error(`route ${String(route.method)} ${route.url} declares no policy (src/platform/http/policy.ts)`);
    const dynamic = /[:*]/.test(route.url);
    const source = route.url
      .split('/')
      .map((segment) => (segment.startsWith(':') ? '[^/]+' : segment === '*' ? '.*' : segment.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')))
      .join('/');
    for (const method of [route.method].flat()) {
      declared.set(`${method} ${route.url}`, declaredPolicy);
      if (route.url !== '*') patterns.push({ method, matches: new RegExp(`^${source}$`), dynamic, policy: declaredPolicy });
    }
  });
  const reachedBy = (method: string, path: string): RoutePolicy | undefined => {
    for (const candidate of [method, 'GET', 'POST', 'PATCH', 'DELETE']) {
      for (const dynamic of [false, true]) {
        const found = patterns.find((pattern) => pattern.method === candidate && pattern.dynamic === dynamic && pattern.matches.test(path));
        if (found !== undefined) return found.policy;
      }
    }
    return undefined;
  };
  app.decorate('routePolicies', {
    of: (method: string, route: string) => declared.get(`${method} ${route}`),
    reachedBy,
    routes: () =>
      [...declared.keys()].map((key) => {
        const space = key.indexOf(' ');
        return { method: key.slice(0, space), url: key.slice(space + 1) };
      }),
  });
}
