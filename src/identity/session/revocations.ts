/**
 * The revocation feed (docs/protocol.md §3 "Revocations"): consumer sites,
 * which check only a token's signature, poll it to refuse sessions the host
 * revoked before their `exp`.
 *
 * - An entry is `{jti, exp}` for a revoked row whose token has not expired;
 *   consumers keep each until its `exp`. Entries with a `kind` are about the
 *   OpenID provider's JWT access tokens (docs/protocol.md §8 "Revoking API
 *   tokens"): `access_token` (the token's jti), `grant` and `client` (every
 *   token of that grant or client issued at or before `iat_before`). They
 *   carry a `jti` and an `exp` too, so a consumer that knows only sessions
 *   keeps them as it keeps any entry, and no session has their jti.
 * - The cursor is opaque (base64url of a revocation time and jti). A page
 *   holds at most {@link MAX_REVOCATIONS_PER_PAGE}; `more` says another
 *   follows at once.
 * - Instances stamp revocations with their own clocks, which may differ by a
 *   little, and a stamp is taken before its row commits. So a revocation
 *   that shows up after a poll may carry a stamp up to {@link CLOCK_SKEW_MS}
 *   before that poll's time. At the end of the feed the cursor is therefore
 *   the earlier of the last revocation answered (or the `since` the poll
 *   came with, when it found none) and `now - CLOCK_SKEW_MS`, never the last
 *   revocation minus the window: the next poll reads again only the
 *   revocations of the last seconds, and once the feed has been quiet for
 *   that long its cursor stays put, so it answers an empty list (and, for
 *   the same cursor, the same ETag). A cursor at the last answered
 *   revocation when that one is recent would skip a late one stamped just
 *   before it, so a recent revocation may be answered twice; consumers
 *   deduplicate by jti (docs/protocol.md §3 "Revocations").
 * - Answers are kept {@link FEED_CACHE_MS} per cursor, so many consumers
 *   polling at once cost one query per instance per second.
 */
import { createHash } from 'node:crypto';
import { OcError } from '../../platform/errors.js';
import type { RevocationRecord, SessionStore } from '../../platform/storage/index.js';
import type { RevocationFeedEntry } from '../../../packages/verify/src/revocation-feed.js';

export const MAX_REVOCATIONS_PER_PAGE = 1000;
export const CLOCK_SKEW_MS = 5000;
const FEED_CACHE_MS = 1000;
/** Cached cursors at most; an attacker varying `since` cannot grow the cache without bound. */
const MAX_CACHED_CURSORS = 256;

/** One entry of the feed, as the consumer package defines it (packages/verify/src/revocation-feed.ts). */
function entryOf(row: RevocationRecord): RevocationFeedEntry {
  const exp = Math.floor(row.expires_at / 1000);
  const access = row.access;
  if (access === undefined) return { jti: row.jti, exp };
  if (access.kind === 'access_token') return { jti: access.subject, exp, kind: 'access_token' };
  const iatBefore = access.iat_before ?? 0;
  if (access.kind === 'grant') return { jti: row.jti, exp, kind: 'grant', grant: access.subject, iat_before: iatBefore };
  return { jti: row.jti, exp, kind: 'client', client_id: access.subject, iat_before: iatBefore };
}

export interface RevocationPage {
  readonly revocations: readonly RevocationFeedEntry[];
  readonly cursor: string;
  readonly more: boolean;
  /** A strong validator of this answer, for If-None-Match. */
  readonly etag: string;
}

function encode(at: number, jti: string): string {
  return Buffer.from(`${Math.max(0, at)}.${jti}`, 'utf8').toString('base64url');
}

function decode(cursor: string): { at: number; jti: string } {
  const match = /^(\d{1,16})\.([0-9a-f]{0,64})$/.exec(Buffer.from(cursor, 'base64url').toString('utf8'));
  if (match === null) throw new OcError('bad_request', 'since: not a cursor this service answered');
  return { at: Number(match[1]), jti: match[2]! };
}

/** Whether `a` comes before `b` in the feed's order (revocation time, then jti). */
function isBefore(a: { at: number; jti: string }, b: { at: number; jti: string }): boolean {
  return a.at < b.at || (a.at === b.at && a.jti < b.jti);
}

export class RevocationFeed {
  readonly #store: Pick<SessionStore, 'listRevocations'>;
  readonly #now: () => Date;
  readonly #cache = new Map<string, { readonly until: number; readonly page: Promise<RevocationPage> }>();

  constructor(store: Pick<SessionStore, 'listRevocations'>, now: () => Date) {
    this.#store = store;
    this.#now = now;
  }

  /** The revocations after `since` (all of them without it). */
  page(since: string | undefined): Promise<RevocationPage> {
    const after = since === undefined ? null : decode(since);
    const key = since ?? '';
    const nowMs = this.#now().getTime();
    const cached = this.#cache.get(key);
    if (cached !== undefined && cached.until > nowMs) return cached.page;
    if (this.#cache.size >= MAX_CACHED_CURSORS) {
      for (const [entry, value] of this.#cache) if (value.until <= nowMs) this.#cache.delete(entry);
      if (this.#cache.size >= MAX_CACHED_CURSORS) this.#cache.clear();
    }
    const page = this.#read(after, nowMs);
    this.#cache.set(key, { until: nowMs + FEED_CACHE_MS, page });
    page.catch(() => this.#cache.delete(key));
    return page;
  }

  async #read(after: { at: number; jti: string } | null, nowMs: number): Promise<RevocationPage> {
    const rows = await this.#store.listRevocations(after, nowMs, MAX_REVOCATIONS_PER_PAGE);
    const more = rows.length === MAX_REVOCATIONS_PER_PAGE;
    const last = rows.at(-1);
    // How far this answer has read: its last entry, else where the poll
    // started; null when it started at the beginning and found nothing.
    const answered = last !== undefined ? { at: last.revoked_at, jti: last.jti } : after;
    let position: { at: number; jti: string };
    if (more && answered !== null) position = answered;
    else {
      const skewFloor = { at: Math.max(0, nowMs - CLOCK_SKEW_MS), jti: '' };
      position = answered === null || isBefore(skewFloor, answered) ? skewFloor : answered;
    }
    const cursor = encode(position.at, position.jti);
    const revocations = rows.map(entryOf);
    const etag = `"${createHash('sha256')
      .update(JSON.stringify([revocations, cursor, more]))
      .digest('base64url')
      .slice(0, 27)}"`;
    return { revocations, cursor, more, etag };
  }
}
