/**
 * The OpenID provider's tables (keys, clients, resources, models, consents, session links, logouts, token revocations), as this owner's parts of the migrations (docs/architecture.md "A
 * storage area"): the runner (src/platform/storage/migrations.ts) merges every
 * owner's parts by version, so each version keeps the number and name it was
 * released with, and applies them in a fixed order of owners (src/store.ts).
 * Like every migration, a part is never edited once released.
 */
import type { Migration } from '../../platform/storage/index.js';

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

/** This owner's parts, in version order. */
export const OIDC_MIGRATIONS: readonly Migration[] = [openIdProvider, oidcBackchannelLogout, oidcResources, oidcTokenRevocations];
