/**
 * The identity core's tables (accounts, identities, sessions, tab tokens, used nonces, settings, signing keys, activity), as this owner's parts of the migrations (docs/architecture.md "A
 * storage area"): the runner (src/platform/storage/migrations.ts) merges every
 * owner's parts by version, so each version keeps the number and name it was
 * released with, and applies them in a fixed order of owners (src/store.ts).
 * Like every migration, a part is never edited once released.
 */
import { sql } from 'kysely';
import { type DatabaseEngine, type Migration, booleanColumnType } from '../../platform/storage/index.js';

/** PostgreSQL has regular expressions; SQLite has GLOB. Both reject anything but 32 lowercase hex. */
function accountIdFormat(engine: DatabaseEngine) {
  return engine === 'postgres' ? sql`id ~ '^[0-9a-f]{32}$'` : sql`length(id) = 32 AND id NOT GLOB '*[^0-9a-f]*'`;
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
      .addColumn('verified', booleanColumnType(engine), (column) => column.notNull())
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

/** This owner's parts, in version order. */
export const IDENTITY_MIGRATIONS: readonly Migration[] = [
  initialSchema,
  sessionIdentity,
  tabTokens,
  sessionDevices,
  activity,
  revokedIndex,
  accountLifecycle,
  identitiesAccountKind,
  tabTokenJtis,
  tabTokenFreshness,
];
