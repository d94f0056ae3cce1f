/**
 * Ed25519 session-signing keys and the key ring the JWKS is served from.
 *
 * docs/protocol.md §3: the JWT header carries `kid`, the RFC 7638 thumbprint of the
 * public key. docs/protocol.md §1: `OC_AUTH_PRIVATE_JWK` holds the private JWK, or
 * the service generates one and stores it. Consumers verify against the public
 * JWK they hold in `OC_AUTH_PUBLIC_JWK` (docs/api.md Authentication), so a
 * rotated-out key must stay in the JWKS while tokens signed by it can still be
 * alive (see {@link KeyRing}).
 *
 * Loading a key is start-up work: a bad key is a configuration mistake and
 * throws (docs/architecture.md Errors), with a message starting `session keys:`.
 */
import { isJsonObject } from '../../platform/json.js';
import { createHash, createPrivateKey, createPublicKey, generateKeyPairSync, type KeyObject } from 'node:crypto';
import { decodeBase64url } from '../../platform/crypto.js';
import { SESSION_LIFETIME_SECONDS } from './lifetime.js';

/** The public JWK as published in the JWKS and in `OC_AUTH_PUBLIC_JWK`. */
export interface PublicJwk {
  readonly kty: 'OKP';
  readonly crv: 'Ed25519';
  readonly x: string;
  readonly kid: string;
  readonly alg: 'EdDSA';
  readonly use: 'sig';
}

/** The private JWK as stored (database or `OC_AUTH_PRIVATE_JWK`). */
interface PrivateJwk {
  readonly kty: 'OKP';
  readonly crv: 'Ed25519';
  readonly x: string;
  readonly d: string;
  readonly kid: string;
  readonly alg: 'EdDSA';
  readonly use: 'sig';
}

/** A key that can check signatures: a retired key, or one whose private half is not held here. */
export interface VerificationKey {
  readonly kid: string;
  readonly publicKey: KeyObject;
  readonly publicJwk: PublicJwk;
}

/** A key that can also sign. */
export interface SigningKey extends VerificationKey {
  readonly privateKey: KeyObject;
  readonly privateJwk: PrivateJwk;
}

/** PKCS#8 prefix of an Ed25519 private key (RFC 8410 §7); the 32-byte seed follows. */
const ED25519_PKCS8_PREFIX = Buffer.from('302e020100300506032b657004220420', 'hex');

function fail(message: string): never {
  throw new TypeError(`session keys: ${message}`);
}

/** Decodes one 32-byte key member; strict, so a key has exactly one textual form and one thumbprint. */
function keyBytes(jwk: Record<string, unknown>, member: 'x' | 'd'): Buffer {
  const text = jwk[member];
  const bytes = typeof text === 'string' ? decodeBase64url(text) : null;
  if (bytes === null) fail(`JWK member "${member}" must be unpadded, canonical base64url`);
  if (bytes.length !== 32) fail(`JWK member "${member}" must be 32 bytes, got ${bytes.length}`);
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length);
}

function asObject(jwk: unknown): Record<string, unknown> {
  if (!isJsonObject(jwk)) fail('a JWK must be a JSON object');
  return jwk;
}

/** Members a JWK may carry that, when present, must agree with an Ed25519 signing key. */
function checkCommonMembers(jwk: Record<string, unknown>): void {
  if (jwk.kty !== 'OKP' || jwk.crv !== 'Ed25519') fail('only Ed25519 keys are used (kty "OKP", crv "Ed25519")');
  // RFC 9864 names the same algorithm "Ed25519"; anything else would mislabel the key.
  if (jwk.alg !== undefined && jwk.alg !== 'EdDSA' && jwk.alg !== 'Ed25519') fail(`JWK alg must be EdDSA, got ${String(jwk.alg)}`);
  if (jwk.use !== undefined && jwk.use !== 'sig') fail(`JWK use must be "sig", got ${String(jwk.use)}`);
}

/**
 * RFC 7638 thumbprint of an Ed25519 public key: base64url SHA-256 of the
 * required members in lexicographic order, no whitespace (RFC 7638 §3.2, and
 * RFC 8037 §2 for the OKP members). `x` is base64url, so it needs no escaping.
 */
export function jwkThumbprint(x: string): string {
  return createHash('sha256').update(`{"crv":"Ed25519","kty":"OKP","x":"${x}"}`, 'utf8').digest('base64url');
}

function publicJwkFor(x: string, kid: string): PublicJwk {
  return Object.freeze({ kty: 'OKP', crv: 'Ed25519', x, kid, alg: 'EdDSA', use: 'sig' });
}

function signingKeyFromSeed(seed: Buffer, expectedX: string | undefined): SigningKey {
  // Built from the seed alone, so the public half is derived, never trusted.
  const privateKey = createPrivateKey({
    key: Buffer.concat([ED25519_PKCS8_PREFIX, seed]),
    format: 'der',
    type: 'pkcs8',
  });
  const publicKey = createPublicKey(privateKey);
  const x = publicKey.export({ format: 'jwk' }).x;
  if (typeof x !== 'string') fail('could not derive the public key');
  if (expectedX !== undefined && x !== expectedX) fail('JWK members "d" and "x" do not belong to the same key');
  const kid = jwkThumbprint(x);
  const privateJwk: PrivateJwk = Object.freeze({
    kty: 'OKP',
    crv: 'Ed25519',
    x,
    d: seed.toString('base64url'),
    kid,
    alg: 'EdDSA',
    use: 'sig',
  });
  return Object.freeze({ kid, privateKey, publicKey, publicJwk: publicJwkFor(x, kid), privateJwk });
}

/** A fresh Ed25519 signing key from the operating system's CSPRNG. */
export function generateSigningKey(): SigningKey {
  const { privateKey } = generateKeyPairSync('ed25519');
  const d = privateKey.export({ format: 'jwk' }).d;
  if (typeof d !== 'string') fail('could not export the generated key');
  return signingKeyFromSeed(keyBytes({ d }, 'd'), undefined);
}

/**
 * Loads a stored or configured private JWK. It must be Ed25519 with `d` and
 * `x`, and `x` must be the public key of `d`: a mismatch would publish a JWKS
 * that no token verifies against. A `kid` in the input is not trusted: the
 * kid is always recomputed as the thumbprint (docs/protocol.md §3), since tools that
 * generate JWKs often put a random kid there.
 */
export function signingKeyFromJwk(privateJwk: unknown): SigningKey {
  const jwk = asObject(privateJwk);
  checkCommonMembers(jwk);
  if (jwk.d === undefined) fail('a private JWK needs member "d"');
  const seed = keyBytes(jwk, 'd');
  const x = keyBytes(jwk, 'x').toString('base64url');
  return signingKeyFromSeed(seed, x);
}

/** Loads a public JWK, for a key whose private half is not held by this instance. */
export function verificationKeyFromJwk(publicJwk: unknown): VerificationKey {
  const jwk = asObject(publicJwk);
  checkCommonMembers(jwk);
  if (jwk.d !== undefined) fail('a public JWK must not carry member "d"; load it with signingKeyFromJwk');
  const x = keyBytes(jwk, 'x').toString('base64url');
  const publicKey = createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x }, format: 'jwk' });
  const kid = jwkThumbprint(x);
  return Object.freeze({ kid, publicKey, publicJwk: publicJwkFor(x, kid) });
}

/** The JSON text a consumer site puts in `OC_AUTH_PUBLIC_JWK` (docs/api.md Authentication). */
export function publicJwkForConsumers(key: VerificationKey): string {
  return JSON.stringify(key.publicJwk);
}

function isSigningKey(key: VerificationKey | SigningKey): key is SigningKey {
  return 'privateKey' in key && 'privateJwk' in key;
}

/** One key as the storage layer holds it. */
export interface StoredSigningKey {
  readonly key: SigningKey | VerificationKey;
  readonly createdAt: Date;
  /**
   * From when the key may sign; absent, from its creation. Until then it is
   * only published, so that every instance has it in its JWKS, and a
   * consumer's fetch of the JWKS finds it, before a token needs it
   * ({@link KEY_PUBLISH_LEAD_MS}).
   */
  readonly activatesAt?: Date;
  /** When the key stopped signing; null or absent while it may still sign. */
  readonly retiredAt?: Date | null;
}

/**
 * How long a rotated-in key is published before it signs: longer than the
 * minute in which every running instance re-reads the key ring, so no
 * instance signs with a key another instance does not yet publish.
 */
export const KEY_PUBLISH_LEAD_MS = 90_000;

export interface KeyRingOptions {
  /** The moment the ring describes; retirement and the overlap window are measured from it. */
  readonly now: Date;
  /**
   * How long a retired key stays published, in seconds. A token lives at most
   * one session lifetime (30 days, docs/protocol.md §3), so a shorter window would
   * strand consumers with live cookies they cannot verify. Default: 31 days.
   */
  readonly overlapSeconds?: number;
}

/** Session lifetime plus a day, so clock skew and cached JWKS copies never cut a session short. */
export const DEFAULT_KEY_OVERLAP_SECONDS = SESSION_LIFETIME_SECONDS + 24 * 60 * 60;

function millis(date: Date, what: string): number {
  const time = date instanceof Date ? date.getTime() : Number.NaN;
  if (!Number.isFinite(time)) throw new TypeError(`session keys: ${what} must be a valid Date`);
  return time;
}

/**
 * The keys the service signs and verifies with. `active` signs new tokens: the
 * key activated last that is not retired, whose private half is held and whose
 * activation time has come (ties broken by kid, so every instance reading the
 * same rows picks the same key); only when no key has come of age does the
 * newest such key sign at once (a first start).
 * `verificationKeys` (and the JWKS) hold every key that is not retired plus
 * every key retired less than the overlap window ago.
 *
 * Retiring is for routine rotation. A compromised key must not merely be
 * retired: delete it from storage and revoke its session rows (docs/performance.md
 * JWT: the session row is the source of truth on the host).
 */
export class KeyRing {
  readonly active: SigningKey;
  readonly verificationKeys: readonly VerificationKey[];
  readonly #byKid: ReadonlyMap<string, VerificationKey>;
  readonly #jwks: { readonly keys: readonly PublicJwk[] };

  constructor(stored: readonly StoredSigningKey[], options: KeyRingOptions) {
    const now = millis(options.now, 'now');
    const overlapSeconds = options.overlapSeconds ?? DEFAULT_KEY_OVERLAP_SECONDS;
    if (!Number.isFinite(overlapSeconds) || overlapSeconds < SESSION_LIFETIME_SECONDS) {
      throw new RangeError(
        `session keys: the key overlap window must be at least the session lifetime (${SESSION_LIFETIME_SECONDS} s), got ${overlapSeconds}`,
      );
    }

    const entries = stored.map((entry) => {
      const created = millis(entry.createdAt, 'createdAt');
      const retired = entry.retiredAt == null ? null : millis(entry.retiredAt, 'retiredAt');
      const activates = entry.activatesAt === undefined ? created : millis(entry.activatesAt, 'activatesAt');
      return { key: entry.key, created, activates, retired: retired !== null && retired <= now ? retired : null };
    });
    // Latest activation first, then newest, kid as the tie-break: the order of
    // the JWKS and the choice of `active` (as storage lists the keys).
    entries.sort(
      (a, b) => b.activates - a.activates || b.created - a.created || (a.key.kid < b.key.kid ? 1 : a.key.kid > b.key.kid ? -1 : 0),
    );

    const byKid = new Map<string, VerificationKey>();
    let active: SigningKey | undefined;
    let newest: SigningKey | undefined;
    for (const entry of entries) {
      const published = entry.retired === null || now - entry.retired < overlapSeconds * 1000;
      if (!published || byKid.has(entry.key.kid)) continue;
      byKid.set(entry.key.kid, entry.key);
      if (entry.retired !== null || !isSigningKey(entry.key)) continue;
      newest ??= entry.key;
      if (active === undefined && entry.activates <= now) active = entry.key;
    }
    active ??= newest;
    if (active === undefined) {
      throw new Error('session keys: no signing key that is not retired; generate one before building the key ring');
    }

    this.active = active;
    // The active key first: consumers that take keys[0] get the one that signs now.
    this.verificationKeys = Object.freeze([active, ...[...byKid.values()].filter((key) => key !== active)]);
    this.#byKid = byKid;
    this.#jwks = Object.freeze({ keys: Object.freeze(this.verificationKeys.map((key) => key.publicJwk)) });
  }

  /** A ring holding one key, active now. */
  static single(key: SigningKey): KeyRing {
    return new KeyRing([{ key, createdAt: new Date(0), retiredAt: null }], { now: new Date(0) });
  }

  /** The body of `GET /api/auth/jwks` and `/.well-known/jwks.json` (docs/api.md Session endpoints). */
  jwks(): { readonly keys: readonly PublicJwk[] } {
    return this.#jwks;
  }

  /** The published key with this kid, or undefined. */
  findByKid(kid: string): VerificationKey | undefined {
    return this.#byKid.get(kid);
  }
}
