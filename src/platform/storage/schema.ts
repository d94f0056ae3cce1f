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
  activity: ActivityTable;
  schema_migrations: SchemaMigrationsTable;
}
