/**
 * Account edit (docs/protocol.md §6: `PATCH /api/auth/account` with
 * `{display_name?, display_identity?: <kind>}`; "`display_identity` must
 * name a kind the account holds").
 *
 * Decisions where the protocol is silent:
 * - `display_name`: a string is cleaned by display-text.ts (NFC, trimmed, 1 to
 *   64 characters, no control or bidirectional-override characters); `null`
 *   clears it. An empty or blank string is refused rather than taken as
 *   "clear", so a clearing is always explicit.
 * - `display_identity`: `btc` needs a primary address, `email` a verified
 *   e-mail identity, `nostr` a linked Nostr key (a provider-style identity
 *   `nostr:<npub>`, as identity/session/accounts.ts reads it), `did` always holds;
 *   `null` returns to the default of docs/protocol.md §2 (address, else e-mail,
 *   else did). The e-mail itself never reaches the JWT (docs/protocol.md §3).
 * - A body that changes nothing is `bad_request`: it is a client mistake,
 *   and answering it with a re-mint would hide that.
 * - No step-up: neither field is a way into the account (docs/protocol.md §6
 *   names linking, unlinking and the recovery e-mail as the sudo operations).
 */
import { OcError } from '../../platform/errors.js';
import type { AccountPatch, AccountRecord, DisplayIdentityKind, IdentityRecord, AccountStore } from '../../platform/storage/index.js';
import { cleanDisplayText, codePointLength } from './display-text.js';

/** Display names are at most 64 characters. */
const MAX_DISPLAY_NAME_LENGTH = 64;

const DISPLAY_IDENTITY_KINDS: readonly DisplayIdentityKind[] = ['btc', 'email', 'did', 'nostr'];

export interface AccountEditInput {
  readonly display_name?: string | null | undefined;
  readonly display_identity?: string | null | undefined;
}

function holdsKind(account: AccountRecord, identities: readonly IdentityRecord[], kind: DisplayIdentityKind): boolean {
  switch (kind) {
    case 'did':
      return true;
    case 'btc':
      return account.primary_btc !== null;
    case 'email':
      return identities.some((identity) => identity.kind === 'email' && identity.verified);
    case 'nostr':
      return identities.some((identity) => identity.kind === 'oauth' && identity.value.startsWith('nostr:'));
  }
}

function isDisplayIdentityKind(value: string): value is DisplayIdentityKind {
  return (DISPLAY_IDENTITY_KINDS as readonly string[]).includes(value);
}

/** The store patch for `input`, or 400 `bad_request` naming the field. */
function accountPatchOf(input: AccountEditInput, account: AccountRecord, identities: readonly IdentityRecord[]): AccountPatch {
  const patch: { display_name?: string | null; display_identity_kind?: DisplayIdentityKind | null } = {};
  if (input.display_name !== undefined) {
    patch.display_name = input.display_name === null ? null : cleanDisplayText('display_name', input.display_name, MAX_DISPLAY_NAME_LENGTH);
  }
  if (input.display_identity !== undefined) {
    const kind = input.display_identity;
    if (kind === null) {
      patch.display_identity_kind = null;
    } else if (!isDisplayIdentityKind(kind)) {
      throw new OcError('bad_request', `display_identity: must be one of ${DISPLAY_IDENTITY_KINDS.join(', ')}, or null for the default`);
    } else if (!holdsKind(account, identities, kind)) {
      throw new OcError('bad_request', `display_identity: the account holds no ${kind} identity`);
    } else {
      patch.display_identity_kind = kind;
    }
  }
  if (Object.keys(patch).length === 0) throw new OcError('bad_request', 'body: send display_name and/or display_identity');
  return patch;
}

/** Validates and applies the edit; returns the account as stored afterwards. */
export async function editAccount(
  store: AccountStore,
  account: AccountRecord,
  input: AccountEditInput,
  nowMs: number,
): Promise<AccountRecord> {
  const identities = input.display_identity ? await store.listIdentities(account.id) : [];
  const patch = accountPatchOf(input, account, identities);
  const updated = await store.updateAccount(account.id, patch, nowMs);
  if (updated === null) throw new OcError('not_authenticated', 'account: the account no longer exists');
  return updated;
}

const graphemes = new Intl.Segmenter('und', { granularity: 'grapheme' });

/**
 * A provider's name for a new account's `display_name`, under the edit
 * route's rules: cut to {@link MAX_DISPLAY_NAME_LENGTH} code points at a
 * grapheme boundary (never inside an emoji or before a combining mark), and
 * null when the edit route would refuse it (control, line-break or
 * bidirectional-override characters, or nothing left after trimming). A
 * refused name is dropped, not repaired: the person can set one later.
 */
export function displayNameFromProvider(name: string): string | null {
  let cut = '';
  let length = 0;
  for (const { segment } of graphemes.segment(name.normalize('NFC').trim())) {
    const size = codePointLength(segment);
    if (length + size > MAX_DISPLAY_NAME_LENGTH) break;
    cut += segment;
    length += size;
  }
  try {
    return cleanDisplayText('display_name', cut, MAX_DISPLAY_NAME_LENGTH);
  } catch {
    return null;
  }
}
