/**
 * The storage interfaces of the service: one method per domain action, so the
 * session, sign-in and HTTP layers never write SQL and never learn which
 * engine they run on. They come in areas (accounts and identities, sessions
 * and rosters, nonces, keys and settings, activity), each implemented in
 * its own file over one shared executor (executor.ts) and each the only
 * thing a service is handed; `Store` (src/store.ts) is all of them together
 * with each feature's own areas, for SQLite and PostgreSQL. The
 * records they answer and the inputs they take are in records.ts.
 * test/storage.conformance.test.ts holds every area to it on both engines and
 * both SQLite drivers.
 *
 * Conventions:
 * - Every time is a number: milliseconds since the epoch. The caller passes
 *   the clock (`now`, `at`) so tests can freeze time; the store never reads
 *   the wall clock for domain decisions.
 * - Records use the column names (snake_case), as the wire formats do.
 * - "Not found" is `null`. Expected conflicts (an identity linked elsewhere,
 *   removing the last identity) are ordinary results, not exceptions.
 *   Exceptions mean programmer misuse (an upper-case e-mail, a malformed
 *   account id, merging an account into itself) or a broken database.
 */
import type {
  EpochMilliseconds,
  AccountRecord,
  IdentityRecord,
  SessionRecord,
  DeviceSessionRecord,
  RosterMemberRecord,
  NewTabToken,
  TabTokenMemberRecord,
  LiveRosterRecord,
  SigningKeyRecord,
  ActivityRecord,
  ActivityValue,
  ActivityCursor,
  NewAccount,
  NewIdentity,
  CreateAccountResult,
  AddIdentityResult,
  RemoveIdentityResult,
  AccountPatch,
  TransferHoldings,
  MergeSelection,
  MergeResult,
  NewSession,
  RevocationRecord,
  SessionFreshness,
  NewSigningKey,
  MergedAccountRecord,
  DeletedAccountRecord,
  IdentityKind,
} from './records.js';

export * from './records.js';

/** Accounts and their identities, merges included (docs/protocol.md §2). */
export interface AccountStore {
  /**
   * Creates an account and its first identity atomically. When the identity
   * already exists, returns its owner's canonical account instead (so
   * concurrent first sign-ins with one address end with one account).
   */
  createAccountWithIdentity(input: { readonly account: NewAccount; readonly identity: NewIdentity }): Promise<CreateAccountResult>;

  /** The account row as stored, merged or not. */
  findAccount(accountId: string): Promise<AccountRecord | null>;

  /** Follows merged_into to the surviving account. Throws on a loop or a chain longer than MAX_MERGE_DEPTH. */
  resolveCanonicalAccount(accountId: string): Promise<AccountRecord | null>;

  /** The ids of the accounts merged into this one (their `merged_into`), sorted. */
  listMergedInto(accountId: string): Promise<string[]>;

  /** The accounts merged into this one, with when each was created and last signed in (null when no session row is left). */
  listMergedAccounts(accountId: string): Promise<MergedAccountRecord[]>;

  /** The canonical account that holds this identity. */
  findAccountByIdentity(kind: IdentityKind, value: string): Promise<AccountRecord | null>;

  /** Oldest first. */
  listIdentities(accountId: string): Promise<IdentityRecord[]>;

  addIdentity(input: NewIdentity & { readonly account_id: string }): Promise<AddIdentityResult>;

  /**
   * Unlinks one identity, never the account's last one. When the removed
   * identity was the primary address, the oldest remaining address takes its
   * place (or none); when no identity of the display kind remains, the display
   * kind is cleared so the docs/protocol.md §2 default applies.
   */
  /**
   * Unlinks an identity (refusing the last one) and, in the same transaction,
   * revokes every live session that was signed in through it, except
   * `keepSessionJti` (the session doing the unlink).
   */
  removeIdentity(accountId: string, identityId: string, now: EpochMilliseconds, keepSessionJti?: string): Promise<RemoveIdentityResult>;

  updateAccount(accountId: string, patch: AccountPatch, now: EpochMilliseconds): Promise<AccountRecord | null>;

  /**
   * Merges `fromId` into `intoId` (resolved to its canonical account) in one
   * transaction (docs/protocol.md §2, docs/api.md states table):
   * - only what `selection` names moves to `into`: identities and Connect
   *   apps of `from`, by id (the caller puts the proven identity there). The
   *   rest of `from`'s identities and apps, and every security key and
   *   passkey of `from`, are removed, so nothing reaches `into` that the
   *   person merging did not see and accept (docs/protocol.md §2 "Merging");
   * - refused with {@link MergeRefused}: `account_disabled` when either
   *   account is disabled or deleted, `selection_changed` when the selection
   *   names an identity or app `from` does not hold;
   * - accounts merged into `from` earlier are repointed to `into`, so chains
   *   stay one step long;
   * - `from.merged_into` is set; `into` adopts `from`'s display name where its
   *   own is empty, and its primary address when that address moved;
   * - every session row of `from` is revoked, and no roster gains a row for
   *   `into`: a merge gives no one access they did not have. Rosters that
   *   held `from` simply lose it on their next /me; `into` stays only where
   *   it already was (the roster of the session that performed the merge).
   * A JWT issued for `from` stops working on the host at once; its holder
   * signs in again (proving one of the moved identities) and lands in the
   * canonical account.
   */
  mergeAccounts(fromId: string, intoId: string, now: EpochMilliseconds, selection: MergeSelection): Promise<MergeResult>;

  /** What `accountId` holds that a merge of it could move or would remove; null for an unknown account. */
  transferHoldings(accountId: string): Promise<TransferHoldings | null>;

  /**
   * Deletes an account (docs/protocol.md §2 "Disabling and deleting") in one
   * transaction, together with the accounts merged into it earlier: every
   * session row is revoked (and forgets its device and network; the rows stay
   * until their tokens expire, for the revocation feed), and its identities,
   * security keys, Connect apps, activity, pending e-mail codes and Connect
   * e-mail hints are removed. The account rows stay as tombstones
   * (`deleted_at` set, names cleared), so the ids are never issued again, and
   * the identities are free for new sign-ups. Null when the account is
   * unknown, merged or already deleted.
   */
  deleteAccount(accountId: string, now: EpochMilliseconds): Promise<DeletedAccountRecord | null>;

  /**
   * Sets (`disabled`) or clears `disabled_at`; disabling revokes every live
   * session of the account and deletes every code and token the OpenID
   * provider issued it (its consents stay) in the same transaction. `changed` is false when
   * the account already was so. Null when the account is unknown, merged or
   * deleted.
   */
  setAccountDisabled(
    accountId: string,
    disabled: boolean,
    now: EpochMilliseconds,
  ): Promise<{ readonly account: AccountRecord; readonly changed: boolean; readonly revoked_sessions: number } | null>;
}

/** Session rows and the rosters they form (docs/protocol.md §3). */
export interface SessionStore {
  /**
   * Inserts a session row. For a roster row, in the same transaction, first
   * revokes every unrevoked row of that (roster, account): expired ones (so
   * the live-row unique index admits the new row) and a live one (a sign-in of
   * an account already in the roster is a re-authentication, docs/api.md).
   * Safe under concurrency: parallel inserts for one (roster, account) all
   * succeed and leave exactly one live row, the last one committed.
   * Throws when the account does not exist or has been merged.
   */
  insertSession(session: NewSession): Promise<SessionRecord>;

  /** The live row holding this token hash (one indexed lookup). */
  findLiveSessionByTokenHash(tokenHash: string, now: EpochMilliseconds): Promise<SessionRecord | null>;

  /**
   * The hot path of every authenticated request: the live row holding this
   * token hash together with its account row (merged or not), in one query.
   */
  findLiveSessionWithAccount(tokenHash: string, now: EpochMilliseconds): Promise<RosterMemberRecord | null>;

  /**
   * GET /api/auth/me in one statement: the live row holding this token hash
   * (`current`) and every live member of its roster, itself included, oldest
   * first. A row without a roster comes back as its only member.
   */
  findLiveRosterByTokenHash(tokenHash: string, now: EpochMilliseconds): Promise<LiveRosterRecord | null>;

  findLiveSessionInRoster(rosterId: string, accountId: string, now: EpochMilliseconds): Promise<SessionRecord | null>;

  /** Every live row of the roster with its account, in the order they joined. */
  listLiveRoster(rosterId: string, now: EpochMilliseconds): Promise<RosterMemberRecord[]>;

  /**
   * Points an unrevoked row at a newly minted JWT (switch, step-up, account
   * edit) and optionally changes its step-up claims. Never changes expires_at.
   * Null when the row is gone or revoked (e.g. a concurrent logout won).
   */
  updateSessionToken(jti: string, tokenHash: string, freshness?: SessionFreshness): Promise<SessionRecord | null>;

  /**
   * Records one more token of the row `jti` for a pinned tab: its hash, its
   * own jti and the step-up claims it carries. Keeps the `keep` newest live
   * tokens of the row and supersedes older ones (they stop working and the
   * revocation feed lists them). A superseded token is kept until its row
   * expires, so the feed lists it for as long as it could be presented.
   * False when the row is gone or revoked (nothing is recorded).
   */
  insertTabToken(jti: string, token: NewTabToken, now: EpochMilliseconds, keep: number): Promise<boolean>;

  /**
   * Supersedes every live tab token of the row `jti` (but the one whose hash
   * is `except`): they stop working on the host and the revocation feed lists
   * them from `now`. Returns how many.
   */
  supersedeTabTokens(jti: string, now: EpochMilliseconds, except?: string): Promise<number>;

  /**
   * Like {@link findLiveSessionWithAccount}, for a token recorded by
   * {@link insertTabToken}: a live one, or with `superseded` also one
   * superseded while its row lives on.
   */
  findLiveSessionByTabToken(
    tokenHash: string,
    now: EpochMilliseconds,
    options?: { readonly superseded?: boolean },
  ): Promise<TabTokenMemberRecord | null>;

  /** Sets last_seen_at of an unrevoked row; a no-op when it is already as recent. */
  touchSession(jti: string, now: EpochMilliseconds): Promise<void>;

  /** True when this call revoked the row. */
  revokeSession(jti: string, now: EpochMilliseconds): Promise<boolean>;

  /** Revokes the account's row(s) in one roster (logout scope=current). Returns the rows revoked. */
  revokeAccountInRoster(rosterId: string, accountId: string, now: EpochMilliseconds): Promise<number>;

  /** Revokes every row of the roster (logout scope=all). Returns the rows revoked. */
  revokeRoster(rosterId: string, now: EpochMilliseconds): Promise<number>;

  /** Revokes every row of the account, in every roster. Returns the rows revoked. */
  revokeAllForAccount(accountId: string, now: EpochMilliseconds): Promise<number>;

  /**
   * Tokens revoked after `after` (by revocation time, then jti) whose expiry
   * is still ahead of `now`, oldest revocation first, at most `limit`: revoked
   * rows, superseded tab tokens, and the tab tokens of revoked rows (each
   * with its own jti).
   */
  listRevocations(
    after: { readonly at: EpochMilliseconds; readonly jti: string } | null,
    now: EpochMilliseconds,
    limit: number,
  ): Promise<RevocationRecord[]>;

  /** Every session row of the account, revoked and expired ones not yet purged included, newest first, at most `limit`. */
  listSessionsOfAccount(accountId: string, limit: number): Promise<DeviceSessionRecord[]>;

  /** Every live row of the account, in every roster, most recently seen first, with its device facts. */
  listLiveSessionsOfAccount(accountId: string, now: EpochMilliseconds): Promise<DeviceSessionRecord[]>;

  /** Revokes the row `jti` when it is a live row of the account. True when this call revoked it. */
  revokeSessionOfAccount(accountId: string, jti: string, now: EpochMilliseconds): Promise<boolean>;

  /** Revokes every live row of the account except `keepJti`. Returns the rows revoked. */
  revokeOtherSessionsOfAccount(accountId: string, keepJti: string, now: EpochMilliseconds): Promise<number>;
}

/** Single-use challenge nonces (docs/protocol.md §5). */
/** Consumes a nonce once across every instance: the used-nonce table, or Redis `SET NX` (src/platform/redis). */
export interface NonceGuard {
  consume(nonce: string, expiresAtMs: number): Promise<boolean>;
}

export interface NonceStore {
  /**
   * Marks a nonce used. True for exactly one caller, ever (until the row is
   * purged after `expiresAt`, when the challenge itself has expired). A nonce
   * that has already expired is refused.
   */
  consumeNonce(nonce: string, expiresAt: EpochMilliseconds, now: EpochMilliseconds): Promise<boolean>;
}

/** Settings and the signing key ring (docs/protocol.md §1, §3). */
export interface KeyStore {
  /**
   * The value of `key`; when absent, stores `create()` and returns it. Instances
   * racing on an empty database all get the one value that was stored first.
   */
  getOrCreateSetting(key: string, create: () => string): Promise<string>;

  getSetting(key: string): Promise<string | null>;

  /** Every key, retired ones too, newest activation first. Publish the ones still in their overlap window. */
  listSigningKeys(): Promise<SigningKeyRecord[]>;

  /** The key that signs now: the newest unretired key whose activation has come. */
  findActiveSigningKey(now: EpochMilliseconds): Promise<SigningKeyRecord | null>;

  /** False when a key with this kid already exists (the same key, as kid is its thumbprint). */
  insertSigningKey(key: NewSigningKey): Promise<boolean>;

  /** True when this call retired the key. */
  retireSigningKey(kid: string, at: EpochMilliseconds): Promise<boolean>;
}

/** Security events per account (docs/protocol.md §6 "Activity"). */
export interface ActivityStore {
  /** Stores one event; the id is generated when absent. */
  recordActivity(event: {
    readonly id?: string;
    readonly account_id: string;
    readonly at: EpochMilliseconds;
    readonly kind: string;
    readonly detail: Readonly<Record<string, ActivityValue>>;
  }): Promise<ActivityRecord>;

  /** The account's events, newest first, at most `limit`, older than `before` when given. */
  listActivity(accountId: string, options: { readonly before?: ActivityCursor; readonly limit: number }): Promise<ActivityRecord[]>;
}
