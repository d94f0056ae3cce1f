/**
 * The opt-in revocation poller (README.md "Revoked sessions"): with
 * `revocations: { url }`, a verifier refuses sessions the host revoked, within
 * one polling interval, instead of accepting them until `exp`.
 *
 * - One poller per feed URL (and fetch) per process, shared by every
 *   verifier and every `verifySession` call that names it.
 * - It keeps `jti → exp` of every revocation still in force and forgets each
 *   at its `exp`. A poll follows `more` pages at once, sends If-None-Match,
 *   and runs on an unref'd timer, so it never keeps a process alive.
 * - The first verification waits for the first poll (at most
 *   `intervalSeconds`, capped at 10 s).
 * - The same feed lists the JWT access tokens the provider ended early
 *   (docs/protocol.md §8 "Revoking API tokens"): one token by its jti (kept
 *   with the sessions' jtis: they never collide), or a cut-off for every
 *   token of a grant (`oc_grant`) or of a client issued at or before
 *   `iat_before`. An access-token verifier asks {@link RevocationPoller.refusesAccessToken}.
 * - Fail open by default: when the feed cannot be read, revocations already
 *   learnt still apply and other sessions verify. With `failClosed: true`,
 *   once no poll has succeeded for three intervals, every session is refused
 *   until one does.
 */
import { AREA } from './area.js';

export interface RevocationOptions {
  /** The host's feed, e.g. `https://auth.example.com/api/auth/revocations`. https, or http on loopback. */
  readonly url: string | URL;
  /** Seconds between polls, at least 1. Default 5. */
  readonly intervalSeconds?: number | undefined;
  /** Refuse every session while the feed has been unreadable for three intervals. Default false (fail open). */
  readonly failClosed?: boolean | undefined;
  /** Allow an http feed on a non-loopback host (anyone on the path could hide revocations). */
  readonly allowInsecureUrl?: boolean | undefined;
}

export const DEFAULT_REVOCATION_INTERVAL_SECONDS = 5;
/** Pages followed in one poll at most (1000 entries each). */
const MAX_PAGES_PER_POLL = 50;
const STALE_INTERVALS = 3;
const MAX_FIRST_WAIT_MS = 10_000;

/** An entry as read from the wire (revocation-feed.ts), before its members are checked. */
interface FeedEntry {
  readonly jti?: unknown;
  readonly exp?: unknown;
  readonly kind?: unknown;
  readonly grant?: unknown;
  readonly client_id?: unknown;
  readonly iat_before?: unknown;
}

interface FeedAnswer {
  readonly revocations?: readonly FeedEntry[];
  readonly cursor?: unknown;
  readonly more?: unknown;
}

/** A cut-off: tokens issued (`iat`) at or before `iatBefore` are refused, until `exp` (Unix seconds). */
interface CutOff {
  iatBefore: number;
  exp: number;
}

/** The claims of an access token the feed can end. */
export interface RevocableAccessToken {
  readonly jti: string;
  readonly iat: number;
  readonly client_id: string;
  readonly oc_grant?: unknown;
}

function remember(cutOffs: Map<string, CutOff>, key: string, iatBefore: number, exp: number): void {
  const held = cutOffs.get(key);
  if (held === undefined) cutOffs.set(key, { iatBefore, exp });
  else {
    held.iatBefore = Math.max(held.iatBefore, iatBefore);
    held.exp = Math.max(held.exp, exp);
  }
}

function cutsOff(cutOffs: ReadonlyMap<string, CutOff>, key: unknown, iat: number, nowSeconds: number): boolean {
  if (typeof key !== 'string') return false;
  const held = cutOffs.get(key);
  return held !== undefined && held.exp > nowSeconds && iat <= held.iatBefore;
}

export class RevocationPoller {
  readonly #url: string;
  readonly #fetch: typeof fetch;
  readonly #intervalMs: number;
  readonly #clock: () => Date;
  readonly #revoked = new Map<string, number>();
  readonly #grants = new Map<string, CutOff>();
  readonly #clients = new Map<string, CutOff>();
  #cursor: string | undefined;
  #etag: { readonly since: string | undefined; readonly tag: string } | undefined;
  #lastSuccessMs = Number.NEGATIVE_INFINITY;
  #first: Promise<void> | undefined;
  #timer: ReturnType<typeof setTimeout> | undefined;
  #stopped = false;

  constructor(url: string, fetchImplementation: typeof fetch, intervalMs: number, clock: () => Date) {
    this.#url = url;
    this.#fetch = fetchImplementation;
    this.#intervalMs = intervalMs;
    this.#clock = clock;
  }

  /** Starts polling (once); resolves after the first poll, whatever its outcome. */
  start(): Promise<void> {
    this.#first ??= this.#cycle();
    return this.#first;
  }

  stop(): void {
    this.#stopped = true;
    if (this.#timer !== undefined) clearTimeout(this.#timer);
  }

  /** True when the session `jti` must be refused: revoked, or (fail closed) the feed is stale. */
  async refuses(jti: string, failClosed: boolean): Promise<boolean> {
    const nowMs = await this.#ready();
    if (failClosed && nowMs - this.#lastSuccessMs > STALE_INTERVALS * this.#intervalMs) return true;
    return this.#jtiRevoked(jti, nowMs);
  }

  /**
   * True when the access token must be refused: its jti revoked, a cut-off
   * of its grant or client covers its `iat`, or (fail closed) the feed is stale.
   */
  async refusesAccessToken(token: RevocableAccessToken, failClosed: boolean): Promise<boolean> {
    const nowMs = await this.#ready();
    if (failClosed && nowMs - this.#lastSuccessMs > STALE_INTERVALS * this.#intervalMs) return true;
    const nowSeconds = nowMs / 1000;
    return (
      this.#jtiRevoked(token.jti, nowMs) ||
      cutsOff(this.#grants, token.oc_grant, token.iat, nowSeconds) ||
      cutsOff(this.#clients, token.client_id, token.iat, nowSeconds)
    );
  }

  /** Waits for the first poll (bounded); the time now, ms. */
  async #ready(): Promise<number> {
    const first = this.start();
    await Promise.race([first, new Promise((resolve) => setTimeout(resolve, Math.min(this.#intervalMs, MAX_FIRST_WAIT_MS)).unref?.())]);
    return this.#clock().getTime();
  }

  #jtiRevoked(jti: string, nowMs: number): boolean {
    const exp = this.#revoked.get(jti);
    return exp !== undefined && exp * 1000 > nowMs;
  }

  async #cycle(): Promise<void> {
    try {
      await this.#poll();
    } catch {
      // Fail open or closed is decided per verification from #lastSuccessMs.
    }
    if (this.#stopped) return;
    this.#timer = setTimeout(() => void this.#cycle(), this.#intervalMs);
    this.#timer.unref?.();
  }

  async #poll(): Promise<void> {
    for (let page = 0; page < MAX_PAGES_PER_POLL; page += 1) {
      const since = this.#cursor;
      const url = new URL(this.#url);
      if (since !== undefined) url.searchParams.set('since', since);
      const headers: Record<string, string> = { accept: 'application/json' };
      if (this.#etag !== undefined && this.#etag.since === since) headers['if-none-match'] = this.#etag.tag;
      const response = await this.#fetch(url, { headers, signal: AbortSignal.timeout(Math.max(1000, Math.min(this.#intervalMs, 10_000))) });
      if (response.status === 304) break;
      if (!response.ok) throw new Error(`${AREA}: revocation feed answered ${response.status}`);
      const body = (await response.json()) as FeedAnswer;
      if (!Array.isArray(body.revocations) || typeof body.cursor !== 'string')
        throw new Error(`${AREA}: revocation feed answered an unknown shape`);
      for (const entry of body.revocations) this.#learn(entry);
      const tag = response.headers.get('etag');
      this.#etag = tag === null ? undefined : { since, tag };
      this.#cursor = body.cursor;
      if (body.more !== true) break;
    }
    this.#lastSuccessMs = this.#clock().getTime();
    this.#forgetExpired();
  }

  #learn(entry: FeedEntry): void {
    if (typeof entry.exp !== 'number') return;
    if (entry.kind === 'grant' || entry.kind === 'client') {
      const key = entry.kind === 'grant' ? entry.grant : entry.client_id;
      if (typeof key === 'string' && typeof entry.iat_before === 'number')
        remember(entry.kind === 'grant' ? this.#grants : this.#clients, key, entry.iat_before, entry.exp);
      return;
    }
    // A session, an access token, or a kind this version does not know: kept by jti, which is all it can be refused by.
    if (typeof entry.jti === 'string') this.#revoked.set(entry.jti, entry.exp);
  }

  #forgetExpired(): void {
    const nowSeconds = this.#clock().getTime() / 1000;
    for (const [jti, exp] of this.#revoked) if (exp <= nowSeconds) this.#revoked.delete(jti);
    for (const cutOffs of [this.#grants, this.#clients]) {
      for (const [key, held] of cutOffs) if (held.exp <= nowSeconds) cutOffs.delete(key);
    }
  }
}

const pollers = new Map<string, RevocationPoller>();
const fetchIds = new WeakMap<typeof fetch, number>();
let nextFetchId = 1;

/** The process's poller for this feed (and fetch), created on first use. */
export function sharedPoller(url: string, fetchImplementation: typeof fetch, intervalMs: number, clock: () => Date): RevocationPoller {
  let fetchId = fetchIds.get(fetchImplementation);
  if (fetchId === undefined) {
    fetchId = nextFetchId++;
    fetchIds.set(fetchImplementation, fetchId);
  }
  const key = `${fetchId} ${intervalMs} ${url}`;
  let poller = pollers.get(key);
  if (poller === undefined) {
    poller = new RevocationPoller(url, fetchImplementation, intervalMs, clock);
    pollers.set(key, poller);
  }
  return poller;
}

/** Stops every revocation poller of this process (a graceful shutdown, or between tests). */
export function stopRevocationPolling(): void {
  for (const poller of pollers.values()) poller.stop();
  pollers.clear();
}
