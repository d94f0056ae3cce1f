/**
 * A small typed client for the host's public routes (docs/api.md
 * "Attestation routes" and "Signed challenge"; no authentication needed):
 *
 *   const oc = createOcClient({ baseUrl: 'https://auth.example.com' });
 *   const result = await oc.check({ addr, minSats: 100_000, minDays: 30 });
 *   if (result.ok) ...
 *
 * - A 429 is retried after `Retry-After` (seconds or an HTTP date; else the
 *   body's `retry_after_seconds`, else a short backoff), at most `maxRetries`
 *   times. A wait longer than `maxRetryDelayMs` is not shortened (an early
 *   retry would only be refused again): the call fails at once with
 *   `rate_limited` and the server's `retryAfterSeconds`.
 * - Any other non-2xx answer throws {@link OcClientError} with the code of the
 *   error body (docs/protocol.md §4: `error` and `reason` both carry it). Two
 *   answers are results, not errors: /api/check's 404 `not_found` and the
 *   `{ok: false, ...}` bodies of 200 answers.
 */
import { AREA } from './area.js';

// ---- result types (docs/api.md "Resources and their fields", docs/protocol.md §7) ----

export interface AttestationIdentity {
  readonly protocol: string;
  readonly identifier: string;
}

/** Exactly one of `addr`, `id`, `identity` (docs/api.md "GET /api/check"). */
export type Subject =
  | { readonly addr: string; readonly id?: undefined; readonly identity?: undefined }
  | { readonly id: string; readonly addr?: undefined; readonly identity?: undefined }
  | { readonly identity: string; readonly addr?: undefined; readonly id?: undefined };

export type CheckParams = Subject & {
  /** Minimum confirmed sats bonded; default 0. */
  readonly minSats?: number | undefined;
  /** Minimum age in days; default 0. */
  readonly minDays?: number | undefined;
};

/** 200 of /api/check: `ok` is true when the attestation verifies and every threshold is met. */
export interface CheckResult {
  readonly ok: boolean;
  readonly sats: number;
  readonly days: number;
  readonly score: number;
  /** sha256 of the attestation message, 64 hex. */
  readonly attestation_id: string;
  readonly address: string;
  readonly identities: readonly AttestationIdentity[];
  readonly network: string;
  /** Verification status codes (docs/api.md "Verification status codes"). */
  readonly codes?: readonly string[];
  /** When `ok` is false: `below_min_sats`, `below_min_days`, `chain_unavailable`, ... */
  readonly reasons?: readonly string[];
  readonly issued_at?: string;
  readonly expires_at?: string;
}

/** 404 of /api/check: no attestation of the subject verifies. */
export interface CheckNotFound {
  readonly ok: false;
  readonly reasons: readonly string[];
  /** Attestations found that did not verify, with their codes. */
  readonly rejected?: ReadonlyArray<{ readonly attestation_id: string; readonly address: string; readonly codes: readonly string[] }>;
}

export type CheckResponse = CheckResult | CheckNotFound;

/** True when a check answer is the 404 `not_found` body. */
export function isNotFound(result: CheckResponse): result is CheckNotFound {
  return !('attestation_id' in result) && result.reasons.includes('not_found');
}

export interface VerifyParams {
  readonly addr: string;
  /** The canonical attestation message (docs/protocol.md §7). */
  readonly msg: string;
  /** base64 (or hex for BIP-322). */
  readonly sig: string;
  /** `bip322` or `legacy`; detected when absent. */
  readonly scheme?: string | undefined;
}

/** 200 of /api/verify: the check result without the policy fields, with codes and metrics. */
export interface VerifyResult {
  readonly ok: boolean;
  readonly codes: readonly string[];
  readonly address: string;
  readonly attestation_id: string;
  readonly identities: readonly AttestationIdentity[];
  readonly network: string;
  readonly sats: number;
  readonly days: number;
  readonly score: number;
  readonly metrics?: { readonly sats_bonded: number; readonly days_unspent: number; readonly score: number };
  readonly issued_at?: string;
  readonly expires_at?: string;
}

export type DiscoverParams = Subject & {
  /** Most envelopes returned, 1 to 200; default 50. */
  readonly limit?: number | undefined;
};

/** An attestation envelope as stored on the relays (docs/protocol.md §7 "Relay envelopes"). */
export interface AttestationEnvelope {
  readonly attestation_id: string;
  readonly scheme: string;
  readonly address: string;
  readonly identities: readonly AttestationIdentity[];
  readonly message: string;
  readonly message_b64url?: string;
  readonly signature: string;
  readonly issued_at: string;
  readonly expires_at?: string;
  readonly relay_hints?: readonly string[];
  readonly [field: string]: unknown;
}

export interface DiscoverResult {
  readonly count: number;
  readonly total: number;
  /** Newest `issued_at` first. */
  readonly attestations: readonly AttestationEnvelope[];
  /** `relays_unavailable` when no relay answered. */
  readonly warnings?: readonly string[];
  readonly relays_answered?: number;
  readonly relays_queried?: number;
}

export interface ChallengeParams {
  readonly addr: string;
  /** Where the proof will be used, e.g. a URL; the host's `PUBLIC_URL` when absent. */
  readonly audience?: string | undefined;
  /** `login` for sign-in, and when absent; name your own for any other flow (docs/protocol.md §5). */
  readonly purpose?: string | undefined;
  /** Time to live, 30 to 3600 s; default 300. */
  readonly ttlSeconds?: number | undefined;
}

export interface Challenge {
  /** The text the user signs. */
  readonly message: string;
  readonly nonce: string;
  /** ISO 8601 UTC with milliseconds. */
  readonly expiresAt: string;
  /** The same instant in milliseconds since the epoch. */
  readonly expiresAtMs: number;
}

export interface VerifyChallengeParams {
  readonly message: string;
  readonly signature: string;
  readonly expectedNonce: string;
  readonly expectedAudience?: string | undefined;
  readonly expectedPurpose?: string | undefined;
}

/**
 * POST /api/challenge. On success the caller must still make sure the nonce
 * is used once (docs/api.md: "The caller must prevent nonce replay").
 */
export type ChallengeVerification =
  | {
      readonly ok: true;
      readonly address: string;
      readonly nonce: string;
      /** Milliseconds since the epoch. */
      readonly expiresAt: number;
      readonly expiresAtIso: string;
      readonly audience?: string;
      readonly purpose?: string;
    }
  | { readonly ok: false; readonly reason: 'invalid_challenge'; readonly codes?: readonly string[] };

// ---- errors ----

/**
 * Codes a caller may meet: the host's (docs/protocol.md §4, docs/errors.md) and
 * the client's own (`network_error`, `timeout`, `invalid_response`).
 */
export type OcClientErrorCode =
  | 'bad_request'
  | 'rate_limited'
  | 'relays_unavailable'
  | 'payload_too_large'
  | 'unsupported_media_type'
  | 'internal_error'
  | 'not_ready'
  | 'network_error'
  | 'timeout'
  | 'invalid_response'
  | (string & {});

export class OcClientError extends Error {
  /** HTTP status; 0 when no answer arrived. */
  readonly status: number;
  readonly code: OcClientErrorCode;
  readonly detail: string | undefined;
  /** The parsed error body, when there was one. */
  readonly body: unknown;
  /** For `rate_limited`: how long the server asked to wait. */
  readonly retryAfterSeconds: number | undefined;

  constructor(init: {
    status: number;
    code: OcClientErrorCode;
    detail?: string | undefined;
    body?: unknown;
    retryAfterSeconds?: number | undefined;
    cause?: unknown;
  }) {
    super(`${AREA} client: ${init.code}${init.status > 0 ? ` (HTTP ${init.status})` : ''}${init.detail ? `: ${init.detail}` : ''}`, {
      cause: init.cause,
    });
    this.name = 'OcClientError';
    this.status = init.status;
    this.code = init.code;
    this.detail = init.detail;
    this.body = init.body;
    this.retryAfterSeconds = init.retryAfterSeconds;
  }
}

export function isOcClientError(value: unknown): value is OcClientError {
  return value instanceof OcClientError;
}

// ---- the client ----

export interface OcClientOptions {
  /** The host's base URL (its `PUBLIC_URL`); a path prefix is kept. */
  readonly baseUrl: string | URL;
  /** default the global fetch. */
  readonly fetch?: typeof fetch | undefined;
  /** Retries after a 429; default 2, at most 10. */
  readonly maxRetries?: number | undefined;
  /** Longest wait before a retry, ms; default 10 000. */
  readonly maxRetryDelayMs?: number | undefined;
  /** Deadline of each attempt, ms; default 10 000. */
  readonly timeoutMs?: number | undefined;
  /** Extra request headers (e.g. a User-Agent naming your site). */
  readonly headers?: Readonly<Record<string, string>> | undefined;
}

export interface RequestOptions {
  /** Aborts the call, including a pending retry wait. */
  readonly signal?: AbortSignal | undefined;
}

export interface OcClient {
  check(params: CheckParams, options?: RequestOptions): Promise<CheckResponse>;
  verify(params: VerifyParams, options?: RequestOptions): Promise<VerifyResult>;
  discover(params: DiscoverParams, options?: RequestOptions): Promise<DiscoverResult>;
  challenge(params: ChallengeParams, options?: RequestOptions): Promise<Challenge>;
  verifyChallenge(params: VerifyChallengeParams, options?: RequestOptions): Promise<ChallengeVerification>;
}

export const DEFAULT_MAX_RETRIES = 2;
export const DEFAULT_MAX_RETRY_DELAY_MS = 10_000;
export const DEFAULT_TIMEOUT_MS = 10_000;
/** Wait before a retry when the 429 says nothing about when: 1 s, 2 s, 4 s, ... */
const FALLBACK_BACKOFF_MS = 1000;

function fail(message: string): never {
  throw new TypeError(`${AREA} client: ${message}`);
}

function wholeNumber(value: unknown, name: string, fallback: number, minimum: number, maximum: number): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < minimum || value > maximum) {
    fail(`${name} must be an integer from ${minimum} to ${maximum}, got ${String(value)}`);
  }
  return value;
}

/**
 * `Retry-After` (RFC 9110 §10.2.3): delay-seconds or an HTTP date, in ms
 * from `nowMs`; undefined when absent or unreadable.
 */
export function retryAfterMs(header: string | null, nowMs: number): number | undefined {
  if (header === null) return undefined;
  const text = header.trim();
  if (/^\d+$/.test(text)) return Number(text) * 1000;
  // Every HTTP-date form begins with the day name (RFC 9110 §5.6.7); Date.parse
  // alone would read "-5" or "2" as years.
  if (!/^(Mon|Tue|Wed|Thu|Fri|Sat|Sun)/i.test(text)) return undefined;
  const date = Date.parse(text);
  return Number.isFinite(date) ? Math.max(0, date - nowMs) : undefined;
}

function subjectQuery(subject: Subject, route: string): URLSearchParams {
  const given = (['addr', 'id', 'identity'] as const).filter((key) => subject[key] !== undefined);
  if (given.length !== 1) fail(`${route} needs exactly one of addr, id, identity`);
  const key = given[0] as 'addr' | 'id' | 'identity';
  const value = subject[key];
  if (typeof value !== 'string' || value === '') fail(`${route}: ${key} must be a non-empty string`);
  return new URLSearchParams({ [key]: value });
}

function optionalCount(query: URLSearchParams, name: string, value: unknown, route: string): void {
  if (value === undefined) return;
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0) fail(`${route}: ${name} must be a non-negative integer`);
  query.set(name, String(value));
}

function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason);
      return;
    }
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

async function readJson(response: Response): Promise<unknown> {
  const text = await response.text();
  if (text === '') return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

function codeOf(body: unknown, status: number): { code: string; detail: string | undefined } {
  if (typeof body === 'object' && body !== null) {
    const members = body as Record<string, unknown>;
    const detail = typeof members.detail === 'string' ? members.detail : undefined;
    if (typeof members.error === 'string') return { code: members.error, detail };
    if (typeof members.reason === 'string') return { code: members.reason, detail };
    if (Array.isArray(members.reasons) && typeof members.reasons[0] === 'string') return { code: members.reasons[0], detail };
  }
  return { code: status === 429 ? 'rate_limited' : `http_${status}`, detail: undefined };
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export function createOcClient(options: OcClientOptions): OcClient {
  if (typeof options !== 'object' || options === null) fail('options are required ({ baseUrl })');
  let base: URL;
  try {
    base = new URL(String(options.baseUrl));
  } catch {
    fail(`baseUrl is not a URL: ${String(options.baseUrl)}`);
  }
  if (base.protocol !== 'https:' && base.protocol !== 'http:') fail(`baseUrl must be http(s), got ${base.protocol}`);
  // Routes are resolved relative to the base, so a path prefix (…/oc) is kept.
  if (!base.pathname.endsWith('/')) base.pathname += '/';
  base.search = '';
  base.hash = '';
  const fetchImplementation = options.fetch ?? globalThis.fetch;
  if (typeof fetchImplementation !== 'function') fail('fetch must be a function (no global fetch here)');
  const maxRetries = wholeNumber(options.maxRetries, 'maxRetries', DEFAULT_MAX_RETRIES, 0, 10);
  const maxRetryDelayMs = wholeNumber(options.maxRetryDelayMs, 'maxRetryDelayMs', DEFAULT_MAX_RETRY_DELAY_MS, 0, 3_600_000);
  const timeoutMs = wholeNumber(options.timeoutMs, 'timeoutMs', DEFAULT_TIMEOUT_MS, 1, 3_600_000);
  const extraHeaders = { ...(options.headers ?? {}) };

  /** One call: the request, retried on 429; resolves with the status and parsed body of a final answer. */
  async function call(
    method: 'GET' | 'POST',
    route: string,
    query: URLSearchParams | undefined,
    payload: unknown,
    accept: (status: number, body: unknown) => boolean,
    requestOptions: RequestOptions | undefined,
  ): Promise<{ status: number; body: unknown }> {
    const url = new URL(route, base);
    if (query !== undefined) url.search = query.toString();
    const headers: Record<string, string> = { accept: 'application/json', ...extraHeaders };
    if (payload !== undefined) headers['content-type'] = 'application/json';
    const userSignal = requestOptions?.signal;

    for (let attempt = 0; ; attempt += 1) {
      const deadline = AbortSignal.timeout(timeoutMs);
      const signal = userSignal === undefined ? deadline : AbortSignal.any([userSignal, deadline]);
      let response: Response;
      let body: unknown;
      try {
        response = await fetchImplementation(url, {
          method,
          headers,
          ...(payload === undefined ? {} : { body: JSON.stringify(payload) }),
          signal,
        });
        body = await readJson(response);
      } catch (error) {
        if (userSignal?.aborted) throw userSignal.reason;
        const timedOut = deadline.aborted;
        throw new OcClientError({
          status: 0,
          code: timedOut ? 'timeout' : 'network_error',
          detail: timedOut ? `no answer from ${url.origin} within ${timeoutMs} ms` : `${method} ${url.pathname} failed`,
          cause: error,
        });
      }

      if (accept(response.status, body)) {
        if (body === undefined)
          throw new OcClientError({ status: response.status, code: 'invalid_response', detail: 'the answer is not JSON' });
        return { status: response.status, body };
      }

      const { code, detail } = codeOf(body, response.status);
      if (response.status !== 429) throw new OcClientError({ status: response.status, code, detail, body });

      // docs/protocol.md §4: the 429 carries Retry-After and retry_after_seconds.
      const bodySeconds = isObject(body) && typeof body.retry_after_seconds === 'number' ? body.retry_after_seconds * 1000 : undefined;
      const askedMs = retryAfterMs(response.headers.get('retry-after'), Date.now()) ?? bodySeconds;
      const retryAfterSeconds = askedMs === undefined ? undefined : Math.ceil(askedMs / 1000);
      const waitMs = askedMs ?? FALLBACK_BACKOFF_MS * 2 ** attempt;
      if (attempt >= maxRetries || waitMs > maxRetryDelayMs) {
        throw new OcClientError({ status: 429, code, detail: detail ?? `rate limited by ${url.origin}`, body, retryAfterSeconds });
      }
      await sleep(waitMs, userSignal);
    }
  }

  function expectObject<T>(body: unknown, route: string): T {
    if (!isObject(body))
      throw new OcClientError({ status: 200, code: 'invalid_response', detail: `${route}: the answer is not a JSON object`, body });
    return body as T;
  }

  return {
    async check(params, requestOptions) {
      const query = subjectQuery(params, 'check');
      optionalCount(query, 'min_sats', params.minSats, 'check');
      optionalCount(query, 'min_days', params.minDays, 'check');
      // 404 with `reasons` is the documented "not found" result, not a failure
      // of the call; any other 404 (a wrong baseUrl, a proxy) is an error.
      const isResult = (status: number, body: unknown): boolean =>
        status === 200 || (status === 404 && isObject(body) && Array.isArray(body.reasons));
      const { body } = await call('GET', 'api/check', query, undefined, isResult, requestOptions);
      return expectObject<CheckResponse>(body, 'check');
    },

    async verify(params, requestOptions) {
      if (typeof params !== 'object' || params === null) fail('verify needs { addr, msg, sig }');
      const payload: Record<string, string> = { addr: params.addr, msg: params.msg, sig: params.sig };
      if (params.scheme !== undefined) payload.scheme = params.scheme;
      const { body } = await call('POST', 'api/verify', undefined, payload, (status) => status === 200, requestOptions);
      return expectObject<VerifyResult>(body, 'verify');
    },

    async discover(params, requestOptions) {
      const query = subjectQuery(params, 'discover');
      optionalCount(query, 'limit', params.limit, 'discover');
      const { body } = await call('GET', 'api/discover', query, undefined, (status) => status === 200, requestOptions);
      return expectObject<DiscoverResult>(body, 'discover');
    },

    async challenge(params, requestOptions) {
      if (typeof params?.addr !== 'string' || params.addr === '') fail('challenge needs addr');
      const query = new URLSearchParams({ addr: params.addr });
      if (params.audience !== undefined) query.set('audience', params.audience);
      if (params.purpose !== undefined) query.set('purpose', params.purpose);
      optionalCount(query, 'ttl', params.ttlSeconds, 'challenge');
      const { body } = await call('GET', 'api/challenge', query, undefined, (status) => status === 200, requestOptions);
      return expectObject<Challenge>(body, 'challenge');
    },

    async verifyChallenge(params, requestOptions) {
      if (typeof params !== 'object' || params === null) fail('verifyChallenge needs { message, signature, expectedNonce }');
      const payload: Record<string, string> = { message: params.message, signature: params.signature, expectedNonce: params.expectedNonce };
      if (params.expectedAudience !== undefined) payload.expectedAudience = params.expectedAudience;
      if (params.expectedPurpose !== undefined) payload.expectedPurpose = params.expectedPurpose;
      const { body } = await call('POST', 'api/challenge', undefined, payload, (status) => status === 200, requestOptions);
      return expectObject<ChallengeVerification>(body, 'verifyChallenge');
    },
  };
}
