/**
 * Finding or creating the account behind a proven identity (docs/protocol.md §2).
 * Every look-up lands in the canonical account, following `merged_into`.
 */
import { newAccountId } from '../../platform/crypto.js';
import type { AccountKind, AccountRecord, IdentityKind, AccountStore } from '../../platform/storage/index.js';

export interface ProvenIdentity {
  readonly kind: IdentityKind;
  /** Lowercased for e-mail; `<provider>:<sub>` for providers. */
  readonly value: string;
}

/**
 * The canonical account holding `identity`, created on first sight: a `btc`
 * account for an address, a `federated` one otherwise. Concurrent first
 * sign-ins of one identity end in one account (the store's unique index).
 */
export async function accountForIdentity(
  store: AccountStore,
  identity: ProvenIdentity,
  nowMs: number,
): Promise<{ account: AccountRecord; created: boolean }> {
  const existing = await store.findAccountByIdentity(identity.kind, identity.value);
  if (existing) return { account: existing, created: false };
  const kind: AccountKind = identity.kind === 'btc' ? 'btc' : 'federated';
  const result = await store.createAccountWithIdentity({
    account: {
      id: newAccountId(),
      kind,
      primary_btc: identity.kind === 'btc' ? identity.value : null,
      created_at: nowMs,
    },
    identity: { kind: identity.kind, value: identity.value, verified: true, created_at: nowMs },
  });
  // When not created, `result.account` is the existing owner's canonical account.
  return { account: result.account, created: result.created };
}
