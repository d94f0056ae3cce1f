/**
 * Every change an account makes to itself (docs/protocol.md §2, §6): step-up,
 * listing its identities, linking one (and the merge a confirmed transfer
 * is), unlinking one, and editing the display fields. Each change that can
 * alter what the JWT says ends in a re-minted session, so the routes only
 * set the cookie and answer.
 */
import type { Authenticated, IssuedSession, SessionService } from '../session/index.js';
import type { AccountRecord, AccountStore, NamedItem } from '../../platform/storage/index.js';
import { displayNameFromProvider, editAccount, type AccountEditInput } from './edit.js';
import {
  identityView,
  linkedElsewhere,
  linkedIdentityViews,
  linkIdentity,
  refuseHeldAccount,
  type TransferAcceptance,
  listIdentityViews,
  unlinkIdentity,
  type IdentityView,
  type LinkedIdentityView,
} from './linking.js';
import { didOf } from '../session/index.js';
import type { ActivityLog } from './activity.js';
import { isOcError } from '../../platform/errors.js';
import { proveAccountAgain, proveIdentity, type AddressProof, type EmailProof, type IdentityProof, type ProofCheckers } from './step-up.js';

export interface AccountServiceDeps {
  readonly store: AccountStore;
  readonly sessions: Pick<SessionService, 'reissue'>;
  /** The proof checkers at this instant: challenge rules (docs/protocol.md §5) and e-mail codes (§6). */
  readonly checkers: () => ProofCheckers;
  readonly now: () => Date;
  /** Where the account's security events go (docs/protocol.md §6 "Activity"). */
  readonly activity: Pick<ActivityLog, 'record'>;
}

/** A change that re-minted the session, with the identities as they are afterwards. */
export interface AccountChange {
  readonly issued: IssuedSession;
  readonly identities: IdentityView[];
  /** Set when a confirmed transfer merged another account into this one: what arrived and what was removed. */
  readonly merged?: MergeReport;
}

/** The answer's account of a transfer (docs/protocol.md §2 "Merging"). */
interface MergeReport {
  readonly did_oc: string;
  readonly moved: { readonly identities: IdentityView[]; readonly apps: NamedItem[] };
  readonly removed: { readonly identities: IdentityView[]; readonly security_keys: NamedItem[]; readonly apps: NamedItem[] };
}

export interface IdentitiesOverview {
  readonly identities: IdentityView[];
  readonly linked: LinkedIdentityView[];
  readonly account_id: string;
  readonly did_oc: string;
  readonly merged_from: Array<{ readonly did_oc: string; readonly created_at: string; readonly last_signed_in_at: string | null }>;
}

/** What a provider vouched for about a person who signs in for the first time. */
export interface ProviderProfile {
  readonly name?: string | undefined;
  readonly email?: string | undefined;
  readonly emailVerified?: boolean | undefined;
}

export class AccountService {
  readonly #deps: AccountServiceDeps;

  constructor(deps: AccountServiceDeps) {
    this.#deps = deps;
  }

  #nowMs(): number {
    return this.#deps.now().getTime();
  }

  identities(accountId: string): Promise<IdentityView[]> {
    return listIdentityViews(this.#deps.store, accountId);
  }

  /**
   * GET /api/auth/identities: the identities in both shapes (`identities`,
   * and `linked` as the OrangeCheck account components read it), and the
   * accounts merged into this one.
   */
  async overview(account: AccountRecord): Promise<IdentitiesOverview> {
    const [records, merged] = await Promise.all([
      this.#deps.store.listIdentities(account.id),
      this.#deps.store.listMergedAccounts(account.id),
    ]);
    return {
      identities: records.map(identityView),
      linked: linkedIdentityViews(account, records),
      account_id: account.id,
      did_oc: didOf(account.id),
      merged_from: merged.map((entry) => ({
        did_oc: didOf(entry.id),
        created_at: new Date(entry.created_at).toISOString(),
        last_signed_in_at: entry.last_signed_in_at === null ? null : new Date(entry.last_signed_in_at).toISOString(),
      })),
    };
  }

  /** Proves the active account again and opens its 5-minute step-up window (docs/protocol.md §6). */
  async stepUp(current: Authenticated, proof: IdentityProof): Promise<IssuedSession> {
    const method = proof.kind === 'btc' ? 'bip322' : 'email_otp';
    try {
      await proveAccountAgain(this.#deps.store, current.account, proof, this.#deps.checkers());
    } catch (error) {
      if (isOcError(error)) await this.#deps.activity.record(current.account.id, 'sudo_failed', { method, reason: error.code });
      throw error;
    }
    const nowMs = this.#nowMs();
    const issued = await this.#deps.sessions.reissue(current, { sudo_at: nowMs });
    await this.#deps.activity.record(current.account.id, 'sudo', { method });
    return issued;
  }

  /**
   * Links the identity `proof` proves (purpose `link`); with a `transfer`
   * acceptance an identity of another account merges that account into this
   * one, moving only what the acceptance names (docs/protocol.md §2
   * "Merging"). Its routes declare the freshness it needs (`link`, step-up.ts
   * `requireFreshness`), checked before the body is read, so before the proof is consumed.
   */
  async link(current: Authenticated, proof: AddressProof | EmailProof, transfer: TransferAcceptance | null): Promise<AccountChange> {
    // A link challenge may name the active account's did as its audience
    // (the OrangeCheck client does): a proof made for one account cannot be
    // replayed into another.
    const base = this.#deps.checkers();
    const did = didOf(current.account.id);
    const checkers: ProofCheckers = {
      ...base,
      challenge: { ...base.challenge, isAllowedAudience: (audience) => audience === did || base.challenge.isAllowedAudience(audience) },
    };
    // An identity of another account without a transfer, or of an account
    // the operator holds, is refused before the proof is used up, so the
    // client can send the same proof again with the confirmation.
    const refuseElsewhere = async (identity: { kind: 'btc' | 'email'; value: string }): Promise<void> => {
      const owner = await this.#deps.store.findAccountByIdentity(identity.kind, identity.value);
      if (owner === null || owner.id === current.account.id) return;
      refuseHeldAccount(owner);
      if (transfer === null) throw linkedElsewhere(identity, owner, await this.#deps.store.transferHoldings(owner.id));
    };
    const identity = await proveIdentity(proof, 'link', checkers, refuseElsewhere);
    const outcome = await linkIdentity(this.#deps.store, { account: current.account, identity, transfer, nowMs: this.#nowMs() });
    let merged: MergeReport | undefined;
    if (outcome.status === 'merged') {
      merged = {
        did_oc: outcome.merged.did_oc,
        moved: { identities: outcome.moved.identities.map(identityView), apps: outcome.moved.apps },
        removed: {
          identities: outcome.removed.identities.map(identityView),
          security_keys: outcome.removed.keys,
          apps: outcome.removed.apps,
        },
      };
      const mergedId = outcome.merged.did_oc.slice('did:oc:'.length);
      const named = (items: readonly { kind: string; value: string }[]): string[] => items.map((item) => `${item.kind}:${item.value}`);
      // Exactly what arrived, and what the other account lost (docs/protocol.md §6 "Activity").
      await this.#deps.activity.record(outcome.account.id, 'account_merged', {
        merged_from: outcome.merged.did_oc,
        identities: named(outcome.moved.identities),
        apps: outcome.moved.apps.map((app) => app.name),
        removed_identities: named(outcome.removed.identities),
        removed_keys: outcome.removed.keys.map((key) => key.name),
        removed_apps: outcome.removed.apps.map((app) => app.name),
      });
      await this.#deps.activity.record(mergedId, 'account_merged', { merged_into: didOf(outcome.account.id) });
    }
    if (outcome.status !== 'already_linked')
      await this.#deps.activity.record(outcome.account.id, 'identity_linked', { kind: identity.kind, value: identity.value });
    const issued = await this.#deps.sessions.reissue(current);
    return { issued, identities: await this.identities(outcome.account.id), ...(merged === undefined ? {} : { merged }) };
  }

  /** Unlinks one identity of the active account; its route declares the re-proof it needs (features/account/routes.ts). */
  async unlink(current: Authenticated, identityId: string): Promise<AccountChange> {
    const nowMs = this.#nowMs();
    const removed = (await this.#deps.store.listIdentities(current.account.id)).find((identity) => identity.id === identityId);
    await unlinkIdentity(this.#deps.store, current.account.id, identityId, nowMs, current.session.jti);
    if (removed !== undefined)
      await this.#deps.activity.record(current.account.id, 'identity_unlinked', { kind: removed.kind, value: removed.value });
    // The primary address or display identity may have changed with it.
    const issued = await this.#deps.sessions.reissue(current);
    return { issued, identities: await this.identities(current.account.id) };
  }

  /** Edits the display name and display identity; the re-minted JWT carries them. */
  async edit(current: Authenticated, input: AccountEditInput): Promise<IssuedSession> {
    await editAccount(this.#deps.store, current.account, input, this.#nowMs());
    const fields = Object.keys(input).filter((field) => (input as Record<string, unknown>)[field] !== undefined);
    await this.#deps.activity.record(current.account.id, 'account_edited', { fields });
    return this.#deps.sessions.reissue(current);
  }

  /**
   * A new account starts with what its provider vouched for: the name, under
   * the same rules as an edit (a name the edit route refuses is dropped, a
   * long one is cut at a character boundary), and the verified e-mail when
   * no other account holds it.
   */
  async adoptProviderProfile(account: AccountRecord, profile: ProviderProfile): Promise<void> {
    const nowMs = this.#nowMs();
    const name = profile.name === undefined ? null : displayNameFromProvider(profile.name);
    if (name !== null) await this.#deps.store.updateAccount(account.id, { display_name: name }, nowMs);
    if (profile.email && profile.emailVerified) {
      await this.#deps.store.addIdentity({
        account_id: account.id,
        kind: 'email',
        value: profile.email.toLowerCase(),
        verified: true,
        created_at: nowMs,
      });
    }
  }
}
