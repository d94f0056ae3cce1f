/**
 * The claims of an `oc_session` JWT (docs/api.md "JWT claims", docs/protocol.md
 * §3) and the checks this package adds to the signature and the standard
 * claims: `sub`, `did_oc` and `jti` are required, and `did_oc` must be
 * `did:oc:` + `sub` (docs/protocol.md §2).
 */

/** How the account is shown: `kind` is `btc`, `did` or `nostr` (never an e-mail address in a token). */
export interface DisplayIdentity {
  readonly kind: string;
  readonly value: string;
}

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
  /** Unix seconds: when this token was minted. */
  readonly iat?: number;
  /** Unix seconds: the session row's expiry (30 days after sign-in; a switch never extends it). */
  readonly exp: number;
  readonly name?: string;
  /** The account's primary Bitcoin address. */
  readonly primary_btc?: string;
  readonly display_identity?: DisplayIdentity;
  /** `bip322`, `email_otp` or `oauth:<provider>`. */
  readonly signing_method?: string;
  /** Unix seconds: the last step-up of this account in this session. */
  readonly step_up_at?: number;
  /** Unix seconds: the last sudo re-proof of this account in this session. */
  readonly sudo_at?: number;
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
  return payload as unknown as OcSessionClaims;
}
