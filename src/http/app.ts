/**
 * The composition root: `buildApp(config, deps)` wires the domain services
 * to the routes and returns the Fastify app without listening (docs/architecture.md).
 * The server entry (src/main.ts) calls `listen`; tests use `inject()` or a
 * real port.
 */
import { randomUUID } from 'node:crypto';
import Fastify, { type FastifyInstance, type FastifyServerOptions } from 'fastify';
import type { Config } from '../config.js';
import { createEsploraClient, type ChainSource } from '../chain/index.js';
import { bytesToHex, hexToBytes } from '@noble/hashes/utils.js';
import { generateSecretKey } from 'nostr-tools/pure';
import { originRules } from '../signin/origins.js';
import { AccountService, ActivityLog, DeviceService, SignInService, type ProofCheckers } from '../account/index.js';
import { exposedFileWarning, octalMode, openStore, type Store } from '../storage/index.js';
import { loadKeyRing, loadServerSecret } from '../session/keystore.js';
import type { KeyRing } from '../session/keys.js';
import { SessionService } from '../session/service.js';
import type { NonceGuard } from '../signin/bip322-signin.js';
import { registerAuthRoutes } from './auth.js';
import { registerEmailOtpRoutes } from './email-otp.js';
import { registerProviderRoutes } from './providers.js';
import { createMailer, OUTBOX_WARNING, type Mailer } from '../mail/index.js';
import { createEmailCodeService } from '../signin/email-code.js';
import { createProviderRegistry } from '../signin/providers.js';
import { createContactRelay } from '../forms/index.js';
import { createEventCounter } from '../stats/counter.js';
import { registerChallengeRoutes } from './challenge.js';
import {
  createAttestationLookup,
  createAttestationPublisher,
  createLruCache,
  createSingleFlight,
  type CheckOutcome,
  type ResultCache,
  type SingleFlight,
} from '../attest/index.js';
import { createRelayPool, type RelayPool } from '../relay/index.js';
import { VERSION } from '../version.js';
import { registerAttestationRoutes } from './attestation.js';
import type { ServiceContext } from './context.js';
import { registerCors } from './cors.js';
import { registerErrorHandling } from './errors.js';
import { OcError } from '../errors.js';
import { registerHealthRoutes } from './health.js';
import { registerLookupRoutes } from './lookup.js';
import { registerOpenApi } from './openapi.js';
import type { Redis } from 'ioredis';
import { createMemoryRateLimiter, createRedisRateLimiter, createResilientLimiter, createThrottle } from '../limits/index.js';
import { createServiceMetrics, meteredChain, MeteredSessionService, meteredRelays } from '../metrics/index.js';
import { connectRedis, createRedisClient, createRedisNonceGuard, createRedisResultCache, createRedisSingleFlight, pingRedis } from '../redis/index.js';
import { registerMetrics } from './metrics.js';
import { registerRateLimits } from './rate-limit.js';
import { requirePolicies } from './policy.js';
import { registerWebAuthnRoutes } from './webauthn.js';
import { registerDeviceRoutes } from './devices.js';
import { registerActivityRoutes } from './activity.js';
import { SignInNotices } from '../account/notices.js';
import { registerRevocationRoutes } from './revocations.js';
import { RevocationFeed } from '../session/revocations.js';
import { registerLifecycleRoutes } from './lifecycle.js';
import { AccountLifecycle } from '../account/lifecycle.js';
import { relyingParty, WebAuthnService } from '../webauthn/index.js';
import { registerAccountRoutes } from './account.js';
import { registerConnectRoutes } from './connect.js';
import { registerPublicRoutes } from './public.js';
import { registerPageRoutes } from './pages.js';
import { registerSessions } from './session.js';
import { createConnectService, isDevelopmentUrl, loadWebhookKey, WebhookDispatcher } from '../connect/index.js';

export interface AppDeps {
  /** Clock; defaults to the system clock. */
  now?: () => Date;
  /** fetch used for outgoing HTTP (Esplora); defaults to the global fetch. */
  fetch?: typeof fetch;
  /** Chain data source; defaults to an Esplora client over `config.esploraUrls`. */
  chain?: ChainSource;
  /** Fastify logger option; defaults to pino at `config.logLevel`. `false` silences. */
  logger?: FastifyServerOptions['logger'];
  /** Where the default logger writes its lines; defaults to pino's standard output stream. */
  logStream?: { write(line: string): void };
  /** Storage; defaults to opening `config.databaseUrl`. An injected store is not closed by the app. */
  store?: Store;
  /** Used-nonce guard; defaults to the store's used-nonce table. */
  nonces?: NonceGuard;
  /** Outgoing mail; defaults to SMTP over `config.smtpUrl`, else the development outbox. */
  mailer?: Mailer;
  /** Directory of the development outbox (no SMTP_URL); default ./data/outbox. */
  outboxDir?: string;
  /** GitHub bases for a loopback stand-in in tests; default github.com and api.github.com. */
  githubAuthBase?: string;
  githubApiBase?: string;
  /** Nostr relay pool; defaults to one over `config.nostrRelays`. An injected pool is not closed by the app. */
  relays?: RelayPool;
  /** Per-relay deadline of the default pool, ms; default {@link DEFAULT_RELAY_TIMEOUT_MS}. */
  relayTimeoutMs?: number;
  /** The service's Nostr secret key (32 bytes); defaults to one generated on first start and kept in storage. */
  nostrSecretKey?: Uint8Array;
  /** /api/check result cache; defaults to an in-memory LRU (a shared one comes with REDIS_URL). */
  checkCache?: ResultCache<CheckOutcome>;
  /** Single flight of cold /api/check look-ups; defaults to an in-process one (a cross-instance one comes with REDIS_URL). */
  checkSingleFlight?: SingleFlight;
  /** Redis client for shared state; defaults to one over `config.redisUrl` when set. An injected client is not closed by the app. */
  redis?: Redis;
  /** How often the webhook worker looks for due deliveries, ms; default {@link WEBHOOK_POLL_MS}. */
  webhookPollMs?: number;
}

/** How often each instance's webhook worker looks for due deliveries (docs/protocol.md §6 "Webhooks"). */
export const WEBHOOK_POLL_MS = 1000;

/** Redis trouble is logged at most this often (each failure is still counted in the metrics). */
export const REDIS_WARNING_INTERVAL_MS = 60_000;

/**
 * With TRUST_PROXY the client IP is the address the proxy in front added to
 * X-Forwarded-For: the socket peer (hop 0) is trusted, nothing beyond it.
 * Trusting every hop would take the left-most entry, which the client writes
 * itself, and let it pick a fresh rate-limit bucket per request.
 */
const trustOneHop = (_address: string, hop: number): boolean => hop === 0;

/** Per-relay deadline of a look-up or publication (docs/protocol.md §7: "with a per-relay timeout"). */
export const DEFAULT_RELAY_TIMEOUT_MS = 4000;

/** How often the key ring is re-read (a `keys rotate` reaches running instances) and expired rows purged. */
export const KEY_REFRESH_MS = 60_000;
export const PURGE_INTERVAL_MS = 10 * 60_000;

const DAY_MS = 24 * 60 * 60 * 1000;

/** 64 KiB request bodies at most (docs/protocol.md §4). */
export const BODY_LIMIT = 64 * 1024;

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,64}$/;

/** How often Node looks for requests past their headers or request timeout. */
const CONNECTIONS_CHECK_MS = 500;

/** `Strict-Transport-Security` when `PUBLIC_URL` is https: one year. */
export const HSTS_VALUE = 'max-age=31536000';

/** Never log secrets, cookies or codes (docs/architecture.md, issue "Operations"). */
export const LOG_REDACT = [
  'req.headers.cookie',
  'req.headers.authorization',
  'res.headers["set-cookie"]',
];

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

  const now = deps.now ?? (() => new Date());
  const nowMs = () => now().getTime();

  // Shared state through Redis when REDIS_URL is set (docs/protocol.md §1). A client we create is ours to close.
  const redis = deps.redis ?? (config.redisUrl === undefined ? undefined : createRedisClient(config.redisUrl));
  const metrics = createServiceMetrics({ version: VERSION, ...(redis ? { redisReady: () => redis.status === 'ready' } : {}) });
  const warnAboutRedis = createThrottle(REDIS_WARNING_INTERVAL_MS);
  const redisFailed = (use: 'cache' | 'single_flight' | 'rate_limit' | 'nonce') => (error: unknown) => {
    metrics.redisErrors.inc([use]);
    if (warnAboutRedis()) {
      app.log.warn({ use, reason: error instanceof Error ? error.message : String(error) }, 'redis: unreachable; degraded until it returns');
    }
  };
  if (redis !== undefined) {
    // Each command reports its own failure; the event only needs a listener.
    redis.on('error', () => {});
    if (deps.redis === undefined) {
      if (!(await connectRedis(redis))) app.log.warn('redis: not reachable at start; retrying in the background');
      app.addHook('onClose', async () => {
        redis.disconnect();
      });
    }
  }

  const chain = meteredChain(
    deps.chain ?? createEsploraClient({ bases: config.esploraUrls, ...(deps.fetch ? { fetch: deps.fetch } : {}) }),
    metrics,
  );

  // Attestation look-up over Nostr (docs/protocol.md §7). A pool we create is ours to close.
  const relayPool =
    deps.relays ?? createRelayPool({ relays: config.nostrRelays, timeoutMs: deps.relayTimeoutMs ?? DEFAULT_RELAY_TIMEOUT_MS });
  if (deps.relays === undefined) app.addHook('onClose', async () => relayPool.close());
  const relays = meteredRelays(relayPool, metrics);
  // Storage, secrets and keys (docs/protocol.md §1, §3). A store we open is ours to close.
  // docs/operations.md "Files and permissions": a database file others can open is named in the log, not changed.
  const store =
    deps.store ??
    (await openStore(config.databaseUrl, {
      sqliteDriver: config.sqliteDriver,
      onExposedFile: (file) => app.log.warn({ file: file.path, mode: octalMode(file.mode) }, exposedFileWarning(file)),
    }));
  if (deps.store === undefined) app.addHook('onClose', async () => store.close());
  const serverSecret = await loadServerSecret(store, config.serverSecret);
  let keyRing: KeyRing = await loadKeyRing(store, config.authPrivateJwk, now());
  let keysReady = true;
  const refreshKeys = setInterval(() => {
    loadKeyRing(store, config.authPrivateJwk, now()).then(
      (ring) => {
        keyRing = ring;
        keysReady = true;
      },
      (error: unknown) => {
        keysReady = false;
        app.log.error({ err: error }, 'keys: could not reload the key ring');
      },
    );
  }, KEY_REFRESH_MS);
  refreshKeys.unref();
  const purge = setInterval(() => {
    store.purgeExpired(now().getTime(), { activityRetentionMs: config.activityRetentionDays * DAY_MS }).catch((error: unknown) => app.log.error({ err: error }, 'storage: purge failed'));
  }, PURGE_INTERVAL_MS);
  purge.unref();
  app.addHook('onClose', async () => {
    clearInterval(refreshKeys);
    clearInterval(purge);
  });
  const origins = originRules(config);
  // docs/protocol.md §6 "Webhooks": every instance runs a worker on the shared outbox.
  const webhookKey = await loadWebhookKey(store);
  const webhookRules = { development: isDevelopmentUrl(config.publicUrl), allowPrivate: config.webhookAllowPrivate };
  const webhooks = new WebhookDispatcher({
    store,
    key: () => webhookKey,
    rules: webhookRules,
    now,
    timeoutMs: config.webhookTimeoutSeconds * 1000,
    retryBaseMs: config.webhookRetrySeconds * 1000,
    pollMs: deps.webhookPollMs ?? WEBHOOK_POLL_MS,
    onError: (error) => app.log.error({ err: error }, 'webhooks: the worker failed a pass'),
    onAttempt: (entry) => app.log.info(entry, 'webhooks: attempt'),
  });
  app.addHook('onReady', async () => webhooks.start());
  app.addHook('onClose', async () => webhooks.stop());
  // Security events per account (docs/protocol.md §6 "Activity"); a failure to record is logged, never fatal.
  const activity = new ActivityLog({
    store,
    now,
    onError: (error, kind) => app.log.error({ err: error, kind }, 'activity: could not record an event'),
  });
  const mailer =
    deps.mailer ?? createMailer(config, { log: app.log, ...(deps.outboxDir === undefined ? {} : { outboxDir: deps.outboxDir }) });
  if (deps.mailer === undefined) app.addHook('onClose', async () => mailer.close());
  if (config.smtpUrl === undefined && deps.mailer === undefined) app.log.warn(OUTBOX_WARNING);
  // docs/protocol.md §6 "New sign-in notice": decided before the sign-in is recorded, mailed after the response.
  const notices = config.notifyNewSignin
    ? new SignInNotices({
        store,
        mailer,
        publicUrl: config.publicUrl,
        brand: config.brand,
        now,
        onError: (error) => app.log.warn({ code: error instanceof OcError ? error.code : 'internal' }, 'notice: a new sign-in notice was not sent'),
      })
    : undefined;
  const pendingNotices = new Set<Promise<unknown>>();
  app.addHook('onClose', async () => {
    await Promise.allSettled([...pendingNotices]);
  });
  const sessions: SessionService = new MeteredSessionService({ store, keys: () => keyRing, issuer: config.publicUrl, now }, async (input, issued) => {
    metrics.signIns.inc([input.method]);
    const facts = { method: input.method, device: input.client?.device ?? null, network: input.client?.network ?? null };
    const locale = input.client?.locale;
    const notice = notices === undefined ? null : await notices.assess(issued.session.account_id, { ...facts, locale });
    await activity.record(issued.session.account_id, 'signin', { ...facts, added: input.add && input.current !== null });
    if (notices !== undefined && notice !== null) {
      const sending = notices.send(notice).finally(() => pendingNotices.delete(sending));
      pendingNotices.add(sending);
    }
  });
  const nonces: NonceGuard =
    deps.nonces ??
    (redis !== undefined
      ? createRedisNonceGuard({ redis, now: nowMs, onError: redisFailed('nonce') })
      : { consume: (nonce, expiresAtMs) => store.consumeNonce(nonce, expiresAtMs, now().getTime()) });
  const emailCodes = createEmailCodeService({ store, mailer, secret: serverSecret, now, publicUrl: config.publicUrl, brand: config.brand });
  const providers = createProviderRegistry({
    providers: config.oauthProviders,
    publicUrl: config.publicUrl,
    secret: serverSecret,
    now,
    ...(deps.fetch ? { fetch: deps.fetch } : {}),
    ...(deps.githubAuthBase ? { githubAuthBase: deps.githubAuthBase } : {}),
    ...(deps.githubApiBase ? { githubApiBase: deps.githubApiBase } : {}),
    isAllowedReturnTo: (origin) => origins.isFamilyOrigin(origin),
    // The state is single-use across instances: the same table as challenge nonces.
    consumeOnce: (stateId, expiresAt) => nonces.consume(`oauth:${stateId}`, expiresAt.getTime()),
  });
  const contact = createContactRelay({ mailer, contactTo: config.contactTo, now });
  const attestCounter = createEventCounter({
    record: (kind, at, count) => store.recordAttestEvent(kind, at, count),
    now: nowMs,
    onError: (error) => app.log.error({ err: error }, 'stats: could not record attestation counts'),
  });
  // Written before the store closes (onClose hooks run in reverse order of adding).
  app.addHook('onClose', async () => attestCounter.close());
  // The event pubkey is trusted for nothing (docs/protocol.md §7), but a stable
  // one lets relay operators recognise the service.
  const nostrSecretKey =
    deps.nostrSecretKey ?? hexToBytes(await store.getOrCreateSetting('nostr_secret_key', () => bytesToHex(generateSecretKey())));
  // Where a person can check an attestation: this service's own check route.
  const verificationUrlOf = (attestationId: string): string => `${config.publicUrl}/api/check?id=${attestationId}`;
  const attestationLookup = createAttestationLookup({
    relays,
    chain,
    network: config.bitcoinNetwork,
    minConfirmations: config.minConfirmations,
    now,
    cache:
      deps.checkCache ??
      (redis !== undefined
        ? createRedisResultCache<CheckOutcome>({ redis, now: nowMs, local: createLruCache<CheckOutcome>({ now: nowMs }), onError: redisFailed('cache') })
        : createLruCache<CheckOutcome>({ now: nowMs })),
    singleFlight:
      deps.checkSingleFlight ?? (redis !== undefined ? createRedisSingleFlight({ redis, onError: redisFailed('single_flight') }) : createSingleFlight()),
    cacheTtlMs: config.checkCacheSeconds * 1000,
    verificationUrlOf,
  });
  const attestationPublisher = createAttestationPublisher({
    relays,
    network: config.bitcoinNetwork,
    now,
    secretKey: nostrSecretKey,
    verificationUrlOf,
  });

  // The proof checkers at this instant: challenge rules (docs/protocol.md §5) and e-mail codes (§6).
  const checkers = (): ProofCheckers => ({
    challenge: { secret: serverSecret, now: now(), network: config.bitcoinNetwork, isAllowedAudience: origins.isAllowedAudience, nonces },
    emailCodes,
  });
  const accounts = new AccountService({ store, sessions, checkers, now, activity });
  const signIn = new SignInService({ store, sessions, accounts, checkers, now });
  const devices = new DeviceService({ store, now, activity, sessions });
  const webauthn = new WebAuthnService({ store, sessions, rp: relyingParty(config, origins), secret: serverSecret, nonces, now, activity });

  const context: ServiceContext = {
    config,
    now,
    chain,
    relays,
    attestationLookup,
    attestationPublisher,
    nostrSecretKey,
    stats: store,
    sessions,
    serverSecret,
    nonces,
    keyRing: () => keyRing,
    mailer,
    emailCodes,
    providers,
    contact,
    attestCounter,
    origins,
    accounts,
    signIn,
    webauthn,
    devices,
    lifecycle: new AccountLifecycle({ store, activity, now, publicUrl: config.publicUrl }),
    webhookKey: () => webhookKey,
    activity,
    revocations: new RevocationFeed(store, now),
    readiness: async () => {
      const checks: Record<string, string> = { config: 'ok', keys: keysReady ? 'ok' : 'key ring reload failing' };
      try {
        await store.ping();
        checks.storage = 'ok';
      } catch {
        checks.storage = 'unreachable';
      }
      if (redis !== undefined) checks.redis = (await pingRedis(redis)) ? 'ok' : 'unreachable';
      return checks;
    },
  };

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
  const rateLimiter = createResilientLimiter({
    primary: redis !== undefined ? createRedisRateLimiter(redis) : createMemoryRateLimiter({ now: nowMs }),
    fallback: createMemoryRateLimiter({ now: nowMs }),
    onFailure: (error, mode) => {
      metrics.rateLimitStoreFailures.inc([mode]);
      redisFailed('rate_limit')(error);
    },
  });
  registerRateLimits(app, config, rateLimiter, { onRejected: (name) => metrics.rateLimited.inc([name]) }, { isLiveStartToken: emailCodes.isLiveToken });
  registerMetrics(app, config, metrics);
  await registerOpenApi(app, config, VERSION);
  registerHealthRoutes(app, context);
  registerAttestationRoutes(app, context);
  registerLookupRoutes(app, context);
  registerChallengeRoutes(app, context);
  registerAuthRoutes(app, context);
  registerEmailOtpRoutes(app, context);
  registerProviderRoutes(app, context);
  registerAccountRoutes(app, context);
  registerWebAuthnRoutes(app, context);
  registerDeviceRoutes(app, context);
  registerLifecycleRoutes(app, context);
  registerActivityRoutes(app, context);
  registerRevocationRoutes(app, context);
  registerConnectRoutes(app, context, createConnectService({ store, secret: serverSecret, now, activity, webhookRules }));
  registerPublicRoutes(app, context);
  registerPageRoutes(app, context);
  return app;
}
