/**
 * What every storage area runs on: the open database, compiled hot queries,
 * transactions, and the row locks and look-ups that invariants spanning
 * several areas need (a session insert must not interleave with a merge of
 * its account). The queries are the same on SQLite and PostgreSQL; what
 * differs is confined to row-mapping.ts (booleans) and to the two locking
 * helpers here, which are no-ops on SQLite because there every transaction
 * already holds the database's single write lock from its first statement
 * (BEGIN IMMEDIATE, sqlite-dialect.ts). PostgreSQL runs transactions side by
 * side at READ COMMITTED, so where an invariant spans several statements the
 * transaction first locks what it is about to decide on.
 */
import { randomBytes } from 'node:crypto';
import { sql } from 'kysely';
import type { Compilable, CompiledQuery, Kysely, Transaction, UpdateQueryBuilder, UpdateResult } from 'kysely';
import type { DatabaseEngine, OpenDatabase } from './database.js';
import type { StoreHooks } from './hooks.js';
import { toAccountRecord, toIdentityRecord } from './row-mapping.js';
import type { DatabaseSchema, IdentityKind } from './schema.js';
import { MAX_MERGE_DEPTH, type AccountRecord, type IdentityRecord } from './store.js';

export type Executor = Kysely<DatabaseSchema>;

/** An update of `sessions`, before its WHERE is complete. */
export type SessionsUpdate = UpdateQueryBuilder<DatabaseSchema, 'sessions', 'sessions', UpdateResult>;

/** First key of the two-key advisory lock that serializes inserts per (roster, account). ("oc" 0x0002) */
const SESSION_LOCK_CLASS = 0x6f630002;

export function newRandomId(): string {
  return randomBytes(16).toString('hex');
}

export function isUniqueViolation(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return code === '23505' || code === 'SQLITE_CONSTRAINT_UNIQUE' || code === 'SQLITE_CONSTRAINT_PRIMARYKEY';
}

export function rowsAffected(count: bigint | undefined): number {
  return count === undefined ? 0 : Number(count);
}

/** The values of the identities of one kind that these accounts hold: their e-mail addresses, their Connect users. */
export async function identityValues(executor: Executor, accountIds: readonly string[], kind: IdentityKind): Promise<string[]> {
  const rows = await executor
    .selectFrom('identities')
    .select('value')
    .where('account_id', 'in', accountIds)
    .where('kind', '=', kind)
    .execute();
  return rows.map((row) => row.value);
}

export class StoreExecutor {
  readonly engine: DatabaseEngine;
  readonly database: OpenDatabase;
  readonly db: Executor;

  /**
   * Hot queries compiled once (the query builder costs more than the lookup
   * itself); each run substitutes its own parameters, in the same order.
   */
  readonly #compiled = new Map<string, CompiledQuery>();

  /**
   * What the features' tables do when the core's rows change, in the same
   * transaction (hooks.ts); src/store.ts fills them, so this storage names
   * no feature's table.
   */
  readonly hooks: StoreHooks;

  constructor(database: OpenDatabase, hooks: StoreHooks) {
    this.database = database;
    this.db = database.db;
    this.engine = database.engine;
    this.hooks = hooks;
  }

  async runCompiled<Row>(key: string, build: () => Compilable, parameters: readonly unknown[]): Promise<Row[]> {
    let compiled = this.#compiled.get(key);
    if (!compiled) {
      compiled = build().compile();
      if (compiled.parameters.length !== parameters.length) {
        throw new Error(`storage: hot query ${key} takes ${compiled.parameters.length} parameters, got ${parameters.length}`);
      }
      this.#compiled.set(key, compiled);
    }
    const direct = this.database.runCompiled(compiled.sql, parameters);
    if (direct !== undefined) return (await direct) as Row[];
    const result = await this.db.executeQuery<Row>({ ...compiled, parameters });
    return result.rows;
  }

  transaction<T>(work: (trx: Transaction<DatabaseSchema>) => Promise<T>): Promise<T> {
    return this.db.transaction().execute(work);
  }

  /**
   * PostgreSQL: reads the accounts and locks their rows until the transaction
   * ends, in id order so two transactions cannot deadlock on a pair. `update`
   * excludes everyone (merge, last-identity check); `share` excludes only
   * `update` (session inserts, which must not interleave with a merge).
   * SQLite: a plain read, the transaction already excludes everyone.
   */
  async lockAccounts(
    trx: Transaction<DatabaseSchema>,
    accountIds: readonly string[],
    mode: 'update' | 'share',
  ): Promise<Map<string, AccountRecord>> {
    const ids = [...new Set(accountIds)].sort();
    let query = trx.selectFrom('accounts').selectAll().where('id', 'in', ids).orderBy('id');
    if (this.engine === 'postgres') query = mode === 'update' ? query.forUpdate() : query.forShare();
    const rows = await query.execute();
    return new Map(rows.map((row) => [row.id, toAccountRecord(row)]));
  }

  /** PostgreSQL: serializes transactions on one key until they end. SQLite: already serialized. */
  async lockKey(trx: Transaction<DatabaseSchema>, key: string): Promise<void> {
    if (this.engine !== 'postgres') return;
    await sql`SELECT pg_advisory_xact_lock(${sql.lit(SESSION_LOCK_CLASS)}, hashtext(${key}))`.execute(trx);
  }

  async findAccount(executor: Executor, accountId: string): Promise<AccountRecord | null> {
    const row = await executor.selectFrom('accounts').selectAll().where('id', '=', accountId).executeTakeFirst();
    return row ? toAccountRecord(row) : null;
  }

  async resolveCanonical(executor: Executor, accountId: string): Promise<AccountRecord | null> {
    let current = await this.findAccount(executor, accountId);
    const visited = new Set<string>();
    while (current !== null && current.merged_into !== null) {
      visited.add(current.id);
      // mergeAccounts keeps chains one step long; anything else is damage, and
      // following it further could land a sign-in in an arbitrary account.
      if (visited.size > MAX_MERGE_DEPTH || visited.has(current.merged_into)) {
        throw new Error(`storage: merged_into chain from account ${accountId} loops or is longer than ${MAX_MERGE_DEPTH}`);
      }
      current = await this.findAccount(executor, current.merged_into);
    }
    return current;
  }

  /** Revokes every live session row of these accounts at `now` (a merge, a deletion, a hold, an operator's sign-out); how many. */
  revokeAccountSessions(executor: Executor, accountIds: readonly string[], now: number): Promise<number> {
    return this.revokeLiveSessions(executor, now, (update) => update.where('account_id', 'in', accountIds));
  }

  /**
   * Revokes at `now` the live session rows that `pick` narrows the update to;
   * how many. In the same transaction, the clients the provider signed in
   * through those rows are logged out (docs/protocol.md §8 "Logout").
   */
  async revokeLiveSessions(executor: Executor, now: number, pick: (update: SessionsUpdate) => SessionsUpdate): Promise<number> {
    if (!executor.isTransaction) return this.transaction((trx) => this.revokeLiveSessions(trx, now, pick));
    const revoked = await pick(executor.updateTable('sessions').set({ revoked_at: now }))
      .where('revoked_at', 'is', null)
      .returning('jti')
      .execute();
    await this.hooks.sessionsRevoked(
      executor as Transaction<DatabaseSchema>,
      revoked.map((row) => row.jti),
      now,
    );
    return revoked.length;
  }

  async findIdentity(executor: Executor, kind: IdentityKind, value: string): Promise<IdentityRecord | null> {
    const row = await executor.selectFrom('identities').selectAll().where('kind', '=', kind).where('value', '=', value).executeTakeFirst();
    return row ? toIdentityRecord(row) : null;
  }
}

const ACCOUNT_ID_FORMAT = /^[0-9a-f]{32}$/;

export function assertAccountId(accountId: string): void {
  if (!ACCOUNT_ID_FORMAT.test(accountId)) {
    throw new Error(`storage: account id must be 32 lowercase hex, got ${JSON.stringify(accountId)}`);
  }
}

export function assertLowercaseEmail(email: string): void {
  if (email !== email.toLowerCase()) throw new Error('storage: e-mail addresses must be lowercased by the caller');
}

export function assertIdentityValue(kind: IdentityKind, value: string): void {
  if (value.length === 0) throw new Error(`storage: ${kind} identity value is empty`);
  // docs/protocol.md §2: e-mail identities are lowercased. Callers fold case; the
  // store refuses rather than folds, so a lookup can never silently differ
  // from what was stored.
  if (kind === 'email') assertLowercaseEmail(value);
}
