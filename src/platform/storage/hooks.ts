/**
 * The points where a change to an account or a session reaches the tables of
 * the features above the identity core, inside the change's own transaction
 * (docs/architecture.md "Storage hooks"). The core's areas call them at fixed
 * points of a merge, a deletion, a hold, a revocation or a re-authentication;
 * src/store.ts fills them from the features' stores. So the storage names no
 * feature's table, and every feature's rows still change exactly when the
 * account's do, or not at all.
 */
import type { Kysely, Transaction } from 'kysely';
import type { IdentityRecord, NamedItem, RevocationRecord } from './records.js';
import type { DatabaseSchema } from './schema.js';

type Executor = Kysely<DatabaseSchema>;

/** An account event the apps that provisioned the account hear of (docs/protocol.md §6 "Webhooks"). */
export type AccountEvent =
  | { readonly type: 'identity.linked' | 'identity.unlinked'; readonly identity: IdentityRecord }
  | { readonly type: 'account.merged'; readonly merged_from: readonly string[] }
  | { readonly type: 'account.deleted' };

/** Tells an account's apps of one event, at `at`, for the account `accountId`. */
export type AccountNotice = (event: AccountEvent, accountId: string, at: number) => Promise<void>;

/** Rows an account holds in a feature's table, as a merge lists them (oldest first). */
interface HeldItems {
  list(db: Executor, accountId: string): Promise<NamedItem[]>;
}

export interface StoreHooks {
  /** Session rows were revoked (their `jti`s): the OpenID provider logs out the clients signed in through them. */
  sessionsRevoked(trx: Transaction<DatabaseSchema>, jtis: readonly string[], now: number): Promise<unknown>;
  /**
   * A re-authentication in the same browser replaces these live rows of one
   * account with `by`: what was signed in through them stays signed in.
   */
  sessionsReplaced(
    trx: Transaction<DatabaseSchema>,
    jtis: readonly string[],
    by: { readonly jti: string; readonly expires_at: number },
  ): Promise<void>;
  /** Entries of the revocation feed kept by a feature (access tokens ended early), after the cursor, oldest first. */
  moreRevocations(
    db: Executor,
    after: { readonly at: number; readonly jti: string } | null,
    now: number,
    limit: number,
  ): Promise<RevocationRecord[]>;

  /** The account's security keys: listed by a merge's 409, removed by the merge and by deletion (a key never moves). */
  readonly keys: HeldItems & {
    removeOf(trx: Transaction<DatabaseSchema>, accountIds: readonly string[]): Promise<number>;
  };
  /** The apps the account owns: listed by a merge, moved to the survivor when chosen, else removed; removed by deletion. */
  readonly apps: HeldItems & {
    move(trx: Transaction<DatabaseSchema>, appIds: readonly string[], intoAccountId: string): Promise<void>;
    remove(trx: Transaction<DatabaseSchema>, appIds: readonly string[]): Promise<void>;
    removeOwnedBy(trx: Transaction<DatabaseSchema>, accountIds: readonly string[]): Promise<number>;
  };
  /**
   * Reads, now, which apps provisioned any of these accounts, and returns
   * what tells them of an event later in the same transaction: read before
   * the change removes what names them, told after it.
   */
  appNotices(trx: Transaction<DatabaseSchema>, accountIds: readonly string[]): Promise<AccountNotice>;

  /** A deletion or merge: what the OpenID provider issued these accounts ends (logouts, consents, grants, tokens). */
  endProviderAccess(trx: Transaction<DatabaseSchema>, accountIds: readonly string[], now: number): Promise<void>;
  /** An operator's hold: the provider's codes and tokens of these accounts end, their consents stay. */
  endProviderTokens(trx: Transaction<DatabaseSchema>, accountIds: readonly string[], now: number): Promise<void>;
  /** A deletion: what is kept under the accounts' e-mail addresses goes (codes in flight). */
  forgetEmails(trx: Transaction<DatabaseSchema>, emails: readonly string[]): Promise<void>;
}

/** The hooks no owner fills: nothing held, nothing to end, no one to tell. */
const NOTHING_HELD: HeldItems = { list: async () => [] };
const NO_HOOKS: StoreHooks = {
  sessionsRevoked: async () => undefined,
  sessionsReplaced: async () => {},
  moreRevocations: async () => [],
  keys: { ...NOTHING_HELD, removeOf: async () => 0 },
  apps: { ...NOTHING_HELD, move: async () => {}, remove: async () => {}, removeOwnedBy: async () => 0 },
  appNotices: async () => async () => {},
  endProviderAccess: async () => {},
  endProviderTokens: async () => {},
  forgetEmails: async () => {},
};

/**
 * The hooks of a store from the parts its owners fill. Each hook has one
 * owner: a hook filled twice is a mistake in the list of the features, and
 * refused when the store is built; a hook no owner fills does nothing.
 */
export function joinStoreHooks(parts: ReadonlyArray<Partial<StoreHooks> | undefined>): StoreHooks {
  const filled = new Set<string>();
  const hooks: Record<string, unknown> = { ...NO_HOOKS };
  for (const part of parts) {
    for (const [name, hook] of Object.entries(part ?? {})) {
      if (filled.has(name)) throw new Error(`storage: the hook ${name} is filled by two owners of tables`);
      filled.add(name);
      hooks[name] = hook;
    }
  }
  return hooks as unknown as StoreHooks;
}
