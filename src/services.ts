/**
 * The composition root's first half (docs/architecture.md "Composition
 * root"): the config and the injected dependencies in; the domain services,
 * as the routes are handed them (`ServiceContext`), and what stops them out.
 * `buildApp` (src/app.ts) registers HTTP on the result; the command line
 * (src/cli.ts) builds the parts its commands need with the same functions,
 * so a timeout or a default lives in one place.
 *
 * What this file opens it closes: `Services.close()` runs the closers in the
 * reverse order of opening, and a build that fails half-way closes what it
 * had opened before it rethrows.
 */
import { AdminAccounts, OperatorService } from './features/admin/index.js';
import { bytesToHex, hexToBytes } from '@noble/hashes/utils.js';
import { generateSecretKey } from 'nostr-tools/pure';
import type { Redis } from 'ioredis';
import type { Config } from './platform/config.js';
import { createBlockCache, createEsploraClient, type ChainAnswer, type ChainSource } from './chain/index.js';
import { originRules, type OriginRules } from './identity/signin/index.js';
import { createEmailCodeService, type EmailCodeService } from './features/email-code/email-code.js';
import { createProviderRegistry, type ProviderRegistry } from './features/providers/providers.js';
import { HandoffService } from './features/phone/handoff.js';
import { AccountService, ActivityLog, SignInService, type ProofCheckers, SignInNotices } from './identity/account/index.js';
import { DeviceService } from './features/devices/devices.js';
import { AccountLifecycle } from './features/account-data/lifecycle.js';
import { exposedFileWarning, octalMode } from './platform/storage/index.js';
import type { StatsStore } from './features/stats/store.js';
import { openStore, type Store } from './store.js';
import { loadKeyRing, loadServerSecret, SessionService, RevocationFeed } from './identity/session/index.js';
import type { KeyRing } from './identity/session/index.js';
import type { NonceGuard } from './platform/storage/index.js';
import { createMailer, OUTBOX_WARNING, type Mailer } from './platform/mail/index.js';
import { createContactRelay, type ContactRelay } from './features/contact/index.js';
import { createEventCounter, type EventCounter } from './features/stats/counter.js';
import {
  createAttestationLookup,
  createAttestationPublisher,
  createLruCache,
  createSignatureVerdicts,
  createSingleFlight,
  type AttestationLookupService,
  type AttestationPublisher,
  type CheckOutcome,
  type ResultCache,
  type SignatureVerdicts,
  type SingleFlight,
} from './features/attestations/index.js';
import { createRelayPool, type RelayPool } from './relay/index.js';
import { VERSION } from './platform/version.js';
import { isOcError, OcError } from './platform/errors.js';
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
  deletionsChannel,
  listenForDeletions,
  pingRedis,
} from './platform/redis/index.js';
import { relyingParty, WebAuthnService } from './features/passkeys/index.js';
import { BackchannelLogoutDispatcher, OidcService } from './features/oidc/index.js';
import {
  createConnectService,
  isDevelopmentUrl,
  loadWebhookKey,
  WebhookDispatcher,
  checkWebhookUrl,
  postToEndpoint,
  webhookBackoffMs,
  type ConnectService,
  type WebhookKey,
} from './features/connect/index.js';

/** Per-relay deadline of a look-up or publication (docs/protocol.md §7: "with a per-relay timeout"). */
const DEFAULT_RELAY_TIMEOUT_MS = 4000;

/** How often each instance's webhook worker looks for due deliveries (docs/protocol.md §6 "Webhooks"). */
const WEBHOOK_POLL_MS = 1000;

/** Redis trouble is logged at most this often (each failure is still counted in the metrics). */
const REDIS_WARNING_INTERVAL_MS = 60_000;

/** How often the key ring is re-read (a `keys rotate` reaches running instances) and expired rows purged. */
const KEY_REFRESH_MS = 60_000;
const PURGE_INTERVAL_MS = 10 * 60_000;

const DAY_MS = 24 * 60 * 60 * 1000;

/** Where the services report what goes wrong: pino's shape (the app's logger), never a secret or personal data. */
export interface ServiceLog {
  info(object: object, message: string): void;
  warn(object: object | string, message?: string): void;
  error(object: object | string, message?: string): void;
}

/** What a caller (a test, a benchmark) may put in place of the defaults. */
export interface ServiceDeps {
  /** Clock; defaults to the system clock. */
  now?: () => Date;
  /** fetch used for outgoing HTTP (Esplora, providers); defaults to the global fetch. */
  fetch?: typeof fetch;
  /** Chain data source; defaults to an Esplora client over `config.esploraUrls` behind the block cache (src/chain/block-cache.ts). */
  chain?: ChainSource;
  /** Storage; defaults to opening `config.databaseUrl`. An injected store is not closed here. */
  store?: Store;
  /** Used-nonce guard; defaults to the store's used-nonce table (Redis with REDIS_URL). */
  nonces?: NonceGuard;
  /** Outgoing mail; defaults to SMTP over `config.smtpUrl`, else the development outbox. */
  mailer?: Mailer;
  /** Directory of the development outbox (no SMTP_URL); default ./data/outbox. */
  outboxDir?: string;
  /** GitHub bases for a loopback stand-in in tests; default github.com and api.github.com. */
  githubAuthBase?: string;
  githubApiBase?: string;
  /** Nostr relay pool; defaults to one over `config.nostrRelays`. An injected pool is not closed here. */
  relays?: RelayPool;
  /** Per-relay deadline of the default pool, ms; default {@link DEFAULT_RELAY_TIMEOUT_MS}. */
  relayTimeoutMs?: number;
  /** The service's Nostr secret key (32 bytes); defaults to one generated on first start and kept in storage. */
  nostrSecretKey?: Uint8Array;
  /** /api/check result cache; defaults to an in-memory LRU (a shared one comes with REDIS_URL). */
  checkCache?: ResultCache<CheckOutcome>;
  /** Single flight of cold /api/check look-ups; defaults to an in-process one (a cross-instance one comes with REDIS_URL). */
  checkSingleFlight?: SingleFlight;
  /** Redis client for shared state; defaults to one over `config.redisUrl` when set. An injected client is not closed here. */
  redis?: Redis;
  /** How often the webhook worker looks for due deliveries, ms; default {@link WEBHOOK_POLL_MS}. */
  webhookPollMs?: number;
}

/** What the routes are handed: the parsed config and the domain services. Routes never construct services. */
export interface ServiceContext {
  readonly config: Config;
  /** The clock; injectable so tests can freeze or move time. */
  readonly now: () => Date;
  readonly chain: ChainSource;
  /** Verdicts of the signatures /api/verify already checked (src/features/attestations/verify.ts). */
  readonly signatureVerdicts: SignatureVerdicts;
  /** Nostr relays read by /api/check and /api/discover and written by /api/attestations (docs/protocol.md §7). */
  readonly relays: RelayPool;
  /** The check/discover service with its result cache (src/features/attestations/lookup.ts). */
  readonly attestationLookup: AttestationLookupService;
  /** Publishes wallet-signed attestations to the relays (src/features/attestations/publish.ts). */
  readonly attestationPublisher: AttestationPublisher;
  /** The service's own Nostr secret key (32 bytes): signs the events it publishes. */
  readonly nostrSecretKey: Uint8Array;
  /** The statistics area of storage, for /api/family-stats; services hold the areas they need. */
  readonly stats: StatsStore;
  readonly sessions: SessionService;
  /** `OC_SERVER_SECRET`, or the one kept in storage: keys challenge nonces, e-mail code hashes, OAuth state. */
  readonly serverSecret: Uint8Array;
  /** Consumes sign-in nonces once across instances. */
  readonly nonces: NonceGuard;
  /** The current key ring (reloaded periodically so rotations reach every instance). */
  keyRing(): KeyRing;
  /** Family origins and challenge audiences (src/identity/signin/origins.ts). */
  readonly origins: OriginRules;
  /** Step-up, link, unlink, edit (src/identity/account/service.ts). */
  readonly accounts: AccountService;
  /** The door every sign-in goes through: identity to account to session, with its side effects (src/identity/account/sign-in.ts). */
  readonly signIn: SignInService;
  /** Revoked sessions for consumer sites (src/identity/session/revocations.ts). */
  readonly revocations: RevocationFeed;
  /** The account's security events (src/identity/account/activity.ts). */
  readonly activity: ActivityLog;
  /** Where the active account is signed in (src/features/devices/devices.ts). */
  readonly devices: DeviceService;
  /** Export, deletion and the operator's hold (src/features/account-data/lifecycle.ts). */
  readonly lifecycle: AccountLifecycle;
  /** The key that signs Connect webhooks (src/features/connect/webhooks.ts). */
  readonly webhookKey: () => WebhookKey;
  /** Security keys and passkeys (src/features/passkeys). */
  readonly webauthn: WebAuthnService;
  readonly mailer: Mailer;
  /** E-mail one-time codes (docs/protocol.md §6). */
  readonly emailCodes: EmailCodeService;
  /** Configured identity providers (docs/protocol.md §6). */
  readonly providers: ProviderRegistry;
  /** Signing in on a desktop from a phone's wallet (docs/protocol.md "Signing in from a phone"). */
  readonly handoffs: HandoffService;
  /** The contact-form relay (docs/protocol.md §6). */
  readonly contact: ContactRelay;
  /** Counts /api/check and /api/verify calls for /api/family-stats, written in batches. */
  readonly attestCounter: EventCounter;
  /** Integrator apps and their webhooks (src/features/connect). */
  readonly connect: ConnectService;
  /** The OpenID provider: its keys, clients, claims and consents (src/features/oidc). */
  readonly oidc: OidcService;
  /** Who may operate, their API tokens and the audit log (src/features/admin). */
  readonly operators: OperatorService;
  /** One person's account as an operator sees and holds it (src/features/admin). */
  readonly adminAccounts: AdminAccounts;
  /** Named readiness checks, each `ok` or a short reason. */
  readiness(): Promise<Record<string, string>>;
}

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

type Closer = () => void | Promise<void>;

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

/** The check/discover service over `chain` and `relays` (src/features/attestations/lookup.ts), with an in-process cache unless one is given. */
export function buildAttestationLookup(
  config: Pick<Config, 'bitcoinNetwork' | 'minConfirmations' | 'checkCacheSeconds' | 'publicUrl'>,
  parts: {
    readonly chain: ChainSource;
    readonly relays: RelayPool;
    readonly now: () => Date;
    readonly cache?: ResultCache<CheckOutcome> | undefined;
    readonly singleFlight?: SingleFlight | undefined;
  },
): AttestationLookupService {
  const nowMs = () => parts.now().getTime();
  return createAttestationLookup({
    relays: parts.relays,
    chain: parts.chain,
    network: config.bitcoinNetwork,
    minConfirmations: config.minConfirmations,
    now: parts.now,
    cache: parts.cache ?? createLruCache<CheckOutcome>({ now: nowMs }),
    singleFlight: parts.singleFlight ?? createSingleFlight(),
    cacheTtlMs: config.checkCacheSeconds * 1000,
    verificationUrlOf: verificationUrlOf(config),
  });
}

/**
 * The /api/check cache shared through Redis: a local tier in front, and a
 * connection of its own that listens for the keys other instances delete
 * (a publication: src/platform/redis/cache.ts), closed with the services.
 */
function sharedCheckCache(
  redis: Redis,
  nowMs: () => number,
  onError: (error: unknown) => void,
  closers: Closer[],
): ResultCache<CheckOutcome> {
  const local = createLruCache<CheckOutcome>({ now: nowMs });
  const channel = deletionsChannel(redis);
  const subscriber = redis.duplicate();
  subscriber.on('error', () => {});
  listenForDeletions({ subscriber, channel, local, onError });
  closers.push(() => subscriber.disconnect());
  // Connects in the background and subscribes once ready; until then a deletion elsewhere reaches this instance's Redis reads only.
  subscriber.connect().catch(() => {});
  return createRedisResultCache<CheckOutcome>({ redis, now: nowMs, local, channel, onError });
}

/** Where a person can check an attestation: this service's own check route. */
function verificationUrlOf(config: Pick<Config, 'publicUrl'>): (attestationId: string) => string {
  return (attestationId) => `${config.publicUrl}/api/check?id=${attestationId}`;
}

/** The account lifecycle (export, deletion, the operator's hold) and the activity log it records to, as the operator commands use them. */
export function buildLifecycle(
  store: Store,
  config: Pick<Config, 'publicUrl'>,
  now: () => Date,
  onError: (error: unknown, kind: string) => void,
): { readonly activity: ActivityLog; readonly lifecycle: AccountLifecycle } {
  const activity = new ActivityLog({ store, now, onError });
  return { activity, lifecycle: new AccountLifecycle({ store, activity, now, publicUrl: config.publicUrl }) };
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
  const redisFailed = (use: 'cache' | 'single_flight' | 'rate_limit' | 'nonce') => (error: unknown) => {
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
    onError: (error) => log.error({ err: error }, 'webhooks: the worker failed a pass'),
    onAttempt: (entry) => log.info(entry, 'webhooks: attempt'),
  });
  closers.push(() => webhooks.stop());
  // Security events per account (docs/protocol.md §6 "Activity"); a failure to record is logged, never fatal.
  const { activity, lifecycle } = buildLifecycle(store, config, now, (error, kind) =>
    log.error({ err: error, kind }, 'activity: could not record an event'),
  );
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
    onError: (error) => log.error({ err: error }, 'stats: could not record attestation counts'),
  });
  // Written before the store closes (closers run newest first).
  closers.push(() => attestCounter.close());
  // The event pubkey is trusted for nothing (docs/protocol.md §7), but a stable
  // one lets relay operators recognise the service.
  const nostrSecretKey =
    deps.nostrSecretKey ?? hexToBytes(await store.getOrCreateSetting('nostr_secret_key', () => bytesToHex(generateSecretKey())));
  const attestationLookup = buildAttestationLookup(config, {
    chain,
    relays,
    now,
    cache: deps.checkCache ?? (redis !== undefined ? sharedCheckCache(redis, nowMs, redisFailed('cache'), closers) : undefined),
    singleFlight:
      deps.checkSingleFlight ??
      (redis !== undefined ? createRedisSingleFlight({ redis, onError: redisFailed('single_flight') }) : undefined),
  });
  const attestationPublisher = createAttestationPublisher({
    relays,
    network: config.bitcoinNetwork,
    now,
    secretKey: nostrSecretKey,
    verificationUrlOf: verificationUrlOf(config),
    checkResults: attestationLookup,
  });

  // The proof checkers at this instant: challenge rules (docs/protocol.md §5) and e-mail codes (§6).
  const checkers = (): ProofCheckers => ({
    challenge: { secret: serverSecret, now: now(), network: config.bitcoinNetwork, isAllowedAudience: origins.isAllowedAudience, nonces },
    emailCodes,
  });
  const accounts = new AccountService({ store, sessions, checkers, now, activity });
  const handoffs = new HandoffService({ store, now, publicUrl: config.publicUrl, proof: () => checkers().challenge });
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
  const devices = new DeviceService({ store, now, activity, sessions });
  const webauthn = new WebAuthnService({
    store,
    sessions,
    signIn,
    rp: relyingParty(config, origins),
    secret: serverSecret,
    nonces,
    now,
    activity,
  });
  const connect = createConnectService({ store, secret: serverSecret, now, activity, webhookRules });
  // docs/protocol.md §8: the OpenID provider's keys are made on first start and reloaded with the session keys.
  const oidc = await OidcService.open({
    store,
    issuer: config.publicUrl,
    serverSecret,
    attestations: attestationLookup,
    appOfApiKey: async (apiKey) => {
      try {
        return { appId: (await connect.authenticate(`Bearer ${apiKey}`)).id };
      } catch (error) {
        if (isOcError(error) && error.code === 'invalid_api_key') return null;
        if (isOcError(error) && error.code === 'account_disabled') return { held: true };
        throw error;
      }
    },
    appMayAct: (appId) => connect.appMayAct(appId),
    backchannelUriProblem: backchannelUriChecker(config),
    development: isDevelopmentUrl(config.publicUrl),
    devicePollSeconds: config.oidcDevicePollSeconds,
    now,
  });
  const reloadOidcKeys = setInterval(() => {
    oidc.reloadKeys().catch((error: unknown) => log.error({ err: error }, 'oidc: could not reload the provider keys'));
  }, KEY_REFRESH_MS);
  reloadOidcKeys.unref();
  closers.push(() => clearInterval(reloadOidcKeys));
  // docs/protocol.md §8 "Logout": every instance runs a worker on the back-channel logout outbox,
  // posting under the webhook endpoint rules, timeout and backoff.
  const logouts = new BackchannelLogoutDispatcher({
    store,
    build: (logout) => oidc.logoutToken(logout),
    post: (uri, body, headers) =>
      postToEndpoint(uri, body, headers, { rules: webhookRules, timeoutMs: config.webhookTimeoutSeconds * 1000 }),
    backoffMs: (attempts) => webhookBackoffMs(attempts, config.webhookRetrySeconds * 1000),
    timeoutMs: config.webhookTimeoutSeconds * 1000,
    pollMs: deps.webhookPollMs ?? WEBHOOK_POLL_MS,
    now,
    userAgent: `oc-host-logout/${VERSION}`,
    onError: (error) => log.error({ err: error }, 'oidc: the back-channel logout worker failed a pass'),
    onAttempt: (entry) => log.info(entry, 'oidc: back-channel logout attempt'),
  });
  oidc.onLogoutQueued(() => logouts.kick());
  closers.push(() => logouts.stop());

  const rateLimiter = createResilientLimiter({
    primary: redis !== undefined ? createRedisRateLimiter(redis) : createMemoryRateLimiter({ now: nowMs }),
    fallback: createMemoryRateLimiter({ now: nowMs }),
    onFailure: (error, mode) => {
      metrics.rateLimitStoreFailures.inc([mode]);
      redisFailed('rate_limit')(error);
    },
  });

  const operators = new OperatorService({ operators: store, accounts: store, now });
  const context: ServiceContext = {
    config,
    now,
    chain,
    signatureVerdicts: createSignatureVerdicts(),
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
    handoffs,
    contact,
    attestCounter,
    origins,
    accounts,
    signIn,
    webauthn,
    devices,
    lifecycle,
    webhookKey: () => webhookKey,
    activity,
    connect,
    oidc,
    operators,
    adminAccounts: new AdminAccounts({ store, oidc, lifecycle, activity, operators, now }),
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
  return {
    context,
    metrics,
    rateLimiter,
    start: () => {
      webhooks.start();
      logouts.start();
    },
    close: () => closeAll(closers),
  };
}

/**
 * Why a client's `backchannel_logout_uri` cannot be used, or null: logouts go
 * out under the webhook endpoint rules (docs/protocol.md §8 "Logout"), so the
 * service and the operator's `oidc` commands refuse the same addresses.
 */
export function backchannelUriChecker(config: Pick<Config, 'publicUrl' | 'webhookAllowPrivate'>): (uri: string) => string | null {
  const rules = { development: isDevelopmentUrl(config.publicUrl), allowPrivate: config.webhookAllowPrivate };
  return (uri) => {
    try {
      checkWebhookUrl(uri, rules);
      return null;
    } catch (error) {
      if (isOcError(error)) return (error.detail ?? error.code).replace(/^webhook: /, '');
      throw error;
    }
  };
}
