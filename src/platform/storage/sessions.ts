/**
 * Session rows and the rosters they form (docs/protocol.md §3): one live row per (roster, account), look-ups by token hash, re-mints and revocations.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { sql, type Updateable } from 'kysely';
import { isUniqueViolation, rowsAffected, type StoreExecutor } from './executor.js';
import { toAccountRecord, toSessionRecord } from './row-mapping.js';
import type { AccountsTable, SessionsTable } from './schema.js';
import type {
  DeviceSessionRecord,
  NewSession,
  RevocationRecord,
  RosterMemberRecord,
  LiveRosterRecord,
  NewTabToken,
  TabTokenMemberRecord,
  SessionFreshness,
  SessionRecord,
  SessionStore,
} from './store.js';

/** Name of the partial unique index of migration 1. */
const LIVE_ROSTER_INDEX = 'sessions_live_roster_account_unique';

/** insertSession retries a lost race on the live-row index this often before giving up. */
const MAX_INSERT_SESSION_ATTEMPTS = 20;

/** A unique violation of the one-live-row-per-(roster, account) index, on either engine. */
function isLiveRosterConflict(error: unknown): boolean {
  if (!isUniqueViolation(error)) return false;
  const { constraint, message } = error as { constraint?: unknown; message?: unknown };
  if (constraint === LIVE_ROSTER_INDEX) return true;
  return typeof message === 'string' && message.includes('sessions.roster_id, sessions.account_id');
}

/** The tab token's own columns beside its row (findLiveSessionByTabToken); PostgreSQL answers a bigint as a string. */
interface TabTokenColumns {
  tab_sudo_at: number | string | bigint | null;
  tab_step_up_at: number | string | bigint | null;
  tab_superseded_at: number | string | bigint | null;
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
  account_disabled_at: AccountsTable['disabled_at'];
  account_deleted_at: AccountsTable['deleted_at'];
  /** A count (a string on PostgreSQL). */
  account_email_count: number | string | bigint | null;
  account_nostr: string | null;
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
      disabled_at: row.account_disabled_at,
      deleted_at: row.account_deleted_at,
    }),
    facts: {
      has_email: Number(row.account_email_count ?? 0) > 0,
      nostr_npub: row.account_nostr === null || row.account_nostr === undefined ? null : row.account_nostr.slice('nostr:'.length),
    },
  };
}

/** The step-up claims a re-mint or a step-up changes; absent ones stay. */
function freshnessValues(freshness: SessionFreshness): Updateable<SessionsTable> {
  const values: Updateable<SessionsTable> = {};
  if (freshness.step_up_at !== undefined) values.step_up_at = freshness.step_up_at;
  if (freshness.sudo_at !== undefined) values.sudo_at = freshness.sudo_at;
  return values;
}

export class SessionsArea implements SessionStore {
  readonly #x: StoreExecutor;

  constructor(executor: StoreExecutor) {
    this.#x = executor;
  }

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
      device: session.device ?? null,
      network: session.network ?? null,
    };
    for (let attempt = 1; ; attempt += 1) {
      try {
        await this.#x.transaction(async (trx) => {
          // Shared lock: a concurrent merge of this account waits for us, or we
          // for it and then see merged_into. A live row never names a merged account.
          const account = (await this.#x.lockAccounts(trx, [row.account_id], 'share')).get(row.account_id);
          if (account === undefined) throw new Error(`storage: session for unknown account ${row.account_id}`);
          if (account.merged_into !== null) {
            throw new Error(`storage: session for account ${row.account_id}, merged into ${account.merged_into}`);
          }
          // A disabled or deleted account gets no new row; the caller reads the account again and says why.
          if (account.disabled_at !== null || account.deleted_at !== null) {
            throw new Error(
              `storage: session for account ${row.account_id}, which is ${account.deleted_at !== null ? 'deleted' : 'disabled'}`,
            );
          }
          if (row.roster_id !== null) {
            // docs/protocol.md §3: one live row per (roster, account). Revoke what is
            // there (an expired row, or the live row a re-authentication
            // replaces) and insert, one transaction per pair at a time.
            // The account id is fixed-length hex, so `<roster> <account>` is unambiguous.
            await this.#x.lockKey(trx, `${row.roster_id} ${row.account_id}`);
            // The same account signing in again in the same browser keeps the apps it signed in to (docs/protocol.md §8 "Logout").
            const replaced = await trx
              .selectFrom('sessions')
              .select('jti')
              .where('roster_id', '=', row.roster_id)
              .where('account_id', '=', row.account_id)
              .where('revoked_at', 'is', null)
              .where('expires_at', '>', row.created_at)
              .execute();
            await this.#x.hooks.sessionsReplaced(
              trx,
              replaced.map((one) => one.jti),
              row,
            );
            await this.#x.revokeLiveSessions(trx, row.created_at, (update) =>
              update.where('roster_id', '=', row.roster_id).where('account_id', '=', row.account_id),
            );
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
    const row = await this.#x.db
      .selectFrom('sessions')
      .selectAll()
      .where('token_hash', '=', tokenHash)
      .where('revoked_at', 'is', null)
      .where('expires_at', '>', now)
      .executeTakeFirst();
    return row ? toSessionRecord(row) : null;
  }

  async findLiveSessionInRoster(rosterId: string, accountId: string, now: number): Promise<SessionRecord | null> {
    const row = await this.#x.db
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
    return (
      this.#x.db
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
          'accounts.disabled_at as account_disabled_at',
          'accounts.deleted_at as account_deleted_at',
        ])
        // Literals, not parameters: the hot statements are compiled once with a fixed parameter list.
        .select((eb) => [
          eb
            .selectFrom('identities')
            .select((inner) => inner.fn.count<number>('identities.id').as('n'))
            .whereRef('identities.account_id', '=', 'accounts.id')
            .where('identities.kind', '=', sql.lit('email'))
            .as('account_email_count'),
          // The account's own rows filtered inside the aggregate: a WHERE on the
          // kind would let SQLite walk the (kind, value) index across every
          // OAuth identity of the service instead (40 ms at 100k of them).
          eb
            .selectFrom('identities')
            .select(
              sql<
                string | null
              >`min(case when ${sql.ref('identities.kind')} = 'oauth' and ${sql.ref('identities.value')} like 'nostr:%' then ${sql.ref('identities.value')} end)`.as(
                'v',
              ),
            )
            .whereRef('identities.account_id', '=', 'accounts.id')
            .as('account_nostr'),
        ])
    );
  }

  async findLiveSessionWithAccount(tokenHash: string, now: number): Promise<RosterMemberRecord | null> {
    const rows = await this.#x.runCompiled<SessionWithAccountRow>(
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
    const rows = await this.#x.runCompiled<SessionWithAccountRow>(
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
    const rows = await this.#x.runCompiled<SessionWithAccountRow>(
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

  async updateSessionToken(jti: string, tokenHash: string, freshness: SessionFreshness = {}): Promise<SessionRecord | null> {
    return this.#updateLiveRow(jti, { token_hash: tokenHash, ...freshnessValues(freshness) });
  }

  /** Sets `values` on the row if it is not revoked; the row as it is afterwards, or null. */
  async #updateLiveRow(jti: string, values: Updateable<SessionsTable>): Promise<SessionRecord | null> {
    const row = await this.#x.db
      .updateTable('sessions')
      .set(values)
      .where('jti', '=', jti)
      .where('revoked_at', 'is', null)
      .returningAll()
      .executeTakeFirst();
    return row ? toSessionRecord(row) : null;
  }

  async insertTabToken(jti: string, token: NewTabToken, now: number, keep: number): Promise<boolean> {
    return this.#x.transaction(async (trx) => {
      // Serialized per row, so two tabs minting at once both stay within `keep`.
      await this.#x.lockKey(trx, `tab ${jti}`);
      const live = await trx.selectFrom('sessions').select('jti').where('jti', '=', jti).where('revoked_at', 'is', null).executeTakeFirst();
      if (live === undefined) return false;
      // Two mints of one row within a second can be the same JWT: recorded once.
      await trx
        .insertInto('tab_tokens')
        .values({
          token_hash: token.hash,
          jti,
          created_at: now,
          token_jti: token.jti,
          sudo_at: token.sudo_at ?? null,
          step_up_at: token.step_up_at ?? null,
        })
        .onConflict((conflict) => conflict.column('token_hash').doNothing())
        .execute();
      // Past `keep` live tokens the oldest are superseded (listed in the
      // revocation feed). Superseded ones are kept until their row expires
      // (the purge takes them with it): the feed must list a token for as
      // long as it could be presented, however many were minted since.
      const liveHashes = (
        await trx
          .selectFrom('tab_tokens')
          .select('token_hash')
          .where('jti', '=', jti)
          .where('superseded_at', 'is', null)
          .orderBy('created_at', 'desc')
          .orderBy('token_hash', 'desc')
          .limit(keep)
          .execute()
      ).map((row) => row.token_hash);
      await trx
        .updateTable('tab_tokens')
        .set({ superseded_at: now })
        .where('jti', '=', jti)
        .where('superseded_at', 'is', null)
        .where('token_hash', 'not in', liveHashes)
        .execute();
      return true;
    });
  }

  async supersedeTabTokens(jti: string, now: number, except?: string): Promise<number> {
    const result = await this.#x.db
      .updateTable('tab_tokens')
      .set({ superseded_at: now })
      .where('jti', '=', jti)
      .where('superseded_at', 'is', null)
      .$if(except !== undefined, (query) => query.where('token_hash', '!=', except!))
      .executeTakeFirst();
    return rowsAffected(result.numUpdatedRows);
  }

  async findLiveSessionByTabToken(
    tokenHash: string,
    now: number,
    options: { readonly superseded?: boolean } = {},
  ): Promise<TabTokenMemberRecord | null> {
    const superseded = options.superseded === true;
    const rows = await this.#x.runCompiled<SessionWithAccountRow & TabTokenColumns>(
      superseded ? 'findLiveSessionByTabToken+superseded' : 'findLiveSessionByTabToken',
      () =>
        this.#sessionWithAccount()
          .innerJoin('tab_tokens', 'tab_tokens.jti', 'sessions.jti')
          .select([
            'tab_tokens.sudo_at as tab_sudo_at',
            'tab_tokens.step_up_at as tab_step_up_at',
            'tab_tokens.superseded_at as tab_superseded_at',
          ])
          .where('tab_tokens.token_hash', '=', tokenHash)
          .$if(!superseded, (query) => query.where('tab_tokens.superseded_at', 'is', null))
          .where('sessions.revoked_at', 'is', null)
          .where('sessions.expires_at', '>', now),
      [tokenHash, now],
    );
    const row = rows[0];
    if (!row) return null;
    const instant = (value: number | string | bigint | null) => (value === null ? null : Number(value));
    return {
      ...toRosterMember(row),
      tab: { sudo_at: instant(row.tab_sudo_at), step_up_at: instant(row.tab_step_up_at), superseded_at: instant(row.tab_superseded_at) },
    };
  }

  async touchSession(jti: string, now: number): Promise<void> {
    await this.#x.runCompiled(
      'touchSession',
      () =>
        this.#x.db
          .updateTable('sessions')
          .set({ last_seen_at: now })
          .where('jti', '=', jti)
          .where('revoked_at', 'is', null)
          .where('last_seen_at', '<', now),
      [now, jti, now],
    );
  }

  async revokeSession(jti: string, now: number): Promise<boolean> {
    return (await this.#x.revokeLiveSessions(this.#x.db, now, (update) => update.where('jti', '=', jti))) > 0;
  }

  revokeAccountInRoster(rosterId: string, accountId: string, now: number): Promise<number> {
    return this.#x.revokeLiveSessions(this.#x.db, now, (update) =>
      update.where('roster_id', '=', rosterId).where('account_id', '=', accountId),
    );
  }

  revokeRoster(rosterId: string, now: number): Promise<number> {
    return this.#x.revokeLiveSessions(this.#x.db, now, (update) => update.where('roster_id', '=', rosterId));
  }

  async listRevocations(
    after: { readonly at: number; readonly jti: string } | null,
    now: number,
    limit: number,
  ): Promise<RevocationRecord[]> {
    const db = this.#x.db;
    const at = after?.at ?? 0;
    const jti = after?.jti ?? '';
    // Three sources, each read in the feed's order by its own index and
    // merged here: revoked rows; tab tokens superseded while their row lived
    // on; and the tab tokens of revoked rows that were still live then, at
    // their row's revocation time. A tab token minted before migration 14
    // carries its row's jti and is covered by the row's entry.
    const [rows, superseded, ofRevoked, accessTokens] = await Promise.all([
      db
        .selectFrom('sessions')
        .select(['sessions.jti as jti', 'sessions.revoked_at as at', 'sessions.expires_at as expires_at'])
        .where('sessions.revoked_at', 'is not', null)
        .where('sessions.expires_at', '>', now)
        .$if(after !== null, (query) =>
          query.where((eb) =>
            eb.or([eb('sessions.revoked_at', '>', at), eb.and([eb('sessions.revoked_at', '=', at), eb('sessions.jti', '>', jti)])]),
          ),
        )
        .orderBy('sessions.revoked_at')
        .orderBy('sessions.jti')
        .limit(limit)
        .execute(),
      db
        .selectFrom('tab_tokens')
        .innerJoin('sessions', 'sessions.jti', 'tab_tokens.jti')
        .select(['tab_tokens.token_jti as jti', 'tab_tokens.superseded_at as at', 'sessions.expires_at as expires_at'])
        .where('tab_tokens.superseded_at', 'is not', null)
        .where('tab_tokens.token_jti', 'is not', null)
        .where('sessions.expires_at', '>', now)
        .$if(after !== null, (query) =>
          query.where((eb) =>
            eb.or([
              eb('tab_tokens.superseded_at', '>', at),
              eb.and([eb('tab_tokens.superseded_at', '=', at), eb('tab_tokens.token_jti', '>', jti)]),
            ]),
          ),
        )
        .orderBy('tab_tokens.superseded_at')
        .orderBy('tab_tokens.token_jti')
        .limit(limit)
        .execute(),
      db
        .selectFrom('sessions')
        .innerJoin('tab_tokens', 'tab_tokens.jti', 'sessions.jti')
        .select(['tab_tokens.token_jti as jti', 'sessions.revoked_at as at', 'sessions.expires_at as expires_at'])
        .where('sessions.revoked_at', 'is not', null)
        .where('sessions.expires_at', '>', now)
        .where('tab_tokens.token_jti', 'is not', null)
        .where('tab_tokens.superseded_at', 'is', null)
        .$if(after !== null, (query) =>
          query.where((eb) =>
            eb.or([eb('sessions.revoked_at', '>', at), eb.and([eb('sessions.revoked_at', '=', at), eb('tab_tokens.token_jti', '>', jti)])]),
          ),
        )
        .orderBy('sessions.revoked_at')
        .orderBy('tab_tokens.token_jti')
        .limit(limit)
        .execute(),
      // JWT access tokens the OpenID provider ended early (docs/protocol.md §8 "Revoking API tokens").
      this.#x.hooks.moreRevocations(db, after, now, limit),
    ]);
    const merged: RevocationRecord[] = [...rows, ...superseded, ...ofRevoked].map((row) => ({
      jti: row.jti as string,
      revoked_at: Number(row.at),
      expires_at: Number(row.expires_at),
    }));
    merged.push(...accessTokens);
    merged.sort((a, b) => a.revoked_at - b.revoked_at || (a.jti < b.jti ? -1 : a.jti > b.jti ? 1 : 0));
    return merged.slice(0, limit);
  }

  async listLiveSessionsOfAccount(accountId: string, now: number): Promise<DeviceSessionRecord[]> {
    const rows = await this.#x.db
      .selectFrom('sessions')
      .selectAll()
      .where('account_id', '=', accountId)
      .where('revoked_at', 'is', null)
      .where('expires_at', '>', now)
      .orderBy('last_seen_at', 'desc')
      .orderBy('jti')
      .execute();
    return rows.map((row) => ({ ...toSessionRecord(row), device: row.device, network: row.network }));
  }

  async listSessionsOfAccount(accountId: string, limit: number): Promise<DeviceSessionRecord[]> {
    const rows = await this.#x.db
      .selectFrom('sessions')
      .selectAll()
      .where('account_id', '=', accountId)
      .orderBy('created_at', 'desc')
      .orderBy('jti')
      .limit(limit)
      .execute();
    return rows.map((row) => ({ ...toSessionRecord(row), device: row.device, network: row.network }));
  }

  async revokeSessionOfAccount(accountId: string, jti: string, now: number): Promise<boolean> {
    const revoked = await this.#x.revokeLiveSessions(this.#x.db, now, (update) =>
      update.where('jti', '=', jti).where('account_id', '=', accountId).where('expires_at', '>', now),
    );
    return revoked > 0;
  }

  revokeOtherSessionsOfAccount(accountId: string, keepJti: string, now: number): Promise<number> {
    return this.#x.revokeLiveSessions(this.#x.db, now, (update) => update.where('account_id', '=', accountId).where('jti', '!=', keepJti));
  }

  revokeAllForAccount(accountId: string, now: number): Promise<number> {
    return this.#x.revokeAccountSessions(this.#x.db, [accountId], now);
  }
}
