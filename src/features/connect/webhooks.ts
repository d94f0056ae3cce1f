/**
 * Webhooks for Connect apps (docs/protocol.md §6 "Webhooks"): the signing
 * key, the endpoint rule, and the worker that empties the outbox.
 *
 * - Signing: Ed25519 with a key of its own (never the session key), kept in
 *   the database as a storage setting and published with its own `kid` at
 *   GET /api/connect/webhook-keys. Each request carries `webhook-id`,
 *   `webhook-timestamp` (Unix seconds of this attempt), `webhook-key-id`, and
 *   `webhook-signature: v1a,<base64 signature>` over
 *   `<webhook-id>.<webhook-timestamp>.<body>` (the layout of the Standard
 *   Webhooks specification, whose `v1a` names Ed25519).
 * - Endpoints: https; http only on a loopback host when the service itself
 *   runs on http on loopback (development). No credentials in the URL. An
 *   IP address in the URL is checked when the endpoint is set, and at
 *   delivery every address the host name resolves to is checked again:
 *   addresses that are not globally reachable (src/features/connect/addresses.ts) are
 *   refused unless `WEBHOOK_ALLOW_PRIVATE` (or development, for loopback), so
 *   an endpoint cannot reach the service's own network.
 * - Delivery: every instance runs a worker. It claims due rows by their lease
 *   (webhook-store.ts), POSTs each with a timeout, follows no redirect,
 *   and counts any 2xx as delivered. Otherwise it retries after
 *   `WEBHOOK_RETRY_SECONDS × 3^(attempt−1)` (±20%, at most 6 hours) and gives
 *   up after {@link MAX_WEBHOOK_ATTEMPTS} attempts. A kill -9 mid-delivery
 *   loses nothing: the lease runs out and another worker sends it again, so
 *   receivers may see a delivery twice and deduplicate by `webhook-id`.
 */
import { randomInt, sign } from 'node:crypto';
import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { isIP } from 'node:net';
import { OcError } from '../../platform/errors.js';
import { type OutboxAttempt, OutboxWorker, type SendResult } from '../../platform/outbox-worker.js';
import { isGloballyReachable, isLoopbackAddress } from './addresses.js';
import type { WebhookKey, WebhookKeyRing } from './webhook-keys.js';
import type { ClaimedWebhookDelivery, WebhookStore } from './store.js';
import { VERSION } from '../../platform/version.js';

const MAX_WEBHOOK_ATTEMPTS = 10;
const MAX_WEBHOOK_BACKOFF_MS = 6 * 60 * 60 * 1000;
const MAX_WEBHOOK_URL_LENGTH = 2048;
/** Deliveries a worker sends at once. */
const PARALLEL = 4;

// ---- the signing key (webhook-keys.ts) ----

/** The headers of one attempt: id, timestamp, key id and the signature over `id.timestamp.body`. */
export function signWebhook(key: WebhookKey, id: string, timestampSeconds: number, body: string): Record<string, string> {
  const signature = sign(null, Buffer.from(`${id}.${timestampSeconds}.${body}`, 'utf8'), key.privateKey).toString('base64');
  return {
    'webhook-id': id,
    'webhook-timestamp': String(timestampSeconds),
    'webhook-key-id': key.kid,
    'webhook-signature': `v1a,${signature}`,
  };
}

// ---- endpoints ----

export interface EndpointRules {
  /** The service runs on http on loopback: http endpoints on loopback are allowed, and loopback addresses. */
  readonly development: boolean;
  /** `WEBHOOK_ALLOW_PRIVATE`: private, loopback and link-local addresses are allowed. */
  readonly allowPrivate: boolean;
}

function isLoopbackHost(hostname: string): boolean {
  const bare = hostname.replace(/^\[|\]$/g, '');
  return bare === 'localhost' || bare.endsWith('.localhost') || isLoopbackAddress(bare);
}

/** True when PUBLIC_URL is http on a loopback host: the service runs on a developer's machine. */
export function isDevelopmentUrl(publicUrl: string): boolean {
  const url = new URL(publicUrl);
  return url.protocol === 'http:' && isLoopbackHost(url.hostname);
}

/** The endpoint as stored, or 400 `invalid_webhook_url` saying why not. */
export function checkWebhookUrl(raw: string, rules: EndpointRules): string {
  const refuse = (why: string): never => {
    throw new OcError('invalid_webhook_url', `webhook: ${why}`);
  };
  if (raw.length > MAX_WEBHOOK_URL_LENGTH) refuse(`the URL is longer than ${MAX_WEBHOOK_URL_LENGTH} characters`);
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return refuse('not an absolute URL');
  }
  if (url.username !== '' || url.password !== '') refuse('no user name or password in the URL; the signature authenticates the sender');
  if (url.hash !== '') refuse('no #fragment');
  if (url.protocol === 'http:') {
    if (!(rules.development && isLoopbackHost(url.hostname)))
      refuse('must use https (http only for a loopback host while the service runs on loopback)');
  } else if (url.protocol !== 'https:') {
    refuse('must use https');
  }
  // The URL parser has normalised the host (127.1 is 127.0.0.1 here); a name is checked when it is resolved.
  const host = url.hostname.replace(/^\[|\]$/g, '');
  if (isIP(host) !== 0 && !addressAllowed(host, rules)) {
    refuse('the address is not globally reachable (private, loopback, link-local or another special-purpose range)');
  }
  return url.toString();
}

/** Whether a delivery may connect to `address` (an IP literal); anything else is refused. */
export function addressAllowed(address: string, rules: EndpointRules): boolean {
  if (isIP(address) === 0) return false;
  if (rules.allowPrivate) return true;
  if (isLoopbackAddress(address)) return rules.development;
  return isGloballyReachable(address);
}

// ---- the worker ----

export interface WebhookDispatcherDeps {
  readonly store: WebhookStore;
  readonly key: () => WebhookKey;
  readonly rules: EndpointRules;
  readonly now: () => Date;
  readonly timeoutMs: number;
  readonly retryBaseMs: number;
  /** How often the worker looks for due deliveries. */
  readonly pollMs: number;
  readonly onError: (error: unknown) => void;
  /** Resolves a host name to all its addresses; node:dns `lookup` unless a test answers instead. */
  readonly lookup?: (
    hostname: string,
    options: { all: true; family?: number; hints?: number },
    callback: (error: NodeJS.ErrnoException | null, addresses: LookupAddress[]) => void,
  ) => void;
  /** One line per finished attempt, for the log: never the payload or the URL's query. */
  readonly onAttempt?: (entry: {
    id: string;
    app_id: string;
    outcome: string;
    status: number | null;
    error: string | null;
    attempts: number;
  }) => void;
}

export interface AttemptResult {
  readonly status: number | null;
  readonly error: string | null;
}

class RefusedAddress extends Error {
  readonly code = 'refused_address';
}

/** Backoff before attempt `attempts + 1`, after `attempts` failed ones. */
export function webhookBackoffMs(attempts: number, baseMs: number): number {
  const plain = Math.min(MAX_WEBHOOK_BACKOFF_MS, baseMs * 3 ** Math.max(0, attempts - 1));
  const jitter = plain * 0.2 * (randomInt(0, 2001) / 1000 - 1);
  return Math.max(baseMs, Math.round(plain + jitter));
}

export class WebhookDispatcher extends OutboxWorker<ClaimedWebhookDelivery> {
  readonly #deps: WebhookDispatcherDeps;

  constructor(deps: WebhookDispatcherDeps) {
    super(deps, {
      claim: (...claim) => deps.store.claimWebhookDeliveries(...claim),
      finish: (...finish) => deps.store.finishWebhookAttempt(...finish),
      parallel: PARALLEL,
      maxAttempts: MAX_WEBHOOK_ATTEMPTS,
      backoffMs: (attempts) => webhookBackoffMs(attempts, deps.retryBaseMs),
    });
    this.#deps = deps;
  }

  protected async send(delivery: ClaimedWebhookDelivery): Promise<SendResult> {
    // An app without an endpoint any more: nothing a retry can mend.
    return delivery.url === null ? { status: null, error: 'no_endpoint', final: true } : this.#post(delivery, delivery.url);
  }

  protected attempted(delivery: ClaimedWebhookDelivery, { outcome, status, error, attempts }: OutboxAttempt & { attempts: number }): void {
    this.#deps.onAttempt?.({ id: delivery.id, app_id: delivery.app_id, outcome, status, error, attempts });
  }

  #post(delivery: ClaimedWebhookDelivery, endpoint: string): Promise<AttemptResult> {
    const body = delivery.payload;
    const headers = {
      ...signWebhook(this.#deps.key(), delivery.id, Math.floor(this.#deps.now().getTime() / 1000), body),
      'content-type': 'application/json',
      'content-length': String(Buffer.byteLength(body)),
      'user-agent': `oc-host-webhooks/${VERSION}`,
    };
    return postToEndpoint(endpoint, body, headers, {
      rules: this.#deps.rules,
      timeoutMs: this.#deps.timeoutMs,
      ...(this.#deps.lookup === undefined ? {} : { lookup: this.#deps.lookup }),
    });
  }
}

/** Resolves a host name to all its addresses (node:dns `lookup`, or a test's). */
export type EndpointLookup = (
  hostname: string,
  options: { all: true; family?: number; hints?: number },
  callback: (error: NodeJS.ErrnoException | null, addresses: LookupAddress[]) => void,
) => void;

/**
 * One POST to an endpoint under the endpoint rules (webhooks, and the
 * provider's back-channel logouts, docs/protocol.md §8 "Logout"): every
 * address the name resolves to is checked before connecting, no redirect is
 * followed, the attempt ends at `timeoutMs`, and any 2xx is success. The
 * result is a status and a short error code (`refused_address`, `dns`,
 * `tls`, `connect`, `timeout`, `http_<status>`), or null on success.
 */
export function postToEndpoint(
  endpoint: string,
  body: string,
  headers: Readonly<Record<string, string>>,
  options: { readonly rules: EndpointRules; readonly timeoutMs: number; readonly lookup?: EndpointLookup },
): Promise<AttemptResult> {
  const url = new URL(endpoint);
  const { rules, timeoutMs } = options;
  const host = url.hostname.replace(/^\[|\]$/g, '');
  if (isIP(host) !== 0 && !addressAllowed(host, rules)) return Promise.resolve({ status: null, error: 'refused_address' });
  // Names are resolved here so every address is checked before connecting.
  const resolveName = options.lookup ?? dnsLookup;
  const lookup = (hostname: string, asked: object, callback: (...args: unknown[]) => void) => {
    resolveName(hostname, { ...asked, all: true }, (error, addresses) => {
      if (error) return callback(error);
      const allowed = addresses.filter((entry) => addressAllowed(entry.address, rules));
      if (allowed.length === 0) return callback(new RefusedAddress('webhook: the endpoint resolves to a refused address'));
      if ((asked as { all?: boolean }).all) return callback(null, allowed);
      return callback(null, allowed[0]!.address, allowed[0]!.family);
    });
  };
  return new Promise((resolve) => {
    let settled = false;
    const finish = (result: AttemptResult) => {
      if (settled) return;
      settled = true;
      resolve(result);
    };
    const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
    const outgoing = send(url, { method: 'POST', headers, lookup: lookup as never, timeout: timeoutMs }, (response: IncomingMessage) => {
      const status = response.statusCode ?? 0;
      // The body is not needed; read a little and let go.
      let read = 0;
      response.on('data', (chunk: Buffer) => {
        read += chunk.length;
        if (read > 65_536) response.destroy();
      });
      response.on('end', () => finish({ status, error: status >= 200 && status < 300 ? null : `http_${status}` }));
      response.on('error', () => finish({ status, error: status >= 200 && status < 300 ? null : `http_${status}` }));
      response.on('close', () => finish({ status, error: status >= 200 && status < 300 ? null : `http_${status}` }));
    });
    const deadline = setTimeout(() => {
      finish({ status: null, error: 'timeout' });
      outgoing.destroy();
    }, timeoutMs);
    deadline.unref();
    outgoing.on('timeout', () => {
      finish({ status: null, error: 'timeout' });
      outgoing.destroy();
    });
    outgoing.on('error', (error: NodeJS.ErrnoException) => {
      clearTimeout(deadline);
      if (error instanceof RefusedAddress) finish({ status: null, error: 'refused_address' });
      else if (error.code === 'ENOTFOUND' || error.code === 'EAI_AGAIN') finish({ status: null, error: 'dns' });
      else if (typeof error.code === 'string' && /CERT|SSL|TLS/.test(error.code)) finish({ status: null, error: 'tls' });
      else finish({ status: null, error: 'connect' });
    });
    outgoing.on('close', () => clearTimeout(deadline));
    outgoing.end(body);
  });
}

declare module '../../platform/services.js' {
  interface FeatureServices {
    /** The keys that sign Connect webhooks, and the one that signs now. */
    readonly webhookKeys: WebhookKeyRing;
  }
}
