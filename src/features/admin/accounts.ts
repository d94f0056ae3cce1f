/**
 * One person's account as an operator sees and acts on it
 * (docs/operations.md "Operators and the audit log"): what it holds, and the
 * hold with a reason. Each view and each change is written to the audit log
 * before it is answered.
 */
import { activityView, type ActivityLog, type ActivityView } from '../../identity/account/index.js';
import { accountIdFromDid, didOf } from '../../identity/session/index.js';
import { OcError } from '../../platform/errors.js';
import type { AccountRecord, AccountStore, ActivityStore, SessionStore } from '../../platform/storage/index.js';
import type { AccountExport, AccountLifecycle } from '../account-data/lifecycle.js';
import type { ConnectStore } from '../connect/index.js';
import type { OidcService } from '../oidc/index.js';
import type { WebAuthnStore } from '../passkeys/index.js';
import type { Actor, OperatorService } from './operators.js';
import type { OperatorStore } from './store.js';

/** How many of the account's latest events the view carries. */
const RECENT_EVENTS = 20;

export interface AdminAccountView {
  readonly did_oc: string;
  readonly status: 'active' | 'disabled' | 'deleted' | 'merged';
  readonly kind: string;
  readonly display_name: string | null;
  readonly created_at: string;
  readonly disabled_at: string | null;
  readonly identities: ReadonlyArray<{ readonly id: string; readonly kind: string; readonly value: string; readonly created_at: string }>;
  readonly sessions: ReadonlyArray<{
    readonly id: string;
    readonly device: string | null;
    readonly network: string | null;
    readonly signing_method: string | null;
    readonly last_seen_at: string;
  }>;
  readonly keys: ReadonlyArray<{ readonly id: string; readonly label: string; readonly last_used_at: string | null }>;
  readonly connect_apps: ReadonlyArray<{ readonly id: string; readonly name: string }>;
  readonly signed_in_apps: ReadonlyArray<{ readonly client_id: string; readonly name: string }>;
  readonly activity: readonly ActivityView[];
}

/** One match of the people search: the account, and the identity that matched (none when its `did:oc` did). */
export interface PersonFound {
  readonly did_oc: string;
  readonly status: AdminAccountView['status'];
  readonly kind: string;
  readonly display_name: string | null;
  readonly created_at: string;
  readonly matched: { readonly kind: string; readonly value: string } | null;
}

/** A page of the people search; `next` goes on after its last match. */
export interface PeoplePage {
  readonly people: readonly PersonFound[];
  readonly next: string | null;
}

/** A `did:oc` or the start of one: the account ids it covers start with the hex after it. */
const DID_PREFIX = /^did:oc:([0-9a-f]{0,32})$/i;

export interface AdminAccountsDeps {
  readonly store: Pick<AccountStore, 'findAccount' | 'listIdentities'> &
    Pick<SessionStore, 'listLiveSessionsOfAccount' | 'revokeAllForAccount' | 'revokeSessionOfAccount'> &
    Pick<WebAuthnStore, 'listWebAuthnCredentials' | 'findWebAuthnCredential' | 'deleteWebAuthnCredential'> &
    Pick<ConnectStore, 'listConnectApps'> &
    Pick<ActivityStore, 'listActivity'> &
    Pick<OperatorStore, 'searchIdentities' | 'searchAccountIds'>;
  readonly oidc: Pick<OidcService, 'appsOf'>;
  readonly lifecycle: Pick<AccountLifecycle, 'setDisabled' | 'exportOf' | 'deleteById'>;
  readonly activity: Pick<ActivityLog, 'record'>;
  readonly operators: Pick<OperatorService, 'audit'>;
  readonly now: () => Date;
}

function iso(ms: number): string {
  return new Date(ms).toISOString();
}

function statusOf(account: AccountRecord): AdminAccountView['status'] {
  if (account.deleted_at !== null) return 'deleted';
  if (account.merged_into !== null) return 'merged';
  return account.disabled_at === null ? 'active' : 'disabled';
}

/** What both the search and the account view say of an account first. */
function summaryOf(account: AccountRecord): Omit<PersonFound, 'matched'> {
  return {
    did_oc: didOf(account.id),
    status: statusOf(account),
    kind: account.kind,
    display_name: account.display_name,
    created_at: iso(account.created_at),
  };
}

export class AdminAccounts {
  readonly #deps: AdminAccountsDeps;

  constructor(deps: AdminAccountsDeps) {
    this.#deps = deps;
  }

  /** The account a `did:oc` names, or 404 `unknown_did_oc`. */
  async #account(did: string): Promise<AccountRecord> {
    const id = accountIdFromDid(did);
    const account = id === null ? null : await this.#deps.store.findAccount(id);
    if (account === null) throw new OcError('unknown_did_oc', 'admin: no such account');
    return account;
  }

  /**
   * The people whose `did:oc`, Bitcoin address, e-mail or provider subject
   * (`<provider>:<subject>`) starts with `text`, case-insensitively, a page
   * of `limit` at a time after `after` (the `next` of the page before).
   * Audited as `account.search` with the text and how many it found.
   */
  async search(text: string, after: string | undefined, limit: number, actor: Actor): Promise<PeoplePage> {
    const query = text.trim();
    if (query === '') throw new OcError('bad_request', 'admin: say what to search for');
    const { store } = this.#deps;
    const byDid = DID_PREFIX.exec(query);
    const people: PersonFound[] = [];
    let next: string | null = null;
    if (byDid !== null) {
      // One more than the page: whether there is a next one.
      const ids = await store.searchAccountIds(byDid[1]!.toLowerCase(), after, limit + 1);
      const page = ids.slice(0, limit);
      for (const id of page) {
        const account = await store.findAccount(id);
        if (account !== null) people.push(this.#found(account, null));
      }
      next = ids.length > limit ? page.at(-1)! : null;
    } else {
      const matches = await store.searchIdentities({ prefix: query, after, limit: limit + 1 });
      const page = matches.slice(0, limit);
      for (const { identity } of page) {
        const account = await store.findAccount(identity.account_id);
        if (account !== null) people.push(this.#found(account, { kind: identity.kind, value: identity.value }));
      }
      next = matches.length > limit ? page.at(-1)!.identity.id : null;
    }
    await this.#deps.operators.audit(actor, {
      action: 'account.search',
      target: null,
      detail: { query, by: byDid === null ? 'identity' : 'did_oc', found: people.length, page: after === undefined ? 'first' : 'next' },
    });
    return { people, next };
  }

  #found(account: AccountRecord, matched: PersonFound['matched']): PersonFound {
    return { ...summaryOf(account), matched };
  }

  /** How many security keys and passkeys an account holds: whether its console can step up (console-routes.ts). */
  async keyCount(accountId: string): Promise<number> {
    return (await this.#deps.store.listWebAuthnCredentials(accountId)).length;
  }

  /** Everything the account holds, for the operator; audited as `account.view`. */
  async view(did: string, actor: Actor): Promise<AdminAccountView> {
    const account = await this.#account(did);
    await this.#deps.operators.audit(actor, { action: 'account.view', target: didOf(account.id) });
    const { store } = this.#deps;
    const [identities, sessions, keys, apps, signedIn, events] = await Promise.all([
      store.listIdentities(account.id),
      store.listLiveSessionsOfAccount(account.id, this.#deps.now().getTime()),
      store.listWebAuthnCredentials(account.id),
      store.listConnectApps(account.id),
      this.#deps.oidc.appsOf(didOf(account.id)),
      store.listActivity(account.id, { limit: RECENT_EVENTS }),
    ]);
    return {
      ...summaryOf(account),
      disabled_at: account.disabled_at === null ? null : iso(account.disabled_at),
      identities: identities.map((identity) => ({
        id: identity.id,
        kind: identity.kind,
        value: identity.value,
        created_at: iso(identity.created_at),
      })),
      sessions: sessions.map((session) => ({
        id: session.jti,
        device: session.device,
        network: session.network,
        signing_method: session.signing_method,
        last_seen_at: iso(session.last_seen_at),
      })),
      keys: keys.map((key) => ({ id: key.id, label: key.label, last_used_at: key.last_used_at === null ? null : iso(key.last_used_at) })),
      connect_apps: apps.map((app) => ({ id: app.id, name: app.name })),
      signed_in_apps: signedIn.map((app) => ({ client_id: app.client_id, name: app.name })),
      activity: events.map(activityView),
    };
  }

  /**
   * Holds the account (its sessions and the tokens apps hold for it end) or
   * lifts the hold, with the operator's reason; audited as
   * `account.disable` or `account.enable` when it changed anything.
   */
  async setDisabled(
    did: string,
    disabled: boolean,
    reason: string | null,
    actor: Actor,
  ): Promise<{ changed: boolean; revoked_sessions: number }> {
    const account = await this.#account(did);
    if (account.deleted_at !== null || account.merged_into !== null) {
      throw new OcError('unknown_did_oc', 'admin: this account is deleted or merged into another');
    }
    const result = await this.#deps.lifecycle.setDisabled(account.id, disabled, reason);
    if (result === null) throw new OcError('unknown_did_oc', 'admin: this account is deleted or merged into another');
    if (result.changed) {
      await this.#deps.operators.audit(actor, {
        action: disabled ? 'account.disable' : 'account.enable',
        target: didOf(account.id),
        reason,
        detail: disabled ? { revoked_sessions: result.revoked_sessions } : null,
      });
    }
    return { changed: result.changed, revoked_sessions: result.revoked_sessions };
  }

  /**
   * Signs the account out of one browser (`session`, a session id the view
   * lists) or of every one; the person's activity says an operator did it,
   * and the audit log keeps the reason. How many sessions ended.
   */
  async signOut(did: string, session: string | null, reason: string | null, actor: Actor): Promise<number> {
    const account = await this.#account(did);
    const now = this.#deps.now().getTime();
    const count =
      session === null
        ? await this.#deps.store.revokeAllForAccount(account.id, now)
        : (await this.#deps.store.revokeSessionOfAccount(account.id, session, now))
          ? 1
          : 0;
    if (count > 0) {
      await this.#deps.activity.record(account.id, 'sessions_revoked', { count, scope: session === null ? 'all' : 'one', by: 'operator' });
    }
    await this.#deps.operators.audit(actor, {
      action: 'sessions.revoke',
      target: didOf(account.id),
      reason,
      detail: { count, scope: session === null ? 'all' : 'one' },
    });
    return count;
  }

  /**
   * Removes one of the account's security keys or passkeys (an id the view
   * lists); the person's activity says an operator did, and the audit log
   * keeps the reason. 404 `not_found` for a key the account does not hold.
   */
  async removeKey(did: string, keyId: string, reason: string, actor: Actor): Promise<void> {
    const account = await this.#live(did);
    const { store } = this.#deps;
    const key = await store.findWebAuthnCredential(keyId);
    if (key === null || key.account_id !== account.id || !(await store.deleteWebAuthnCredential(keyId, account.id))) {
      throw new OcError('not_found', 'admin: the account has no key with this id');
    }
    await this.#deps.activity.record(account.id, 'key_removed', { label: key.label, by: 'operator' });
    await this.#deps.operators.audit(actor, { action: 'key.remove', target: didOf(account.id), reason, detail: { key: keyId } });
  }

  /**
   * The account's export document, as the person downloads it
   * (`GET /api/auth/account/export`), for the operator to keep before a
   * deletion; audited as `account.export`.
   */
  async exportOf(did: string, actor: Actor): Promise<AccountExport> {
    const account = await this.#account(did);
    if (account.deleted_at !== null) throw new OcError('unknown_did_oc', 'admin: this account is deleted');
    await this.#deps.operators.audit(actor, { action: 'account.export', target: didOf(account.id) });
    return this.#deps.lifecycle.exportOf(account);
  }

  /**
   * Deletes the account as `oc-host accounts delete` does: `confirm` must be
   * its `did:oc`, so a request meant for another account deletes nothing.
   * Audited as `account.delete` with the reason and what went.
   */
  async delete(did: string, confirm: string, reason: string, actor: Actor): Promise<{ identities: number; revoked_sessions: number }> {
    if (confirm !== did) throw new OcError('confirmation_mismatch', 'admin: send confirm equal to the did_oc of the account to delete');
    const account = await this.#live(did);
    const deleted = await this.#deps.lifecycle.deleteById(account.id, 'operator');
    if (deleted === null) throw new OcError('unknown_did_oc', 'admin: this account is deleted or merged into another');
    await this.#deps.operators.audit(actor, {
      action: 'account.delete',
      target: didOf(account.id),
      reason,
      detail: {
        identities: deleted.identities,
        sessions: deleted.revoked_sessions,
        keys: deleted.keys,
        connect_apps: deleted.connect_apps,
        merged_accounts: deleted.merged_accounts,
      },
    });
    return { identities: deleted.identities, revoked_sessions: deleted.revoked_sessions };
  }

  /** The account a `did:oc` names, neither deleted nor merged, or 404 `unknown_did_oc`. */
  async #live(did: string): Promise<AccountRecord> {
    const account = await this.#account(did);
    if (account.deleted_at !== null || account.merged_into !== null) {
      throw new OcError('unknown_did_oc', 'admin: this account is deleted or merged into another');
    }
    return account;
  }
}

declare module '../../platform/services.js' {
  interface FeatureServices {
    /** One person's account as an operator sees and holds it. */
    readonly adminAccounts: AdminAccounts;
  }
}
