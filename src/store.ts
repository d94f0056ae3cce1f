/**
 * The whole storage, composed above every owner of tables
 * (docs/architecture.md "Layers", "A storage area"): the identity core's and
 * each feature's parts of the migrations, merged into one list in a fixed
 * order of owners; every area object over one shared executor, as one
 * {@link Store}; and what spans the areas: purging, readiness and closing.
 */
import { sql, type ExpressionBuilder } from 'kysely';
import {
  AccountsArea,
  ActivityArea,
  applyMigrations as applyMigrationList,
  DEFAULT_ACTIVITY_RETENTION_MS,
  DEFAULT_SESSION_RETENTION_MS,
  KeysArea,
  mergeMigrations,
  methodsOf,
  migrateDatabase,
  NoncesArea,
  openStoreExecutor,
  rowsAffected,
  SessionsArea,
  type AccountStore,
  type ActivityStore,
  type DatabaseEngine,
  type DatabaseSchema,
  type EpochMilliseconds,
  type KeyStore,
  type Migration,
  type MigrationReport,
  type NonceStore,
  type OpenDatabase,
  type OpenDatabaseOptions,
  type OpenStoreOptions,
  type SessionStore,
  type StoreExecutor,
  type StoreHooks,
} from './platform/storage/index.js';
import {
  ConnectArea,
  connectAccountHooks,
  WEBHOOK_LOG_RETENTION_MS,
  WebhooksArea,
  webhookNotices,
  type ConnectStore,
  type WebhookStore,
} from './features/connect/index.js';
import { OidcArea, OidcLogoutsArea, oidcStoreHooks, type OidcLogoutStore, type OidcStore } from './features/oidc/index.js';
import { IDENTITY_MIGRATIONS } from './identity/storage/schema.js';
import { EmailCodesArea, forgetEmailCodes, type EmailCodeStore } from './features/email-code/store.js';
import { EMAIL_CODE_MIGRATIONS } from './features/email-code/store-schema.js';
import { CONNECT_MIGRATIONS } from './features/connect/index.js';
import { ATTEST_EVENT_RETENTION_MS, StatsArea, type StatsStore } from './features/stats/store.js';
import { STATS_MIGRATIONS } from './features/stats/store-schema.js';
import { PASSKEY_MIGRATIONS, passkeyAccountHooks, WebAuthnArea, type WebAuthnStore } from './features/passkeys/index.js';
import { HANDOFF_PURGE_DELAY_MS, HandoffsArea, type HandoffStore } from './features/phone/store.js';
import { PHONE_MIGRATIONS } from './features/phone/store-schema.js';
import { OIDC_MIGRATIONS } from './features/oidc/index.js';
import { ADMIN_MIGRATIONS, OperatorsArea, type OperatorStore } from './features/admin/index.js';

export type { OpenStoreOptions } from './platform/storage/index.js';

/**
 * Every migration, in version order. A version several owners contribute to
 * runs their parts in this order of owners, the order its tables were created
 * in when it was one migration; a fresh database gets exactly that schema
 * (test/storage-schema.test.ts).
 */
export const MIGRATIONS: readonly Migration[] = mergeMigrations([
  IDENTITY_MIGRATIONS,
  EMAIL_CODE_MIGRATIONS,
  CONNECT_MIGRATIONS,
  STATS_MIGRATIONS,
  PASSKEY_MIGRATIONS,
  PHONE_MIGRATIONS,
  OIDC_MIGRATIONS,
  ADMIN_MIGRATIONS,
]);

/**
 * Where a change to an account or a session reaches the features' tables, in
 * its own transaction (src/platform/storage/hooks.ts): the OpenID provider's
 * logouts, links, feed entries and tokens; the keys of the passkeys; the
 * apps and webhooks of Connect; the e-mail codes in flight.
 */
const STORE_HOOKS: StoreHooks = {
  ...oidcStoreHooks,
  keys: passkeyAccountHooks,
  apps: connectAccountHooks,
  appNotices: webhookNotices,
  forgetEmails: forgetEmailCodes,
};

/** Rows deleted by {@link Store.purgeExpired}. */
interface PurgeCounts {
  readonly sessions: number;
  readonly nonces: number;
  readonly email_codes: number;
  readonly handoffs: number;
  readonly attest_events: number;
  readonly activity: number;
  readonly webhook_deliveries: number;
  /** Back-channel logouts finished 30 days ago and links of host sessions that expired. */
  readonly oidc_logouts: number;
  /** The OpenID provider's codes, tokens and interactions past their expiry. */
  readonly oidc_models: number;
  readonly audit_log: number;
}

interface PurgeOptions {
  /**
   * How long revoked and expired session rows are kept before deletion, for
   * inspection after an incident. Default {@link DEFAULT_SESSION_RETENTION_MS}.
   */
  readonly sessionRetentionMs?: number;
  /** How long activity events are kept. Default {@link DEFAULT_ACTIVITY_RETENTION_MS}. */
  readonly activityRetentionMs?: number;
  /** How long the audit log is kept. Default {@link DEFAULT_AUDIT_RETENTION_MS}. */
  readonly auditRetentionMs?: number;
}

/** The audit log is kept 400 days unless AUDIT_RETENTION_DAYS says otherwise: a year of it, and a margin. */
const DEFAULT_AUDIT_RETENTION_MS = 400 * 24 * 60 * 60 * 1000;

/**
 * The whole storage: every area on one database, and what spans them
 * (purging, readiness, closing). Services take only the area they need.
 */
export interface Store
  extends AccountStore,
    SessionStore,
    NonceStore,
    KeyStore,
    EmailCodeStore,
    HandoffStore,
    ConnectStore,
    StatsStore,
    WebAuthnStore,
    ActivityStore,
    WebhookStore,
    OidcStore,
    OidcLogoutStore,
    OperatorStore {
  readonly engine: DatabaseEngine;

  // ---- maintenance ----

  /**
   * Deletes: session rows expired longer than the retention ago, and rows
   * revoked longer than the retention ago once they have expired (the
   * revocation feed lists a revoked row until its token expires),
   * used nonces past expiry, e-mail codes past expiry, phone hand-offs
   * a minute past expiry, attestation events
   * older than 48 hours, activity older than its retention.
   */
  purgeExpired(now: EpochMilliseconds, options?: PurgeOptions): Promise<PurgeCounts>;

  /** Resolves when the database answers a trivial query (readiness). */
  ping(): Promise<void>;

  /** Closes the connection or pool. Safe to call twice. */
  close(): Promise<void>;
}

/** Builds the whole store over one open database. */
function createStore(executor: StoreExecutor): Store {
  const db = executor.db;
  const oidc = new OidcArea(executor);
  const operators = new OperatorsArea(executor);
  return {
    ...methodsOf(new AccountsArea(executor)),
    ...methodsOf(new SessionsArea(executor)),
    ...methodsOf(new NoncesArea(executor)),
    ...methodsOf(new KeysArea(executor)),
    ...methodsOf(new EmailCodesArea(executor)),
    ...methodsOf(new HandoffsArea(executor)),
    ...methodsOf(new ConnectArea(executor)),
    ...methodsOf(new StatsArea(executor)),
    ...methodsOf(new WebAuthnArea(executor)),
    ...methodsOf(new ActivityArea(executor)),
    ...methodsOf(new WebhooksArea(executor)),
    ...methodsOf(new OidcLogoutsArea(executor)),
    ...methodsOf(oidc),
    ...methodsOf(operators),
    engine: executor.engine,
    async purgeExpired(now: number, options: PurgeOptions = {}): Promise<PurgeCounts> {
      const retention = options.sessionRetentionMs ?? DEFAULT_SESSION_RETENTION_MS;
      if (!(retention >= 0)) throw new Error('storage: sessionRetentionMs must be a non-negative number');
      const activityRetention = options.activityRetentionMs ?? DEFAULT_ACTIVITY_RETENTION_MS;
      if (!(activityRetention >= 0)) throw new Error('storage: activityRetentionMs must be a non-negative number');
      const sessionCutoff = now - retention;
      // A revoked row stays until its token expires: the revocation feed lists it until then.
      const purged = (eb: ExpressionBuilder<DatabaseSchema, 'sessions'>) =>
        eb.or([eb('expires_at', '<=', sessionCutoff), eb.and([eb('revoked_at', '<=', sessionCutoff), eb('expires_at', '<=', now)])]);
      // A row's tab tokens go with it (the foreign key cascades too; SQLite enforces it only when asked).
      await db
        .deleteFrom('tab_tokens')
        .where('jti', 'in', (eb) => eb.selectFrom('sessions').select('sessions.jti').where(purged))
        .execute();
      const sessions = await db.deleteFrom('sessions').where(purged).executeTakeFirst();
      const nonces = await db.deleteFrom('used_nonces').where('expires_at', '<=', now).executeTakeFirst();
      const emailCodes = await db.deleteFrom('email_codes').where('expires_at', '<=', now).executeTakeFirst();
      // An approved hand-off may still be claimed a little after its expiry (src/features/phone/handoff.ts).
      const handoffs = await db
        .deleteFrom('handoffs')
        .where('expires_at', '<=', now - HANDOFF_PURGE_DELAY_MS)
        .executeTakeFirst();
      const attestEvents = await db
        .deleteFrom('attest_events')
        .where('at', '<=', now - ATTEST_EVENT_RETENTION_MS)
        .executeTakeFirst();
      const activity = await db
        .deleteFrom('activity')
        .where('at', '<=', now - activityRetention)
        .executeTakeFirst();
      // The delivery log keeps finished deliveries 30 days; pending ones stay until they finish.
      const webhookDeliveries = await db
        .deleteFrom('webhook_deliveries')
        .where('state', '!=', 'pending')
        .where('created_at', '<=', now - WEBHOOK_LOG_RETENTION_MS)
        .executeTakeFirst();
      // Logouts are kept as long as webhook deliveries; a link goes when its host session expires.
      const oidcLogouts = await db
        .deleteFrom('oidc_logouts')
        .where('state', '!=', 'pending')
        .where('created_at', '<=', now - WEBHOOK_LOG_RETENTION_MS)
        .executeTakeFirst();
      await db.deleteFrom('oidc_session_links').where('expires_at', '<=', now).execute();
      const oidcModels = await db.deleteFrom('oidc_models').where('expires_at', '<=', now).executeTakeFirst();
      await db.deleteFrom('oidc_token_revocations').where('expires_at', '<=', now).execute();
      await oidc.purgeOrphanOidcClients(now);
      const auditRetention = options.auditRetentionMs ?? DEFAULT_AUDIT_RETENTION_MS;
      if (!(auditRetention >= 0)) throw new Error('storage: auditRetentionMs must be a non-negative number');
      const auditLog = await operators.purgeAudit(now - auditRetention);
      return {
        sessions: rowsAffected(sessions.numDeletedRows),
        nonces: rowsAffected(nonces.numDeletedRows),
        email_codes: rowsAffected(emailCodes.numDeletedRows),
        handoffs: rowsAffected(handoffs.numDeletedRows),
        attest_events: rowsAffected(attestEvents.numDeletedRows),
        activity: rowsAffected(activity.numDeletedRows),
        webhook_deliveries: rowsAffected(webhookDeliveries.numDeletedRows),
        oidc_logouts: rowsAffected(oidcLogouts.numDeletedRows),
        oidc_models: rowsAffected(oidcModels.numDeletedRows),
        audit_log: auditLog,
      };
    },

    async ping(): Promise<void> {
      await sql`SELECT 1`.execute(db);
    },

    close(): Promise<void> {
      return executor.database.close();
    },
  };
}

/** Applies every migration the database lacks (by default all of {@link MIGRATIONS}), each in its own locked transaction. */
export function applyMigrations(
  database: OpenDatabase,
  options: { now?: () => number; migrations?: readonly Migration[] } = {},
): Promise<MigrationReport> {
  return applyMigrationList(database, options.migrations ?? MIGRATIONS, options);
}

/** For the CLI (`oc-host migrate`): open the database of `databaseUrl`, bring its schema up to date, close it. */
export function migrate(databaseUrl: string, options: OpenDatabaseOptions = {}): Promise<MigrationReport> {
  return migrateDatabase(databaseUrl, MIGRATIONS, options);
}

/** Opens the database of `databaseUrl` (docs/protocol.md §1 `DATABASE_URL`), migrated, as a {@link Store}. */
export async function openStore(databaseUrl: string, options: OpenStoreOptions = {}): Promise<Store> {
  return createStore(await openStoreExecutor(databaseUrl, MIGRATIONS, STORE_HOOKS, options));
}
