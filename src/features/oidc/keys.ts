/**
 * The OpenID provider's signing keys (docs/protocol.md §8 "Keys"): one ring
 * per algorithm (RS256, the default every relying party supports; ES256 and
 * EdDSA for clients that ask), generated on first start and kept in storage,
 * apart from the session key and the webhook key. A rotation adds a key per
 * algorithm and retires the one it replaces; a retired key stays published
 * for {@link OIDC_KEY_OVERLAP_MS} so that ID tokens it signed, and relying
 * parties' cached copies of the JWKS, stay good.
 */
import { createHash, generateKeyPairSync, type JsonWebKey } from 'node:crypto';
import type { KeyStore } from '../../platform/storage/index.js';
import type { OidcKeyRecord, OidcStore } from './store.js';

/** The algorithms ID tokens and userinfo responses may be signed with; the first is the default. */
export const OIDC_ALGORITHMS = ['RS256', 'ES256', 'EdDSA'] as const;
export type OidcAlgorithm = (typeof OIDC_ALGORITHMS)[number];

/** How long a retired key stays in the JWKS: a week, far past an ID token's hour and any sane JWKS cache. */
const OIDC_KEY_OVERLAP_MS = 7 * 24 * 60 * 60 * 1000;

/** A private JWK as the provider library takes it: `kid`, `alg` and `use` set. */
export type OidcPrivateJwk = JsonWebKey & { readonly kid: string; readonly alg: OidcAlgorithm; readonly use: 'sig' };

/** RFC 7638 §3.2: the required members in lexicographic order, no whitespace. */
const THUMBPRINT_MEMBERS: Readonly<Record<string, readonly string[]>> = {
  RSA: ['e', 'kty', 'n'],
  EC: ['crv', 'kty', 'x', 'y'],
  OKP: ['crv', 'kty', 'x'],
};

/** The RFC 7638 thumbprint of a public key, base64url. */
function oidcKeyThumbprint(jwk: JsonWebKey): string {
  const members = THUMBPRINT_MEMBERS[String(jwk.kty)];
  if (members === undefined) throw new TypeError(`oidc keys: no thumbprint for key type ${String(jwk.kty)}`);
  const canonical = `{${members.map((name) => `${JSON.stringify(name)}:${JSON.stringify(jwk[name as keyof JsonWebKey])}`).join(',')}}`;
  return createHash('sha256').update(canonical, 'utf8').digest('base64url');
}

export function isOidcAlgorithm(value: string): value is OidcAlgorithm {
  return (OIDC_ALGORITHMS as readonly string[]).includes(value);
}

/** A fresh private key for `alg`, from the operating system's CSPRNG. */
function generateOidcKey(alg: OidcAlgorithm): OidcPrivateJwk {
  const pair =
    alg === 'RS256'
      ? generateKeyPairSync('rsa', { modulusLength: 2048 })
      : alg === 'ES256'
        ? generateKeyPairSync('ec', { namedCurve: 'P-256' })
        : generateKeyPairSync('ed25519');
  const jwk = pair.privateKey.export({ format: 'jwk' });
  return { ...jwk, kid: oidcKeyThumbprint(jwk), alg, use: 'sig' };
}

/** The stored key's JWK, checked: a row that does not parse is a broken database and throws. */
function parseStoredKey(record: OidcKeyRecord): OidcPrivateJwk {
  const parsed: unknown = JSON.parse(record.private_jwk);
  if (typeof parsed !== 'object' || parsed === null || !isOidcAlgorithm(record.alg)) {
    throw new Error(`oidc keys: stored key ${record.kid} is not a private JWK of a known algorithm`);
  }
  return { ...(parsed as JsonWebKey), kid: record.kid, alg: record.alg, use: 'sig' };
}

async function storeKey(store: OidcStore, alg: OidcAlgorithm, at: number): Promise<OidcPrivateJwk> {
  const jwk = generateOidcKey(alg);
  await store.insertOidcKey({ kid: jwk.kid, alg, private_jwk: JSON.stringify(jwk), created_at: at });
  return jwk;
}

/** The setting that holds an algorithm's first key until it is stored: what instances starting together agree on. */
function firstKeySetting(alg: OidcAlgorithm): string {
  return `oidc_first_key_${alg}`;
}

/**
 * Makes sure every algorithm has a key that signs, generating what is
 * missing. Instances starting at once on an empty database must not each
 * make their own, or for a while each would sign with a key the others do
 * not publish (docs/operations.md "Several instances behind a proxy"): an
 * algorithm's first key is agreed through an insert-if-absent setting, then
 * stored (the insert is idempotent per kid). An algorithm whose every key
 * an operator retired gets a fresh one.
 */
export async function ensureOidcKeys(store: OidcStore & Pick<KeyStore, 'getOrCreateSetting'>, at: number): Promise<void> {
  const stored = await store.listOidcKeys();
  for (const alg of OIDC_ALGORITHMS) {
    const own = stored.filter((key) => key.alg === alg);
    if (own.some((key) => key.retired_at === null)) continue;
    if (own.length > 0) {
      await storeKey(store, alg, at);
      continue;
    }
    const agreed = await store.getOrCreateSetting(firstKeySetting(alg), () => JSON.stringify(generateOidcKey(alg)));
    const jwk = parseStoredKey({ kid: '', alg, private_jwk: agreed, created_at: at, retired_at: null });
    const kid = oidcKeyThumbprint(jwk);
    await store.insertOidcKey({ kid, alg, private_jwk: JSON.stringify({ ...jwk, kid }), created_at: at });
  }
}

/**
 * `oc-host keys rotate --oidc`: a new key for every algorithm (or the one
 * given); the keys they replace are retired and stay published for the overlap.
 */
export async function rotateOidcKeys(store: OidcStore, at: number, only?: OidcAlgorithm): Promise<OidcPrivateJwk[]> {
  const before = (await store.listOidcKeys()).filter((key) => key.retired_at === null);
  const added: OidcPrivateJwk[] = [];
  for (const alg of OIDC_ALGORITHMS) {
    if (only !== undefined && alg !== only) continue;
    added.push(await storeKey(store, alg, at));
    for (const old of before.filter((key) => key.alg === alg)) await store.retireOidcKey(old.kid, at);
  }
  return added;
}

/** One key as `oc-host keys list` shows it. */
export interface OidcKeyListing {
  readonly kid: string;
  readonly alg: string;
  readonly state: 'signing' | 'published' | 'withdrawn';
  readonly created_at: number;
  readonly retired_at: number | null;
}

/**
 * The keys the provider is built with, in the order it picks from: per
 * algorithm the newest live key first (it signs), then the other live ones,
 * then keys retired less than the overlap ago (published only, to verify).
 */
export function providerKeys(records: readonly OidcKeyRecord[], now: number): OidcPrivateJwk[] {
  const published = records.filter((key) => key.retired_at === null || now - key.retired_at < OIDC_KEY_OVERLAP_MS);
  const ordered = [...published].sort(
    (a, b) =>
      Number(a.retired_at !== null) - Number(b.retired_at !== null) ||
      b.created_at - a.created_at ||
      (a.kid < b.kid ? 1 : a.kid > b.kid ? -1 : 0),
  );
  return ordered.map(parseStoredKey);
}

/** What `oc-host keys list` says of each key. */
export function listOidcKeys(records: readonly OidcKeyRecord[], now: number): OidcKeyListing[] {
  const signing = new Set(
    OIDC_ALGORITHMS.map((alg) => providerKeys(records, now).find((key) => key.alg === alg)?.kid).filter((kid) => kid !== undefined),
  );
  return records.map((key) => ({
    kid: key.kid,
    alg: key.alg,
    state:
      key.retired_at === null && signing.has(key.kid)
        ? 'signing'
        : key.retired_at === null || now - key.retired_at < OIDC_KEY_OVERLAP_MS
          ? 'published'
          : 'withdrawn',
    created_at: key.created_at,
    retired_at: key.retired_at,
  }));
}

/** A fingerprint of the published set: when it changes, the provider is rebuilt with the new keys. */
export function keySetTag(keys: readonly OidcPrivateJwk[]): string {
  return keys.map((key) => key.kid).join(',');
}
