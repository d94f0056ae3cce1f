/**
 * The public keys a consumer verifies `oc_session` against (docs/api.md
 * Authentication 2): the Ed25519 public JWK of `GET /api/auth/jwks`, held in
 * the deploy-time setting `OC_AUTH_PUBLIC_JWK` as JSON or as base64url of the
 * JSON (docs/protocol.md §1 uses the same two forms for the private key).
 *
 * Only Ed25519 keys are accepted (docs/protocol.md §3: the host signs with EdDSA
 * over Ed25519). A configured key that is anything else is a setup mistake
 * and throws; a key of another type inside a fetched JWKS is skipped.
 */
import { base64url, importJWK, type CryptoKey } from 'jose';
import { AREA } from './area.js';

export type JwkObject = Readonly<Record<string, unknown>>;

/**
 * What `publicJwk` accepts: one public JWK or a JWKS (`{keys: [...]}`), as an
 * object, as JSON text, or as base64url of that JSON.
 */
export type PublicJwkInput = string | JwkObject | { readonly keys: readonly JwkObject[] };

/** The members of an Ed25519 public JWK that matter here (RFC 8037 §2). */
export interface Ed25519PublicJwk {
  readonly kty: 'OKP';
  readonly crv: 'Ed25519';
  readonly x: string;
  readonly kid?: string;
}

/** A verification key and the kid it answers to (undefined: it answers to any kid). */
export interface ImportedKey {
  readonly kid: string | undefined;
  readonly key: CryptoKey;
}

/** Where the verifier finds the keys for a token's `kid`. */
export interface KeySource {
  /** Keys that may have signed a token with this header kid; empty when none is known. */
  candidates(kid: string | undefined): Promise<readonly ImportedKey[]>;
}

/** A token without a kid is tried against at most this many keys. */
const MAX_CANDIDATE_KEYS = 8;

/**
 * Why a JWK is not a usable Ed25519 public key, or null when it is. The
 * reasons end up in setup error messages, never in answers about tokens.
 */
export function ed25519JwkProblem(jwk: unknown): string | null {
  if (typeof jwk !== 'object' || jwk === null || Array.isArray(jwk)) return 'a JWK must be a JSON object';
  const members = jwk as JwkObject;
  if (members.d !== undefined) return 'the JWK holds a private key (member "d"); give the public JWK only';
  if (members.kty !== 'OKP' || members.crv !== 'Ed25519') return 'only Ed25519 keys verify oc_session (kty "OKP", crv "Ed25519")';
  // RFC 9864 names the same algorithm "Ed25519"; anything else would mislabel the key.
  if (members.alg !== undefined && members.alg !== 'EdDSA' && members.alg !== 'Ed25519')
    return `the JWK's alg must be EdDSA, got ${String(members.alg)}`;
  if (members.use !== undefined && members.use !== 'sig') return `the JWK's use must be "sig", got ${String(members.use)}`;
  if (members.kid !== undefined && (typeof members.kid !== 'string' || members.kid.length === 0))
    return "the JWK's kid must be a non-empty string";
  const x = members.x;
  if (typeof x !== 'string' || !/^[A-Za-z0-9_-]{43}$/.test(x)) return 'member "x" must be 32 bytes of unpadded base64url';
  // Canonical form only: a key has exactly one text, so kids and comparisons stay meaningful.
  if (base64url.encode(base64url.decode(x)) !== x) return 'member "x" is not canonical base64url';
  return null;
}

function ed25519Jwk(jwk: JwkObject): Ed25519PublicJwk {
  const kid = jwk.kid as string | undefined;
  return kid === undefined ? { kty: 'OKP', crv: 'Ed25519', x: jwk.x as string } : { kty: 'OKP', crv: 'Ed25519', x: jwk.x as string, kid };
}

/** Imports a checked key for EdDSA verification (WebCrypto, so any runtime jose runs on works). */
export async function importEd25519(jwk: Ed25519PublicJwk): Promise<ImportedKey> {
  const key = await importJWK({ kty: jwk.kty, crv: jwk.crv, x: jwk.x }, 'EdDSA');
  // importJWK gives a Uint8Array only for symmetric keys, which an OKP JWK never is.
  return { kid: jwk.kid, key: key as CryptoKey };
}

function decodeKeyText(text: string): unknown {
  const trimmed = text.trim();
  if (trimmed === '') throw new TypeError(`${AREA}: publicJwk is empty`);
  if (trimmed.startsWith('{')) {
    try {
      return JSON.parse(trimmed);
    } catch {
      throw new TypeError(`${AREA}: publicJwk looks like JSON but does not parse`);
    }
  }
  // OC_AUTH_PUBLIC_JWK's second form: base64url of the JSON (standard base64 is accepted too).
  if (!/^[A-Za-z0-9_\-+/]+={0,2}$/.test(trimmed))
    throw new TypeError(`${AREA}: publicJwk must be a JWK as JSON or as base64url of the JSON`);
  try {
    return JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(base64url.decode(trimmed.replace(/=+$/, ''))));
  } catch {
    throw new TypeError(`${AREA}: publicJwk is neither JSON nor base64url of JSON`);
  }
}

/**
 * Checks a configured `publicJwk` (or `OC_AUTH_PUBLIC_JWK`) and returns its
 * keys. Throws a TypeError naming the problem: a bad key is misconfiguration.
 */
export function parsePublicJwk(input: unknown, what = 'publicJwk'): Ed25519PublicJwk[] {
  const value = typeof input === 'string' ? decodeKeyText(input) : input;
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw new TypeError(`${AREA}: ${what} must be a JWK or a JWKS object`);
  const members = value as JwkObject;
  const list = members.keys !== undefined ? members.keys : [members];
  if (!Array.isArray(list) || list.length === 0) throw new TypeError(`${AREA}: ${what} holds no key`);
  if (list.length > MAX_CANDIDATE_KEYS) throw new TypeError(`${AREA}: ${what} holds more than ${MAX_CANDIDATE_KEYS} keys`);
  return list.map((jwk: unknown, index) => {
    const problem = ed25519JwkProblem(jwk);
    if (problem !== null) throw new TypeError(`${AREA}: ${what}${list.length > 1 ? ` key ${index}` : ''}: ${problem}`);
    return ed25519Jwk(jwk as JwkObject);
  });
}

/** The keys a token's kid may refer to: the matching kid, and keys that carry none. */
export function matchingKeys(keys: readonly ImportedKey[], kid: string | undefined): ImportedKey[] {
  const found = kid === undefined ? [...keys] : keys.filter((key) => key.kid === undefined || key.kid === kid);
  return found.slice(0, MAX_CANDIDATE_KEYS);
}

/** A fixed set of keys (the `publicJwk` option); imported once, on first use. */
export function staticKeySource(jwks: readonly Ed25519PublicJwk[]): KeySource {
  let imported: Promise<ImportedKey[]> | undefined;
  return {
    async candidates(kid) {
      imported ??= Promise.all(jwks.map(importEd25519));
      return matchingKeys(await imported, kid);
    },
  };
}
