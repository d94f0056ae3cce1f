/**
 * The composition root's second half (docs/architecture.md "Composition
 * root"): `buildApp(config, deps)` builds the services (src/services.ts) and
 * registers HTTP on them, and returns the Fastify app without listening. The
 * server entry (src/main.ts) calls `listen`; tests use `inject()` or a real
 * port.
 */
import { randomUUID } from 'node:crypto';
import Fastify, { type FastifyInstance, type FastifyServerOptions } from 'fastify';
import type { Config } from './platform/config.js';
import { buildServices, type ServiceDeps } from './services.js';
import { VERSION } from './platform/version.js';
import { registerCompression } from './platform/http/compression.js';
import { registerCors } from './web/cors.js';
import { registerErrorHandling } from './platform/http/errors.js';
import { registerOpenApi } from './web/openapi.js';
import { registerMetrics } from './features/operations/metrics-routes.js';
import { registerRateLimits } from './web/rate-limit.js';
import { requirePolicies } from './platform/http/policy.js';
import { HSTS_VALUE, registerPageRoutes } from './web/pages.js';
import { registerLoginGate, registerSessions, sessionDoor } from './web/session.js';
import './page-words.js';
import { FEATURES } from './feature-list.js';
import { typed } from './platform/http/schema-types.js';
import type { RouteKit } from './feature-kit.js';

export interface AppDeps extends ServiceDeps {
  /** Fastify logger option; defaults to pino at `config.logLevel`. `false` silences. */
  logger?: FastifyServerOptions['logger'];
  /** Where the default logger writes its lines; defaults to pino's standard output stream. */
  logStream?: { write(line: string): void };
}

/**
 * With TRUST_PROXY the client IP is the address the proxy in front added to
 * X-Forwarded-For: the socket peer (hop 0) is trusted, nothing beyond it.
 * Trusting every hop would take the left-most entry, which the client writes
 * itself, and let it pick a fresh rate-limit bucket per request.
 */
const trustOneHop = (_address: string, hop: number): boolean => hop === 0;

/** 64 KiB request bodies at most (docs/protocol.md §4). */
const BODY_LIMIT = 64 * 1024;

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,64}$/;

/** How often Node looks for requests past their headers or request timeout. */
const CONNECTIONS_CHECK_MS = 500;

/** Never log secrets, cookies or codes (docs/architecture.md, issue "Operations"). */
const LOG_REDACT = ['req.headers.cookie', 'req.headers.authorization', 'res.headers["set-cookie"]'];

export async function buildApp(config: Config, deps: AppDeps = {}): Promise<FastifyInstance> {
  const app = Fastify({
    logger: deps.logger ?? {
      level: config.logLevel,
      redact: LOG_REDACT,
      // The path only: query strings carry addresses and identities, and
      // client IPs are personal data; neither belongs in the log.
      serializers: { req: (request: { method: string; url: string }) => ({ method: request.method, path: request.url.split('?')[0] }) },
      ...(deps.logStream ? { stream: deps.logStream } : {}),
    },
    bodyLimit: BODY_LIMIT,
    trustProxy: config.trustProxy ? trustOneHop : false,
    // genReqId reads the header itself, so a hostile id is replaced, not trusted.
    requestIdHeader: false,
    genReqId: (request) => {
      const offered = request.headers['x-request-id'];
      return typeof offered === 'string' && REQUEST_ID.test(offered) ? offered : randomUUID();
    },
    ajv: {
      // Wrong types are errors, not silently coerced (docs/protocol.md §4: a wrong shape is 400).
      customOptions: { coerceTypes: false, removeAdditional: false, allErrors: false },
    },
    return503OnClosing: true,
    forceCloseConnections: 'idle',
    // Slow clients (docs/operations.md "Slow clients"): headers and the whole
    // request must arrive in time (else 408 and the socket is closed), idle
    // keep-alive sockets are closed, and Node checks the first two every
    // half second instead of every 30 s, so a slow client is cut off close to
    // its deadline.
    keepAliveTimeout: config.http.keepAliveTimeoutSeconds * 1000,
    requestTimeout: config.http.requestTimeoutSeconds * 1000,
    http: {
      headersTimeout: config.http.headersTimeoutSeconds * 1000,
      requestTimeout: config.http.requestTimeoutSeconds * 1000,
      connectionsCheckingInterval: CONNECTIONS_CHECK_MS,
    },
  });
  // Past the cap, Node closes a new connection as soon as it is accepted.
  app.server.maxConnections = config.http.maxConnections;

  const services = await buildServices(config, deps, app.log);
  const { context, metrics } = services;
  app.addHook('onReady', async () => services.start());
  app.addHook('onClose', async () => services.close());

  // JSON only: a text body is 415, not a string that fails validation later.
  app.removeContentTypeParser('text/plain');
  // An empty body sent with a JSON content type (fetch of a bodiless POST
  // such as logout) is no body at all; routes that need one still say 400.
  const parseJson = app.getDefaultJsonParser('error', 'error');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    const text = typeof body === 'string' ? body : body.toString('utf8');
    if (text.trim() === '') {
      done(null, undefined);
      return;
    }
    parseJson(request, text, done);
  });

  // On every response, JSON and errors included: no content sniffing, and
  // HSTS when the service is served over https (a year; not
  // includeSubDomains, which would bind names this service does not own).
  const hsts = config.publicUrl.startsWith('https:') ? HSTS_VALUE : undefined;
  app.addHook('onSend', (request, reply, payload, done) => {
    reply.header('x-request-id', request.id);
    reply.header('x-content-type-options', 'nosniff');
    if (hsts !== undefined) reply.header('strict-transport-security', hsts);
    done(null, payload);
  });

  // First: every route registered after this must declare its policy.
  requirePolicies(app);
  registerErrorHandling(app);
  registerSessions(app, context);
  registerCors(app, config);
  // After CORS, so a 429 still carries Access-Control-Allow-Origin; before the routes (docs/protocol.md §4).
  registerRateLimits(
    app,
    config,
    services.rateLimiter,
    { onRejected: (name) => metrics.rateLimited.inc([name]) },
    { resendChainOf: context.emailCodes.resendChainOf },
  );
  // After the rate limits: a request refused for want of a session still counts.
  registerLoginGate(app, context);
  registerMetrics(app, config, metrics);
  await registerOpenApi(app, config, VERSION);
  // Each feature's routes, in the list's order (src/feature-list.ts), each route file handed what it uses and no more
  // (docs/architecture.md "Routes get what they use"): the session door keeps the roster secret inside, and
  // only the signed-challenge primitive holds the server secret.
  const door = sessionDoor(context);
  registerPageRoutes(app, {
    door,
    origins: context.origins,
    brand: config.brand,
    publicUrl: config.publicUrl,
    interactionLogoOrigin: (uid) => context.oidc.interactionLogoOrigin(uid),
  });
  const kit: RouteKit = { app, routes: typed(app), context, config, door, rateLimiter: services.rateLimiter };
  for (const entry of FEATURES) entry.routes?.(kit);
  // Last, so that it sees each answer's final type and Cache-Control (src/platform/http/compression.ts).
  registerCompression(app);
  return app;
}
