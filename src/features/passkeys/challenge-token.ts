/**
 * WebAuthn challenge tokens (docs/protocol.md §6): the options routes answer
 * a random challenge and a `challenge_token` that carries it, MACed under the
 * server secret, so issuing stores nothing and any instance can check it. The
 * token names what it is for (registering, asserting, signing in), the
 * session row it was issued to (none for a passkey sign-in) and when it
 * expires; the verify routes consume the challenge once through the shared
 * nonce guard, so a replayed response is refused on every instance.
 */
import { randomBytes } from 'node:crypto';
import { decodeBase64url, hmacSha256, timingSafeEqualString } from '../../platform/crypto.js';
import { OcError } from '../../platform/errors.js';

/** A ceremony must finish within this long (also the `timeout` the options give the browser). */
export const WEBAUTHN_CHALLENGE_TTL_MS = 5 * 60 * 1000;

const MAC_LABEL = 'oc-host/webauthn-challenge/v1\n';

export type ChallengeKind = 'register' | 'assert' | 'signin';

export interface ChallengeClaims {
  readonly kind: ChallengeKind;
  /** The challenge the browser signs, base64url of 32 random bytes. */
  readonly challenge: string;
  /** The session row (jti) the ceremony belongs to; empty for a passkey sign-in. */
  readonly jti: string;
  readonly expiresAt: number;
  /** register: the label asked for, and whether the key is to be a sign-in passkey. */
  readonly label?: string;
  readonly signIn?: boolean;
}

function mac(secret: Uint8Array, payload: string): string {
  return Buffer.from(hmacSha256(secret, MAC_LABEL + payload)).toString('base64url');
}

export function issueChallengeToken(
  secret: Uint8Array,
  claims: Omit<ChallengeClaims, 'challenge' | 'expiresAt'>,
  nowMs: number,
): { token: string; claims: ChallengeClaims } {
  const full: ChallengeClaims = {
    ...claims,
    challenge: randomBytes(32).toString('base64url'),
    expiresAt: nowMs + WEBAUTHN_CHALLENGE_TTL_MS,
  };
  const payload = Buffer.from(JSON.stringify(full), 'utf8').toString('base64url');
  return { token: `${payload}.${mac(secret, payload)}`, claims: full };
}

function refuse(detail: string): OcError {
  return new OcError('invalid_challenge', `webauthn: ${detail}`, { codes: ['webauthn_challenge'] });
}

/**
 * The claims of a token this service issued for `kind` and the session row
 * `jti`, still unexpired; 401 `invalid_challenge` otherwise. Does not consume it.
 */
export function openChallengeToken(
  secret: Uint8Array,
  token: string,
  expected: { kind: ChallengeKind; jti: string },
  nowMs: number,
): ChallengeClaims {
  const dot = token.indexOf('.');
  const payload = dot > 0 ? token.slice(0, dot) : '';
  if (payload === '' || !timingSafeEqualString(token.slice(dot + 1), mac(secret, payload)))
    throw refuse('challenge_token was not issued by this service');
  const bytes = decodeBase64url(payload);
  let claims: ChallengeClaims;
  try {
    claims = JSON.parse(Buffer.from(bytes ?? new Uint8Array()).toString('utf8')) as ChallengeClaims;
  } catch {
    throw refuse('challenge_token is malformed');
  }
  if (claims.kind !== expected.kind) throw refuse(`challenge_token was issued for ${claims.kind}, not ${expected.kind}`);
  if (claims.jti !== expected.jti) throw refuse('challenge_token was issued to another session');
  if (!(nowMs < claims.expiresAt)) throw refuse('challenge_token has expired; ask for new options');
  return claims;
}
