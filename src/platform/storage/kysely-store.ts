/**
 * The {@link Store} on Kysely, for SQLite and PostgreSQL alike: one area
 * object per group of tables (accounts.ts, sessions.ts, nonces.ts, keys.ts,
 * email-codes.ts, connect.ts, stats.ts, webauthn.ts, activity.ts,
 * webhooks.ts, oidc.ts), all over one shared executor (executor.ts), plus what spans
 * the areas: purging, readiness and closing.
 */
import { sql, type ExpressionBuilder } from 'kysely';
import type { DatabaseSchema } from './schema.js';
import { openDatabase } from './database.js';
import type { OpenDatabaseOptions } from './database.js';
import { AccountsArea } from './accounts.js';
import { ConnectArea } from './connect.js';
import { EmailCodesArea } from './email-codes.js';
import { HANDOFF_PURGE_DELAY_MS, HandoffsArea } from './handoffs.js';
import { rowsAffected, StoreExecutor } from './executor.js';
import { KeysArea } from './keys.js';
import { applyMigrations, type Migration } from './migrations.js';
import { NoncesArea } from './nonces.js';
import { SessionsArea } from './sessions.js';
import { StatsArea } from './stats.js';
import { WebAuthnArea } from './webauthn.js';
import { ActivityArea } from './activity.js';
import { WebhooksArea } from './webhooks.js';
import { logOutSessions, OidcLogoutsArea } from './oidc-logouts.js';
import { OidcArea } from './oidc.js';
import {
  ATTEST_EVENT_RETENTION_MS,
  DEFAULT_ACTIVITY_RETENTION_MS,
  DEFAULT_SESSION_RETENTION_MS,
  WEBHOOK_LOG_RETENTION_MS,
} from './store.js';
import type { PurgeCounts, PurgeOptions, Store } from './store.js';

/** The area's methods, bound to it, as own properties (so they can be spread into one object). */
function methodsOf<T extends object>(area: T): { [K in keyof T]: T[K] } {
  const bound: Record<string, unknown> = {};
  for (const name of Object.getOwnPropertyNames(Object.getPrototypeOf(area))) {
    const value = (area as Record<string, unknown>)[name];
    if (name !== 'constructor' && typeof value === 'function') bound[name] = value.bind(area);
  }
  return bound as { [K in keyof T]: T[K] };
}

/** Builds the whole store over one open database. */
function createStore(executor: StoreExecutor): Store {
  const db = executor.db;
  const oidc = new OidcArea(executor);
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

export interface OpenStoreOptions extends OpenDatabaseOptions {
  /** Apply pending migrations before returning (default true). The CLI's `migrate` does it separately. */
  readonly migrate?: boolean;
}

/**
 * Opens the database of `databaseUrl` (docs/protocol.md §1 `DATABASE_URL`),
 * migrated by `migrations` (every owner's, src/store.ts), as a {@link Store}.
 */
export async function openKyselyStore(
  databaseUrl: string,
  migrations: readonly Migration[],
  options: OpenStoreOptions = {},
): Promise<Store> {
  const database = await openDatabase(databaseUrl, options);
  if (options.migrate ?? true) {
    try {
      await applyMigrations(database, migrations);
    } catch (error) {
      await database.close();
      throw error;
    }
  }
  return createStore(new StoreExecutor(database, logOutSessions));
}
