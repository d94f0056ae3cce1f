/**
 * The webhook signing keys (docs/protocol.md §6 "Webhooks"), a ring that
 * rotates without a gap: a new key is published at once and signs only
 * from `signs_from`, 6 minutes later, so every instance publishes it, and
 * every receiver's cached key set has it, before any webhook signed with it
 * arrives; the key it replaces stays published 7 days, for retries signed
 * before the switch and receivers slow to fetch again. Every instance reads the ring again
 * every {@link WEBHOOK_KEY_RELOAD_MS}.
 *
 * The first key was once a setting of its own (`webhook_signing_key`); the
 * ring starts from it, so a receiver that pinned it keeps verifying until
 * the first rotation. Like every migration, a part here is never edited once released.
 */
import { createHash, createPrivateKey, generateKeyPairSync, type JsonWebKey, type KeyObject } from 'node:crypto';
import type { KeyStore, Migration, StoreExecutor } from '../../platform/storage/index.js';

/** How often an instance reads the ring again. */
export const WEBHOOK_KEY_RELOAD_MS = 30_000;
/** How long a receiver may keep the published key set (its Cache-Control, src/features/connect/routes.ts). */
export const WEBHOOK_KEYS_MAX_AGE_SECONDS = 300;
/**
 * A new key signs from this long after it was made: every instance has read
 * it twice, and a receiver's cached key set has expired, so both publish it
 * before the first webhook it signs arrives.
 */
const SIGNS_AFTER_MS = WEBHOOK_KEYS_MAX_AGE_SECONDS * 1000 + 2 * WEBHOOK_KEY_RELOAD_MS;
/** How long a replaced key stays published. */
const PUBLISHED_AFTER_MS = 7 * 24 * 60 * 60 * 1000;
const WEBHOOK_KEY_SETTING = 'webhook_signing_key';

interface WebhookKeysTable {
  kid: string;
  private_jwk: string;
  created_at: number;
  signs_from: number;
}

declare module '../../platform/storage/schema.js' {
  interface DatabaseSchema {
    webhook_keys: WebhookKeysTable;
  }
}

const webhookKeys: Migration = {
  version: 26,
  name: 'webhook_keys',
  async up(db) {
    await db.schema
      .createTable('webhook_keys')
      .addColumn('kid', 'text', (column) => column.primaryKey())
      .addColumn('private_jwk', 'text', (column) => column.notNull())
      .addColumn('created_at', 'bigint', (column) => column.notNull())
      .addColumn('signs_from', 'bigint', (column) => column.notNull())
      .execute();
  },
};

export const WEBHOOK_KEY_MIGRATIONS: readonly Migration[] = [webhookKeys];

export interface WebhookKey {
  readonly kid: string;
  readonly privateKey: KeyObject;
  /** The public JWK as published. */
  readonly publicJwk: { kty: 'OKP'; crv: 'Ed25519'; x: string; kid: string; use: 'sig'; alg: 'EdDSA' };
}

/** A key of the ring and when it was made and signs from. */
export interface RingKey extends WebhookKey {
  readonly createdAt: number;
  readonly signsFrom: number;
}

export interface WebhookKeyStore {
  listWebhookKeys(): Promise<Array<{ kid: string; private_jwk: string; created_at: number; signs_from: number }>>;
  /** Adds a key; false when its kid is taken. */
  insertWebhookKey(key: { kid: string; private_jwk: string; created_at: number; signs_from: number }): Promise<boolean>;
  /** Removes the keys that stopped signing before `before` (their successor has signed since). */
  deleteWebhookKeys(kids: readonly string[]): Promise<void>;
}

export class WebhookKeysArea implements WebhookKeyStore {
  readonly #x: StoreExecutor;

  constructor(executor: StoreExecutor) {
    this.#x = executor;
  }

  async listWebhookKeys() {
    const rows = await this.#x.db.selectFrom('webhook_keys').selectAll().orderBy('signs_from').orderBy('kid').execute();
    return rows.map((row) => ({ ...row, created_at: Number(row.created_at), signs_from: Number(row.signs_from) }));
  }

  async insertWebhookKey(key: { kid: string; private_jwk: string; created_at: number; signs_from: number }): Promise<boolean> {
    const result = await this.#x.db
      .insertInto('webhook_keys')
      .values(key)
      .onConflict((conflict) => conflict.column('kid').doNothing())
      .executeTakeFirst();
    return Number(result.numInsertedOrUpdatedRows ?? 0) > 0;
  }

  async deleteWebhookKeys(kids: readonly string[]): Promise<void> {
    if (kids.length === 0) return;
    await this.#x.db
      .deleteFrom('webhook_keys')
      .where('kid', 'in', [...kids])
      .execute();
  }
}

/** A key from its private JWK; the kid is the RFC 7638 thumbprint of the public key, so it names exactly this key. */
function keyOf(privateJwk: string): WebhookKey {
  const privateKey = createPrivateKey({ key: JSON.parse(privateJwk) as JsonWebKey, format: 'jwk' });
  const { x } = privateKey.export({ format: 'jwk' }) as { x: string };
  const kid = `wh-${createHash('sha256').update(`{"crv":"Ed25519","kty":"OKP","x":"${x}"}`).digest('base64url').slice(0, 22)}`;
  return { kid, privateKey, publicJwk: { kty: 'OKP', crv: 'Ed25519', x, kid, use: 'sig', alg: 'EdDSA' } };
}

function newPrivateJwk(): string {
  return JSON.stringify(generateKeyPairSync('ed25519').privateKey.export({ format: 'jwk' }));
}

/** The ring's first key: the one the former setting holds, made and kept there when there is none. */
export async function loadWebhookKey(store: Pick<KeyStore, 'getOrCreateSetting'>): Promise<WebhookKey> {
  return keyOf(await store.getOrCreateSetting(WEBHOOK_KEY_SETTING, newPrivateJwk));
}

export interface WebhookKeyRingDeps {
  readonly store: WebhookKeyStore & Pick<KeyStore, 'getOrCreateSetting'>;
  readonly now: () => Date;
}

/** The ring as one instance knows it: what signs now, what is published. */
export class WebhookKeyRing {
  readonly #deps: WebhookKeyRingDeps;
  #keys: readonly RingKey[] = [];

  constructor(deps: WebhookKeyRingDeps) {
    this.#deps = deps;
  }

  /** Reads the ring; an empty one starts from the key of the former setting (made now when there is none). */
  async load(): Promise<void> {
    let rows = await this.#deps.store.listWebhookKeys();
    if (rows.length === 0) {
      const first = await this.#deps.store.getOrCreateSetting(WEBHOOK_KEY_SETTING, newPrivateJwk);
      const at = this.#deps.now().getTime();
      // Two instances starting at once both try; the kid is the key's own, so the second finds it there.
      await this.#deps.store.insertWebhookKey({ kid: keyOf(first).kid, private_jwk: first, created_at: at, signs_from: 0 });
      rows = await this.#deps.store.listWebhookKeys();
    }
    this.#keys = rows.map((row) => ({ ...keyOf(row.private_jwk), createdAt: row.created_at, signsFrom: row.signs_from }));
  }

  /** The key that signs at `nowMs`: the latest whose time has come (the first key when none has). */
  signing(nowMs = this.#deps.now().getTime()): RingKey {
    const started = this.#keys.filter((key) => key.signsFrom <= nowMs);
    const key = started.at(-1) ?? this.#keys[0];
    if (key === undefined) throw new Error('webhooks: the key ring was used before it was loaded');
    return key;
  }

  /** Every key a receiver may meet: the one signing, those about to, and those replaced less than 7 days ago. */
  published(nowMs = this.#deps.now().getTime()): RingKey[] {
    return this.#keys.filter((_key, index) => {
      const successor = this.#keys.slice(index + 1).find((later) => later.signsFrom <= nowMs);
      return successor === undefined || nowMs - successor.signsFrom < PUBLISHED_AFTER_MS;
    });
  }

  /** Every key of the ring, oldest first, with when it was made and signs from. */
  all(): readonly RingKey[] {
    return this.#keys;
  }

  /**
   * Makes a new key that signs 6 minutes from now, and removes the keys no
   * longer published; the kid of the new key.
   */
  async rotate(): Promise<string> {
    const nowMs = this.#deps.now().getTime();
    const privateJwk = newPrivateJwk();
    const kid = keyOf(privateJwk).kid;
    await this.#deps.store.insertWebhookKey({ kid, private_jwk: privateJwk, created_at: nowMs, signs_from: nowMs + SIGNS_AFTER_MS });
    await this.load();
    const kept = new Set(this.published(nowMs).map((key) => key.kid));
    await this.#deps.store.deleteWebhookKeys(this.#keys.filter((key) => !kept.has(key.kid)).map((key) => key.kid));
    // What was just read, less what was just deleted: no second read.
    this.#keys = this.#keys.filter((key) => kept.has(key.kid));
    return kid;
  }
}
