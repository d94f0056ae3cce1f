/**
 * Versioned schema migrations, as code, applied at start (openStore) or by the
 * CLI ({@link migrate}).
 *
 * Rules:
 * - A migration is never edited once released; a change is a new version.
 * - Each migration runs in its own transaction together with its
 *   `schema_migrations` row, so it is applied completely or not at all.
 * - Instances that start at the same moment must not both apply a version.
 *   Inside each transaction the migrator first takes a lock: on PostgreSQL a
 *   transaction-scoped advisory lock keyed by the current schema, on SQLite the
 *   write lock that `BEGIN IMMEDIATE` takes (sqlite-dialect.ts). Only then does
 *   it look at `schema_migrations`, so the second instance waits, sees the
 *   version applied, and skips it.
 * - A database that holds versions this build does not know (a newer instance
 *   migrated it during a rolling deploy) is accepted: migrations only add.
 *
 * Migrations use Kysely<any> on purpose: they describe the schema as it was at
 * their version, not as schema.ts describes it today.
 */
import { sql } from 'kysely';
import type { Kysely, Transaction } from 'kysely';
import { openDatabase } from './database.js';
import type { DatabaseEngine, OpenDatabase, OpenDatabaseOptions } from './database.js';

export interface Migration {
  readonly version: number;
  readonly name: string;
  // biome-ignore lint/suspicious/noExplicitAny: a migration runs against the schema as it was then, not DatabaseSchema.
  up(db: Kysely<any>, engine: DatabaseEngine): Promise<void>;
}

export interface MigrationReport {
  /** Versions this call applied, in order; empty when the schema was current. */
  readonly applied: ReadonlyArray<{ readonly version: number; readonly name: string }>;
  /** The highest version recorded in the database afterwards. */
  readonly currentVersion: number;
}

/** First key of the two-key advisory lock; the second is the schema's hash. ("oc" 0x0001) */
const MIGRATION_LOCK_CLASS = 0x6f630001;

/** PostgreSQL has regular expressions; SQLite has GLOB. Both reject anything but 32 lowercase hex. */
function accountIdFormat(engine: DatabaseEngine) {
  return engine === 'postgres' ? sql`id ~ '^[0-9a-f]{32}$'` : sql`length(id) = 32 AND id NOT GLOB '*[^0-9a-f]*'`;
}

/** SQLite has no boolean type; an integer restricted to 0/1 stands in (row-mapping.ts). */
function booleanType(engine: DatabaseEngine) {
  return engine === 'postgres' ? ('boolean' as const) : ('integer' as const);
}

const initialSchema: Migration = {
  version: 1,
  name: 'accounts_identities_sessions',
  async up(db, engine) {
    // docs/protocol.md §2: `did:oc:` + 32 lowercase hex; merged accounts point at the survivor.
    await db.schema
      .createTable('accounts')
      .addColumn('id', 'text', (column) => column.primaryKey())
      .addColumn('kind', 'text', (column) => column.notNull())
      .addColumn('display_name', 'text')
      .addColumn('display_identity_kind', 'text')
      .addColumn('primary_btc', 'text')
      .addColumn('merged_into', 'text', (column) => column.references('accounts.id'))
      .addColumn('created_at', 'bigint', (column) => column.notNull())
      .addColumn('updated_at', 'bigint', (column) => column.notNull())
      .addCheckConstraint('accounts_id_format', accountIdFormat(engine))
      .addCheckConstraint('accounts_kind', sql`kind IN ('btc', 'federated')`)
      .addCheckConstraint(
        'accounts_display_identity_kind',
        sql`display_identity_kind IS NULL OR display_identity_kind IN ('btc', 'email', 'did', 'nostr')`,
      )
      .addCheckConstraint('accounts_not_merged_into_itself', sql`merged_into IS NULL OR merged_into <> id`)
      .execute();
    await db.schema.createIndex('accounts_merged_into').on('accounts').column('merged_into').execute();

    // docs/protocol.md §2: each identity belongs to at most one account, by a unique
    // index; e-mail addresses are kept lowercased.
    await db.schema
      .createTable('identities')
      .addColumn('id', 'text', (column) => column.primaryKey())
      .addColumn('account_id', 'text', (column) => column.notNull().references('accounts.id'))
      .addColumn('kind', 'text', (column) => column.notNull())
      .addColumn('value', 'text', (column) => column.notNull())
      .addColumn('verified', booleanType(engine), (column) => column.notNull())
      .addColumn('created_at', 'bigint', (column) => column.notNull())
      .addUniqueConstraint('identities_kind_value_unique', ['kind', 'value'])
      .addCheckConstraint('identities_kind', sql`kind IN ('btc', 'email', 'oauth', 'connect')`)
      .addCheckConstraint('identities_email_lowercase', sql`kind <> 'email' OR value = lower(value)`)
      .$call((table) => (engine === 'sqlite' ? table.addCheckConstraint('identities_verified_boolean', sql`verified IN (0, 1)`) : table))
      .execute();
    await db.schema.createIndex('identities_account_id').on('identities').column('account_id').execute();

    // docs/protocol.md §3: the session rows behind the cookie and the roster.
    await db.schema
      .createTable('sessions')
      .addColumn('jti', 'text', (column) => column.primaryKey())
      .addColumn('token_hash', 'text', (column) => column.notNull())
      .addColumn('account_id', 'text', (column) => column.notNull().references('accounts.id'))
      .addColumn('roster_id', 'text')
      .addColumn('signing_method', 'text')
      .addColumn('created_at', 'bigint', (column) => column.notNull())
      .addColumn('expires_at', 'bigint', (column) => column.notNull())
      .addColumn('last_seen_at', 'bigint', (column) => column.notNull())
      .addColumn('revoked_at', 'bigint')
      .addColumn('step_up_at', 'bigint')
      .addColumn('sudo_at', 'bigint')
      .addCheckConstraint('sessions_token_hash_format', sql`length(token_hash) = 64 AND lower(token_hash) = token_hash`)
      .execute();
    // docs/protocol.md §3: "A roster never holds an account twice: enforce it with a
    // unique index over live rows, not only in code." Expired rows cannot be in
    // a partial-index predicate (it would need the clock), so insertSession
    // revokes them in the same transaction before inserting.
    await db.schema
      .createIndex('sessions_live_roster_account_unique')
      .on('sessions')
      .columns(['roster_id', 'account_id'])
      .unique()
      .where(sql.ref('revoked_at'), 'is', null)
      .execute();
    // The hot path of every authenticated request (docs/protocol.md §3) is a lookup
    // by the hash of the presented JWT. A hash names exactly one row: every
    // JWT carries its row's jti.
    await db.schema.createIndex('sessions_token_hash_unique').on('sessions').column('token_hash').unique().execute();
    await db.schema.createIndex('sessions_account_id').on('sessions').column('account_id').execute();
    await db.schema.createIndex('sessions_expires_at').on('sessions').column('expires_at').execute();

    // docs/protocol.md §5: a challenge nonce is consumed exactly once, purged after expiry.
    await db.schema
      .createTable('used_nonces')
      .addColumn('nonce', 'text', (column) => column.primaryKey())
      .addColumn('expires_at', 'bigint', (column) => column.notNull())
      .execute();
    await db.schema.createIndex('used_nonces_expires_at').on('used_nonces').column('expires_at').execute();

    // docs/protocol.md §1: generated secrets shared by every instance on this database.
    await db.schema
      .createTable('settings')
      .addColumn('key', 'text', (column) => column.primaryKey())
      .addColumn('value', 'text', (column) => column.notNull())
      .execute();

    // docs/protocol.md §1, §3: Ed25519 signing keys, kid = RFC 7638 thumbprint.
    await db.schema
      .createTable('signing_keys')
      .addColumn('kid', 'text', (column) => column.primaryKey())
      .addColumn('private_jwk', 'text', (column) => column.notNull())
      .addColumn('public_jwk', 'text', (column) => column.notNull())
      .addColumn('created_at', 'bigint', (column) => column.notNull())
      .addColumn('activated_at', 'bigint', (column) => column.notNull())
      .addColumn('retired_at', 'bigint')
      .execute();
  },
};

const emailConnectStats: Migration = {
  version: 2,
  name: 'email_codes_connect_apps_attest_events',
  async up(db, engine) {
    // docs/protocol.md §6: one live code per address, stored only as a keyed hash.
    await db.schema
      .createTable('email_codes')
      .addColumn('email', 'text', (column) => column.primaryKey())
      .addColumn('code_hash', 'text', (column) => column.notNull())
      .addColumn('token', 'text', (column) => column.notNull())
      .addColumn('expires_at', 'bigint', (column) => column.notNull())
      .addColumn('attempts', 'integer', (column) => column.notNull().defaultTo(0))
      .addColumn('created_at', 'bigint', (column) => column.notNull())
      .addCheckConstraint('email_codes_email_lowercase', sql`email = lower(email)`)
      .execute();
    await db.schema.createIndex('email_codes_expires_at').on('email_codes').column('expires_at').execute();

    // docs/protocol.md §6 (Connect): integrator apps; API keys are stored hashed.
    await db.schema
      .createTable('connect_apps')
      .addColumn('id', 'text', (column) => column.primaryKey())
      .addColumn('owner_account_id', 'text', (column) => column.notNull().references('accounts.id'))
      .addColumn('name', 'text', (column) => column.notNull())
      .addColumn('key_hash', 'text', (column) => column.notNull().unique())
      .addColumn('created_at', 'bigint', (column) => column.notNull())
      .addColumn('rotated_at', 'bigint')
      .execute();
    await db.schema.createIndex('connect_apps_owner').on('connect_apps').column('owner_account_id').execute();

    // docs/protocol.md §6 (/api/family-stats): 24-hour counters of check and verify calls.
    await db.schema
      .createTable('attest_events')
      .$call((table) =>
        engine === 'postgres'
          ? table.addColumn('id', 'bigint', (column) => column.primaryKey().generatedByDefaultAsIdentity())
          : // INTEGER PRIMARY KEY is SQLite's rowid: assigned on insert, no extra index.
            table.addColumn('id', 'integer', (column) => column.primaryKey()),
      )
      .addColumn('kind', 'text', (column) => column.notNull())
      .addColumn('at', 'bigint', (column) => column.notNull())
      .addCheckConstraint('attest_events_kind', sql`kind IN ('check', 'verify')`)
      .execute();
    await db.schema.createIndex('attest_events_kind_at').on('attest_events').columns(['kind', 'at']).execute();
  },
};

const batchedAttestEvents: Migration = {
  version: 3,
  name: 'attest_events_count',
  async up(db) {
    // One row now stands for a batch of calls, written at most once a second
    // per kind (src/features/stats/counter.ts), instead of one row per request.
    await db.schema
      .alterTable('attest_events')
      .addColumn('count', 'bigint', (column) => column.notNull().defaultTo(1))
      .execute();
  },
};

const sessionIdentity: Migration = {
  version: 4,
  name: 'sessions_identity',
  async up(db) {
    // Which identity a session was signed in through, so that unlinking that
    // identity can revoke what it opened. No foreign key: the identity row is
    // deleted by the unlink, and the sessions it opened are revoked with it.
    await db.schema.alterTable('sessions').addColumn('identity_id', 'text').execute();
    await db.schema.createIndex('sessions_identity').on('sessions').column('identity_id').execute();
  },
};

const emailCodeTokenlessTries: Migration = {
  version: 5,
  name: 'email_codes_tokenless_attempts',
  async up(db) {
    // Tries that carry no token get a budget of their own, so that whoever
    // knows only the address cannot use up the tries of the browser that
    // started the code (src/features/email-code/email-code.ts).
    await db.schema
      .alterTable('email_codes')
      .addColumn('tokenless_attempts', 'integer', (column) => column.notNull().defaultTo(0))
      .execute();
  },
};

const tabTokens: Migration = {
  version: 6,
  name: 'tab_tokens',
  async up(db) {
    // docs/protocol.md §3: a pinned browser tab holds a token of its own for a
    // session row, so that re-minting the row (a switch in another tab, say)
    // does not sign that tab out. Only the hash is stored, like the row's own.
    await db.schema
      .createTable('tab_tokens')
      .addColumn('token_hash', 'text', (column) => column.primaryKey())
      .addColumn('jti', 'text', (column) => column.notNull().references('sessions.jti').onDelete('cascade'))
      .addColumn('created_at', 'bigint', (column) => column.notNull())
      .addCheckConstraint('tab_tokens_token_hash_format', sql`length(token_hash) = 64 AND lower(token_hash) = token_hash`)
      .execute();
    await db.schema.createIndex('tab_tokens_jti').on('tab_tokens').columns(['jti', 'created_at']).execute();
  },
};

const webauthnCredentials: Migration = {
  version: 7,
  name: 'webauthn_credentials',
  async up(db, engine) {
    // docs/protocol.md §6 "Security keys and passkeys": the public part of
    // each registered WebAuthn credential. The credential id is the primary
    // key, so one credential belongs to one account on this host.
    const bool = booleanType(engine);
    await db.schema
      .createTable('webauthn_credentials')
      .addColumn('id', 'text', (column) => column.primaryKey())
      .addColumn('account_id', 'text', (column) => column.notNull().references('accounts.id'))
      .addColumn('public_key', 'text', (column) => column.notNull())
      .addColumn('counter', 'bigint', (column) => column.notNull().defaultTo(0))
      .addColumn('transports', 'text', (column) => column.notNull().defaultTo(''))
      .addColumn('label', 'text', (column) => column.notNull())
      .addColumn('authenticator_type', 'text', (column) => column.notNull())
      .addColumn('device_type', 'text', (column) => column.notNull())
      .addColumn('backed_up', bool, (column) => column.notNull())
      .addColumn('user_verified', bool, (column) => column.notNull())
      .addColumn('sign_in', bool, (column) => column.notNull())
      .addColumn('user_handle', 'text', (column) => column.notNull())
      .addColumn('aaguid', 'text', (column) => column.notNull())
      .addColumn('created_at', 'bigint', (column) => column.notNull())
      .addColumn('last_used_at', 'bigint')
      .addCheckConstraint('webauthn_credentials_id_format', sql`length(id) BETWEEN 1 AND 1400`)
      .addCheckConstraint('webauthn_credentials_counter', sql`counter >= 0`)
      .addCheckConstraint('webauthn_credentials_type', sql`authenticator_type IN ('platform', 'cross-platform', 'unknown')`)
      .addCheckConstraint('webauthn_credentials_device_type', sql`device_type IN ('singleDevice', 'multiDevice')`)
      .execute();
    await db.schema.createIndex('webauthn_credentials_account').on('webauthn_credentials').columns(['account_id', 'created_at']).execute();
  },
};

const sessionDevices: Migration = {
  version: 8,
  name: 'session_devices',
  async up(db) {
    // docs/protocol.md §3 "Devices": what a row remembers of the browser that
    // signed in, coarse on purpose: a device label and a /24 or /48 network.
    await db.schema.alterTable('sessions').addColumn('device', 'text').execute();
    await db.schema.alterTable('sessions').addColumn('network', 'text').execute();
    // GET /api/auth/sessions lists an account's live rows.
    await db.schema.createIndex('sessions_account_live').on('sessions').columns(['account_id', 'revoked_at', 'expires_at']).execute();
  },
};

const activity: Migration = {
  version: 9,
  name: 'activity',
  async up(db) {
    // docs/protocol.md §6 "Activity": security events per account. `detail`
    // is a small JSON object; it never holds a secret, a code, a token or a
    // full IP address.
    await db.schema
      .createTable('activity')
      .addColumn('id', 'text', (column) => column.primaryKey())
      .addColumn('account_id', 'text', (column) => column.notNull().references('accounts.id'))
      .addColumn('at', 'bigint', (column) => column.notNull())
      .addColumn('kind', 'text', (column) => column.notNull())
      .addColumn('detail', 'text', (column) => column.notNull())
      .addCheckConstraint('activity_detail_size', sql`length(detail) <= 4096`)
      .execute();
    await db.schema.createIndex('activity_account_at').on('activity').columns(['account_id', 'at', 'id']).execute();
    await db.schema.createIndex('activity_at').on('activity').column('at').execute();
  },
};

const revokedIndex: Migration = {
  version: 10,
  name: 'sessions_revoked_index',
  async up(db) {
    // docs/protocol.md §3 "Revocations": the feed reads revoked rows in the
    // order they were revoked.
    await db.schema.createIndex('sessions_revoked_at').on('sessions').columns(['revoked_at', 'jti']).execute();
  },
};

const accountLifecycle: Migration = {
  version: 11,
  name: 'account_lifecycle',
  async up(db) {
    // docs/protocol.md §2 "Disabling and deleting": an operator's lock, and
    // the tombstone a deleted account leaves so its id is never issued again.
    await db.schema.alterTable('accounts').addColumn('disabled_at', 'bigint').execute();
    await db.schema.alterTable('accounts').addColumn('deleted_at', 'bigint').execute();
    // Every session row of an account, revoked ones included, for the export.
    await db.schema.createIndex('sessions_account_created').on('sessions').columns(['account_id', 'created_at']).execute();
  },
};

const webhooks: Migration = {
  version: 12,
  name: 'webhooks',
  async up(db) {
    // docs/protocol.md §6 "Webhooks": an app's endpoint, and the outbox that is
    // also the delivery log.
    await db.schema.alterTable('connect_apps').addColumn('webhook_url', 'text').execute();
    await db.schema
      .createTable('webhook_deliveries')
      .addColumn('id', 'text', (column) => column.primaryKey())
      .addColumn('app_id', 'text', (column) => column.notNull())
      .addColumn('event_type', 'text', (column) => column.notNull())
      .addColumn('payload', 'text', (column) => column.notNull())
      .addColumn('created_at', 'bigint', (column) => column.notNull())
      .addColumn('state', 'text', (column) => column.notNull())
      .addColumn('attempts', 'integer', (column) => column.notNull())
      .addColumn('next_attempt_at', 'bigint', (column) => column.notNull())
      .addColumn('lease_owner', 'text')
      .addColumn('lease_until', 'bigint')
      .addColumn('last_attempt_at', 'bigint')
      .addColumn('last_status', 'integer')
      .addColumn('last_error', 'text')
      .addColumn('delivered_at', 'bigint')
      .addCheckConstraint('webhook_deliveries_state', sql`state IN ('pending', 'delivered', 'failed')`)
      .execute();
    await db.schema.createIndex('webhook_deliveries_due').on('webhook_deliveries').columns(['state', 'next_attempt_at']).execute();
    await db.schema.createIndex('webhook_deliveries_app').on('webhook_deliveries').columns(['app_id', 'created_at']).execute();
  },
};

const identitiesAccountKind: Migration = {
  version: 13,
  name: 'identities_account_kind',
  async up(db) {
    // An account's identities of one kind (its e-mails for a merge, its
    // Connect apps for webhooks, its e-mail count for /me): with only
    // (account_id), SQLite preferred the unique (kind, value) index for
    // `account_id IN (…) AND kind = …` and walked every identity of that kind
    // in the service. The pair covers every account_id look-up, so it
    // replaces the single-column index.
    await db.schema.createIndex('identities_account_kind').on('identities').columns(['account_id', 'kind']).execute();
    await db.schema.dropIndex('identities_account_id').execute();
  },
};

const tabTokenJtis: Migration = {
  version: 14,
  name: 'tab_token_jtis',
  async up(db) {
    // docs/protocol.md §3 "Pinned tabs": a tab token has a jti of its own,
    // so that it can be superseded (a step-up from its tab re-mints the
    // cookie and the row's older tab tokens stop working) and listed in the
    // revocation feed without revoking the row. Tokens minted before carry
    // the row's jti and keep a NULL here: the row's revocation covers them.
    await db.schema.alterTable('tab_tokens').addColumn('token_jti', 'text').execute();
    await db.schema.alterTable('tab_tokens').addColumn('superseded_at', 'bigint').execute();
    await db.schema.createIndex('tab_tokens_superseded').on('tab_tokens').columns(['superseded_at', 'token_jti']).execute();
  },
};

const openIdProvider: Migration = {
  version: 15,
  name: 'openid_provider',
  async up(db) {
    // docs/protocol.md §8: the OpenID provider's signing keys (one ring per
    // algorithm, kept apart from the session and webhook keys), its
    // registered clients (secrets hashed), what the provider library stores
    // (codes, tokens, grants, interactions; one table keyed by model and id),
    // and the consent each account gave each client.
    await db.schema
      .createTable('oidc_keys')
      .addColumn('kid', 'text', (column) => column.primaryKey())
      .addColumn('alg', 'text', (column) => column.notNull())
      .addColumn('private_jwk', 'text', (column) => column.notNull())
      .addColumn('created_at', 'bigint', (column) => column.notNull())
      .addColumn('retired_at', 'bigint')
      .execute();
    await db.schema
      .createTable('oidc_clients')
      .addColumn('client_id', 'text', (column) => column.primaryKey())
      .addColumn('metadata', 'text', (column) => column.notNull())
      .addColumn('owner_app_id', 'text')
      .addColumn('first_party', 'integer', (column) => column.notNull())
      .addColumn('created_at', 'bigint', (column) => column.notNull())
      .addColumn('updated_at', 'bigint', (column) => column.notNull())
      .execute();
    await db.schema.createIndex('oidc_clients_owner').on('oidc_clients').columns(['owner_app_id', 'created_at']).execute();
    await db.schema
      .createTable('oidc_models')
      .addColumn('model', 'text', (column) => column.notNull())
      .addColumn('id', 'text', (column) => column.notNull())
      .addColumn('payload', 'text', (column) => column.notNull())
      .addColumn('grant_id', 'text')
      .addColumn('uid', 'text')
      .addColumn('user_code', 'text')
      .addColumn('expires_at', 'bigint')
      .addColumn('consumed_at', 'bigint')
      .addPrimaryKeyConstraint('oidc_models_pk', ['model', 'id'])
      .execute();
    await db.schema.createIndex('oidc_models_grant').on('oidc_models').column('grant_id').execute();
    await db.schema.createIndex('oidc_models_uid').on('oidc_models').column('uid').execute();
    await db.schema.createIndex('oidc_models_expires').on('oidc_models').column('expires_at').execute();
    await db.schema
      .createTable('oidc_consents')
      .addColumn('account_id', 'text', (column) => column.notNull())
      .addColumn('client_id', 'text', (column) => column.notNull())
      .addColumn('grant_id', 'text', (column) => column.notNull())
      .addColumn('created_at', 'bigint', (column) => column.notNull())
      .addColumn('updated_at', 'bigint', (column) => column.notNull())
      .addPrimaryKeyConstraint('oidc_consents_pk', ['account_id', 'client_id'])
      .execute();
    await db.schema.createIndex('oidc_consents_client').on('oidc_consents').column('client_id').execute();
  },
};

const oidcBackchannelLogout: Migration = {
  version: 16,
  name: 'oidc_backchannel_logout',
  async up(db) {
    // docs/protocol.md §8 "Logout": which clients signed in through which
    // host session, and the outbox of back-channel logout tokens, written in
    // the transaction that revokes the host session.
    await db.schema
      .createTable('oidc_session_links')
      .addColumn('session_jti', 'text', (column) => column.notNull())
      .addColumn('client_id', 'text', (column) => column.notNull())
      .addColumn('account_id', 'text', (column) => column.notNull())
      .addColumn('sid', 'text', (column) => column.notNull())
      .addColumn('op_session_uid', 'text', (column) => column.notNull())
      .addColumn('backchannel', 'integer', (column) => column.notNull())
      .addColumn('created_at', 'bigint', (column) => column.notNull())
      .addColumn('expires_at', 'bigint', (column) => column.notNull())
      .addPrimaryKeyConstraint('oidc_session_links_pk', ['session_jti', 'client_id'])
      .execute();
    await db.schema.createIndex('oidc_session_links_account').on('oidc_session_links').column('account_id').execute();
    await db.schema.createIndex('oidc_session_links_expires').on('oidc_session_links').column('expires_at').execute();
    await db.schema
      .createTable('oidc_logouts')
      .addColumn('id', 'text', (column) => column.primaryKey())
      .addColumn('client_id', 'text', (column) => column.notNull())
      .addColumn('account_id', 'text', (column) => column.notNull())
      .addColumn('sid', 'text', (column) => column.notNull())
      .addColumn('created_at', 'bigint', (column) => column.notNull())
      .addColumn('state', 'text', (column) => column.notNull())
      .addColumn('attempts', 'integer', (column) => column.notNull())
      .addColumn('next_attempt_at', 'bigint', (column) => column.notNull())
      .addColumn('lease_owner', 'text')
      .addColumn('lease_until', 'bigint')
      .addColumn('last_attempt_at', 'bigint')
      .addColumn('last_status', 'integer')
      .addColumn('last_error', 'text')
      .addColumn('delivered_at', 'bigint')
      .execute();
    // One logout per client session, however many paths ask for it (a sign-out and the app's own end-session).
    await db.schema.createIndex('oidc_logouts_client_sid').on('oidc_logouts').columns(['client_id', 'sid']).unique().execute();
    await db.schema.createIndex('oidc_logouts_due').on('oidc_logouts').columns(['state', 'next_attempt_at']).execute();
  },
};

/** The columns of `handoffs` after its id: name, type, and whether a value is required. */
const HANDOFF_COLUMNS: ReadonlyArray<readonly [string, 'text' | 'bigint', boolean]> = [
  ['token_hash', 'text', true],
  ['key_hash', 'text', true],
  ['code', 'text', true],
  ['desktop', 'text', false],
  ['network', 'text', false],
  ['site', 'text', false],
  ['return_to', 'text', false],
  ['state', 'text', true],
  ['address', 'text', false],
  ['created_at', 'bigint', true],
  ['expires_at', 'bigint', true],
];

const phoneHandoffs: Migration = {
  version: 17,
  name: 'handoffs',
  async up(db) {
    // docs/protocol.md "Signing in from a phone": a desktop's sign-in that a
    // phone approves. Both secrets are stored as SHA-256 only; the desktop's
    // network is coarse (/24, /48), never its address.
    let table = db.schema.createTable('handoffs').addColumn('id', 'text', (column) => column.primaryKey());
    for (const [name, type, required] of HANDOFF_COLUMNS) {
      table = table.addColumn(name, type, (column) => (required ? column.notNull() : column));
    }
    await table.execute();
    // The phone key finds its row by its hash: one row per hash.
    await db.schema.createIndex('handoffs_key_hash').on('handoffs').column('key_hash').unique().execute();
    await db.schema.createIndex('handoffs_expires_at').on('handoffs').column('expires_at').execute();
  },
};

const emailCodeReplacedHashes: Migration = {
  version: 18,
  name: 'email_codes_replaced_code_hashes',
  async up(db) {
    // docs/protocol.md §6 "E-mail codes": the keyed hashes of the codes that
    // the resends leading to this code replaced, newest first, at most 5,
    // comma-separated; NULL when none (an ordinary start). Never a code.
    // While an older server still writes codes during a rolling deploy, a
    // code it stores keeps the column of the row it replaces: those are still
    // codes of earlier mails to the address, so `code_replaced` stays true.
    await db.schema.alterTable('email_codes').addColumn('replaced_code_hashes', 'text').execute();
  },
};

const tabTokenFreshness: Migration = {
  version: 19,
  name: 'tab_token_freshness',
  async up(db) {
    // docs/protocol.md §3 "Freshness": a tab token carries the step-up claims
    // it was minted with, and the host reads them from here, never from its
    // row (whose own token a later step-up re-mints). Tokens minted before
    // keep NULL: they carry no freshness the host honours.
    await db.schema.alterTable('tab_tokens').addColumn('sudo_at', 'bigint').execute();
    await db.schema.alterTable('tab_tokens').addColumn('step_up_at', 'bigint').execute();
  },
};

const emailCodeLinkHash: Migration = {
  version: 20,
  name: 'email_codes_link_hash',
  async up(db) {
    // docs/protocol.md §6 "E-mail codes": the keyed hash of the secret that
    // the mail's link carries instead of the code. NULL for a code stored
    // before (its link named the code), so such a link signs in nowhere.
    await db.schema.alterTable('email_codes').addColumn('link_hash', 'text').execute();
  },
};

const oidcResources: Migration = {
  version: 21,
  name: 'oidc_resources',
  async up(db) {
    // docs/protocol.md §8 "APIs": the APIs (resource servers, RFC 8707) the
    // operator registers, each with the scopes an app may ask for it and how
    // its JWT access tokens are signed.
    await db.schema
      .createTable('oidc_resources')
      .addColumn('uri', 'text', (column) => column.primaryKey())
      .addColumn('name', 'text', (column) => column.notNull())
      .addColumn('scopes', 'text', (column) => column.notNull())
      .addColumn('alg', 'text', (column) => column.notNull())
      .addColumn('access_token_seconds', 'integer', (column) => column.notNull())
      .addColumn('created_at', 'bigint', (column) => column.notNull())
      .execute();
  },
};

const oidcTokenRevocations: Migration = {
  version: 22,
  name: 'oidc_token_revocations',
  async up(db) {
    // docs/protocol.md §8 "Revoking API tokens": JWT access tokens are not
    // stored, so those ended early are written here, for the revocation feed,
    // which reads them in its order (revocation time, then id).
    await db.schema
      .createTable('oidc_token_revocations')
      .addColumn('id', 'text', (column) => column.primaryKey())
      .addColumn('kind', 'text', (column) => column.notNull())
      .addColumn('subject', 'text', (column) => column.notNull())
      .addColumn('iat_before', 'bigint')
      .addColumn('revoked_at', 'bigint', (column) => column.notNull())
      .addColumn('expires_at', 'bigint', (column) => column.notNull())
      .execute();
    await db.schema.createIndex('oidc_token_revocations_revoked_at').on('oidc_token_revocations').columns(['revoked_at', 'id']).execute();
    await db.schema.createIndex('oidc_token_revocations_expires_at').on('oidc_token_revocations').column('expires_at').execute();
  },
};

/** Every migration, in version order. */
export const MIGRATIONS: readonly Migration[] = [
  initialSchema,
  emailConnectStats,
  batchedAttestEvents,
  sessionIdentity,
  emailCodeTokenlessTries,
  tabTokens,
  webauthnCredentials,
  sessionDevices,
  activity,
  revokedIndex,
  accountLifecycle,
  webhooks,
  identitiesAccountKind,
  tabTokenJtis,
  openIdProvider,
  oidcBackchannelLogout,
  phoneHandoffs,
  emailCodeReplacedHashes,
  tabTokenFreshness,
  emailCodeLinkHash,
  oidcResources,
  oidcTokenRevocations,
];

// biome-ignore lint/suspicious/noExplicitAny: the migration runner works before and across schema versions.
async function lockMigrations(trx: Transaction<any>, engine: DatabaseEngine): Promise<void> {
  // SQLite: the transaction already holds the write lock (BEGIN IMMEDIATE).
  if (engine !== 'postgres') return;
  // Keyed by schema, so test schemas side by side in one database do not wait on each other.
  await sql`SELECT pg_advisory_xact_lock(${sql.lit(MIGRATION_LOCK_CLASS)}, hashtext(current_schema()))`.execute(trx);
}

// biome-ignore lint/suspicious/noExplicitAny: the migration runner works before and across schema versions.
async function ensureMigrationTable(trx: Transaction<any>): Promise<void> {
  // Under the lock above, so two instances cannot race on CREATE TABLE either.
  await trx.schema
    .createTable('schema_migrations')
    .ifNotExists()
    .addColumn('version', 'integer', (column) => column.primaryKey())
    .addColumn('name', 'text', (column) => column.notNull())
    .addColumn('applied_at', 'bigint', (column) => column.notNull())
    .execute();
}

/** Applies every migration the database lacks, each in its own locked transaction. */
export async function applyMigrations(
  database: OpenDatabase,
  options: { now?: () => number; migrations?: readonly Migration[] } = {},
): Promise<MigrationReport> {
  const now = options.now ?? Date.now;
  const migrations = [...(options.migrations ?? MIGRATIONS)].sort((a, b) => a.version - b.version);
  // biome-ignore lint/suspicious/noExplicitAny: the migration runner works before and across schema versions.
  const db = database.db as unknown as Kysely<any>;
  const applied: Array<{ version: number; name: string }> = [];
  for (const migration of migrations) {
    const didApply = await db.transaction().execute(async (trx) => {
      await lockMigrations(trx, database.engine);
      await ensureMigrationTable(trx);
      const existing = await trx
        .selectFrom('schema_migrations')
        .select('version')
        .where('version', '=', migration.version)
        .executeTakeFirst();
      if (existing) return false;
      await migration.up(trx, database.engine);
      await trx.insertInto('schema_migrations').values({ version: migration.version, name: migration.name, applied_at: now() }).execute();
      return true;
    });
    if (didApply) applied.push({ version: migration.version, name: migration.name });
  }
  const latest = await db
    .selectFrom('schema_migrations')
    .select((eb) => eb.fn.max<number | null>('version').as('version'))
    .executeTakeFirst();
  return { applied, currentVersion: Number(latest?.version ?? 0) };
}

/**
 * For the CLI (`oc-host migrate`): open the database of `databaseUrl`, bring
 * its schema up to date, close it.
 */
export async function migrate(databaseUrl: string, options: OpenDatabaseOptions = {}): Promise<MigrationReport> {
  const database = await openDatabase(databaseUrl, options);
  try {
    return await applyMigrations(database);
  } finally {
    await database.close();
  }
}
