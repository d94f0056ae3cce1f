/**
 * The one implementation of {@link Store}, on Kysely, for SQLite and
 * PostgreSQL alike. The queries are the same on both engines; what differs is
 * confined to row-mapping.ts (booleans) and to two locking helpers below,
 * which are no-ops on SQLite because there every transaction already holds the
 * database's single write lock from its first statement (BEGIN IMMEDIATE,
 * sqlite-dialect.ts). PostgreSQL runs transactions side by side at READ
 * COMMITTED, so where an invariant spans several statements the transaction
 * first locks what it is about to decide on.
 */
import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { sql } from 'kysely';
import type { Compilable, CompiledQuery, Kysely, Transaction, Updateable } from 'kysely';
import { openDatabase } from './database.js';
import type { DatabaseEngine, OpenDatabase, OpenDatabaseOptions } from './database.js';
import { applyMigrations } from './migrations.js';
import {
  toAccountRecord,
  toConnectAppRecord,
  toCount,
  toDatabaseBoolean,
  toEmailCodeRecord,
  toIdentityRecord,
  toSessionRecord,
  toSigningKeyRecord,
} from './row-mapping.js';
import type {
  AccountsTable,
  AttestEventKind,
  DatabaseSchema,
  IdentitiesTable,
  IdentityKind,
  SessionsTable,
} from './schema.js';
import {
  ATTEST_EVENT_RETENTION_MS,
  DEFAULT_SESSION_RETENTION_MS,
  MAX_MERGE_DEPTH,
} from './store.js';
import type {
  AccountPatch,
  AccountRecord,
  AddIdentityResult,
  ConnectAppRecord,
  CreateAccountResult,
  EmailCodeRecord,
  FamilyStats,
  IdentityRecord,
  MergeResult,
  NewAccount,
  NewConnectApp,
  NewEmailCode,
  NewIdentity,
  NewSession,
  NewSigningKey,
  PurgeCounts,
  PurgeOptions,
  RemoveIdentityResult,
  RosterMemberRecord,
  LiveRosterRecord,
  SessionFreshness,
  SessionRecord,
  SigningKeyRecord,
  Store,
} from './store.js';

type Executor = Kysely<DatabaseSchema>;

const ACCOUNT_ID_FORMAT = /^[0-9a-f]{32}$/;

/** A new account id: 128 random bits as 32 lowercase hex (PROTOCOL.md §2). */
export function newAccountId(): string {
  return randomBytes(16).toString('hex');
}

function newRandomId(): string {
  return randomBytes(16).toString('hex');
}

/** First key of the two-key advisory lock that serializes inserts per (roster, account). ("oc" 0x0002) */
const SESSION_LOCK_CLASS = 0x6f630002;

/** Name of the partial unique index of migration 1. */
const LIVE_ROSTER_INDEX = 'sessions_live_roster_account_unique';

/** insertSession retries a lost race on the live-row index this often before giving up. */
const MAX_INSERT_SESSION_ATTEMPTS = 20;

/** /api/family-stats counts attestation calls of the last 24 hours (PROTOCOL.md §6). */
const ATTEST_COUNT_WINDOW_MS = 24 * 60 * 60 * 1000;

function isUniqueViolation(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return code === '23505' || code === 'SQLITE_CONSTRAINT_UNIQUE' || code === 'SQLITE_CONSTRAINT_PRIMARYKEY';
}

/** A unique violation of the one-live-row-per-(roster, account) index, on either engine. */
function isLiveRosterConflict(error: unknown): boolean {
  if (!isUniqueViolation(error)) return false;
  const { constraint, message } = error as { constraint?: unknown; message?: unknown };
  if (constraint === LIVE_ROSTER_INDEX) return true;
  return typeof message === 'string' && message.includes('sessions.roster_id, sessions.account_id');
}

function assertAccountId(accountId: string): void {
  if (!ACCOUNT_ID_FORMAT.test(accountId)) {
    throw new Error(`storage: account id must be 32 lowercase hex, got ${JSON.stringify(accountId)}`);
  }
}

function assertIdentityValue(kind: IdentityKind, value: string): void {
  if (value.length === 0) throw new Error(`storage: ${kind} identity value is empty`);
  // PROTOCOL.md §2: e-mail identities are lowercased. Callers fold case; the
  // store refuses rather than folds, so a lookup can never silently differ
  // from what was stored.
  if (kind === 'email') assertLowercaseEmail(value);
}

function assertLowercaseEmail(email: string): void {
  if (email !== email.toLowerCase()) throw new Error('storage: e-mail addresses must be lowercased by the caller');
}

function rowsAffected(count: bigint | undefined): number {
  return count === undefined ? 0 : Number(count);
}

/** A session row joined with its account's columns, prefixed `account_`. */
interface SessionWithAccountRow extends SessionsTable {
  account_kind: AccountsTable['kind'];
  account_display_name: AccountsTable['display_name'];
  account_display_identity_kind: AccountsTable['display_identity_kind'];
  account_primary_btc: AccountsTable['primary_btc'];
  account_merged_into: AccountsTable['merged_into'];
  account_created_at: AccountsTable['created_at'];
  account_updated_at: AccountsTable['updated_at'];
}

function toRosterMember(row: SessionWithAccountRow): RosterMemberRecord {
  return {
    session: toSessionRecord(row),
    account: toAccountRecord({
      id: row.account_id,
      kind: row.account_kind,
      display_name: row.account_display_name,
      display_identity_kind: row.account_display_identity_kind,
      primary_btc: row.account_primary_btc,
      merged_into: row.account_merged_into,
      created_at: row.account_created_at,
      updated_at: row.account_updated_at,
    }),
  };
}

export class KyselyStore implements Store {
  readonly engine: DatabaseEngine;
  readonly #database: OpenDatabase;
  readonly #db: Executor;

  /**
   * Hot queries compiled once (the query builder costs more than the lookup
   * itself); each run substitutes its own parameters, in the same order.
   */
  readonly #compiled = new Map<string, CompiledQuery>();

  constructor(database: OpenDatabase) {
    this.#database = database;
    this.#db = database.db;
    this.engine = database.engine;
  }

  async #runCompiled<Row>(key: string, build: () => Compilable, parameters: readonly unknown[]): Promise<Row[]> {
    let compiled = this.#compiled.get(key);
    if (!compiled) {
      compiled = build().compile();
      if (compiled.parameters.length !== parameters.length) {
        throw new Error(`storage: hot query ${key} takes ${compiled.parameters.length} parameters, got ${parameters.length}`);
      }
      this.#compiled.set(key, compiled);
    }
    const direct = this.#database.runCompiled(compiled.sql, parameters);
    if (direct !== undefined) return (await direct) as Row[];
    const result = await this.#db.executeQuery<Row>({ ...compiled, parameters });
    return result.rows;
  }

  #transaction<T>(work: (trx: Transaction<DatabaseSchema>) => Promise<T>): Promise<T> {
    return this.#db.transaction().execute(work);
  }

  /**
   * PostgreSQL: reads the accounts and locks their rows until the transaction
   * ends, in id order so two transactions cannot deadlock on a pair. `update`
   * excludes everyone (merge, last-identity check); `share` excludes only
   * `update` (session inserts, which must not interleave with a merge).
   * SQLite: a plain read, the transaction already excludes everyone.
   */
  async #lockAccounts(
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
  async #lockKey(trx: Transaction<DatabaseSchema>, key: string): Promise<void> {
    if (this.engine !== 'postgres') return;
    await sql`SELECT pg_advisory_xact_lock(${sql.lit(SESSION_LOCK_CLASS)}, hashtext(${key}))`.execute(trx);
  }

  async #findAccount(executor: Executor, accountId: string): Promise<AccountRecord | null> {
    const row = await executor.selectFrom('accounts').selectAll().where('id', '=', accountId).executeTakeFirst();
    return row ? toAccountRecord(row) : null;
  }

  async #resolveCanonical(executor: Executor, accountId: string): Promise<AccountRecord | null> {
    let current = await this.#findAccount(executor, accountId);
    const visited = new Set<string>();
    while (current !== null && current.merged_into !== null) {
      visited.add(current.id);
      // mergeAccounts keeps chains one step long; anything else is damage, and
      // following it further could land a sign-in in an arbitrary account.
      if (visited.size > MAX_MERGE_DEPTH || visited.has(current.merged_into)) {
        throw new Error(
          `storage: merged_into chain from account ${accountId} loops or is longer than ${MAX_MERGE_DEPTH}`,
        );
      }
      current = await this.#findAccount(executor, current.merged_into);
    }
    return current;
  }

  async #findIdentity(executor: Executor, kind: IdentityKind, value: string): Promise<IdentityRecord | null> {
    const row = await executor
      .selectFrom('identities')
      .selectAll()
      .where('kind', '=', kind)
      .where('value', '=', value)
      .executeTakeFirst();
    return row ? toIdentityRecord(row) : null;
  }

  async #ownerOfIdentity(
    kind: IdentityKind,
    value: string,
  ): Promise<{ account: AccountRecord; identity: IdentityRecord } | null> {
    const identity = await this.#findIdentity(this.#db, kind, value);
    if (identity === null) return null;
    const account = await this.#resolveCanonical(this.#db, identity.account_id);
    if (account === null) throw new Error(`storage: identity ${identity.id} belongs to no account`);
    return { account, identity };
  }

  // ---- accounts and identities ----

  async createAccountWithIdentity(input: {
    readonly account: NewAccount;
    readonly identity: NewIdentity;
  }): Promise<CreateAccountResult> {
    const { account, identity } = input;
    assertIdentityValue(identity.kind, identity.value);
    const accountId = account.id ?? newAccountId();
    assertAccountId(accountId);

    const existing = await this.#ownerOfIdentity(identity.kind, identity.value);
    if (existing !== null) return { created: false, ...existing };

    const accountRow: AccountsTable = {
      id: accountId,
      kind: account.kind,
      display_name: account.display_name ?? null,
      display_identity_kind: account.display_identity_kind ?? null,
      primary_btc: account.primary_btc ?? null,
      merged_into: null,
      created_at: account.created_at,
      updated_at: account.created_at,
    };
    const identityRow: IdentitiesTable = {
      id: identity.id ?? newRandomId(),
      account_id: accountId,
      kind: identity.kind,
      value: identity.value,
      verified: toDatabaseBoolean(this.engine, identity.verified),
      created_at: identity.created_at,
    };
    try {
      await this.#transaction(async (trx) => {
        await trx.insertInto('accounts').values(accountRow).execute();
        await trx.insertInto('identities').values(identityRow).execute();
      });
    } catch (error) {
      // A concurrent first sign-in with the same identity committed first: the
      // unique index on (kind, value) rejected ours and rolled the account
      // back with it. Both callers end up in the winner's account.
      if (!isUniqueViolation(error)) throw error;
      const winner = await this.#ownerOfIdentity(identity.kind, identity.value);
      if (winner === null) throw error;
      return { created: false, ...winner };
    }
    return { created: true, account: toAccountRecord(accountRow), identity: toIdentityRecord(identityRow) };
  }

  findAccount(accountId: string): Promise<AccountRecord | null> {
    return this.#findAccount(this.#db, accountId);
  }

  resolveCanonicalAccount(accountId: string): Promise<AccountRecord | null> {
    return this.#resolveCanonical(this.#db, accountId);
  }

  async findAccountByIdentity(kind: IdentityKind, value: string): Promise<AccountRecord | null> {
    if (kind === 'email') assertLowercaseEmail(value);
    const row = await this.#db
      .selectFrom('identities')
      .innerJoin('accounts', 'accounts.id', 'identities.account_id')
      .selectAll('accounts')
      .where('identities.kind', '=', kind)
      .where('identities.value', '=', value)
      .executeTakeFirst();
    if (!row) return null;
    const account = toAccountRecord(row);
    // PROTOCOL.md §2: every lookup follows the merge pointer.
    return account.merged_into === null ? account : this.#resolveCanonical(this.#db, account.merged_into);
  }

  async listIdentities(accountId: string): Promise<IdentityRecord[]> {
    const rows = await this.#db
      .selectFrom('identities')
      .selectAll()
      .where('account_id', '=', accountId)
      .orderBy('created_at')
      .orderBy('id')
      .execute();
    return rows.map(toIdentityRecord);
  }

  async addIdentity(input: NewIdentity & { readonly account_id: string }): Promise<AddIdentityResult> {
    assertIdentityValue(input.kind, input.value);
    const row: IdentitiesTable = {
      id: input.id ?? newRandomId(),
      account_id: input.account_id,
      kind: input.kind,
      value: input.value,
      verified: toDatabaseBoolean(this.engine, input.verified),
      created_at: input.created_at,
    };
    try {
      await this.#db.insertInto('identities').values(row).execute();
      return { status: 'added', identity: toIdentityRecord(row) };
    } catch (error) {
      if (!isUniqueViolation(error)) throw error;
      const existing = await this.#findIdentity(this.#db, input.kind, input.value);
      if (existing === null) throw error;
      const [owner, target] = await Promise.all([
        this.#resolveCanonical(this.#db, existing.account_id),
        this.#resolveCanonical(this.#db, input.account_id),
      ]);
      const sameAccount = owner !== null && target !== null && owner.id === target.id;
      return { status: sameAccount ? 'already_linked' : 'linked_elsewhere', identity: existing };
    }
  }

  removeIdentity(accountId: string, identityId: string, now: number, keepSessionJti?: string): Promise<RemoveIdentityResult> {
    return this.#transaction(async (trx) => {
      // Locked so two concurrent unlinks cannot each see "one more left" and
      // leave the account with nothing to sign in with.
      const account = (await this.#lockAccounts(trx, [accountId], 'update')).get(accountId);
      if (account === undefined) return 'not_found';
      const identities = (
        await trx
          .selectFrom('identities')
          .selectAll()
          .where('account_id', '=', accountId)
          .orderBy('created_at')
          .orderBy('id')
          .execute()
      ).map(toIdentityRecord);
      const removed = identities.find((identity) => identity.id === identityId);
      if (removed === undefined) return 'not_found';
      const remaining = identities.filter((identity) => identity.id !== identityId);
      if (remaining.length === 0) return 'last_identity';
      await trx.deleteFrom('identities').where('id', '=', identityId).execute();
      // What the identity opened goes with it (docs/protocol.md, linking).
      let revoke = trx
        .updateTable('sessions')
        .set({ revoked_at: now })
        .where('identity_id', '=', identityId)
        .where('revoked_at', 'is', null);
      if (keepSessionJti !== undefined) revoke = revoke.where('jti', '!=', keepSessionJti);
      await revoke.execute();

      // Keep the account's display fields pointing at something it still holds.
      const patch: Updateable<AccountsTable> = {};
      if (removed.kind === 'btc' && account.primary_btc === removed.value) {
        patch.primary_btc = remaining.find((identity) => identity.kind === 'btc')?.value ?? null;
      }
      const displayKind = account.display_identity_kind;
      if ((displayKind === 'btc' || displayKind === 'email') && !remaining.some((i) => i.kind === displayKind)) {
        patch.display_identity_kind = null;
      }
      if (Object.keys(patch).length > 0) {
        await trx
          .updateTable('accounts')
          .set({ ...patch, updated_at: now })
          .where('id', '=', accountId)
          .execute();
      }
      return 'removed';
    });
  }

  async updateAccount(accountId: string, patch: AccountPatch, now: number): Promise<AccountRecord | null> {
    const values: Updateable<AccountsTable> = { updated_at: now };
    if (patch.display_name !== undefined) values.display_name = patch.display_name;
    if (patch.display_identity_kind !== undefined) values.display_identity_kind = patch.display_identity_kind;
    if (patch.primary_btc !== undefined) values.primary_btc = patch.primary_btc;
    const row = await this.#db
      .updateTable('accounts')
      .set(values)
      .where('id', '=', accountId)
      .returningAll()
      .executeTakeFirst();
    return row ? toAccountRecord(row) : null;
  }

  async mergeAccounts(fromId: string, intoId: string, now: number): Promise<MergeResult> {
    if (fromId === intoId) throw new Error('storage: cannot merge an account into itself');
    return this.#transaction(async (trx) => {
      const locked = await this.#lockAccounts(trx, [fromId, intoId], 'update');
      const from = locked.get(fromId);
      if (from === undefined) throw new Error(`storage: cannot merge unknown account ${fromId}`);
      if (from.merged_into !== null) {
        throw new Error(`storage: account ${fromId} is already merged into ${from.merged_into}`);
      }
      if (!locked.has(intoId)) throw new Error(`storage: cannot merge into unknown account ${intoId}`);
      const into = await this.#resolveCanonical(trx, intoId);
      if (into === null) throw new Error(`storage: cannot merge into unknown account ${intoId}`);
      if (into.id === from.id) throw new Error(`storage: merging ${fromId} into ${intoId} would make a loop`);
      if (into.id !== intoId) await this.#lockAccounts(trx, [into.id], 'update');

      const moved = await trx
        .updateTable('identities')
        .set({ account_id: into.id })
        .where('account_id', '=', from.id)
        .executeTakeFirst();
      // Integrator apps follow their owner, or nobody could rotate or delete them.
      await trx.updateTable('connect_apps').set({ owner_account_id: into.id }).where('owner_account_id', '=', from.id).execute();
      // Accounts merged into `from` earlier now point straight at the survivor,
      // so every chain stays one step long.
      await trx
        .updateTable('accounts')
        .set({ merged_into: into.id, updated_at: now })
        .where('merged_into', '=', from.id)
        .execute();
      await trx
        .updateTable('accounts')
        .set({ merged_into: into.id, updated_at: now })
        .where('id', '=', from.id)
        .execute();
      const adopted: Updateable<AccountsTable> = { updated_at: now };
      if (into.display_name === null && from.display_name !== null) adopted.display_name = from.display_name;
      if (into.primary_btc === null && from.primary_btc !== null) adopted.primary_btc = from.primary_btc;
      const survivor = await trx
        .updateTable('accounts')
        .set(adopted)
        .where('id', '=', into.id)
        .returningAll()
        .executeTakeFirstOrThrow();

      // The merge gives no one access they did not already have
      // (docs/protocol.md, merging): every session of `from` is revoked, and no
      // roster gains a row for `into`. A stale or stolen session of `from`
      // reaches nothing; the roster of the session that merged already holds
      // `into`, and other rosters simply lose `from` on their next /me.
      const revoked = await trx
        .updateTable('sessions')
        .set({ revoked_at: now })
        .where('account_id', '=', from.id)
        .where('revoked_at', 'is', null)
        .executeTakeFirst();
      return {
        account: toAccountRecord(survivor),
        moved_identities: rowsAffected(moved.numUpdatedRows),
        revoked_sessions: rowsAffected(revoked.numUpdatedRows),
      };
    });
  }

  // ---- sessions and rosters ----

  async insertSession(session: NewSession): Promise<SessionRecord> {
    if (session.expires_at <= session.created_at) {
      throw new Error('storage: a session must expire after it is created');
    }
    const row: SessionsTable = {
      jti: session.jti,
      token_hash: session.token_hash,
      account_id: session.account_id,
      roster_id: session.roster_id,
      signing_method: session.signing_method,
      created_at: session.created_at,
      expires_at: session.expires_at,
      last_seen_at: session.last_seen_at ?? session.created_at,
      revoked_at: null,
      step_up_at: session.step_up_at ?? null,
      sudo_at: session.sudo_at ?? null,
      identity_id: null,
    };
    for (let attempt = 1; ; attempt += 1) {
      try {
        await this.#transaction(async (trx) => {
          // Shared lock: a concurrent merge of this account waits for us, or we
          // for it and then see merged_into. A live row never names a merged account.
          const account = (await this.#lockAccounts(trx, [row.account_id], 'share')).get(row.account_id);
          if (account === undefined) throw new Error(`storage: session for unknown account ${row.account_id}`);
          if (account.merged_into !== null) {
            throw new Error(`storage: session for account ${row.account_id}, merged into ${account.merged_into}`);
          }
          if (row.roster_id !== null) {
            // PROTOCOL.md §3: one live row per (roster, account). Revoke what is
            // there (an expired row, or the live row a re-authentication
            // replaces) and insert, one transaction per pair at a time.
            // The account id is fixed-length hex, so `<roster> <account>` is unambiguous.
            await this.#lockKey(trx, `${row.roster_id} ${row.account_id}`);
            await trx
              .updateTable('sessions')
              .set({ revoked_at: row.created_at })
              .where('roster_id', '=', row.roster_id)
              .where('account_id', '=', row.account_id)
              .where('revoked_at', 'is', null)
              .execute();
          }
          if (session.opened_by !== undefined) {
            const identity = await trx
              .selectFrom('identities')
              .select('id')
              .where('kind', '=', session.opened_by.kind)
              .where('value', '=', session.opened_by.value)
              .executeTakeFirst();
            row.identity_id = identity?.id ?? null;
          }
          await trx.insertInto('sessions').values(row).execute();
        });
        return toSessionRecord(row);
      } catch (error) {
        // The lock above makes this rare; the index is the last word, and a
        // lost race is retried rather than shown to the caller.
        if (!isLiveRosterConflict(error) || attempt >= MAX_INSERT_SESSION_ATTEMPTS) throw error;
        await sleep(Math.floor(Math.random() * 5 * attempt));
      }
    }
  }

  async findLiveSessionByTokenHash(tokenHash: string, now: number): Promise<SessionRecord | null> {
    const row = await this.#db
      .selectFrom('sessions')
      .selectAll()
      .where('token_hash', '=', tokenHash)
      .where('revoked_at', 'is', null)
      .where('expires_at', '>', now)
      .executeTakeFirst();
    return row ? toSessionRecord(row) : null;
  }

  async findLiveSessionInRoster(rosterId: string, accountId: string, now: number): Promise<SessionRecord | null> {
    const row = await this.#db
      .selectFrom('sessions')
      .selectAll()
      .where('roster_id', '=', rosterId)
      .where('account_id', '=', accountId)
      .where('revoked_at', 'is', null)
      .where('expires_at', '>', now)
      .executeTakeFirst();
    return row ? toSessionRecord(row) : null;
  }

  #sessionWithAccount() {
    return this.#db
      .selectFrom('sessions')
      .innerJoin('accounts', 'accounts.id', 'sessions.account_id')
      .selectAll('sessions')
      .select([
        'accounts.kind as account_kind',
        'accounts.display_name as account_display_name',
        'accounts.display_identity_kind as account_display_identity_kind',
        'accounts.primary_btc as account_primary_btc',
        'accounts.merged_into as account_merged_into',
        'accounts.created_at as account_created_at',
        'accounts.updated_at as account_updated_at',
      ]);
  }

  async findLiveSessionWithAccount(tokenHash: string, now: number): Promise<RosterMemberRecord | null> {
    const rows = await this.#runCompiled<SessionWithAccountRow>(
      'findLiveSessionWithAccount',
      () =>
        this.#sessionWithAccount()
          .where('sessions.token_hash', '=', tokenHash)
          .where('sessions.revoked_at', 'is', null)
          .where('sessions.expires_at', '>', now),
      [tokenHash, now],
    );
    return rows[0] ? toRosterMember(rows[0]) : null;
  }

  async findLiveRosterByTokenHash(tokenHash: string, now: number): Promise<LiveRosterRecord | null> {
    // One statement: every live member of the roster whose live row holds
    // this token hash (GET /api/auth/me reads this on every call).
    const rows = await this.#runCompiled<SessionWithAccountRow>(
      'findLiveRosterByTokenHash',
      () =>
        this.#sessionWithAccount()
          .where('sessions.revoked_at', 'is', null)
          .where('sessions.expires_at', '>', now)
          .where('sessions.roster_id', '=', (eb) =>
            eb
              .selectFrom('sessions as current')
              .select('current.roster_id')
              .where('current.token_hash', '=', tokenHash)
              .where('current.revoked_at', 'is', null)
              .where('current.expires_at', '>', now),
          )
          .orderBy('sessions.created_at')
          .orderBy('sessions.jti'),
      [now, tokenHash, now],
    );
    const members = rows.map(toRosterMember);
    const current = members.find((member) => member.session.token_hash === tokenHash);
    if (current !== undefined) return { current, members };
    // No roster (a row from before multi-account) or no live row at all.
    const alone = await this.findLiveSessionWithAccount(tokenHash, now);
    return alone === null ? null : { current: alone, members: [alone] };
  }

  async listLiveRoster(rosterId: string, now: number): Promise<RosterMemberRecord[]> {
    const rows = await this.#runCompiled<SessionWithAccountRow>(
      'listLiveRoster',
      () =>
        this.#sessionWithAccount()
          .where('sessions.roster_id', '=', rosterId)
          .where('sessions.revoked_at', 'is', null)
          .where('sessions.expires_at', '>', now)
          .orderBy('sessions.created_at')
          .orderBy('sessions.jti'),
      [rosterId, now],
    );
    return rows.map(toRosterMember);
  }

  async updateSessionToken(
    jti: string,
    tokenHash: string,
    freshness: SessionFreshness = {},
  ): Promise<SessionRecord | null> {
    const values: Updateable<SessionsTable> = { token_hash: tokenHash };
    if (freshness.step_up_at !== undefined) values.step_up_at = freshness.step_up_at;
    if (freshness.sudo_at !== undefined) values.sudo_at = freshness.sudo_at;
    const row = await this.#db
      .updateTable('sessions')
      .set(values)
      .where('jti', '=', jti)
      .where('revoked_at', 'is', null)
      .returningAll()
      .executeTakeFirst();
    return row ? toSessionRecord(row) : null;
  }

  async touchSession(jti: string, now: number): Promise<void> {
    await this.#runCompiled(
      'touchSession',
      () =>
        this.#db
          .updateTable('sessions')
          .set({ last_seen_at: now })
          .where('jti', '=', jti)
          .where('revoked_at', 'is', null)
          .where('last_seen_at', '<', now),
      [now, jti, now],
    );
  }

  async revokeSession(jti: string, now: number): Promise<boolean> {
    const result = await this.#db
      .updateTable('sessions')
      .set({ revoked_at: now })
      .where('jti', '=', jti)
      .where('revoked_at', 'is', null)
      .executeTakeFirst();
    return rowsAffected(result.numUpdatedRows) > 0;
  }

  async revokeAccountInRoster(rosterId: string, accountId: string, now: number): Promise<number> {
    const result = await this.#db
      .updateTable('sessions')
      .set({ revoked_at: now })
      .where('roster_id', '=', rosterId)
      .where('account_id', '=', accountId)
      .where('revoked_at', 'is', null)
      .executeTakeFirst();
    return rowsAffected(result.numUpdatedRows);
  }

  async revokeRoster(rosterId: string, now: number): Promise<number> {
    const result = await this.#db
      .updateTable('sessions')
      .set({ revoked_at: now })
      .where('roster_id', '=', rosterId)
      .where('revoked_at', 'is', null)
      .executeTakeFirst();
    return rowsAffected(result.numUpdatedRows);
  }

  async revokeAllForAccount(accountId: string, now: number): Promise<number> {
    const result = await this.#db
      .updateTable('sessions')
      .set({ revoked_at: now })
      .where('account_id', '=', accountId)
      .where('revoked_at', 'is', null)
      .executeTakeFirst();
    return rowsAffected(result.numUpdatedRows);
  }

  // ---- challenge nonces ----

  async consumeNonce(nonce: string, expiresAt: number, now: number): Promise<boolean> {
    if (nonce.length === 0) throw new Error('storage: empty nonce');
    // An expired challenge is refused anyway (PROTOCOL.md §5, `expired`); its
    // row may already be purged, so "first use" could no longer be told apart.
    if (expiresAt <= now) return false;
    const result = await this.#db
      .insertInto('used_nonces')
      .values({ nonce, expires_at: expiresAt })
      .onConflict((conflict) => conflict.column('nonce').doNothing())
      .executeTakeFirst();
    return rowsAffected(result.numInsertedOrUpdatedRows) === 1;
  }

  // ---- settings and signing keys ----

  async getOrCreateSetting(key: string, create: () => string): Promise<string> {
    const existing = await this.getSetting(key);
    if (existing !== null) return existing;
    const candidate = create();
    if (typeof candidate !== 'string') throw new Error(`storage: setting ${key} must be created as a string`);
    // Insert-if-absent, then read: whichever instance inserted first, every
    // instance returns that value (PROTOCOL.md §1, "every instance on that
    // database shares it").
    await this.#db
      .insertInto('settings')
      .values({ key, value: candidate })
      .onConflict((conflict) => conflict.column('key').doNothing())
      .execute();
    const stored = await this.getSetting(key);
    if (stored === null) throw new Error(`storage: setting ${key} vanished right after it was stored`);
    return stored;
  }

  async getSetting(key: string): Promise<string | null> {
    const row = await this.#db.selectFrom('settings').select('value').where('key', '=', key).executeTakeFirst();
    return row ? row.value : null;
  }

  async listSigningKeys(): Promise<SigningKeyRecord[]> {
    const rows = await this.#db
      .selectFrom('signing_keys')
      .selectAll()
      .orderBy('activated_at', 'desc')
      .orderBy('created_at', 'desc')
      .orderBy('kid', 'desc')
      .execute();
    return rows.map(toSigningKeyRecord);
  }

  async findActiveSigningKey(now: number): Promise<SigningKeyRecord | null> {
    const row = await this.#db
      .selectFrom('signing_keys')
      .selectAll()
      .where('retired_at', 'is', null)
      .where('activated_at', '<=', now)
      .orderBy('activated_at', 'desc')
      .orderBy('created_at', 'desc')
      .orderBy('kid', 'desc')
      .executeTakeFirst();
    return row ? toSigningKeyRecord(row) : null;
  }

  async insertSigningKey(key: NewSigningKey): Promise<boolean> {
    const result = await this.#db
      .insertInto('signing_keys')
      .values({ ...key, retired_at: null })
      .onConflict((conflict) => conflict.column('kid').doNothing())
      .executeTakeFirst();
    return rowsAffected(result.numInsertedOrUpdatedRows) === 1;
  }

  async retireSigningKey(kid: string, at: number): Promise<boolean> {
    const result = await this.#db
      .updateTable('signing_keys')
      .set({ retired_at: at })
      .where('kid', '=', kid)
      .where('retired_at', 'is', null)
      .executeTakeFirst();
    return rowsAffected(result.numUpdatedRows) > 0;
  }

  // ---- e-mail codes ----

  async putEmailCode(code: NewEmailCode): Promise<void> {
    assertLowercaseEmail(code.email);
    // PROTOCOL.md §6: "A new start for the same address kills the older code."
    const fields = {
      code_hash: code.code_hash,
      token: code.token,
      expires_at: code.expires_at,
      attempts: 0,
      tokenless_attempts: 0,
      created_at: code.created_at,
    };
    await this.#db
      .insertInto('email_codes')
      .values({ email: code.email, ...fields })
      .onConflict((conflict) => conflict.column('email').doUpdateSet(fields))
      .execute();
  }

  async findEmailCode(email: string): Promise<EmailCodeRecord | null> {
    assertLowercaseEmail(email);
    const row = await this.#db.selectFrom('email_codes').selectAll().where('email', '=', email).executeTakeFirst();
    return row ? toEmailCodeRecord(row) : null;
  }

  async incrementEmailCodeAttempts(email: string, token: string, kind: 'token' | 'tokenless'): Promise<number | null> {
    assertLowercaseEmail(email);
    const column = kind === 'token' ? 'attempts' : 'tokenless_attempts';
    // One statement, so parallel wrong guesses each count (PROTOCOL.md §6, at most 5).
    const row = await this.#db
      .updateTable('email_codes')
      .set((eb) => ({ [column]: eb(column, '+', 1) }))
      .where('email', '=', email)
      .where('token', '=', token)
      .returning(column)
      .executeTakeFirst();
    return row ? toCount((row as Record<typeof column, number>)[column]) : null;
  }

  async deleteEmailCode(email: string, codeHash?: string): Promise<boolean> {
    assertLowercaseEmail(email);
    let query = this.#db.deleteFrom('email_codes').where('email', '=', email);
    if (codeHash !== undefined) query = query.where('code_hash', '=', codeHash);
    const result = await query.executeTakeFirst();
    return rowsAffected(result.numDeletedRows) > 0;
  }

  // ---- Connect ----

  async createConnectApp(app: NewConnectApp): Promise<ConnectAppRecord> {
    const id = app.id ?? newRandomId();
    // Connect identities are `<app_id>:<user_id>` (PROTOCOL.md §2); a colon in
    // the app id would make them ambiguous.
    if (id.length === 0 || id.includes(':')) throw new Error('storage: a Connect app id must be non-empty without ":"');
    const row = {
      id,
      owner_account_id: app.owner_account_id,
      name: app.name,
      key_hash: app.key_hash,
      created_at: app.created_at,
      rotated_at: null,
    };
    await this.#db.insertInto('connect_apps').values(row).execute();
    return toConnectAppRecord(row);
  }

  async listConnectApps(ownerAccountId: string): Promise<ConnectAppRecord[]> {
    const rows = await this.#db
      .selectFrom('connect_apps')
      .selectAll()
      .where('owner_account_id', '=', ownerAccountId)
      .orderBy('created_at')
      .orderBy('id')
      .execute();
    return rows.map(toConnectAppRecord);
  }

  async findConnectAppByKeyHash(keyHash: string): Promise<ConnectAppRecord | null> {
    const row = await this.#db
      .selectFrom('connect_apps')
      .selectAll()
      .where('key_hash', '=', keyHash)
      .executeTakeFirst();
    return row ? toConnectAppRecord(row) : null;
  }

  async rotateConnectAppKey(appId: string, ownerAccountId: string, newKeyHash: string, at: number): Promise<boolean> {
    const result = await this.#db
      .updateTable('connect_apps')
      .set({ key_hash: newKeyHash, rotated_at: at })
      .where('id', '=', appId)
      .where('owner_account_id', '=', ownerAccountId)
      .executeTakeFirst();
    return rowsAffected(result.numUpdatedRows) > 0;
  }

  async deleteConnectApp(appId: string, ownerAccountId: string): Promise<boolean> {
    const result = await this.#db
      .deleteFrom('connect_apps')
      .where('id', '=', appId)
      .where('owner_account_id', '=', ownerAccountId)
      .executeTakeFirst();
    return rowsAffected(result.numDeletedRows) > 0;
  }

  // ---- statistics ----

  async recordAttestEvent(kind: AttestEventKind, at: number, count = 1): Promise<void> {
    if (!Number.isSafeInteger(count) || count < 1) throw new Error(`storage: an event count must be a positive integer, got ${count}`);
    await this.#db.insertInto('attest_events').values({ kind, at, count }).execute();
  }

  async familyStats(now: number): Promise<FamilyStats> {
    const [accountRows, activeRow, multiRow, attestRows] = await Promise.all([
      this.#db
        .selectFrom('accounts')
        .select((eb) => ['kind', eb.fn.countAll<number>().as('count')])
        .where('merged_into', 'is', null)
        .groupBy('kind')
        .execute(),
      this.#db
        .selectFrom('sessions')
        .select((eb) => eb.fn.countAll<number>().as('count'))
        .where('revoked_at', 'is', null)
        .where('expires_at', '>', now)
        .executeTakeFirst(),
      this.#db
        .selectFrom((eb) =>
          eb
            .selectFrom('sessions')
            .select('roster_id')
            .where('roster_id', 'is not', null)
            .where('revoked_at', 'is', null)
            .where('expires_at', '>', now)
            .groupBy('roster_id')
            .having((having) => having.fn.countAll(), '>=', 2)
            .as('multi_account_rosters'),
        )
        .select((eb) => eb.fn.countAll<number>().as('count'))
        .executeTakeFirst(),
      this.#db
        .selectFrom('attest_events')
        .select((eb) => ['kind', eb.fn.sum<number>('count').as('count')])
        .where('at', '>', now - ATTEST_COUNT_WINDOW_MS)
        .where('at', '<=', now)
        .groupBy('kind')
        .execute(),
    ]);
    const accountsOf = (kind: string) => toCount(accountRows.find((row) => row.kind === kind)?.count);
    const eventsOf = (kind: string) => toCount(attestRows.find((row) => row.kind === kind)?.count);
    const btc = accountsOf('btc');
    const federated = accountsOf('federated');
    return {
      accounts: { total: btc + federated, btc, federated },
      sessions: { active: toCount(activeRow?.count) },
      rosters: { multi_account: toCount(multiRow?.count) },
      attest: { checks_24h: eventsOf('check'), verifies_24h: eventsOf('verify') },
    };
  }

  // ---- maintenance ----

  async purgeExpired(now: number, options: PurgeOptions = {}): Promise<PurgeCounts> {
    const retention = options.sessionRetentionMs ?? DEFAULT_SESSION_RETENTION_MS;
    if (!(retention >= 0)) throw new Error('storage: sessionRetentionMs must be a non-negative number');
    const sessionCutoff = now - retention;
    const sessions = await this.#db
      .deleteFrom('sessions')
      .where((eb) => eb.or([eb('expires_at', '<=', sessionCutoff), eb('revoked_at', '<=', sessionCutoff)]))
      .executeTakeFirst();
    const nonces = await this.#db.deleteFrom('used_nonces').where('expires_at', '<=', now).executeTakeFirst();
    const emailCodes = await this.#db.deleteFrom('email_codes').where('expires_at', '<=', now).executeTakeFirst();
    const attestEvents = await this.#db
      .deleteFrom('attest_events')
      .where('at', '<=', now - ATTEST_EVENT_RETENTION_MS)
      .executeTakeFirst();
    return {
      sessions: rowsAffected(sessions.numDeletedRows),
      nonces: rowsAffected(nonces.numDeletedRows),
      email_codes: rowsAffected(emailCodes.numDeletedRows),
      attest_events: rowsAffected(attestEvents.numDeletedRows),
    };
  }

  async ping(): Promise<void> {
    await sql`SELECT 1`.execute(this.#db);
  }

  close(): Promise<void> {
    return this.#database.close();
  }
}

export interface OpenStoreOptions extends OpenDatabaseOptions {
  /** Apply pending migrations before returning (default true). The CLI's `migrate` does it separately. */
  readonly migrate?: boolean;
}

/** Opens the database of `databaseUrl` (PROTOCOL.md §1 `DATABASE_URL`), migrated, as a {@link Store}. */
export async function openStore(databaseUrl: string, options: OpenStoreOptions = {}): Promise<Store> {
  const database = await openDatabase(databaseUrl, options);
  if (options.migrate ?? true) {
    try {
      await applyMigrations(database);
    } catch (error) {
      await database.close();
      throw error;
    }
  }
  return new KyselyStore(database);
}
