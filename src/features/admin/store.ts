/**
 * The operators' storage area (docs/operations.md "Operators and the audit
 * log"): who may operate, their API tokens (kept as SHA-256 only), and the
 * audit log, to which rows are only added and from which only the retention
 * removes them.
 */
import { sql, type Kysely, type RawBuilder } from 'kysely';
import {
  isUniqueViolation,
  rowsAffected,
  toIdentityRecord,
  toNumber,
  toNumberOrNull,
  type DatabaseEngine,
  type DatabaseSchema,
  type EpochMilliseconds,
  type IdentityRecord,
  type StoreExecutor,
} from '../../platform/storage/index.js';
import type { AuditLogTable, OperatorTokensTable, OperatorsTable } from './store-schema.js';

export interface OperatorRecord {
  readonly account_id: string;
  readonly added_at: EpochMilliseconds;
  readonly added_by: string;
}

export type OperatorScope = 'read' | 'write';

export interface OperatorTokenRecord {
  readonly id: string;
  readonly account_id: string;
  readonly name: string;
  readonly scopes: readonly OperatorScope[];
  readonly created_at: EpochMilliseconds;
  readonly expires_at: EpochMilliseconds;
  readonly revoked_at: EpochMilliseconds | null;
  readonly last_used_at: EpochMilliseconds | null;
}

export interface NewOperatorToken extends Omit<OperatorTokenRecord, 'revoked_at' | 'last_used_at'> {
  readonly token_hash: string;
}

export interface AuditRecord {
  readonly id: string;
  readonly at: EpochMilliseconds;
  readonly actor: string;
  readonly via: string;
  readonly action: string;
  readonly target: string | null;
  readonly reason: string | null;
  readonly network: string | null;
  /** JSON text, or null. */
  readonly detail: string | null;
}

/** Which audit rows to list: all filters are optional and combine. */
export interface AuditQuery {
  readonly actor?: string;
  readonly action?: string;
  readonly target?: string;
  readonly since?: EpochMilliseconds;
  readonly until?: EpochMilliseconds;
  /** The order of the list: `newest` (the default) or `oldest` first. */
  readonly order?: 'newest' | 'oldest';
  /** The last row of the previous page: the list goes on after it, in its order. */
  readonly before?: { readonly at: EpochMilliseconds; readonly id: string };
  readonly limit: number;
}

/** A page of the people search: the text to start with, and where the last page ended. */
export interface PeopleQuery {
  /** Compared case-insensitively: the database folds it as it folds the values. */
  readonly prefix: string;
  /** The identity id of the last match of the previous page. */
  readonly after?: string | undefined;
  readonly limit: number;
}

/** An identity whose value starts with the search text, with its value as the search folds it. */
export interface IdentityMatch {
  readonly identity: IdentityRecord;
  readonly folded: string;
}

export interface OperatorStore {
  /** False when the account already is one. */
  addOperator(operator: OperatorRecord): Promise<boolean>;
  /** False when it was none. */
  removeOperator(accountId: string): Promise<boolean>;
  findOperator(accountId: string): Promise<OperatorRecord | null>;
  listOperators(): Promise<OperatorRecord[]>;

  insertOperatorToken(token: NewOperatorToken): Promise<void>;
  /** The token of this hash, whatever its state: the caller decides whether it still opens anything. */
  findOperatorTokenByHash(tokenHash: string): Promise<OperatorTokenRecord | null>;
  listOperatorTokens(accountId?: string): Promise<OperatorTokenRecord[]>;
  /** False when no such live token. */
  revokeOperatorToken(id: string, at: EpochMilliseconds): Promise<boolean>;
  touchOperatorToken(id: string, at: EpochMilliseconds): Promise<void>;

  appendAudit(entry: AuditRecord): Promise<void>;
  /** Newest first. */
  listAudit(query: AuditQuery): Promise<AuditRecord[]>;
  /** Deletes rows at or before `cutoff`; how many. */
  purgeAudit(cutoff: EpochMilliseconds): Promise<number>;

  /** Identities whose value starts with the prefix, case-insensitively, in the order of their folded value and id. */
  searchIdentities(query: PeopleQuery): Promise<IdentityMatch[]>;
  /** Ids of accounts (live or not) that start with the prefix (lowercase hex), in order. */
  searchAccountIds(prefix: string, afterId: string | undefined, limit: number): Promise<string[]>;
}

/**
 * An identity's value as the people search folds it: the expression of the
 * index `identities_folded_value` (store-schema.ts), in byte order.
 */
function foldedValue(engine: DatabaseEngine): RawBuilder<string> {
  return engine === 'postgres' ? sql<string>`(lower(value) COLLATE "C")` : sql<string>`lower(value)`;
}

/** The search text folded by the database as the values are, in the same byte order. */
function foldedText(engine: DatabaseEngine, text: string): RawBuilder<string> {
  return engine === 'postgres' ? sql<string>`(lower(${text}) COLLATE "C")` : sql<string>`lower(${text})`;
}

/**
 * The people search's query: one range of the index `identities_folded_value`
 * in its order, the page's rows and no more. Exported for the test that
 * holds it to that index on both engines.
 */
export function identityMatchesQuery(db: Kysely<DatabaseSchema>, engine: DatabaseEngine, query: PeopleQuery) {
  const folded = foldedValue(engine);
  let select = db
    .selectFrom('identities')
    .selectAll()
    .select(folded.as('folded'))
    .where(sql<boolean>`${folded} >= ${foldedText(engine, query.prefix)}`)
    .where(sql<boolean>`${folded} < ${pastPrefix(engine, query.prefix)}`);
  const after = query.after;
  if (after !== undefined) {
    // Past the last match of the previous page; if that identity is gone since, the page is empty.
    const last = sql<string>`(SELECT ${folded} FROM identities WHERE id = ${after})`;
    select = select.where(sql<boolean>`(${folded} > ${last} OR (${folded} = ${last} AND id > ${after}))`);
  }
  return select.orderBy(folded).orderBy('id').limit(query.limit);
}

/** Past every string that starts with the text: the text and the last code point (U+10FFFF), byte order. */
function pastPrefix(engine: DatabaseEngine, text: string): RawBuilder<string> {
  return engine === 'postgres'
    ? sql<string>`((lower(${text}) || chr(1114111)) COLLATE "C")`
    : sql<string>`(lower(${text}) || char(1114111))`;
}

const SCOPES: readonly OperatorScope[] = ['read', 'write'];

function toOperatorRecord(row: OperatorsTable): OperatorRecord {
  return { account_id: row.account_id, added_at: toNumber(row.added_at), added_by: row.added_by };
}

function toTokenRecord(row: OperatorTokensTable): OperatorTokenRecord {
  return {
    id: row.id,
    account_id: row.account_id,
    name: row.name,
    scopes: SCOPES.filter((scope) => row.scopes.split(' ').includes(scope)),
    created_at: toNumber(row.created_at),
    expires_at: toNumber(row.expires_at),
    revoked_at: toNumberOrNull(row.revoked_at),
    last_used_at: toNumberOrNull(row.last_used_at),
  };
}

function toAuditRecord(row: AuditLogTable): AuditRecord {
  return { ...row, at: toNumber(row.at) };
}

export class OperatorsArea implements OperatorStore {
  readonly #x: StoreExecutor;

  constructor(executor: StoreExecutor) {
    this.#x = executor;
  }

  async addOperator(operator: OperatorRecord): Promise<boolean> {
    try {
      await this.#x.db.insertInto('operators').values(operator).execute();
      return true;
    } catch (error) {
      if (isUniqueViolation(error)) return false;
      throw error;
    }
  }

  async removeOperator(accountId: string): Promise<boolean> {
    return this.#x.transaction(async (trx) => {
      const removed = await trx.deleteFrom('operators').where('account_id', '=', accountId).executeTakeFirst();
      if (rowsAffected(removed.numDeletedRows) === 0) return false;
      // A removed operator's tokens open nothing from now on (docs/operations.md "Operators and the audit log").
      await trx.deleteFrom('operator_tokens').where('account_id', '=', accountId).execute();
      return true;
    });
  }

  async findOperator(accountId: string): Promise<OperatorRecord | null> {
    const row = await this.#x.db.selectFrom('operators').selectAll().where('account_id', '=', accountId).executeTakeFirst();
    return row ? toOperatorRecord(row) : null;
  }

  async listOperators(): Promise<OperatorRecord[]> {
    const rows = await this.#x.db.selectFrom('operators').selectAll().orderBy('added_at').orderBy('account_id').execute();
    return rows.map(toOperatorRecord);
  }

  async insertOperatorToken(token: NewOperatorToken): Promise<void> {
    await this.#x.db
      .insertInto('operator_tokens')
      .values({
        id: token.id,
        token_hash: token.token_hash,
        account_id: token.account_id,
        name: token.name,
        scopes: token.scopes.join(' '),
        created_at: token.created_at,
        expires_at: token.expires_at,
        revoked_at: null,
        last_used_at: null,
      })
      .execute();
  }

  async findOperatorTokenByHash(tokenHash: string): Promise<OperatorTokenRecord | null> {
    const row = await this.#x.db.selectFrom('operator_tokens').selectAll().where('token_hash', '=', tokenHash).executeTakeFirst();
    return row ? toTokenRecord(row) : null;
  }

  async listOperatorTokens(accountId?: string): Promise<OperatorTokenRecord[]> {
    let query = this.#x.db.selectFrom('operator_tokens').selectAll();
    if (accountId !== undefined) query = query.where('account_id', '=', accountId);
    const rows = await query.orderBy('created_at').orderBy('id').execute();
    return rows.map(toTokenRecord);
  }

  async revokeOperatorToken(id: string, at: number): Promise<boolean> {
    const result = await this.#x.db
      .updateTable('operator_tokens')
      .set({ revoked_at: at })
      .where('id', '=', id)
      .where('revoked_at', 'is', null)
      .executeTakeFirst();
    return rowsAffected(result.numUpdatedRows) > 0;
  }

  async touchOperatorToken(id: string, at: number): Promise<void> {
    await this.#x.db.updateTable('operator_tokens').set({ last_used_at: at }).where('id', '=', id).execute();
  }

  async appendAudit(entry: AuditRecord): Promise<void> {
    await this.#x.db.insertInto('audit_log').values(entry).execute();
  }

  async listAudit(query: AuditQuery): Promise<AuditRecord[]> {
    let select = this.#x.db.selectFrom('audit_log').selectAll();
    if (query.actor !== undefined) select = select.where('actor', '=', query.actor);
    if (query.action !== undefined) select = select.where('action', '=', query.action);
    if (query.target !== undefined) select = select.where('target', '=', query.target);
    if (query.since !== undefined) select = select.where('at', '>=', query.since);
    if (query.until !== undefined) select = select.where('at', '<', query.until);
    const last = query.before;
    const oldest = query.order === 'oldest';
    const past = oldest ? '>' : '<';
    if (last !== undefined) {
      select = select.where((eb) => eb.or([eb('at', past, last.at), eb.and([eb('at', '=', last.at), eb('id', past, last.id)])]));
    }
    const direction = oldest ? 'asc' : 'desc';
    const rows = await select.orderBy('at', direction).orderBy('id', direction).limit(query.limit).execute();
    return rows.map(toAuditRecord);
  }

  async purgeAudit(cutoff: number): Promise<number> {
    const result = await this.#x.db.deleteFrom('audit_log').where('at', '<=', cutoff).executeTakeFirst();
    return rowsAffected(result.numDeletedRows);
  }

  async searchIdentities(query: PeopleQuery): Promise<IdentityMatch[]> {
    const rows = await identityMatchesQuery(this.#x.db, this.#x.engine, query).execute();
    return rows.map(({ folded: value, ...row }) => ({ identity: toIdentityRecord(row), folded: value }));
  }

  async searchAccountIds(prefix: string, afterId: string | undefined, limit: number): Promise<string[]> {
    // Account ids are 32 lowercase hex: a prefix is one range of the primary key.
    let select = this.#x.db.selectFrom('accounts').select('id').where('id', '>=', prefix).where('id', '<', `${prefix}g`);
    if (afterId !== undefined) select = select.where('id', '>', afterId);
    const rows = await select.orderBy('id').limit(limit).execute();
    return rows.map((row) => row.id);
  }
}
