/**
 * The short-lived state of one provider sign-in, carried between `start` and
 * `callback` in an HttpOnly cookie (docs/protocol.md §6 "Providers": state, nonce
 * and PKCE verifier are kept "in a short-lived signed HttpOnly cookie").
 *
 * The cookie is sealed with AES-256-GCM, not only MACed: the PKCE verifier
 * is the one secret that makes a stolen authorization code useless
 * (RFC 7636 §1), so even the browser that holds the cookie cannot read it.
 * The key is derived from the server secret with HKDF under its own label, so
 * it never equals the key of the challenge MAC or the e-mail code hashes that
 * share `OC_SERVER_SECRET` (docs/protocol.md §1).
 *
 * A cookie is a bearer value the browser can replay, so every sealed state
 * also carries a random id that the callback consumes exactly once
 * ({@link ConsumedStates} in memory, plus the shared store when given).
 */
import { isJsonObject } from '../../platform/json.js';
import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';
import { decodeBase64url } from '../../platform/crypto.js';

/** Name the route sets the cookie under (Path=/api/auth, HttpOnly, Secure, SameSite=Lax). */
export const OAUTH_STATE_COOKIE_NAME = 'oc_oauth';
/** Ten minutes: long enough for a consent screen, short enough to bound replay memory. */
export const OAUTH_STATE_TTL_SECONDS = 600;

const KEY_LABEL = 'oc-host/oauth-state-cookie/v1';
const VERSION_PREFIX = 'v1.';
const IV_BYTES = 12;
const TAG_BYTES = 16;
/** Browsers keep about 4 KiB per cookie; anything longer was not written by us. */
const MAX_COOKIE_LENGTH = 4096;

export interface OAuthState {
  /** 32 lowercase hex, random; the single-use key of this sign-in. */
  readonly stateId: string;
  readonly provider: string;
  /** The `state` parameter sent to the provider (RFC 6749 §10.12). */
  readonly state: string;
  /** The OIDC `nonce` (OIDC Core §3.1.2.1); absent for plain OAuth 2 providers. */
  readonly nonce: string | undefined;
  /** The PKCE `code_verifier` (RFC 7636 §4.1). */
  readonly codeVerifier: string;
  readonly returnTo: string;
  readonly add: boolean;
  /** Unix milliseconds after which the state is refused. */
  readonly expiresAt: number;
}

/** AES-256-GCM key for the state cookie, derived once per registry. */
export function deriveStateKey(secret: Uint8Array): Buffer {
  return Buffer.from(hkdfSync('sha256', secret, new Uint8Array(0), KEY_LABEL, 32));
}

export function sealState(key: Buffer, state: OAuthState): string {
  const payload = JSON.stringify({
    v: 1,
    i: state.stateId,
    p: state.provider,
    s: state.state,
    n: state.nonce ?? null,
    c: state.codeVerifier,
    r: state.returnTo,
    a: state.add,
    x: state.expiresAt,
  });
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  cipher.setAAD(Buffer.from(KEY_LABEL, 'utf8'));
  const body = Buffer.concat([cipher.update(payload, 'utf8'), cipher.final()]);
  return VERSION_PREFIX + Buffer.concat([iv, body, cipher.getAuthTag()]).toString('base64url');
}

/**
 * The state in `value`, or undefined when it was not sealed by this key, was
 * altered, or is not in the expected shape. Expiry is the caller's check, so
 * that it uses the injected clock.
 */
export function openState(key: Buffer, value: string | undefined): OAuthState | undefined {
  if (typeof value !== 'string' || value.length > MAX_COOKIE_LENGTH || !value.startsWith(VERSION_PREFIX)) {
    return undefined;
  }
  const encoded = value.slice(VERSION_PREFIX.length);
  const bytes = decodeBase64url(encoded);
  if (bytes === null) return undefined;
  const raw = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (raw.length <= IV_BYTES + TAG_BYTES) return undefined;
  let plain: string;
  try {
    const decipher = createDecipheriv('aes-256-gcm', key, raw.subarray(0, IV_BYTES));
    decipher.setAAD(Buffer.from(KEY_LABEL, 'utf8'));
    decipher.setAuthTag(raw.subarray(raw.length - TAG_BYTES));
    plain = Buffer.concat([decipher.update(raw.subarray(IV_BYTES, raw.length - TAG_BYTES)), decipher.final()]).toString('utf8');
  } catch {
    // GCM tag mismatch: tampered, truncated, or sealed under another secret.
    return undefined;
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(plain);
  } catch {
    return undefined;
  }
  if (!isJsonObject(parsed)) return undefined;
  const fields = parsed;
  if (
    fields.v !== 1 ||
    typeof fields.i !== 'string' ||
    !/^[0-9a-f]{32}$/.test(fields.i) ||
    typeof fields.p !== 'string' ||
    typeof fields.s !== 'string' ||
    !(fields.n === null || typeof fields.n === 'string') ||
    typeof fields.c !== 'string' ||
    typeof fields.r !== 'string' ||
    typeof fields.a !== 'boolean' ||
    typeof fields.x !== 'number' ||
    !Number.isSafeInteger(fields.x)
  ) {
    return undefined;
  }
  return {
    stateId: fields.i,
    provider: fields.p,
    state: fields.s,
    nonce: fields.n ?? undefined,
    codeVerifier: fields.c,
    returnTo: fields.r,
    add: fields.a,
    expiresAt: fields.x,
  };
}

/**
 * State ids already used by a callback on this instance, each kept until its
 * state would have expired anyway. Bounded: past `maxEntries` the oldest are
 * forgotten, which is safe only because the shared store (when configured)
 * still refuses them; the bound keeps a flood of callbacks from growing memory
 * without limit.
 */
export class ConsumedStates {
  readonly #expiries = new Map<string, number>();
  readonly #maxEntries: number;

  constructor(maxEntries = 10_000) {
    this.#maxEntries = maxEntries;
  }

  /** True when `stateId` was not consumed before (and is now); false on a replay. */
  consume(stateId: string, expiresAt: number, nowMs: number): boolean {
    this.#purge(nowMs);
    const known = this.#expiries.get(stateId);
    if (known !== undefined && known > nowMs) return false;
    this.#expiries.delete(stateId);
    this.#expiries.set(stateId, expiresAt);
    while (this.#expiries.size > this.#maxEntries) {
      const oldest = this.#expiries.keys().next();
      if (oldest.done === true) break;
      this.#expiries.delete(oldest.value);
    }
    return true;
  }

  /** Whether `stateId` is remembered as consumed (tests and diagnostics). */
  has(stateId: string, nowMs: number): boolean {
    const known = this.#expiries.get(stateId);
    return known !== undefined && known > nowMs;
  }

  get size(): number {
    return this.#expiries.size;
  }

  /**
   * Entries are inserted roughly in expiry order (every state lives the same
   * ten minutes), so expired ones sit at the front; stop at the first live one.
   */
  #purge(nowMs: number): void {
    for (const [stateId, expiresAt] of this.#expiries) {
      if (expiresAt > nowMs) break;
      this.#expiries.delete(stateId);
    }
  }
}
