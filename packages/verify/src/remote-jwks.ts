/**
 * Keys fetched from the host's JWKS (`GET /api/auth/jwks` or
 * `/.well-known/jwks.json`, docs/api.md "Session endpoints").
 *
 * - The set is cached and refreshed behind a request once it is older than
 *   `cacheMaxAgeMs`; when a refresh fails, the keys already held
 *   keep working (the host publishes a rotated-out key for longer than any
 *   token signed by it lives, so an old set never rejects a good token early).
 * - A token whose kid is not in the set causes ONE refetch (a key rotation on
 *   the host), shared by every request waiting on it, and at most one fetch
 *   per `cooldownMs` whatever the kids, so a flood of made-up kids cannot turn
 *   into a flood of requests to the host.
 * - Every fetch has a deadline; a slow or broken host makes verification
 *   answer "no key" (so the token reads as not verified), never hang.
 */
import { ed25519JwkProblem, importEd25519, matchingKeys, type ImportedKey, type JwkObject, type KeySource } from './keys.js';

export interface RemoteKeySetOptions {
  readonly fetch: typeof fetch;
  /** Deadline of one JWKS request. */
  readonly timeoutMs: number;
  /** Least time between two fetches started by unknown kids or failures. */
  readonly cooldownMs: number;
  /** Age after which the held set is refreshed. */
  readonly cacheMaxAgeMs: number;
  /** Monotonic milliseconds; `performance.now` unless a test drives it. */
  readonly clock?: () => number;
}

/** A JWKS larger than this is not the host's: a key is about 150 bytes. */
const MAX_JWKS_BYTES = 64 * 1024;
/** Keys kept from one JWKS (the host publishes the active key and the ones in their overlap window). */
const MAX_JWKS_KEYS = 32;

export class RemoteKeySet implements KeySource {
  readonly #url: string;
  readonly #options: RemoteKeySetOptions;
  readonly #clock: () => number;
  #keys: readonly ImportedKey[] | undefined;
  #fetchedAt = Number.NEGATIVE_INFINITY;
  #attemptedAt = Number.NEGATIVE_INFINITY;
  #inFlight: Promise<void> | undefined;

  constructor(url: string, options: RemoteKeySetOptions) {
    this.#url = url;
    this.#options = options;
    this.#clock = options.clock ?? (() => performance.now());
  }

  async candidates(kid: string | undefined): Promise<readonly ImportedKey[]> {
    if (this.#keys === undefined) await this.#refresh();
    // An old set is refreshed behind the request: its keys stay good meanwhile.
    else if (this.#clock() - this.#fetchedAt >= this.#options.cacheMaxAgeMs) void this.#refresh();
    const keys = this.#keys ?? [];
    const found = matchingKeys(keys, kid);
    if (found.length > 0 || kid === undefined) return found;
    // An unknown kid: most likely the host rotated its key since the last fetch.
    await this.#refresh();
    return matchingKeys(this.#keys ?? [], kid);
  }

  /** Starts a fetch unless one is running (then waits for it) or the cool-down forbids it. */
  #refresh(): Promise<void> {
    if (this.#inFlight !== undefined) return this.#inFlight;
    if (this.#clock() - this.#attemptedAt < this.#options.cooldownMs) return Promise.resolve();
    this.#attemptedAt = this.#clock();
    this.#inFlight = this.#load().then(
      (keys) => {
        this.#keys = keys;
        this.#fetchedAt = this.#clock();
      },
      () => {
        // Keep the keys already held (stale-if-error); the cool-down spaces the next try.
      },
    );
    const done = this.#inFlight;
    void done.finally(() => {
      if (this.#inFlight === done) this.#inFlight = undefined;
    });
    return done;
  }

  async #load(): Promise<ImportedKey[]> {
    const response = await this.#options.fetch(this.#url, {
      headers: { accept: 'application/jwk-set+json, application/json' },
      signal: AbortSignal.timeout(this.#options.timeoutMs),
    });
    if (response.status !== 200) {
      await response.body?.cancel();
      throw new Error(`jwks: HTTP ${response.status}`);
    }
    const declared = Number(response.headers.get('content-length'));
    if (Number.isFinite(declared) && declared > MAX_JWKS_BYTES) {
      await response.body?.cancel();
      throw new Error('jwks: too large');
    }
    const text = await response.text();
    if (text.length > MAX_JWKS_BYTES) throw new Error('jwks: too large');
    const body: unknown = JSON.parse(text);
    const list = typeof body === 'object' && body !== null ? (body as JwkObject).keys : undefined;
    if (!Array.isArray(list)) throw new Error('jwks: no keys member');
    // Other key types may share a JWKS; only Ed25519 keys can have signed oc_session.
    const usable = list.filter((jwk: unknown) => ed25519JwkProblem(jwk) === null).slice(0, MAX_JWKS_KEYS) as JwkObject[];
    if (usable.length === 0) throw new Error('jwks: no Ed25519 key');
    return Promise.all(
      usable.map((jwk) =>
        importEd25519(
          typeof jwk.kid === 'string'
            ? { kty: 'OKP', crv: 'Ed25519', x: jwk.x as string, kid: jwk.kid }
            : { kty: 'OKP', crv: 'Ed25519', x: jwk.x as string },
        ),
      ),
    );
  }
}
