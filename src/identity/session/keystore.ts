/**
 * Where the signing keys and the server secret come from (docs/protocol.md §1):
 * the configured values when given, else values generated on first start and
 * kept in the database, so restarts keep sessions valid and every instance on
 * one database shares them.
 */
import { randomBytes } from 'node:crypto';
import type { KeyStore } from '../../platform/storage/index.js';
import {
  DEFAULT_KEY_OVERLAP_SECONDS,
  generateSigningKey,
  KEY_PUBLISH_LEAD_MS,
  KeyRing,
  signingKeyFromJwk,
  verificationKeyFromJwk,
  type SigningKey,
  type StoredSigningKey,
} from './keys.js';

const SERVER_SECRET_SETTING = 'server_secret';
const FIRST_KEY_SETTING = 'first_signing_key';

/** The configured secret, or the one kept in storage (created race-safely on first start). */
export async function loadServerSecret(store: KeyStore, configured: Uint8Array | undefined): Promise<Uint8Array> {
  if (configured) return configured;
  const hex = await store.getOrCreateSetting(SERVER_SECRET_SETTING, () => randomBytes(32).toString('hex'));
  return new Uint8Array(Buffer.from(hex, 'hex'));
}

async function insertKey(store: KeyStore, key: SigningKey, at: number, activatesAt = at): Promise<void> {
  await store.insertSigningKey({
    kid: key.kid,
    private_jwk: JSON.stringify(key.privateJwk),
    public_jwk: JSON.stringify(key.publicJwk),
    created_at: at,
    activated_at: activatesAt,
  });
}

/**
 * Makes sure storage holds a signing key. Two instances starting on an empty
 * database must not each mint their own: the first key is agreed through a
 * race-safe setting, then inserted (the insert is idempotent per kid).
 */
async function ensureStoredKey(store: KeyStore, now: number): Promise<void> {
  const stored = await store.listSigningKeys();
  if (stored.some((key) => key.retired_at === null || key.retired_at > now)) return;
  if (stored.length === 0) {
    const agreed = await store.getOrCreateSetting(FIRST_KEY_SETTING, () => JSON.stringify(generateSigningKey().privateJwk));
    await insertKey(store, signingKeyFromJwk(JSON.parse(agreed)), now);
    return;
  }
  // Every stored key is retired (an operator retired the last one): start a new one.
  await insertKey(store, generateSigningKey(), now);
}

/**
 * Adds a new signing key, published at once and signing from
 * {@link KEY_PUBLISH_LEAD_MS} on; older keys stay published for the overlap window.
 */
export async function rotateSigningKey(store: KeyStore, now: Date): Promise<SigningKey> {
  const key = generateSigningKey();
  // Published at once, signing once every instance has re-read the ring (KEY_PUBLISH_LEAD_MS).
  await insertKey(store, key, now.getTime(), now.getTime() + KEY_PUBLISH_LEAD_MS);
  return key;
}

/**
 * The key ring for `now`. A configured `OC_AUTH_PRIVATE_JWK` signs; stored keys
 * stay published (verification only) so cookies they signed keep verifying.
 */
export async function loadKeyRing(
  store: KeyStore,
  configuredJwk: Readonly<Record<string, unknown>> | undefined,
  now: Date,
): Promise<KeyRing> {
  const nowMs = now.getTime();
  if (!configuredJwk) await ensureStoredKey(store, nowMs);
  const rows = await store.listSigningKeys();
  const entries: StoredSigningKey[] = rows
    .filter((row) => row.activated_at <= nowMs || row.retired_at === null)
    .map((row) => ({
      key: configuredJwk ? verificationKeyFromJwk(JSON.parse(row.public_jwk)) : signingKeyFromJwk(JSON.parse(row.private_jwk)),
      createdAt: new Date(row.created_at),
      activatesAt: new Date(row.activated_at),
      retiredAt: configuredJwk
        ? new Date(Math.min(row.retired_at ?? nowMs, nowMs))
        : row.retired_at === null
          ? null
          : new Date(row.retired_at),
    }));
  if (configuredJwk) {
    const configured = signingKeyFromJwk(configuredJwk);
    entries.push({ key: configured, createdAt: new Date(nowMs + 1), retiredAt: null });
  }
  return new KeyRing(entries, { now });
}

/** Where a stored session key stands: signing, published (verifying only), published and signing from a time, or withdrawn. */
export type SessionKeyState =
  | { readonly state: 'signing' | 'published' | 'withdrawn' }
  | { readonly state: 'pending'; readonly signs_from: number };

/**
 * Every stored session key and where it stands at `now`, the one
 * `signingKid` names signing (the ring's active key: a configured
 * `OC_AUTH_PRIVATE_JWK` is never stored, so then none of these signs).
 * `oc-host keys list` and the admin API say the same.
 */
export async function sessionKeyStates(
  store: KeyStore,
  signingKid: string,
  now: number,
): Promise<Array<{ readonly kid: string; readonly created_at: number; readonly retired_at: number | null } & SessionKeyState>> {
  return (await store.listSigningKeys()).map((key) => {
    const base = { kid: key.kid, created_at: key.created_at, retired_at: key.retired_at };
    if (key.kid === signingKid) return { ...base, state: 'signing' as const };
    if (key.retired_at === null && key.activated_at > now) return { ...base, state: 'pending' as const, signs_from: key.activated_at };
    const published = key.retired_at === null || now - key.retired_at < DEFAULT_KEY_OVERLAP_SECONDS * 1000;
    return { ...base, state: published ? ('published' as const) : ('withdrawn' as const) };
  });
}
