/**
 * The OpenID provider's tables (keys, clients, resources, models, consents, session links, logouts, token revocations), as this owner's parts of the migrations (docs/architecture.md "A
 * storage area"): the runner (src/platform/storage/migrations.ts) merges every
 * owner's parts by version, so each version keeps the number and name it was
 * released with, and applies them in a fixed order of owners (src/store.ts).
 * Like every migration, a part is never edited once released.
 */
import type { Migration, OutboxColumns } from '../../platform/storage/index.js';

/** The OpenID provider's signing keys (migration 15, docs/protocol.md §8). */
interface OidcKeysTable {
  /** RFC 7638 thumbprint of the public key. */
  kid: string;
  /** `RS256`, `ES256` or `EdDSA`. */
  alg: string;
  /** JSON text of the private JWK. */
  private_jwk: string;
  created_at: number;
  retired_at: number | null;
}

/** Registered OpenID clients (migration 15): their metadata, with the secret as its SHA-256. */
export interface OidcClientsTable {
  client_id: string;
  /** JSON text of the client metadata (RFC 7591); `client_secret` holds the secret's hash. */
  metadata: string;
  /** The Connect app that registered the client, or NULL for the operator's. */
  owner_app_id: string | null;
  /** 1: the operator's own app, no consent screen; 0 otherwise. */
  first_party: number;
  created_at: number;
  updated_at: number;
}

/** An API the provider issues JWT access tokens for (migration 21). */
export interface OidcResourcesTable {
  /** The resource indicator (RFC 8707): an absolute URI without a fragment. */
  uri: string;
  name: string;
  /** JSON array of the scopes an app may ask for this API. */
  scopes: string;
  /** The JWS algorithm of its access tokens: RS256, ES256 or EdDSA. */
  alg: string;
  access_token_seconds: number;
  created_at: number;
}

/**
 * JWT access tokens ended before their expiry (migration 22), for the
 * revocation feed (docs/protocol.md §8 "Revoking API tokens"): one token by
 * its jti, or every token of a grant or of a client issued until a time.
 */
export interface OidcTokenRevocationsTable {
  /** 32 hex characters: orders the feed after `revoked_at`, as a session's jti does. */
  id: string;
  kind: 'access_token' | 'grant' | 'client';
  /** The token's jti, the grant's reference (its tokens' `oc_grant` claim) or the client id. */
  subject: string;
  /** For a grant or a client: tokens issued (`iat`, Unix seconds) at or before this are ended; null for one token. */
  iat_before: number | null;
  revoked_at: number;
  /** When the entry leaves the feed: the token's own expiry, or when the last token it covers expires. */
  expires_at: number;
}

/** What the provider library stores: codes, tokens, grants, sessions and interactions (migration 15). */
export interface OidcModelsTable {
  model: string;
  id: string;
  /** JSON text of the library's payload. */
  payload: string;
  grant_id: string | null;
  uid: string | null;
  user_code: string | null;
  expires_at: number | null;
  consumed_at: number | null;
}

/** The consent an account gave a client: the grant that holds its scopes (migration 15). */
export interface OidcConsentsTable {
  account_id: string;
  client_id: string;
  grant_id: string;
  created_at: number;
  updated_at: number;
}

/**
 * docs/protocol.md §8 "Logout": a client the provider signed in through a
 * host session (migration 16), so that ending the host session tells the
 * client. One row per (host session, client).
 */
interface OidcSessionLinksTable {
  /** The host session row's jti. */
  session_jti: string;
  client_id: string;
  account_id: string;
  /** The provider's `sid` for this client in its session. */
  sid: string;
  /** The provider session's uid (its cookie value), ended with the host session. */
  op_session_uid: string;
  /** 1 when the client had a `backchannel_logout_uri` when it signed in. */
  backchannel: number;
  created_at: number;
  expires_at: number;
}

/** docs/protocol.md §8 "Logout": the back-channel logout outbox, one row per (client, sid) (migration 16). */
interface OidcLogoutsTable extends OutboxColumns {
  id: string;
  client_id: string;
  account_id: string;
  sid: string;
  created_at: number;
}

declare module '../../platform/storage/schema.js' {
  interface DatabaseSchema {
    oidc_keys: OidcKeysTable;
    oidc_clients: OidcClientsTable;
    oidc_resources: OidcResourcesTable;
    oidc_models: OidcModelsTable;
    oidc_token_revocations: OidcTokenRevocationsTable;
    oidc_consents: OidcConsentsTable;
    oidc_session_links: OidcSessionLinksTable;
    oidc_logouts: OidcLogoutsTable;
  }
}

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
