/**
 * Accounts and their identities (docs/protocol.md §2): creation on first sight, look-ups that follow merges, linking and unlinking, edits, and the merge a confirmed transfer is.
 */
import { newAccountId } from '../crypto.js';
import type { Kysely, Updateable } from 'kysely';
import {
  assertAccountId,
  assertIdentityValue,
  assertLowercaseEmail,
  identityValues,
  isUniqueViolation,
  newRandomId,
  rowsAffected,
  type StoreExecutor,
} from './executor.js';
import { toAccountRecord, toDatabaseBoolean, toIdentityRecord } from './row-mapping.js';
import type { AccountsTable, DatabaseSchema, IdentitiesTable, IdentityKind } from './schema.js';
import type {
  AccountPatch,
  AccountRecord,
  AddIdentityResult,
  CreateAccountResult,
  IdentityRecord,
  MergeResult,
  MergeSelection,
  TransferHoldings,
  NewAccount,
  NewIdentity,
  RemoveIdentityResult,
  AccountStore,
  MergedAccountRecord,
  DeletedAccountRecord,
} from './store.js';
import { emailHintSetting, MergeRefused } from './store.js';

export class AccountsArea implements AccountStore {
  readonly #x: StoreExecutor;

  constructor(executor: StoreExecutor) {
    this.#x = executor;
  }

  #identityRow(identity: NewIdentity, accountId: string): IdentitiesTable {
    return {
      id: identity.id ?? newRandomId(),
      account_id: accountId,
      kind: identity.kind,
      value: identity.value,
      verified: toDatabaseBoolean(this.#x.engine, identity.verified),
      created_at: identity.created_at,
    };
  }

  async #ownerOfIdentity(kind: IdentityKind, value: string): Promise<{ account: AccountRecord; identity: IdentityRecord } | null> {
    const identity = await this.#x.findIdentity(this.#x.db, kind, value);
    if (identity === null) return null;
    const account = await this.#x.resolveCanonical(this.#x.db, identity.account_id);
    if (account === null) throw new Error(`storage: identity ${identity.id} belongs to no account`);
    return { account, identity };
  }

  async createAccountWithIdentity(input: { readonly account: NewAccount; readonly identity: NewIdentity }): Promise<CreateAccountResult> {
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
      disabled_at: null,
      deleted_at: null,
    };
    const identityRow = this.#identityRow(identity, accountId);
    try {
      await this.#x.transaction(async (trx) => {
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

  async findAccount(accountId: string): Promise<AccountRecord | null> {
    // Every door's standing check reads it (docs/performance.md "The OpenID provider").
    const [row] = await this.#x.runCompiled<AccountsTable>(
      'findAccount',
      () => this.#x.db.selectFrom('accounts').selectAll().where('id', '=', accountId),
      [accountId],
    );
    return row ? toAccountRecord(row) : null;
  }

  resolveCanonicalAccount(accountId: string): Promise<AccountRecord | null> {
    return this.#x.resolveCanonical(this.#x.db, accountId);
  }

  async listMergedInto(accountId: string): Promise<string[]> {
    const rows = await this.#x.db.selectFrom('accounts').select('id').where('merged_into', '=', accountId).orderBy('id').execute();
    return rows.map((row) => row.id);
  }

  async listMergedAccounts(accountId: string): Promise<MergedAccountRecord[]> {
    const rows = await this.#x.db
      .selectFrom('accounts')
      .select(['id', 'created_at'])
      .select((eb) =>
        eb
          .selectFrom('sessions')
          .select((inner) => inner.fn.max('sessions.created_at').as('latest'))
          .whereRef('sessions.account_id', '=', 'accounts.id')
          .as('last_signed_in_at'),
      )
      .where('merged_into', '=', accountId)
      .orderBy('id')
      .execute();
    return rows.map((row) => ({
      id: row.id,
      created_at: Number(row.created_at),
      last_signed_in_at: row.last_signed_in_at === null || row.last_signed_in_at === undefined ? null : Number(row.last_signed_in_at),
    }));
  }

  async findAccountByIdentity(kind: IdentityKind, value: string): Promise<AccountRecord | null> {
    if (kind === 'email') assertLowercaseEmail(value);
    const row = await this.#x.db
      .selectFrom('identities')
      .innerJoin('accounts', 'accounts.id', 'identities.account_id')
      .selectAll('accounts')
      .where('identities.kind', '=', kind)
      .where('identities.value', '=', value)
      .executeTakeFirst();
    if (!row) return null;
    const account = toAccountRecord(row);
    // docs/protocol.md §2: every lookup follows the merge pointer.
    return account.merged_into === null ? account : this.#x.resolveCanonical(this.#x.db, account.merged_into);
  }

  async listIdentities(accountId: string): Promise<IdentityRecord[]> {
    // Read for the claims of userinfo (docs/performance.md "The OpenID provider"); oldest first.
    const rows = await this.#x.runCompiled<IdentitiesTable>('listIdentities', () => identitiesQuery(this.#x.db, accountId), [accountId]);
    return rows.map(toIdentityRecord);
  }

  async addIdentity(input: NewIdentity & { readonly account_id: string }): Promise<AddIdentityResult> {
    assertIdentityValue(input.kind, input.value);
    const row = this.#identityRow(input, input.account_id);
    try {
      await this.#x.transaction(async (trx) => {
        await trx.insertInto('identities').values(row).execute();
        const tell = await this.#x.hooks.appNotices(trx, [row.account_id]);
        await tell({ type: 'identity.linked', identity: toIdentityRecord(row) }, row.account_id, row.created_at);
      });
      return { status: 'added', identity: toIdentityRecord(row) };
    } catch (error) {
      if (!isUniqueViolation(error)) throw error;
      const existing = await this.#x.findIdentity(this.#x.db, input.kind, input.value);
      if (existing === null) throw error;
      const [owner, target] = await Promise.all([
        this.#x.resolveCanonical(this.#x.db, existing.account_id),
        this.#x.resolveCanonical(this.#x.db, input.account_id),
      ]);
      const sameAccount = owner !== null && target !== null && owner.id === target.id;
      return { status: sameAccount ? 'already_linked' : 'linked_elsewhere', identity: existing };
    }
  }

  removeIdentity(accountId: string, identityId: string, now: number, keepSessionJti?: string): Promise<RemoveIdentityResult> {
    return this.#x.transaction(async (trx) => {
      // Locked so two concurrent unlinks cannot each see "one more left" and
      // leave the account with nothing to sign in with.
      const account = (await this.#x.lockAccounts(trx, [accountId], 'update')).get(accountId);
      if (account === undefined) return 'not_found';
      const identities = await identitiesOf(trx, accountId);
      const removed = identities.find((identity) => identity.id === identityId);
      if (removed === undefined) return 'not_found';
      const remaining = identities.filter((identity) => identity.id !== identityId);
      if (remaining.length === 0) return 'last_identity';
      // Before the delete: an app whose own user this identity is hears of it too.
      const tell = await this.#x.hooks.appNotices(trx, [accountId]);
      await trx.deleteFrom('identities').where('id', '=', identityId).execute();
      await tell({ type: 'identity.unlinked', identity: removed }, accountId, now);
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
    const row = await this.#x.db.updateTable('accounts').set(values).where('id', '=', accountId).returningAll().executeTakeFirst();
    return row ? toAccountRecord(row) : null;
  }

  async transferHoldings(accountId: string): Promise<TransferHoldings | null> {
    const account = await this.#x.findAccount(this.#x.db, accountId);
    return account === null ? null : this.#readHoldings(this.#x.db, accountId);
  }

  async mergeAccounts(fromId: string, intoId: string, now: number, selection: MergeSelection): Promise<MergeResult> {
    if (fromId === intoId) throw new Error('storage: cannot merge an account into itself');
    return this.#x.transaction(async (trx) => {
      const locked = await this.#x.lockAccounts(trx, [fromId, intoId], 'update');
      const from = locked.get(fromId);
      if (from === undefined) throw new Error(`storage: cannot merge unknown account ${fromId}`);
      if (from.merged_into !== null) {
        throw new Error(`storage: account ${fromId} is already merged into ${from.merged_into}`);
      }
      if (!locked.has(intoId)) throw new Error(`storage: cannot merge into unknown account ${intoId}`);
      const into = await this.#x.resolveCanonical(trx, intoId);
      if (into === null) throw new Error(`storage: cannot merge into unknown account ${intoId}`);
      if (into.id === from.id) throw new Error(`storage: merging ${fromId} into ${intoId} would make a loop`);
      if (into.id !== intoId) await this.#x.lockAccounts(trx, [into.id], 'update');
      // The operator's hold covers merges too (docs/protocol.md §2 "Disabling and deleting").
      for (const account of [from, into]) {
        if (account.disabled_at !== null || account.deleted_at !== null) {
          throw new MergeRefused('account_disabled', 'storage: an account of this merge is disabled or deleted');
        }
      }

      // Read under the lock: exactly what the selection is checked against and what the merge moves or removes.
      const { identities, keys, apps } = await this.#readHoldings(trx, from.id);
      const chosenIdentities = new Set(selection.identityIds);
      const chosenApps = new Set(selection.appIds);
      if (
        [...chosenIdentities].some((id) => !identities.some((identity) => identity.id === id)) ||
        [...chosenApps].some((id) => !apps.some((app) => app.id === id))
      ) {
        throw new MergeRefused('selection_changed', 'storage: the merge names an identity or app the merged account does not hold');
      }
      const moving = identities.filter((identity) => chosenIdentities.has(identity.id));
      const dropped = identities.filter((identity) => !chosenIdentities.has(identity.id));
      const movingApps = apps.filter((app) => chosenApps.has(app.id));
      const droppedApps = apps.filter((app) => !chosenApps.has(app.id));

      // The apps that provisioned `from` (read while their identities are still there) hear of what left it.
      const tellFrom = await this.#x.hooks.appNotices(trx, [from.id]);
      const droppedIds = dropped.map((identity) => identity.id);
      if (droppedIds.length > 0) {
        await trx.deleteFrom('identities').where('id', 'in', droppedIds).execute();
        for (const identity of dropped) await tellFrom({ type: 'identity.unlinked', identity }, from.id, now);
      }
      const movingIds = moving.map((identity) => identity.id);
      if (movingIds.length > 0) await trx.updateTable('identities').set({ account_id: into.id }).where('id', 'in', movingIds).execute();
      if (movingApps.length > 0) {
        await this.#x.hooks.apps.move(
          trx,
          movingApps.map((app) => app.id),
          into.id,
        );
      }
      if (droppedApps.length > 0) {
        await this.#x.hooks.apps.remove(
          trx,
          droppedApps.map((app) => app.id),
        );
      }
      // A key proves whoever registered it, not the person merging: it never moves.
      await this.#x.hooks.keys.removeOf(trx, [from.id]);
      // Accounts merged into `from` earlier now point straight at the survivor,
      // so every chain stays one step long.
      await trx.updateTable('accounts').set({ merged_into: into.id, updated_at: now }).where('merged_into', '=', from.id).execute();
      await trx.updateTable('accounts').set({ merged_into: into.id, updated_at: now }).where('id', '=', from.id).execute();
      const adopted: Updateable<AccountsTable> = { updated_at: now };
      if (into.display_name === null && from.display_name !== null) adopted.display_name = from.display_name;
      const primaryMoved = moving.some((identity) => identity.kind === 'btc' && identity.value === from.primary_btc);
      if (into.primary_btc === null && primaryMoved) adopted.primary_btc = from.primary_btc;
      const survivor = await trx.updateTable('accounts').set(adopted).where('id', '=', into.id).returningAll().executeTakeFirstOrThrow();
      // Every app that provisioned either account (what moved is on `into` now).
      const tellInto = await this.#x.hooks.appNotices(trx, [into.id]);
      await tellInto({ type: 'account.merged', merged_from: [`did:oc:${from.id}`] }, into.id, now);

      // The merge gives no one access they did not already have
      // (docs/protocol.md, merging): every session of `from` is revoked, and no
      // roster gains a row for `into`. A stale or stolen session of `from`
      // reaches nothing; the roster of the session that merged already holds
      // `into`, and other rosters simply lose `from` on their next /me.
      const revoked = await this.#x.revokeAccountSessions(trx, [from.id], now);
      // Apps signed in as `from` (offline access included) lose it too; the person signs in to them again as `into`.
      await this.#x.hooks.endProviderAccess(trx, [from.id], now);
      return {
        account: toAccountRecord(survivor),
        moved_identities: moving.length,
        revoked_sessions: revoked,
        moved: { identities: moving.map((identity) => ({ ...identity, account_id: into.id })), apps: movingApps },
        removed: { identities: dropped, keys, apps: droppedApps },
      };
    });
  }

  deleteAccount(accountId: string, now: number): Promise<DeletedAccountRecord | null> {
    return this.#x.transaction(async (trx) => {
      const account = (await this.#x.lockAccounts(trx, [accountId], 'update')).get(accountId);
      if (account === undefined || account.merged_into !== null || account.deleted_at !== null) return null;
      const merged = await trx.selectFrom('accounts').select('id').where('merged_into', '=', accountId).execute();
      const ids = [accountId, ...merged.map((row) => row.id)];
      const emails = await identityValues(trx, ids, 'email');
      if (emails.length > 0) await this.#x.hooks.forgetEmails(trx, emails);
      await trx.deleteFrom('settings').where('key', 'in', ids.map(emailHintSetting)).execute();
      const keys = await this.#x.hooks.keys.removeOf(trx, ids);
      const apps = await this.#x.hooks.apps.removeOwnedBy(trx, ids);
      // The apps that provisioned it (their `connect` identities, read before those go) hear of the deletion.
      const tell = await this.#x.hooks.appNotices(trx, ids);
      await tell({ type: 'account.deleted' }, accountId, now);
      const identities = await trx.deleteFrom('identities').where('account_id', 'in', ids).executeTakeFirst();
      const activity = await trx.deleteFrom('activity').where('account_id', 'in', ids).executeTakeFirst();
      // Every client the account signed in to hears of it, through whichever host session (docs/protocol.md §8 "Logout"),
      // and what the provider issued the account ends: its consents, their grants and every token of them.
      await this.#x.hooks.endProviderAccess(trx, ids, now);
      const revoked = await this.#x.revokeAccountSessions(trx, ids, now);
      // The rows stay for the revocation feed until their tokens expire; what they knew of the browser goes now.
      await trx.updateTable('sessions').set({ device: null, network: null }).where('account_id', 'in', ids).execute();
      await trx
        .updateTable('accounts')
        .set({ deleted_at: now, updated_at: now, display_name: null, display_identity_kind: null, primary_btc: null })
        .where('id', 'in', ids)
        .execute();
      const tombstone = await this.#x.findAccount(trx, accountId);
      return {
        account: tombstone!,
        merged_accounts: merged.length,
        identities: rowsAffected(identities.numDeletedRows),
        revoked_sessions: revoked,
        keys,
        connect_apps: apps,
        activity: rowsAffected(activity.numDeletedRows),
      };
    });
  }

  setAccountDisabled(
    accountId: string,
    disabled: boolean,
    now: number,
  ): Promise<{ account: AccountRecord; changed: boolean; revoked_sessions: number } | null> {
    return this.#x.transaction(async (trx) => {
      const account = (await this.#x.lockAccounts(trx, [accountId], 'update')).get(accountId);
      if (account === undefined || account.merged_into !== null || account.deleted_at !== null) return null;
      if (disabled === (account.disabled_at !== null)) return { account, changed: false, revoked_sessions: 0 };
      await trx
        .updateTable('accounts')
        .set({ disabled_at: disabled ? now : null, updated_at: now })
        .where('id', '=', accountId)
        .execute();
      const revokedSessions = disabled ? await this.#x.revokeAccountSessions(trx, [accountId], now) : 0;
      // What the provider issued ends with the sessions; the consents stay, like the account's identities and keys.
      if (disabled) await this.#x.hooks.endProviderTokens(trx, [accountId], now);
      return { account: (await this.#x.findAccount(trx, accountId))!, changed: true, revoked_sessions: revokedSessions };
    });
  }

  /**
   * What an account holds that a merge moves or removes (docs/protocol.md §2
   * "Merging"), oldest first: for the 409's list and, inside the merge's
   * transaction, for the merge itself.
   */
  async #readHoldings(db: Kysely<DatabaseSchema>, accountId: string): Promise<TransferHoldings> {
    const identities = await identitiesOf(db, accountId);
    const keys = await this.#x.hooks.keys.list(db, accountId);
    const apps = await this.#x.hooks.apps.list(db, accountId);
    return { identities, keys, apps };
  }
}

/** The query of an account's identities, oldest first and ties by id (the order every list of them has). */
function identitiesQuery(db: Kysely<DatabaseSchema>, accountId: string) {
  return db.selectFrom('identities').selectAll().where('account_id', '=', accountId).orderBy('created_at').orderBy('id');
}

/** The identities of an account, oldest first. */
async function identitiesOf(db: Kysely<DatabaseSchema>, accountId: string): Promise<IdentityRecord[]> {
  return (await identitiesQuery(db, accountId).execute()).map(toIdentityRecord);
}
