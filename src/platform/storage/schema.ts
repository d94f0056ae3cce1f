/**
 * Kysely table types: the columns exactly as the database holds them, on both
 * engines. Times are integer milliseconds since the epoch in BIGINT columns
 * (PostgreSQL's int8 is parsed to a JS number by the pool, see database.ts).
 * Booleans are the one column type whose raw value differs by engine (SQLite
 * has no boolean: 0/1; PostgreSQL: true/false), hence {@link DatabaseBoolean};
 * row-mapping.ts turns them into plain records. Domain code never sees these
 * types; it sees the records of store.ts.
 */

/** docs/protocol.md §2: an account is `btc` (first proof a Bitcoin address) or `federated`. */
export type AccountKind = 'btc' | 'federated';

/** docs/protocol.md §2: the kinds of linked identity. */
export type IdentityKind = 'btc' | 'email' | 'oauth' | 'connect';

/** docs/protocol.md §2: `display_identity.kind` values. */
export type DisplayIdentityKind = 'btc' | 'email' | 'did' | 'nostr';

/** 0/1 on SQLite, true/false on PostgreSQL. */
export type DatabaseBoolean = boolean | 0 | 1;

export interface AccountsTable {
  id: string;
  kind: AccountKind;
  display_name: string | null;
  display_identity_kind: DisplayIdentityKind | null;
  primary_btc: string | null;
  merged_into: string | null;
  created_at: number;
  updated_at: number;
  disabled_at: number | null;
  deleted_at: number | null;
}

export interface IdentitiesTable {
  id: string;
  account_id: string;
  kind: IdentityKind;
  value: string;
  verified: DatabaseBoolean;
  created_at: number;
}

export interface SessionsTable {
  jti: string;
  token_hash: string;
  account_id: string;
  roster_id: string | null;
  signing_method: string | null;
  created_at: number;
  expires_at: number;
  last_seen_at: number;
  revoked_at: number | null;
  step_up_at: number | null;
  sudo_at: number | null;
  /**
   * The identity the row was signed in through (migration 4); NULL for rows
   * from before it, and once that identity is gone. Unlinking an identity
   * revokes the rows it opened (docs/protocol.md, linking).
   */
  identity_id: string | null;
  /** A coarse device label from the User-Agent at sign-in (migration 8); NULL when unknown. */
  device: string | null;
  /** The sign-in's network, an IPv4 /24 or IPv6 /48 (migration 8); never a full address. */
  network: string | null;
}

interface UsedNoncesTable {
  nonce: string;
  expires_at: number;
}

interface SettingsTable {
  key: string;
  value: string;
}

export interface SigningKeysTable {
  kid: string;
  private_jwk: string;
  public_jwk: string;
  created_at: number;
  activated_at: number;
  retired_at: number | null;
}

export interface ConnectAppsTable {
  id: string;
  owner_account_id: string;
  name: string;
  key_hash: string;
  created_at: number;
  rotated_at: number | null;
  webhook_url: string | null;
}

/** docs/protocol.md §6 "Webhooks": one row per (event, app), the outbox and the delivery log in one. */
/** The columns of an outbox row's attempts and lease (src/platform/storage/outbox.ts). */
export interface OutboxColumns {
  /** `pending`, `delivered` or `failed` (given up). */
  state: string;
  attempts: number;
  next_attempt_at: number;
  lease_owner: string | null;
  lease_until: number | null;
  last_attempt_at: number | null;
  last_status: number | null;
  last_error: string | null;
  delivered_at: number | null;
}

interface WebhookDeliveriesTable extends OutboxColumns {
  id: string;
  app_id: string;
  event_type: string;
  /** The request body exactly as signed and sent. */
  payload: string;
  created_at: number;
}

/**
 * Extra tokens of a session row, minted for pinned browser tabs (migration
 * 6, docs/protocol.md §3): each is valid while its row is live, and a
 * re-mint of the row's own token leaves them alone.
 */
interface TabTokensTable {
  token_hash: string;
  /** The row the token belongs to. */
  jti: string;
  created_at: number;
  /** The token's own jti (migration 14); NULL for tokens minted before, which carry the row's. */
  token_jti: string | null;
  /** When a step-up from its tab, or newer tokens past the row's limit, superseded it; NULL while it is live. */
  superseded_at: number | null;
  /** The step-up claims the token was minted with (migration 19); NULL for none, and for tokens minted before. */
  sudo_at: number | null;
  step_up_at: number | null;
}

/** Security events per account (migration 9, docs/protocol.md §6 "Activity"). */
interface ActivityTable {
  id: string;
  account_id: string;
  at: number;
  kind: string;
  /** JSON text of a flat object. */
  detail: string;
}

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

interface SchemaMigrationsTable {
  version: number;
  name: string;
  applied_at: number;
}

export interface DatabaseSchema {
  accounts: AccountsTable;
  identities: IdentitiesTable;
  sessions: SessionsTable;
  tab_tokens: TabTokensTable;
  used_nonces: UsedNoncesTable;
  settings: SettingsTable;
  signing_keys: SigningKeysTable;
  connect_apps: ConnectAppsTable;
  activity: ActivityTable;
  webhook_deliveries: WebhookDeliveriesTable;
  oidc_keys: OidcKeysTable;
  oidc_clients: OidcClientsTable;
  oidc_resources: OidcResourcesTable;
  oidc_models: OidcModelsTable;
  oidc_token_revocations: OidcTokenRevocationsTable;
  oidc_consents: OidcConsentsTable;
  oidc_session_links: OidcSessionLinksTable;
  oidc_logouts: OidcLogoutsTable;
  schema_migrations: SchemaMigrationsTable;
}
