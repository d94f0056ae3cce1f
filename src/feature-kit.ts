/**
 * What a feature is made of, as the list of the features
 * (src/feature-list.ts) names it (docs/architecture.md "Features"): its
 * tables, its page words, its services and its routes, and the kits the
 * composition root (src/services.ts, src/app.ts) hands each part. The
 * services a route is handed are the {@link ServiceContext}: the platform's
 * and the identity core's, built by src/services.ts, and each feature's,
 * built by its entry of the list in the order of the list.
 */
import type { FastifyInstance } from 'fastify';
import type { Redis } from 'ioredis';
import type { Config } from './platform/config.js';
import type { PageWordSet } from './platform/i18n/index.js';
import type { ResilientLimiter } from './platform/limits/index.js';
import type { TypedApp } from './platform/http/schema-types.js';
import type { NonceGuard, Store, TableOwner } from './platform/storage/index.js';
import type { Mailer } from './platform/mail/index.js';
import type { ChainSource } from './chain/index.js';
import type { RelayPool } from './relay/index.js';
import type { OriginRules } from './identity/signin/index.js';
import type { AccountService, ActivityLog, ProofCheckers, SignInService } from './identity/account/index.js';
import type { KeyRing, RevocationFeed, SessionService } from './identity/session/index.js';
import type { SessionDoor } from './web/session.js';
import type { ServiceMetrics } from './features/operations/service-metrics.js';
import type { CheckOutcome, ResultCache, SingleFlight } from './features/attestations/index.js';
import type { FeatureServices } from './platform/services.js';

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
  /** Per-relay deadline of the default pool, ms; default 4 s (src/services.ts). */
  relayTimeoutMs?: number;
  /** The service's Nostr secret key (32 bytes); defaults to one generated on first start and kept in storage. */
  nostrSecretKey?: Uint8Array;
  /** /api/check result cache; defaults to an in-memory LRU (a shared one comes with REDIS_URL). */
  checkCache?: ResultCache<CheckOutcome>;
  /** Single flight of cold /api/check look-ups; defaults to an in-process one (a cross-instance one comes with REDIS_URL). */
  checkSingleFlight?: SingleFlight;
  /** Redis client for shared state; defaults to one over `config.redisUrl` when set. An injected client is not closed here. */
  redis?: Redis;
  /** How often the webhook worker looks for due deliveries, ms; default 1 s (src/services.ts). */
  webhookPollMs?: number;
}

/**
 * What the routes are handed: the settings, the platform's parts and the
 * identity core's services, built by src/services.ts, and every feature's,
 * which each feature declares from its folder (`FeatureServices`,
 * src/platform/services.ts) and builds in its entry of the list. Routes
 * never construct services.
 */
export interface ServiceContext extends FeatureServices {
  readonly config: Config;
  /** The clock; injectable so tests can freeze or move time. */
  readonly now: () => Date;
  readonly chain: ChainSource;
  /** Nostr relays read by /api/check and /api/discover and written by /api/attestations (docs/protocol.md §7). */
  readonly relays: RelayPool;
  readonly sessions: SessionService;
  /** `OC_SERVER_SECRET`, or the one kept in storage: keys challenge nonces, e-mail code hashes, OAuth state. */
  readonly serverSecret: Uint8Array;
  /** Consumes sign-in nonces once across instances. */
  readonly nonces: NonceGuard;
  /** The current key ring (reloaded periodically so rotations reach every instance). */
  keyRing(): KeyRing;
  /** The proof checkers at this instant: the challenge rules (docs/protocol.md §5) and the e-mail codes (§6). */
  readonly checkers: () => ProofCheckers;
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
  readonly mailer: Mailer;
  /** Named readiness checks, each `ok` or a short reason. */
  readiness(): Promise<Record<string, string>>;
}

/** Something to stop or close when the services stop. */
export type Closer = () => void | Promise<void>;

/** A use of Redis whose failures are counted and reported apart. */
export type RedisUse = 'cache' | 'single_flight' | 'rate_limit' | 'nonce';

/** What a feature's services are built from. */
export interface ServiceKit {
  readonly config: Config;
  readonly deps: ServiceDeps;
  readonly log: ServiceLog;
  readonly now: () => Date;
  readonly store: Store;
  /** The shared Redis client with REDIS_URL. */
  readonly redis: Redis | undefined;
  readonly metrics: ServiceMetrics;
  /** Counts a Redis failure of one use and logs it at most once a minute. */
  redisFailed(use: RedisUse): (error: unknown) => void;
  /**
   * A service built before this entry: the platform's, the identity core's,
   * or one an entry above it on the list provides. One not built yet is a
   * mistake in the order of the list, refused when the services are built.
   */
  use<Name extends keyof ServiceContext>(name: Name): ServiceContext[Name];
  /** Runs `close` when the services stop, before what was opened earlier. */
  onClose(close: Closer): void;
  /** Runs `start` once the server is ready (a background worker). */
  onStart(start: () => void): void;
}

/** What a feature's routes are built from: the app, the services, the settings and the session door. */
export interface RouteKit {
  /** The app, for the routes that mount a library (the OpenID provider) or need no schema types. */
  readonly app: FastifyInstance;
  /** The same app, with the request types of the route schemas. */
  readonly routes: TypedApp;
  readonly context: ServiceContext;
  readonly config: Config;
  /** The session of a request, the cookies of an answer; the roster secret stays inside (src/web/session.ts). */
  readonly door: SessionDoor;
  /** The request limiter, for the limits a library's endpoints count themselves. */
  readonly rateLimiter: ResilientLimiter;
}

/** One entry of the list of the features: a folder of `src/features/` and what it adds. */
export interface Feature {
  /** The folder's name in `src/features/`. */
  readonly feature: string;
  /** Its tables: migrations, areas, hooks and purge (src/platform/storage/tables.ts). */
  readonly tables?: TableOwner;
  /** Its pages' words in every language. */
  readonly words?: PageWordSet;
  /** Builds its services; what it returns joins the {@link ServiceContext}. */
  services?(kit: ServiceKit): Partial<ServiceContext> | Promise<Partial<ServiceContext>>;
  /** Registers its routes, each route file handed what it uses and nothing more. */
  routes?(kit: RouteKit): void;
}
