/**
 * Where the two engines differ in what a row holds, and the only place:
 * - booleans: SQLite stores 0/1 (it has no boolean, and better-sqlite3 refuses
 *   to bind `true`), PostgreSQL true/false;
 * - integers: epoch milliseconds and counts come back as numbers on both
 *   (PostgreSQL's int8 through the pool's type parser, database.ts); Number()
 *   here keeps a row correct even if a value arrives as a string or bigint.
 */
import type { DatabaseEngine } from './database.js';
import type { AccountsTable, DatabaseBoolean, IdentitiesTable, SessionsTable, SigningKeysTable } from './schema.js';
import type { AccountRecord, IdentityRecord, SessionRecord, SigningKeyRecord } from './store.js';

export function toDatabaseBoolean(engine: DatabaseEngine, value: boolean): DatabaseBoolean {
  if (engine === 'postgres') return value;
  return value ? 1 : 0;
}

export function fromDatabaseBoolean(value: DatabaseBoolean): boolean {
  return value === true || value === 1;
}

export function toNumber(value: number | string | bigint): number {
  return typeof value === 'number' ? value : Number(value);
}

export function toNumberOrNull(value: number | string | bigint | null): number | null {
  return value === null ? null : toNumber(value);
}

export function toCount(value: number | string | bigint | null | undefined): number {
  return value === null || value === undefined ? 0 : toNumber(value);
}

export function toAccountRecord(row: AccountsTable): AccountRecord {
  return {
    id: row.id,
    kind: row.kind,
    display_name: row.display_name,
    display_identity_kind: row.display_identity_kind,
    primary_btc: row.primary_btc,
    merged_into: row.merged_into,
    created_at: toNumber(row.created_at),
    updated_at: toNumber(row.updated_at),
    disabled_at: row.disabled_at === null ? null : toNumber(row.disabled_at),
    deleted_at: row.deleted_at === null ? null : toNumber(row.deleted_at),
  };
}

export function toIdentityRecord(row: IdentitiesTable): IdentityRecord {
  return {
    id: row.id,
    account_id: row.account_id,
    kind: row.kind,
    value: row.value,
    verified: fromDatabaseBoolean(row.verified),
    created_at: toNumber(row.created_at),
  };
}

export function toSessionRecord(row: SessionsTable): SessionRecord {
  return {
    jti: row.jti,
    token_hash: row.token_hash,
    account_id: row.account_id,
    roster_id: row.roster_id,
    signing_method: row.signing_method,
    created_at: toNumber(row.created_at),
    expires_at: toNumber(row.expires_at),
    last_seen_at: toNumber(row.last_seen_at),
    revoked_at: toNumberOrNull(row.revoked_at),
    step_up_at: toNumberOrNull(row.step_up_at),
    sudo_at: toNumberOrNull(row.sudo_at),
  };
}

export function toSigningKeyRecord(row: SigningKeysTable): SigningKeyRecord {
  return {
    kid: row.kid,
    private_jwk: row.private_jwk,
    public_jwk: row.public_jwk,
    created_at: toNumber(row.created_at),
    activated_at: toNumber(row.activated_at),
    retired_at: toNumberOrNull(row.retired_at),
  };
}
