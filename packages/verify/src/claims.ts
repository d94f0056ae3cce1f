/**
 * The claims of an `oc_session` JWT (docs/api.md "JWT claims", docs/protocol.md
 * §3) and the checks this package adds to the signature and the standard
 * claims: `sub`, `did_oc` and `jti` are required, and `did_oc` must be
 * `did:oc:` + `sub` (docs/protocol.md §2).
 *
 * This is the one definition of the claims: the host mints its tokens
 * against these types too (src/identity/session/jwt.ts), so the two cannot drift.
 */

/** How the account is shown: `kind` is `btc`, `did`, `nostr`, or `email` as a masked badge (`j•••@•••.org`, never the address). */
export interface DisplayIdentity {
  readonly kind: string;
  readonly value: string;
}

/**
 * How the person signed in, as RFC 8176 names it (the `amr` claim, docs/protocol.md
 * §3): `swk` a BIP-322 signature (a key the host cannot tell is in
 * hardware), `otp` an e-mail code, `hwk` and `user` a passkey (a WebAuthn key,
 * user verified), and after a key step-up `hwk` and `mfa`. Other RFC 8176
 * values may appear from a newer host.
 */
export type AuthenticationMethod = 'hwk' | 'mfa' | 'otp' | 'swk' | 'user' | (string & {});

/** The ways into a session (docs/protocol.md §3); a newer host may add one. */
export type SigningMethod = 'bip322' | 'email_otp' | 'passkey' | `oauth:${string}` | (string & {});

/** A verified session: the claims the host put in the token (docs/protocol.md §3). */
export interface OcSessionClaims {
  /** The host's `PUBLIC_URL`. */
  readonly iss: string;
  /** The account's internal id, 32 lowercase hex. */
  readonly sub: string;
  /** `did:oc:` + `sub`. */
  readonly did_oc: string;
  /** The session row's id. */
  readonly jti: string;
  /** Unix seconds: when this token was minted (the host always sets it). */
  readonly iat?: number;
  /** Unix seconds: the session row's expiry (30 days after sign-in; a switch never extends it). */
  readonly exp: number;
  readonly name?: string;
  /** The account's primary Bitcoin address. */
  readonly primary_btc?: string;
  readonly display_identity?: DisplayIdentity;
  /**
   * How the session signed in, in the host's own words (docs/protocol.md §3):
   * `bip322`, `email_otp`, `passkey` or `oauth:<provider>`. The same in the
   * RFC 8176 vocabulary is `amr`.
   */
  readonly signing_method?: SigningMethod;
  /** How the person proved themselves in this session (RFC 8176); absent after a provider sign-in with no step-up. */
  readonly amr?: readonly AuthenticationMethod[];
  /** Unix seconds: the last key step-up of this account in this session. */
  readonly step_up_at?: number;
  /** Unix seconds: the last sudo re-proof of this account in this session. */
  readonly sudo_at?: number;
  /** The `did_oc` of every account merged into this one; absent when none was. Data keyed by a did may sit under any of them. */
  readonly merged_from?: readonly string[];
}

/** Claims a token must carry besides the signature (`iss` is checked against the pinned issuer). */
export const REQUIRED_CLAIMS = ['iss', 'exp', 'sub', 'did_oc', 'jti'] as const;

const DID_OC_PREFIX = 'did:oc:';

function isNonEmptyString(value: unknown): value is string {
  return typeof value === 'string' && value.length > 0;
}

function isOptionalTime(value: unknown): boolean {
  return value === undefined || (typeof value === 'number' && Number.isFinite(value));
}

function isOptionalStringList(value: unknown): boolean {
  return value === undefined || (Array.isArray(value) && value.every(isNonEmptyString));
}

/**
 * The checks that jose does not make, on a payload whose signature, `iss`
 * and `exp` already passed. Returns the claims, or null: a token that fails
 * here is as unusable as a forged one.
 */
export function sessionClaimsOf(payload: Readonly<Record<string, unknown>>): OcSessionClaims | null {
  const { sub, did_oc: didOc, jti } = payload;
  if (!isNonEmptyString(sub) || !isNonEmptyString(jti)) return null;
  if (didOc !== DID_OC_PREFIX + sub) return null;
  if (typeof payload.exp !== 'number') return null;
  // Freshness claims drive requireFreshSudo() and requireFreshStepUp(); a wrong type must not read as "fresh".
  if (!isOptionalTime(payload.sudo_at) || !isOptionalTime(payload.step_up_at)) return null;
  // A list is handed on typed as one; a token whose list is not one is as unusable as a forged one.
  if (!isOptionalStringList(payload.merged_from) || !isOptionalStringList(payload.amr)) return null;
  if (payload.signing_method !== undefined && !isNonEmptyString(payload.signing_method)) return null;
  return payload as unknown as OcSessionClaims;
}
