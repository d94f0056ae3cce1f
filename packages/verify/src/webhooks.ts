/**
 * Verifying oc-host's Connect webhooks (the host's docs/protocol.md §6
 * "Webhooks"):
 *
 *   import { createWebhookVerifier } from '@oc-host/verify';
 *   const webhooks = createWebhookVerifier({ keysUrl: 'https://auth.example.com/api/connect/webhook-keys' });
 *   const event = await webhooks.verify(rawBody, request.headers); // throws WebhookVerificationError
 *
 * - The signature (`webhook-signature: v1a,<base64>`, Ed25519) covers
 *   `<webhook-id>.<webhook-timestamp>.<raw body>`; the body must be the bytes
 *   as received, before any JSON parsing.
 * - `webhook-timestamp` must lie within `toleranceSeconds` (default 300) of
 *   now, so a captured request cannot be replayed later; within the window,
 *   deduplicate by `webhook-id` (retries of one delivery share it).
 * - Keys: the JWKS at `keysUrl` (fetched, cached, refetched once for an
 *   unknown `webhook-key-id`), or fixed ones in `keys`.
 */
import { base64url } from 'jose';
import { parsePublicJwk, staticKeySource, type KeySource, type PublicJwkInput } from './keys.js';
import { RemoteKeySet } from './remote-jwks.js';

export const DEFAULT_WEBHOOK_TOLERANCE_SECONDS = 300;
/** A webhook body larger than this is not the host's (its events are a few hundred bytes). */
const MAX_WEBHOOK_BODY_BYTES = 256 * 1024;

export type WebhookErrorCode = 'missing_header' | 'malformed' | 'stale' | 'unknown_key' | 'bad_signature';

export class WebhookVerificationError extends Error {
  readonly code: WebhookErrorCode;

  constructor(code: WebhookErrorCode, message: string) {
    super(`webhook: ${message}`);
    this.name = 'WebhookVerificationError';
    this.code = code;
  }
}

/** One event as the host sends it. */
export interface WebhookEvent {
  /** The delivery id, equal to the `webhook-id` header; retries keep it. */
  readonly id: string;
  readonly type: 'account.merged' | 'account.deleted' | 'identity.linked' | 'identity.unlinked' | (string & {});
  readonly created_at: string;
  readonly app_id: string;
  readonly data: {
    readonly did_oc: string;
    /** The app's own user ids on this account (from `POST /api/connect/provision`). */
    readonly user_ids: readonly string[];
    /** `account.merged`: the dids merged into `did_oc`. */
    readonly merged_from?: readonly string[];
    /** `identity.linked` / `identity.unlinked`: its id and kind, and the address of a Bitcoin identity. */
    readonly identity?: { readonly id: string; readonly kind: string; readonly address?: string };
  };
}

export interface WebhookVerifierOptions {
  /** The host's GET /api/connect/webhook-keys. */
  readonly keysUrl?: string;
  /** Fixed keys instead: a JWK or JWKS, as an object or JSON text. */
  readonly keys?: PublicJwkInput;
  readonly toleranceSeconds?: number;
  /** Milliseconds since the epoch; `Date.now` unless a test drives it. */
  readonly now?: () => number;
  readonly fetch?: typeof fetch;
}

export interface WebhookVerifier {
  /** The event, or a {@link WebhookVerificationError} saying why not. */
  verify(
    body: string | Uint8Array,
    headers: Headers | Readonly<Record<string, string | readonly string[] | undefined>>,
  ): Promise<WebhookEvent>;
}

function header(headers: Headers | Readonly<Record<string, string | readonly string[] | undefined>>, name: string): string {
  let value: string | readonly string[] | null | undefined;
  if (typeof (headers as Headers).get === 'function') value = (headers as Headers).get(name);
  else {
    const record = headers as Readonly<Record<string, string | readonly string[] | undefined>>;
    value = record[name] ?? Object.entries(record).find(([key]) => key.toLowerCase() === name)?.[1];
  }
  if (Array.isArray(value)) value = value[0];
  if (typeof value !== 'string' || value === '') throw new WebhookVerificationError('missing_header', `the ${name} header is missing`);
  return value;
}

export function createWebhookVerifier(options: WebhookVerifierOptions): WebhookVerifier {
  if ((options.keysUrl === undefined) === (options.keys === undefined))
    throw new TypeError('webhook verifier: give exactly one of keysUrl and keys');
  const tolerance = options.toleranceSeconds ?? DEFAULT_WEBHOOK_TOLERANCE_SECONDS;
  if (!Number.isInteger(tolerance) || tolerance < 1)
    throw new TypeError('webhook verifier: toleranceSeconds must be a whole number of seconds, at least 1');
  const now = options.now ?? Date.now;
  let source: KeySource;
  if (options.keysUrl !== undefined) {
    const url = new URL(options.keysUrl);
    if (url.protocol !== 'https:' && !['localhost', '127.0.0.1', '[::1]'].includes(url.hostname)) {
      throw new TypeError('webhook verifier: keysUrl must be https (http only on loopback)');
    }
    source = new RemoteKeySet(url.toString(), {
      fetch: options.fetch ?? fetch,
      timeoutMs: 5000,
      cooldownMs: 30_000,
      cacheMaxAgeMs: 3_600_000,
    });
  } else {
    source = staticKeySource(parsePublicJwk(options.keys, 'keys'));
  }

  return {
    async verify(body, headers) {
      const id = header(headers, 'webhook-id');
      const timestamp = header(headers, 'webhook-timestamp');
      const kid = header(headers, 'webhook-key-id');
      const signatures = header(headers, 'webhook-signature');
      const bytes = typeof body === 'string' ? new TextEncoder().encode(body) : body;
      if (bytes.length > MAX_WEBHOOK_BODY_BYTES) throw new WebhookVerificationError('malformed', 'the body is too large');
      if (!/^\d{1,12}$/.test(timestamp)) throw new WebhookVerificationError('malformed', 'webhook-timestamp is not Unix seconds');
      if (Math.abs(now() / 1000 - Number(timestamp)) > tolerance) {
        throw new WebhookVerificationError('stale', `webhook-timestamp is more than ${tolerance} seconds from now`);
      }
      const keys = (await source.candidates(kid)).filter((key) => key.kid === kid);
      if (keys.length === 0) throw new WebhookVerificationError('unknown_key', 'no published key has this webhook-key-id');
      const signed = new Uint8Array([...new TextEncoder().encode(`${id}.${timestamp}.`), ...bytes]);
      // Several signatures may be listed (space-separated) while keys change; one good one is enough.
      let verified = false;
      for (const entry of signatures.split(' ')) {
        const [version, value] = entry.split(',', 2);
        if (version !== 'v1a' || value === undefined) continue;
        let signature: Uint8Array;
        try {
          signature = base64url.decode(value.replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, ''));
        } catch {
          continue;
        }
        for (const key of keys) {
          if (await crypto.subtle.verify(key.key.algorithm, key.key, signature, signed)) verified = true;
        }
      }
      if (!verified) throw new WebhookVerificationError('bad_signature', 'the signature does not verify');
      let event: WebhookEvent;
      try {
        event = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(bytes)) as WebhookEvent;
      } catch {
        throw new WebhookVerificationError('malformed', 'the body is not JSON');
      }
      if (typeof event !== 'object' || event === null || event.id !== id)
        throw new WebhookVerificationError('malformed', "the body's id differs from webhook-id");
      return event;
    },
  };
}

/** One-off verification; prefer {@link createWebhookVerifier}, which keeps fetched keys between requests. */
export function verifyWebhook(
  body: string | Uint8Array,
  headers: Headers | Readonly<Record<string, string | readonly string[] | undefined>>,
  options: WebhookVerifierOptions,
): Promise<WebhookEvent> {
  return createWebhookVerifier(options).verify(body, headers);
}
