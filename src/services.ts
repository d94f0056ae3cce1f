/**
 * The composition root's first half (docs/architecture.md "Composition
 * root"): the config and the injected dependencies in; the domain services,
 * as the routes are handed them (`ServiceContext`, src/feature-kit.ts), and
 * what stops them out. This file builds the platform's parts (Redis, the
 * chain, the relays, storage, secrets and keys, mail, limits) and the
 * identity core's services; each feature's come from its entry of the list
 * of the features (src/feature-list.ts), in the order of the list.
 * `buildApp` (src/app.ts) registers HTTP on the result; the command line
 * (src/cli.ts) builds the parts its commands need with the same functions,
 * so a timeout or a default lives in one place.
 *
 * What this file opens it closes: `Services.close()` runs the closers in the
 * reverse order of opening, and a build that fails half-way closes what it
 * had opened before it rethrows.
 */
import type { Config } from './platform/config.js';
import { createBlockCache, createEsploraClient, type ChainAnswer, type ChainSource } from './chain/index.js';
import { originRules } from './identity/signin/index.js';
import { AccountService, ActivityLog, SignInService, type ProofCheckers, SignInNotices } from './identity/account/index.js';
import { exposedFileWarning, octalMode, type NonceGuard } from './platform/storage/index.js';
import { openStore } from './store.js';
import { loadKeyRing, loadServerSecret, SessionService, RevocationFeed, type KeyRing } from './identity/session/index.js';
import { createMailer, OUTBOX_WARNING } from './platform/mail/index.js';
import type { ResultCache, SingleFlight } from './platform/cache.js';
import { createRelayPool, type RelayPool } from './relay/index.js';
import { VERSION } from './platform/version.js';
import { OcError } from './platform/errors.js';
import {
  createMemoryRateLimiter,
  createRedisRateLimiter,
  createResilientLimiter,
  createThrottle,
  type ResilientLimiter,
} from './platform/limits/index.js';
import {
  createServiceMetrics,
  meteredChain,
  meteredChainReader,
  meteredRelays,
  type ServiceMetrics,
} from './features/operations/service-metrics.js';
import {
  CHAIN_CACHE_KEY_PREFIX,
  connectRedis,
  createRedisClient,
  createRedisNonceGuard,
  createRedisResultCache,
  createRedisSingleFlight,
  pingRedis,
} from './platform/redis/index.js';
import type { Closer, RedisUse, ServiceContext, ServiceDeps, ServiceKit, ServiceLog } from './feature-kit.js';
import { FEATURES } from './feature-list.js';

export type { ServiceDeps, ServiceLog } from './feature-kit.js';

/** Per-relay deadline of a look-up or publication (docs/protocol.md §7: "with a per-relay timeout"). */
const DEFAULT_RELAY_TIMEOUT_MS = 4000;

/** Redis trouble is logged at most this often (each failure is still counted in the metrics). */
const REDIS_WARNING_INTERVAL_MS = 60_000;

/** How often the key ring is re-read (a `keys rotate` reaches running instances) and expired rows purged. */
const KEY_REFRESH_MS = 60_000;
const PURGE_INTERVAL_MS = 10 * 60_000;

const DAY_MS = 24 * 60 * 60 * 1000;

export interface Services {
  readonly context: ServiceContext;
  readonly metrics: ServiceMetrics;
  /** The request limiter: Redis with REDIS_URL, in memory otherwise and while Redis is away. */
  readonly rateLimiter: ResilientLimiter;
  /** Starts the background work that needs a ready server (the webhook worker). */
  start(): void;
  /** Stops the background work and closes what was opened here, newest first. */
  close(): Promise<void>;
}

async function closeAll(closers: Closer[]): Promise<void> {
  for (const close of closers.splice(0).reverse()) await close();
}

/**
 * The chain source the service and the command line read, unless one is
 * injected: Esplora over `ESPLORA_URLS` behind the block cache
 * (src/chain/block-cache.ts), its answers and single flight shared through
 * Redis when the parts are given.
 */
export function buildChain(
  config: Pick<Config, 'esploraUrls' | 'chain'>,
  deps: Pick<ServiceDeps, 'chain' | 'fetch' | 'now'> = {},
  parts: {
    readonly metrics?: ServiceMetrics | undefined;
    readonly shared?: ResultCache<ChainAnswer> | undefined;
    readonly singleFlight?: SingleFlight | undefined;
  } = {},
): ChainSource {
  if (deps.chain !== undefined) return deps.chain;
  const client = createEsploraClient({
    bases: config.esploraUrls,
    maxConnections: config.chain.maxConnections,
    ...(deps.fetch ? { fetch: deps.fetch } : {}),
  });
  const now = deps.now ?? (() => new Date());
  return createBlockCache({
    reader: parts.metrics === undefined ? client : meteredChainReader(client, parts.metrics),
    now: () => now().getTime(),
    tipTtlMs: config.chain.tipSeconds * 1000,
    maxEntries: config.chain.cacheEntries,
    maxBytes: config.chain.cacheMegabytes * 1024 * 1024,
    ...(parts.shared ? { shared: parts.shared } : {}),
    ...(parts.singleFlight ? { singleFlight: parts.singleFlight } : {}),
  });
}

/** A relay pool over `NOSTR_RELAYS` with the per-relay deadline; the caller closes it. */
export function buildRelayPool(config: Pick<Config, 'nostrRelays'>, timeoutMs: number = DEFAULT_RELAY_TIMEOUT_MS): RelayPool {
  return createRelayPool({ relays: config.nostrRelays, timeoutMs });
}

/**
 * Builds every service of a running instance. The timers (key ring reload,
 * purge) start here and are unref'd; the webhook worker waits for
 * {@link Services.start}.
 */
export async function buildServices(config: Config, deps: ServiceDeps, log: ServiceLog): Promise<Services> {
  const closers: Closer[] = [];
  try {
    return await assemble(config, deps, log, closers);
  } catch (error) {
    await closeAll(closers);
    throw error;
  }
}

async function assemble(config: Config, deps: ServiceDeps, log: ServiceLog, closers: Closer[]): Promise<Services> {
  const now = deps.now ?? (() => new Date());
  const nowMs = () => now().getTime();

  // Shared state through Redis when REDIS_URL is set (docs/protocol.md §1). A client made here is closed here.
  const redis = deps.redis ?? (config.redisUrl === undefined ? undefined : createRedisClient(config.redisUrl));
  const metrics = createServiceMetrics({ version: VERSION, ...(redis ? { redisReady: () => redis.status === 'ready' } : {}) });
  const warnAboutRedis = createThrottle(REDIS_WARNING_INTERVAL_MS);
  const redisFailed = (use: RedisUse) => (error: unknown) => {
    metrics.redisErrors.inc([use]);
    if (warnAboutRedis())
      log.warn({ use, reason: error instanceof Error ? error.message : String(error) }, 'redis: unreachable; degraded until it returns');
  };
  if (redis !== undefined) {
    // Each command reports its own failure; the event only needs a listener.
    redis.on('error', () => {});
    if (deps.redis === undefined) {
      closers.push(() => redis.disconnect());
      if (!(await connectRedis(redis))) log.warn('redis: not reachable at start; retrying in the background');
    }
  }

  // Chain answers cached by block, shared by the instances with REDIS_URL (docs/performance.md "The chain").
  const chain = meteredChain(
    buildChain(config, deps, {
      metrics,
      shared:
        redis === undefined
          ? undefined
          : createRedisResultCache<ChainAnswer>({ redis, now: nowMs, prefix: CHAIN_CACHE_KEY_PREFIX, onError: redisFailed('cache') }),
      singleFlight: redis === undefined ? undefined : createRedisSingleFlight({ redis, onError: redisFailed('single_flight') }),
    }),
    metrics,
  );
  // Attestation look-up over Nostr (docs/protocol.md §7).
  const relayPool = deps.relays ?? buildRelayPool(config, deps.relayTimeoutMs);
  if (deps.relays === undefined) closers.push(() => relayPool.close());
  const relays = meteredRelays(relayPool, metrics);

  // Storage, secrets and keys (docs/protocol.md §1, §3).
  // docs/operations.md "Files and permissions": a database file others can open is named in the log, not changed.
  const store =
    deps.store ??
    (await openStore(config.databaseUrl, {
      sqliteDriver: config.sqliteDriver,
      onExposedFile: (file) => log.warn({ file: file.path, mode: octalMode(file.mode) }, exposedFileWarning(file)),
    }));
  if (deps.store === undefined) closers.push(() => store.close());
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
        log.error({ err: error }, 'keys: could not reload the key ring');
      },
    );
  }, KEY_REFRESH_MS);
  refreshKeys.unref();
  const purge = setInterval(() => {
    store
      .purgeExpired(nowMs(), {
        activityRetentionMs: config.activityRetentionDays * DAY_MS,
        auditRetentionMs: config.auditRetentionDays * DAY_MS,
      })
      .catch((error: unknown) => log.error({ err: error }, 'storage: purge failed'));
  }, PURGE_INTERVAL_MS);
  purge.unref();
  closers.push(() => {
    clearInterval(refreshKeys);
    clearInterval(purge);
  });

  const origins = originRules(config);
  // Security events per account (docs/protocol.md §6 "Activity"); a failure to record is logged, never fatal.
  const activity = new ActivityLog({
    store,
    now,
    onError: (error, kind) => log.error({ err: error, kind }, 'activity: could not record an event'),
  });
  const mailer = deps.mailer ?? createMailer(config, { log, ...(deps.outboxDir === undefined ? {} : { outboxDir: deps.outboxDir }) });
  if (deps.mailer === undefined) closers.push(() => mailer.close());
  if (config.smtpUrl === undefined && deps.mailer === undefined) log.warn(OUTBOX_WARNING);
  // docs/protocol.md §6 "New sign-in notice": assessed before the sign-in is recorded, mailed after the response.
  const notices = config.notifyNewSignin
    ? new SignInNotices({
        store,
        mailer,
        publicUrl: config.publicUrl,
        brand: config.brand,
        now,
        onError: (error) =>
          log.warn({ code: error instanceof OcError ? error.code : 'internal' }, 'notice: a new sign-in notice was not sent'),
      })
    : undefined;
  if (notices !== undefined) closers.push(() => notices.settle());
  const sessions = new SessionService({ store, keys: () => keyRing, issuer: config.publicUrl, now });
  const nonces: NonceGuard =
    deps.nonces ??
    (redis !== undefined
      ? createRedisNonceGuard({ redis, now: nowMs, onError: redisFailed('nonce') })
      : { consume: (nonce, expiresAtMs) => store.consumeNonce(nonce, expiresAtMs, nowMs()) });

  // What the features have built so far; the e-mail codes' checker is theirs (src/features/email-code).
  const built: Partial<ServiceContext> = {};
  // The proof checkers at this instant: challenge rules (docs/protocol.md §5) and e-mail codes (§6).
  const checkers = (): ProofCheckers => ({
    challenge: { secret: serverSecret, now: now(), network: config.bitcoinNetwork, isAllowedAudience: origins.isAllowedAudience, nonces },
    emailCodes: built.emailCodes!,
  });
  const accounts = new AccountService({ store, sessions, checkers, now, activity });
  const signIn = new SignInService({
    store,
    sessions,
    accounts,
    checkers,
    now,
    activity,
    notices,
    counted: (method) => metrics.signIns.inc([method]),
  });

  const rateLimiter = createResilientLimiter({
    primary: redis !== undefined ? createRedisRateLimiter(redis) : createMemoryRateLimiter({ now: nowMs }),
    fallback: createMemoryRateLimiter({ now: nowMs }),
    onFailure: (error, mode) => {
      metrics.rateLimitStoreFailures.inc([mode]);
      redisFailed('rate_limit')(error);
    },
  });

  Object.assign(built, {
    config,
    now,
    chain,
    relays,
    sessions,
    serverSecret,
    nonces,
    keyRing: () => keyRing,
    mailer,
    checkers,
    origins,
    accounts,
    signIn,
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
  } satisfies Partial<ServiceContext>);

  // Each feature's services, in the order of the list (src/feature-list.ts).
  const starters: Array<() => void> = [];
  for (const entry of FEATURES) {
    if (entry.services === undefined) continue;
    const kit: ServiceKit = {
      config,
      deps,
      log,
      now,
      store,
      redis,
      metrics,
      redisFailed,
      use: (name) => {
        const service = built[name];
        if (service === undefined)
          throw new Error(
            `services: the feature ${entry.feature} uses ${name}, which no entry above it on the list of the features provides`,
          );
        return service as ServiceContext[typeof name];
      },
      onClose: (close) => closers.push(close),
      onStart: (start) => starters.push(start),
    };
    Object.assign(built, await entry.services(kit));
  }
  const context = built as ServiceContext;
  return {
    context,
    metrics,
    rateLimiter,
    start: () => {
      for (const start of starters) start();
    },
    close: () => closeAll(closers),
  };
}
