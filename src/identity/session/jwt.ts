/**
 * The session JWT: a compact JWS (RFC 7515) signed with Ed25519 (RFC 8037).
 *
 * Minting and verifying call `node:crypto` directly rather than a JOSE library:
 * the token shape is fixed (docs/protocol.md §3), so a general library's option
 * handling is pure overhead on the floor measured in docs/performance.md (JWT).
 * Consumers verify the same tokens with any JOSE library (test/jwt.test.ts
 * checks that with `jose`).
 *
 * Domain code: no framework, no environment. Time comes in as a parameter.
 */
import { isJsonObject } from '../../platform/json.js';
import { sign, verify } from 'node:crypto';
import { decodeBase64url, sha256Hex } from '../../platform/crypto.js';
import type { SigningKey, VerificationKey } from './keys.js';
import type { AuthenticationMethod, DisplayIdentity, OcSessionClaims } from '../../../packages/verify/src/claims.js';

export type { AuthenticationMethod };

export { SESSION_LIFETIME_SECONDS } from './lifetime.js';

/**
 * Longest token accepted or minted. Browsers keep cookies up to about 4 KiB;
 * 8 KiB leaves room while bounding the work an attacker can ask of the
 * verifier (src/identity/session/cookie.ts reads values up to the same size).
 */
export const MAX_TOKEN_LENGTH = 8192;

/**
 * The claims of docs/protocol.md §3, as the host mints them: the one
 * definition is the consumer package's (packages/verify/src/claims.ts), so
 * what consumers are told a token holds is what the host writes. `iat` is
 * optional there (the package does not require it of a token) and always
 * written here. Only the type is imported: nothing of the package runs in the
 * service.
 */
export interface SessionClaims extends OcSessionClaims {
  /** Unix seconds. */
  readonly iat: number;
}

/** The claims a token may lack. */
type OptionalClaim = { [K in keyof SessionClaims]-?: undefined extends SessionClaims[K] ? K : never }[keyof SessionClaims];

/** What a caller hands to {@link mintSessionJwt}: optional claims may be null when unknown. */
export type SessionClaimsInput = Omit<SessionClaims, OptionalClaim> & {
  readonly [K in OptionalClaim]?: SessionClaims[K] | null | undefined;
};

/** Anything that can find a published key by kid; a `KeyRing` is one. */
export interface VerificationKeySource {
  findByKid(kid: string): VerificationKey | undefined;
}

export interface VerifySessionOptions {
  /** The expected `iss`: the service's `PUBLIC_URL` (docs/protocol.md §3). */
  readonly issuer: string;
  readonly now: Date;
}

function isNonEmptyString(value: unknown): value is string {
  return typeof value === 'string' && value.length > 0;
}

function isUnixSeconds(value: unknown): value is number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0;
}

/** A list claim (`amr`, `merged_from`): a copy of its non-empty strings; undefined when absent or empty, null when not such a list. */
function listClaim(value: unknown): string[] | undefined | null {
  if (value == null) return undefined;
  if (!Array.isArray(value) || !value.every(isNonEmptyString)) return null;
  return value.length > 0 ? [...value] : undefined;
}

/**
 * The masked form an e-mail display identity takes in a token: the first
 * character of the local part and the top-level domain, `j•••@•••.org`.
 */
const EMAIL_BADGE = /^[^\s@•]?•••@•••(?:\.[^\s@.•]+)?$/u;

/**
 * docs/protocol.md §3: never an e-mail address in the token. An `email`
 * identity passes only as its masked badge, and any other identity whose value
 * has the shape of an address is left out, so a mislabelled identity cannot
 * leak an address to every consumer site.
 */
function isEmailIdentity(identity: DisplayIdentity): boolean {
  if (identity.kind === 'email') return !EMAIL_BADGE.test(identity.value);
  return identity.value.includes('@');
}

/**
 * The one whitelist of claims, used on the way in and on the way out. Building
 * a new object member by member (never spreading the input) is what keeps
 * `roster_id`, `email` or any other stray key out of a token (docs/protocol.md §3,
 * docs/api.md: `roster_id` never appears in the JWT), and fixes the member
 * order. Null and undefined mean "not known" and are left out.
 * Returns the claims, or a description of the first problem.
 */
function collectClaims(source: Record<string, unknown>): SessionClaims | string {
  const { iss, sub, did_oc, jti, iat, exp } = source;
  if (!isNonEmptyString(iss)) return 'iss must be a non-empty string';
  if (!isNonEmptyString(sub)) return 'sub must be a non-empty string';
  if (!isNonEmptyString(did_oc)) return 'did_oc must be a non-empty string';
  if (!isNonEmptyString(jti)) return 'jti must be a non-empty string';
  if (!isUnixSeconds(iat)) return 'iat must be whole unix seconds';
  if (!isUnixSeconds(exp) || exp <= iat) return 'exp must be whole unix seconds, after iat';
  const claims: { -readonly [K in keyof SessionClaims]: SessionClaims[K] } = { iss, sub, did_oc, jti, iat, exp };

  const { name, primary_btc, display_identity, signing_method } = source;
  if (name != null) {
    if (typeof name !== 'string') return 'name must be a string';
    claims.name = name;
  }
  if (primary_btc != null) {
    if (!isNonEmptyString(primary_btc)) return 'primary_btc must be a non-empty string';
    claims.primary_btc = primary_btc;
  }
  if (display_identity != null) {
    if (!isJsonObject(display_identity) || !isNonEmptyString(display_identity.kind) || typeof display_identity.value !== 'string') {
      return 'display_identity must be {kind, value} strings';
    }
    const identity = { kind: display_identity.kind, value: display_identity.value };
    if (!isEmailIdentity(identity)) claims.display_identity = identity;
  }
  if (signing_method != null) {
    if (!isNonEmptyString(signing_method)) return 'signing_method must be a non-empty string';
    claims.signing_method = signing_method;
  }
  const amr = listClaim(source.amr);
  if (amr === null) return 'amr must be an array of RFC 8176 method names';
  if (amr !== undefined) claims.amr = amr;
  for (const time of ['step_up_at', 'sudo_at'] as const) {
    const value = source[time];
    if (value == null) continue;
    if (!isUnixSeconds(value)) return `${time} must be whole unix seconds`;
    claims[time] = value;
  }
  const mergedFrom = listClaim(source.merged_from);
  if (mergedFrom === null) return 'merged_from must be an array of dids';
  if (mergedFrom !== undefined) claims.merged_from = mergedFrom;
  return claims;
}

/** The encoded protected header is the same for every token of a key; computed once per key. */
const encodedHeaders = new WeakMap<SigningKey, string>();

function encodedHeaderFor(key: SigningKey): string {
  let header = encodedHeaders.get(key);
  if (header === undefined) {
    // docs/protocol.md §3: exactly {alg: "EdDSA", typ: "JWT", kid}, in that order.
    header = Buffer.from(JSON.stringify({ alg: 'EdDSA', typ: 'JWT', kid: key.kid }), 'utf8').toString('base64url');
    encodedHeaders.set(key, header);
  }
  return header;
}

/**
 * Signs a session token. Claims are checked and whitelisted; a bad claim is a
 * programming mistake and throws (docs/architecture.md Errors).
 */
export function mintSessionJwt(key: SigningKey, claims: SessionClaimsInput): string {
  const collected = collectClaims(claims as unknown as Record<string, unknown>);
  if (typeof collected === 'string') throw new TypeError(`session jwt: ${collected}`);
  const signingInput = `${encodedHeaderFor(key)}.${Buffer.from(JSON.stringify(collected), 'utf8').toString('base64url')}`;
  const signature = sign(null, Buffer.from(signingInput, 'ascii'), key.privateKey).toString('base64url');
  const token = `${signingInput}.${signature}`;
  // A longer token would be dropped by the cookie reader and the verifier: fail here, loudly.
  if (token.length > MAX_TOKEN_LENGTH) throw new RangeError(`session jwt: token of ${token.length} characters exceeds ${MAX_TOKEN_LENGTH}`);
  return token;
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

function parseJsonObject(bytes: Uint8Array): Record<string, unknown> | null {
  const value: unknown = JSON.parse(utf8.decode(bytes));
  return isJsonObject(value) ? value : null;
}

/** An Ed25519 signature is 64 bytes: 86 base64url characters. */
const SIGNATURE_LENGTH = 86;

/**
 * Verifies a session token as a consumer would, and returns its whitelisted
 * claims, or null. Never throws: hostile input is an expected outcome
 * (docs/architecture.md Errors), and the caller learns nothing about which step failed.
 *
 * Pinned: exactly three segments; header exactly {alg: "EdDSA", typ: "JWT",
 * kid} with a published kid (so `none`, HS256 and key-confusion tricks fail
 * before any key is used); a valid Ed25519 signature; `iss` equal to the
 * issuer; `exp` after now; every required claim present with its type.
 * The work is bounded by {@link MAX_TOKEN_LENGTH} before anything is decoded.
 */
export function verifySessionJwt(token: unknown, keys: VerificationKeySource, options: VerifySessionOptions): SessionClaims | null {
  try {
    if (typeof token !== 'string' || token.length > MAX_TOKEN_LENGTH) return null;
    const firstDot = token.indexOf('.');
    const secondDot = token.indexOf('.', firstDot + 1);
    if (firstDot <= 0 || secondDot <= firstDot + 1 || token.indexOf('.', secondDot + 1) !== -1) return null;
    const encodedSignature = token.slice(secondDot + 1);
    if (encodedSignature.length !== SIGNATURE_LENGTH) return null;

    // Every segment is checked as strict base64url (RFC 7515 §2: no padding, one
    // spelling per value) before the signature, so the signed bytes are exactly
    // the ASCII text of the token.
    const headerBytes = decodeBase64url(token.slice(0, firstDot));
    const payloadBytes = decodeBase64url(token.slice(firstDot + 1, secondDot));
    const signature = decodeBase64url(encodedSignature);
    if (headerBytes === null || payloadBytes === null || signature === null) return null;

    const header = parseJsonObject(headerBytes);
    if (header === null || Object.keys(header).length !== 3) return null;
    if (header.alg !== 'EdDSA' || header.typ !== 'JWT' || typeof header.kid !== 'string') return null;
    const key = keys.findByKid(header.kid);
    if (key === undefined) return null;
    if (!verify(null, Buffer.from(token.slice(0, secondDot), 'ascii'), key.publicKey, signature)) return null;

    // Only authenticated bytes are interpreted from here on.
    const payload = parseJsonObject(payloadBytes);
    if (payload === null) return null;
    const claims = collectClaims(payload);
    if (typeof claims === 'string') return null;
    if (claims.iss !== options.issuer) return null;
    const nowSeconds = Math.floor(options.now.getTime() / 1000);
    if (!(claims.exp > nowSeconds)) return null;
    return claims;
  } catch {
    return null;
  }
}

/**
 * What a session row stores instead of the token (docs/protocol.md §3 `token_hash`):
 * lowercase hex SHA-256 of the token text. The host finds the row by this hash
 * and need not check the signature again (docs/performance.md JWT).
 */
export function tokenHash(token: string): string {
  return sha256Hex(token);
}
