/**
 * Leaving, and the operator's hold (docs/protocol.md §2 "Disabling and
 * deleting", §6 "Export"):
 *
 * - `export`: everything stored about the active account as one JSON
 *   document, after a fresh re-proof (`sudo_at`). Session rows come without
 *   their token hashes, keys with their public parts only, Connect apps
 *   without their key hashes.
 * - `delete`: after a fresh re-proof and a `confirm` equal to the account's
 *   did, the store removes everything but a tombstone; the deletion itself is
 *   the one activity event the tombstone keeps, for the operator.
 * - `disable` / `enable` / `deleteById`: the operator's commands (the CLI),
 *   each recorded on the account.
 */
import { OcError } from '../../platform/errors.js';
import { didOf } from '../../identity/session/index.js';
import type { Authenticated } from '../../identity/session/index.js';
import {
  emailHintSetting,
  type AccountRecord,
  type ActivityRecord,
  type AccountStore,
  type ActivityStore,
  type DeletedAccountRecord,
  type KeyStore,
  type SessionStore,
} from '../../platform/storage/index.js';
import type { ConnectStore } from '../connect/index.js';
import type { WebAuthnStore } from '../passkeys/index.js';
import { activityView, type ActivityLog, type ActivityView } from '../../identity/account/index.js';

/** The export format's name and version, the document's first field. */
const EXPORT_FORMAT = 'oc-host.account-export.v1';
/** Session rows in an export at most (an account has far fewer within their 30-day life and the purge after). */
const EXPORT_MAX_SESSIONS = 5000;
/** Activity events in an export at most (about 180 days of a busy account). */
const EXPORT_MAX_ACTIVITY = 20_000;

const iso = (ms: number | null): string | null => (ms === null ? null : new Date(ms).toISOString());

export interface AccountExport {
  readonly format: typeof EXPORT_FORMAT;
  readonly exported_at: string;
  readonly service: string;
  readonly account: Record<string, unknown>;
  readonly identities: ReadonlyArray<Record<string, unknown>>;
  readonly merged_from: ReadonlyArray<Record<string, unknown>>;
  readonly sessions: ReadonlyArray<Record<string, unknown>>;
  readonly keys: ReadonlyArray<Record<string, unknown>>;
  readonly connect_apps: ReadonlyArray<Record<string, unknown>>;
  readonly connect_email_hint: string | null;
  readonly activity: readonly ActivityView[];
}

/** Who deleted or changed an account: the person themselves or the operator's CLI. */
export type Actor = 'self' | 'operator';

export interface LifecycleDeps {
  readonly store: Pick<
    AccountStore & SessionStore & WebAuthnStore & ConnectStore & ActivityStore & KeyStore,
    | 'listIdentities'
    | 'listMergedAccounts'
    | 'listSessionsOfAccount'
    | 'listWebAuthnCredentials'
    | 'listConnectApps'
    | 'listActivity'
    | 'getSetting'
    | 'deleteAccount'
    | 'setAccountDisabled'
  >;
  readonly activity: Pick<ActivityLog, 'record'>;
  readonly now: () => Date;
  readonly publicUrl: string;
}

export class AccountLifecycle {
  readonly #deps: LifecycleDeps;

  constructor(deps: LifecycleDeps) {
    this.#deps = deps;
  }

  /** GET /api/auth/account/export; its route declares the re-proof it needs (features/account-data/routes.ts). */
  async export(current: Authenticated): Promise<AccountExport> {
    const document = await this.exportOf(current.account, current.session.jti);
    await this.#deps.activity.record(current.account.id, 'account_exported', {});
    return document;
  }

  /** The export document of `account`; `currentJti` marks the requesting browser's session. */
  async exportOf(account: AccountRecord, currentJti: string | null = null): Promise<AccountExport> {
    const { store } = this.#deps;
    const [identities, merged, sessions, keys, apps, hint, activity] = await Promise.all([
      store.listIdentities(account.id),
      store.listMergedAccounts(account.id),
      store.listSessionsOfAccount(account.id, EXPORT_MAX_SESSIONS),
      store.listWebAuthnCredentials(account.id),
      store.listConnectApps(account.id),
      store.getSetting(emailHintSetting(account.id)),
      this.#allActivity(account.id),
    ]);
    return {
      format: EXPORT_FORMAT,
      exported_at: this.#deps.now().toISOString(),
      service: this.#deps.publicUrl,
      account: {
        did_oc: didOf(account.id),
        kind: account.kind,
        display_name: account.display_name,
        display_identity_kind: account.display_identity_kind,
        primary_btc: account.primary_btc,
        created_at: iso(account.created_at),
        updated_at: iso(account.updated_at),
        disabled_at: iso(account.disabled_at),
      },
      identities: identities.map((identity) => ({
        id: identity.id,
        kind: identity.kind,
        value: identity.value,
        verified: identity.verified,
        created_at: iso(identity.created_at),
      })),
      merged_from: merged.map((entry) => ({
        did_oc: didOf(entry.id),
        created_at: iso(entry.created_at),
        last_signed_in_at: iso(entry.last_signed_in_at),
      })),
      sessions: sessions.map((row) => ({
        id: row.jti,
        signing_method: row.signing_method,
        created_at: iso(row.created_at),
        last_seen_at: iso(row.last_seen_at),
        expires_at: iso(row.expires_at),
        revoked_at: iso(row.revoked_at),
        step_up_at: iso(row.step_up_at),
        sudo_at: iso(row.sudo_at),
        device: row.device,
        network: row.network,
        current: row.jti === currentJti,
      })),
      keys: keys.map((key) => ({
        id: key.id,
        label: key.label,
        public_key: key.public_key,
        sign_in: key.sign_in,
        authenticator_type: key.authenticator_type,
        device_type: key.device_type,
        backed_up: key.backed_up,
        transports: key.transports,
        aaguid: key.aaguid,
        counter: key.counter,
        created_at: iso(key.created_at),
        last_used_at: iso(key.last_used_at),
      })),
      connect_apps: apps.map((app) => ({ id: app.id, name: app.name, created_at: iso(app.created_at), rotated_at: iso(app.rotated_at) })),
      connect_email_hint: hint,
      activity,
    };
  }

  async #allActivity(accountId: string): Promise<ActivityView[]> {
    const events: ActivityRecord[] = [];
    let before: { at: number; id: string } | undefined;
    while (events.length < EXPORT_MAX_ACTIVITY) {
      const page = await this.#deps.store.listActivity(accountId, { limit: 500, ...(before === undefined ? {} : { before }) });
      events.push(...page);
      if (page.length < 500) break;
      const last = page.at(-1)!;
      before = { at: last.at, id: last.id };
    }
    return events.slice(0, EXPORT_MAX_ACTIVITY).map(activityView);
  }

  /** DELETE /api/auth/account: `confirm` must be the active account's did; its route declares the re-proof it needs. */
  async delete(current: Authenticated, confirm: string): Promise<DeletedAccountRecord> {
    if (confirm !== didOf(current.account.id)) {
      throw new OcError('confirmation_mismatch', "account: send confirm equal to the active account's did_oc to delete it");
    }
    const deleted = await this.deleteById(current.account.id, 'self');
    if (deleted === null) throw new OcError('not_authenticated', 'account: this account is already deleted');
    return deleted;
  }

  /** Deletes an account; null when it is unknown, merged or already deleted. */
  async deleteById(accountId: string, by: Actor): Promise<DeletedAccountRecord | null> {
    const deleted = await this.#deps.store.deleteAccount(accountId, this.#deps.now().getTime());
    if (deleted === null) return null;
    // The one event the tombstone keeps: when, by whom, how much went.
    await this.#deps.activity.record(accountId, 'account_deleted', {
      by,
      identities: deleted.identities,
      sessions: deleted.revoked_sessions,
      keys: deleted.keys,
      connect_apps: deleted.connect_apps,
      merged_accounts: deleted.merged_accounts,
    });
    return deleted;
  }

  /** The operator's hold; null when the account is unknown, merged or deleted. */
  async setDisabled(
    accountId: string,
    disabled: boolean,
    reason: string | null = null,
  ): Promise<{ account: AccountRecord; changed: boolean; revoked_sessions: number } | null> {
    const result = await this.#deps.store.setAccountDisabled(accountId, disabled, this.#deps.now().getTime());
    if (result === null || !result.changed) return result;
    // The operator's reason is the person's to read: their activity says why (docs/operations.md "The console").
    const why = reason === null || reason.trim() === '' ? {} : { reason: reason.trim() };
    if (disabled)
      await this.#deps.activity.record(accountId, 'account_disabled', { by: 'operator', sessions: result.revoked_sessions, ...why });
    else await this.#deps.activity.record(accountId, 'account_enabled', { by: 'operator', ...why });
    return result;
  }
}

declare module '../../platform/services.js' {
  interface FeatureServices {
    /** Export, deletion and the operator's hold. */
    readonly lifecycle: AccountLifecycle;
  }
}
