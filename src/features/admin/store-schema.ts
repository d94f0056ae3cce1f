/**
 * The operators' tables (docs/operations.md "Operators and the audit log"):
 * who may operate, their API tokens and the audit log, as this owner's part
 * of the migrations (docs/architecture.md "A storage area"). Like every
 * migration, a part is never edited once released.
 */
import { sql } from 'kysely';
import type { Migration } from '../../platform/storage/index.js';

/** An account named an operator by the command line. */
export interface OperatorsTable {
  account_id: string;
  added_at: number;
  /** Who named it: `cli` or the `did:oc` of another operator. */
  added_by: string;
}

/** An operator's API token for automation: only its SHA-256 is kept. */
export interface OperatorTokensTable {
  /** 32 hex; shown in lists and the audit log, never the token. */
  id: string;
  token_hash: string;
  account_id: string;
  name: string;
  /** Space-separated scopes: `read`, `write`. */
  scopes: string;
  created_at: number;
  expires_at: number;
  revoked_at: number | null;
  last_used_at: number | null;
}

/** One audited action. Rows are only ever added, and removed by retention. */
export interface AuditLogTable {
  /** 32 hex, the time first: lists page by (at, id). */
  id: string;
  at: number;
  /** `cli`, or the operator's `did:oc`. */
  actor: string;
  /** How the actor came: `cli`, `console`, or `token:<id>`. */
  via: string;
  action: string;
  /** What was acted on (`did:oc:…`, `client:…`, `app:…`, `key:session`), or null. */
  target: string | null;
  reason: string | null;
  /** The coarse network of the request (a /24 or /48), null from the command line. */
  network: string | null;
  /** JSON text of the action's details, or null. */
  detail: string | null;
}

declare module '../../platform/storage/schema.js' {
  interface DatabaseSchema {
    operators: OperatorsTable;
    operator_tokens: OperatorTokensTable;
    audit_log: AuditLogTable;
  }
}

const operators: Migration = {
  version: 23,
  name: 'operators_audit_log',
  async up(db, engine) {
    await db.schema
      .createTable('operators')
      .addColumn('account_id', 'text', (column) => column.primaryKey().references('accounts.id'))
      .addColumn('added_at', 'bigint', (column) => column.notNull())
      .addColumn('added_by', 'text', (column) => column.notNull())
      .execute();
    await db.schema
      .createTable('operator_tokens')
      .addColumn('id', 'text', (column) => column.primaryKey())
      .addColumn('token_hash', 'text', (column) => column.notNull().unique())
      .addColumn('account_id', 'text', (column) => column.notNull().references('accounts.id'))
      .addColumn('name', 'text', (column) => column.notNull())
      .addColumn('scopes', 'text', (column) => column.notNull())
      .addColumn('created_at', 'bigint', (column) => column.notNull())
      .addColumn('expires_at', 'bigint', (column) => column.notNull())
      .addColumn('revoked_at', 'bigint')
      .addColumn('last_used_at', 'bigint')
      .execute();
    await db.schema.createIndex('operator_tokens_account').on('operator_tokens').column('account_id').execute();
    await db.schema
      .createTable('audit_log')
      .addColumn('id', 'text', (column) => column.primaryKey())
      .addColumn('at', 'bigint', (column) => column.notNull())
      .addColumn('actor', 'text', (column) => column.notNull())
      .addColumn('via', 'text', (column) => column.notNull())
      .addColumn('action', 'text', (column) => column.notNull())
      .addColumn('target', 'text')
      .addColumn('reason', 'text')
      .addColumn('network', 'text')
      .addColumn('detail', 'text')
      .execute();
    await db.schema.createIndex('audit_log_at').on('audit_log').columns(['at', 'id']).execute();
    await db.schema.createIndex('audit_log_target').on('audit_log').columns(['target', 'at']).execute();
    // Append-only below the service too: an UPDATE is refused by the database
    // itself; only the retention's DELETE of old rows removes any.
    if (engine === 'postgres') {
      await sql`CREATE FUNCTION audit_log_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN RAISE EXCEPTION 'audit_log is append-only'; END $$`.execute(db);
      await sql`CREATE TRIGGER audit_log_no_update BEFORE UPDATE ON audit_log
        FOR EACH ROW EXECUTE FUNCTION audit_log_append_only()`.execute(db);
    } else {
      await sql`CREATE TRIGGER audit_log_no_update BEFORE UPDATE ON audit_log
        BEGIN SELECT RAISE(ABORT, 'audit_log is append-only'); END`.execute(db);
    }
  },
};

/**
 * The people search of the console and the admin API: an identity's value
 * folded to lower case, in byte order on both engines (`COLLATE "C"` on
 * PostgreSQL, SQLite's own BINARY), so a case-insensitive prefix is one range
 * of one index on a million accounts. A query names the same expression
 * (`foldedValue` in store.ts) or the index is not used.
 */
const identitiesFoldedValue: Migration = {
  version: 24,
  name: 'identities_folded_value',
  async up(db, engine) {
    const folded = engine === 'postgres' ? sql`(lower(value) COLLATE "C")` : sql`lower(value)`;
    await sql`CREATE INDEX identities_folded_value ON identities (${folded}, id)`.execute(db);
  },
};

/** This owner's parts, in version order. */
export const ADMIN_MIGRATIONS: readonly Migration[] = [operators, identitiesFoldedValue];
