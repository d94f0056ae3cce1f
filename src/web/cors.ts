/**
 * CORS and the cross-site guard (docs/protocol.md §4), by the `cors` class of
 * each route's policy (src/platform/http/policy.ts):
 *
 * - `public` routes answer `Access-Control-Allow-Origin: *` without credentials;
 * - `family` routes (/api/auth/*, /api/connect/apps) answer CORS only to
 *   family origins, with credentials, and refuse a state-changing request from
 *   any other site with 403 `cross_site`;
 * - `same-origin` routes (/api/contact) accept posts only from this service's own origin.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Config } from '../platform/config.js';
import { originRules } from '../identity/signin/index.js';
import { OcError } from '../platform/errors.js';
import { sendError } from '../platform/http/errors.js';
import { decodedPathOf, policyOf, POLICY, unmatchedPolicy, type CorsClass } from '../platform/http/policy.js';

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);
// x-oc-tab-session: the OrangeCheck client's per-tab pin; a preflight that does not
// list it makes the browser block the call itself.
const ALLOWED_HEADERS = 'content-type, authorization, x-request-id, x-oc-tab-session';

/**
 * The `Access-Control-Allow-Methods` of each CORS class: every method a route
 * of that class is registered with, read from the declared policies
 * (docs/protocol.md §4 "CORS"). Derived rather than listed, so a route with a
 * new method (the Connect webhook's PUT) is callable from a family site
 * without a second list to keep in step.
 */
function allowedMethodsByClass(app: FastifyInstance): ReadonlyMap<CorsClass, string> {
  const methods = new Map<CorsClass, Set<string>>();
  for (const { method, url } of app.routePolicies.routes()) {
    const cors = app.routePolicies.of(method, url)?.cors;
    if (cors === undefined) continue;
    const found = methods.get(cors) ?? new Set<string>();
    found.add(method);
    methods.set(cors, found);
  }
  return new Map([...methods].map(([cors, found]) => [cors, [...found].sort().join(', ')]));
}

/**
 * The CORS class that applies: the matched route's, or for the preflight
 * catch-all the class of the route the preflight asks about.
 */
function corsClassOf(app: FastifyInstance, request: FastifyRequest): CorsClass {
  // One read of routeOptions: Fastify builds that object on every access.
  const route = request.routeOptions;
  if (route.url !== '*') return (route.config.policy ?? policyOf(request)).cors;
  const path = decodedPathOf(request.url);
  const asked = request.headers['access-control-request-method'];
  const method = typeof asked === 'string' && asked !== '' ? asked.toUpperCase() : 'GET';
  return (app.routePolicies.reachedBy(method, path) ?? unmatchedPolicy(path)).cors;
}

/** True when a state-changing request comes from a site other than `allowed`. */
function crossSite(request: FastifyRequest, allowed: (origin: string) => boolean): boolean {
  if (SAFE_METHODS.has(request.method)) return false;
  const origin = request.headers.origin;
  if (typeof origin === 'string' && origin !== '') return !allowed(origin);
  // No Origin: a browser only omits it on same-origin navigations; trust
  // Fetch Metadata when present (non-browser clients send neither).
  return request.headers['sec-fetch-site'] === 'cross-site';
}

/**
 * For the same-origin-only routes (/api/contact), a state-changing request
 * must prove where it comes from: an `Origin` equal to the service's own
 * origin, or, when a browser sent no `Origin` (or `Origin: null`),
 * `Sec-Fetch-Site: same-origin`.
 * A request with neither header is refused like a cross-site one: a browser
 * always sends one of them on a POST, and a form relay has no reason to serve
 * anything but its own page.
 */
export function provenSameOrigin(request: FastifyRequest, ownOrigin: string): boolean {
  const origin = request.headers.origin;
  // `Origin: null` names no origin: browsers send it on a form post from a
  // page whose Referrer-Policy is no-referrer (ours, and the consent page's),
  // so Fetch Metadata decides as when there is none.
  if (typeof origin === 'string' && origin !== '' && origin !== 'null') return origin === ownOrigin;
  return request.headers['sec-fetch-site'] === 'same-origin';
}

export function registerCors(app: FastifyInstance, config: Config): void {
  const { isFamilyOrigin } = originRules(config);
  // A callback hook, not an async one: it runs on every request, and a
  // promise per request is measurable on the cached /api/check path.
  app.addHook('onRequest', (request, reply, done) => {
    const corsClass = corsClassOf(app, request);
    const origin = request.headers.origin;
    if (corsClass === 'public') {
      reply.header('access-control-allow-origin', '*');
    } else if (corsClass === 'family') {
      if (typeof origin === 'string' && isFamilyOrigin(origin)) {
        reply.header('access-control-allow-origin', origin);
        reply.header('access-control-allow-credentials', 'true');
      }
      reply.header('vary', 'Origin');
      if (crossSite(request, (candidate) => isFamilyOrigin(candidate))) {
        // A hook that replies does not call done.
        sendError(request, reply, new OcError('cross_site', 'request: cross-site requests are refused'));
        return;
      }
    } else if (corsClass === 'same-origin') {
      if (!SAFE_METHODS.has(request.method) && !provenSameOrigin(request, config.publicOrigin)) {
        sendError(request, reply, new OcError('cross_site', 'request: only this site may post here'));
        return;
      }
    }
    done();
  });

  // Read on the first preflight: every route is registered by then (Fastify
  // refuses new routes once the app is ready, and no request is served before).
  let allowedMethods: ReadonlyMap<CorsClass, string> | undefined;

  // Preflight for every path: answered here so routes need no OPTIONS handler.
  app.route({
    method: 'OPTIONS',
    url: '*',
    schema: { hide: true },
    config: { policy: POLICY.unlimited },
    handler: async (request, reply) => {
      const corsClass = corsClassOf(app, request);
      const origin = request.headers.origin;
      const allowed = corsClass === 'public' || (corsClass === 'family' && typeof origin === 'string' && isFamilyOrigin(origin));
      if (allowed) {
        allowedMethods ??= allowedMethodsByClass(app);
        reply.header('access-control-allow-methods', allowedMethods.get(corsClass) ?? '');
        reply.header('access-control-allow-headers', ALLOWED_HEADERS);
        reply.header('access-control-max-age', '600');
      }
      return reply.code(204).send();
    },
  });
}
