/**
 * The public view of an account (docs/api.md "Account", docs/protocol.md §2).
 */
import type { AccountRecord, IdentityRecord } from '../../platform/storage/index.js';

export interface AccountView {
  /** The internal id, equal to the JWT `sub` (docs/protocol.md §3). */
  readonly id: string;
  readonly did_oc: string;
  readonly kind: 'btc' | 'federated';
  readonly display_name: string | null;
  readonly primary_btc: string | null;
  readonly display_identity: { readonly kind: string; readonly value: string };
  /** Whether an e-mail is linked; the address itself is only in GET /api/auth/identities. */
  readonly has_email: boolean;
  /**
   * The custody the OrangeCheck client shows: `bip322` when the account holds
   * a Bitcoin address it signs with, else null (oc-host custodies no keys).
   */
  readonly signing_method: 'bip322' | null;
  /** The npub of a linked Nostr key, or null. */
  readonly nostr_npub: string | null;
  /** Always null: oc-host binds no account to a federation. */
  readonly home_federation_slug: null;
  /** Always false: oc-host has no owner accounts (the hosted service marks its operators). */
  readonly is_owner: false;
}

/** The identity facts a view shows, from the identities or from the roster statement. */
export interface ViewFacts {
  readonly has_email: boolean;
  readonly nostr_npub: string | null;
}

export function factsOf(identities: readonly IdentityRecord[]): ViewFacts {
  return { has_email: identities.some((identity) => identity.kind === 'email'), nostr_npub: identityValue(identities, 'nostr') ?? null };
}

const DID_PREFIX = 'did:oc:';
const ACCOUNT_ID = /^[0-9a-f]{32}$/;

export function didOf(accountId: string): string {
  return `${DID_PREFIX}${accountId}`;
}

/** The account id inside a `did:oc:<id>`, or null when the text is not one. */
export function accountIdFromDid(did: string): string | null {
  if (!did.startsWith(DID_PREFIX)) return null;
  const id = did.slice(DID_PREFIX.length);
  return ACCOUNT_ID.test(id) ? id : null;
}

/** Whether the view needs the account's identities to name its display identity. */
export function needsIdentities(account: AccountRecord): boolean {
  const kind = account.display_identity_kind;
  return kind === 'email' || kind === 'nostr' || (kind === null && account.primary_btc === null);
}

function identityValue(identities: readonly IdentityRecord[] | undefined, kind: 'email' | 'nostr'): string | undefined {
  if (!identities) return undefined;
  if (kind === 'email') return identities.find((identity) => identity.kind === 'email')?.value;
  // Nostr keys are linked as provider-style identities `nostr:<npub>`.
  const nostr = identities.find((identity) => identity.kind === 'oauth' && identity.value.startsWith('nostr:'));
  return nostr?.value.slice('nostr:'.length);
}

/**
 * An e-mail display identity as a token may carry it: a badge that says the
 * account signs in by e-mail without giving the address away
 * (`jane@example.org` → `j•••@•••.org`).
 */
export function emailBadge(email: string): { kind: 'email'; value: string } {
  const at = email.lastIndexOf('@');
  const first = Array.from(at > 0 ? email.slice(0, at) : '')[0] ?? '';
  const labels = email.slice(at + 1).split('.');
  const tld = labels.length > 1 ? labels[labels.length - 1]! : '';
  const safe = (text: string) => (/^[^\s@•.]+$/u.test(text) ? text : '');
  const top = safe(tld);
  return { kind: 'email', value: `${safe(first)}•••@•••${top === '' ? '' : `.${top}`}` };
}

/**
 * `display_identity` defaults to the primary address, else the e-mail, else
 * the did (docs/protocol.md §2); a chosen kind wins when the account holds it.
 */
function displayIdentityOf(account: AccountRecord, identities?: readonly IdentityRecord[]): { kind: string; value: string } {
  const chosen = account.display_identity_kind;
  if (chosen === 'btc' && account.primary_btc) return { kind: 'btc', value: account.primary_btc };
  if (chosen === 'email' || chosen === 'nostr') {
    const value = identityValue(identities, chosen);
    if (value) return { kind: chosen, value };
  }
  if (chosen === 'did') return { kind: 'did', value: didOf(account.id) };
  if (account.primary_btc) return { kind: 'btc', value: account.primary_btc };
  const email = identityValue(identities, 'email');
  if (email) return { kind: 'email', value: email };
  return { kind: 'did', value: didOf(account.id) };
}

export function accountView(account: AccountRecord, identities: readonly IdentityRecord[] | undefined, facts: ViewFacts): AccountView {
  return {
    id: account.id,
    did_oc: didOf(account.id),
    kind: account.kind,
    display_name: account.display_name,
    primary_btc: account.primary_btc,
    display_identity: displayIdentityOf(account, identities),
    has_email: facts.has_email,
    signing_method: account.primary_btc === null ? null : 'bip322',
    nostr_npub: facts.nostr_npub,
    home_federation_slug: null,
    is_owner: false,
  };
}
