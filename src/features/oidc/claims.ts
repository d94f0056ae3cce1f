/**
 * What the OpenID provider says about an account (docs/protocol.md §8
 * "Scopes and claims"): `sub` is the account's `did:oc` (or a pairwise
 * value, chosen by the library), `profile` its display name, `email` a
 * verified address only, `bitcoin` its verified addresses, `orangecheck` the
 * primary address's attestation facts from the same look-up as `/api/check`.
 * How the person signed in travels as `acr` and `amr` (src/features/oidc/provider.ts).
 */
import { parseSubject, type AttestationLookupService } from '../attestations/index.js';
import { accountIdFromDid, mayAct } from '../../identity/session/index.js';
import type { AccountRecord, AccountStore } from '../../platform/storage/index.js';

/** The scopes a client may ask for. */
export const OIDC_SCOPES = ['openid', 'offline_access', 'profile', 'email', 'bitcoin', 'orangecheck'] as const;

/**
 * The claims of each scope; a null entry is a claim of its own. `acr` and
 * `amr` come with `openid`, so every ID token says how the person signed in
 * (the library fills them from the sign-in, never from the account).
 */
export const OIDC_CLAIMS: Readonly<Record<string, readonly string[] | null>> = {
  auth_time: null,
  sid: null,
  iss: null,
  openid: ['sub', 'acr', 'amr'],
  profile: ['name'],
  email: ['email', 'email_verified'],
  bitcoin: ['btc_addresses', 'primary_btc'],
  orangecheck: ['orangecheck'],
};

/** `acr` of a session in which a WebAuthn authenticator signed (a passkey, a key step-up): the OpenID EAP value for phishing-resistant, hardware-protected. */
export const ACR_KEY = 'phrh';
/** `acr` of every other session. */
export const ACR_BASIC = 'urn:oc:acr:basic';

/** The `orangecheck` claim: the primary address's attestation as `/api/check` finds it. */
interface OrangeCheckClaim {
  readonly address: string;
  /** False when no attestation of the address was found (or the relays could not be asked). */
  readonly found: boolean;
  readonly attestation_id?: string;
  readonly sats_bonded?: number;
  readonly days?: number;
  readonly score?: number;
  /** False when the chain could not be asked: the figures are the attestation's last known. */
  readonly chain_checked?: boolean;
  /** When the facts were read, unix seconds. */
  readonly checked_at: number;
}

export interface ClaimSource {
  /**
   * The claims of the account `sub` (a `did:oc`) for the granted scopes.
   * `account` is its row as the same request's standing check just read it
   * (src/identity/session/standing.ts), which saves reading it again; without it, it is read.
   */
  claimsFor(sub: string, scopes: ReadonlySet<string>, account?: AccountRecord): Promise<Record<string, unknown> & { sub: string }>;
}

/** The scope whose claims hold `claim`, for a claim the claims parameter asks for by name. */
const SCOPE_OF_CLAIM: ReadonlyMap<string, string> = new Map(
  Object.entries(OIDC_CLAIMS).flatMap(([scope, names]) => (names === null ? [] : names.map((name) => [name, scope] as const))),
);

/**
 * The scopes whose claims an ID token issued with an access token for
 * userinfo keeps: `openid` (its `sub`), and those of claims the claims
 * parameter asked for in the ID token by name. The library's
 * `conformIdTokenClaims` (its default, with userinfo on) leaves every other
 * claim of the scope to userinfo, so those need not be read.
 */
export function idTokenScopes(requested: Readonly<Record<string, unknown>> | undefined): Set<string> {
  const scopes = new Set(['openid']);
  for (const name of Object.keys(requested ?? {})) {
    const scope = SCOPE_OF_CLAIM.get(name);
    if (scope !== undefined) scopes.add(scope);
  }
  return scopes;
}

export interface ClaimSourceDeps {
  readonly accounts: Pick<AccountStore, 'findAccount' | 'listIdentities'>;
  /** Without it, `orangecheck` says `found: false`. */
  readonly attestations?: Pick<AttestationLookupService, 'check'>;
  readonly now: () => number;
}

export function claimSource(deps: ClaimSourceDeps): ClaimSource {
  return {
    async claimsFor(sub, scopes, read) {
      const accountId = accountIdFromDid(sub);
      const account = accountId === null ? null : read?.id === accountId ? read : await deps.accounts.findAccount(accountId);
      // An account that may not act answers `sub` alone (findAccount has refused it already; src/identity/session/standing.ts).
      if (!mayAct(account)) return { sub };
      const wantsIdentities = scopes.has('email') || scopes.has('bitcoin');
      const identities = wantsIdentities ? await deps.accounts.listIdentities(account.id) : [];
      const claims: Record<string, unknown> & { sub: string } = { sub };
      if (scopes.has('profile') && account.display_name !== null) claims.name = account.display_name;
      if (scopes.has('email')) {
        const email = identities.find((identity) => identity.kind === 'email' && identity.verified);
        if (email !== undefined) {
          claims.email = email.value;
          claims.email_verified = true;
        }
      }
      if (scopes.has('bitcoin')) {
        claims.btc_addresses = identities
          .filter((identity) => identity.kind === 'btc' && identity.verified)
          .map((identity) => identity.value);
        if (account.primary_btc !== null) claims.primary_btc = account.primary_btc;
      }
      if (scopes.has('orangecheck') && account.primary_btc !== null) {
        claims.orangecheck = await orangeCheckClaim(deps, account.primary_btc);
      }
      return claims;
    },
  };
}

async function orangeCheckClaim(deps: ClaimSourceDeps, address: string): Promise<OrangeCheckClaim> {
  const checkedAt = Math.floor(deps.now() / 1000);
  const parsed = parseSubject({ addr: address });
  if (!parsed.ok || deps.attestations === undefined) return { address, found: false, checked_at: checkedAt };
  const { outcome } = await deps.attestations.check(parsed.subject);
  if (outcome.status !== 'verified' && outcome.status !== 'chain_unavailable') return { address, found: false, checked_at: checkedAt };
  const result = outcome.result;
  return {
    address,
    found: true,
    attestation_id: result.attestation_id,
    sats_bonded: result.sats,
    days: result.days,
    score: result.score,
    chain_checked: outcome.status === 'verified',
    checked_at: checkedAt,
  };
}
