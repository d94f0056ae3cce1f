/**
 * Connect API keys (docs/protocol.md §6: "answers its API key once ... Keys are
 * stored hashed").
 *
 * - A key is `oc_live_` + 32 bytes from the CSPRNG in base64url (256 bits):
 *   guessing one is hopeless, and the prefix lets secret scanners and people
 *   recognise a leaked key.
 * - Stored as HMAC-SHA256 under the server secret (`OC_SERVER_SECRET`,
 *   docs/protocol.md §1) with its own label, as lowercase hex. A leaked table alone
 *   then gives nothing to test guesses against; and since the hash of a
 *   256-bit random key reveals nothing about it, the key is found by an
 *   indexed equality look-up on the hash (unique index), not by scanning and
 *   comparing, so no comparison of the secret itself happens in SQL.
 * - Consequence: replacing the server secret invalidates every API key, as it
 *   does e-mail codes in flight; integrators then rotate.
 */
import { randomBytes } from 'node:crypto';
import { hmacSha256 } from '../../platform/crypto.js';

const API_KEY_PREFIX = 'oc_live_';

/** 32 random bytes are 43 base64url characters without padding. */
const API_KEY_BYTES = 32;
const API_KEY_FORMAT = /^oc_live_[A-Za-z0-9_-]{43}$/;

/** Domain separation: the server secret also keys challenge nonces, e-mail codes and OAuth state. */
const API_KEY_HASH_LABEL = 'oc-host/connect-api-key/v1';

export function generateApiKey(): string {
  return `${API_KEY_PREFIX}${randomBytes(API_KEY_BYTES).toString('base64url')}`;
}

/** True when `text` has the form of a key this service issues (checked before any hashing or look-up). */
function isApiKeyFormat(text: string): boolean {
  return API_KEY_FORMAT.test(text);
}

/** The stored form of a key: lowercase hex HMAC-SHA256 under the server secret of `label NUL key`. */
export function hashApiKey(secret: Uint8Array, apiKey: string): string {
  return Buffer.from(hmacSha256(secret, `${API_KEY_HASH_LABEL}\u0000${apiKey}`)).toString('hex');
}

/** The key of an `Authorization: Bearer <key>` header (RFC 6750 §2.1: the scheme is case-insensitive), or null. */
export function apiKeyFromAuthorization(header: string | undefined): string | null {
  if (header === undefined) return null;
  const match = /^Bearer +(\S+) *$/i.exec(header);
  const key = match?.[1];
  return key !== undefined && isApiKeyFormat(key) ? key : null;
}
