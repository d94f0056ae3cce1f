/**
 * Sessions and the roster (docs/api.md "States and transitions",
 * docs/protocol.md §3). Every path that signs someone in ends in `signIn`; the
 * host recognises a presented token by the SHA-256 held in its live session
 * row (docs/performance.md "JWT": the row is the source of truth on the host).
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { OcError } from '../../platform/errors.js';
import type {
  AccountRecord,
  AccountStore,
  IdentityKind,
  RosterMemberRecord,
  SessionRecord,
  SessionStore,
} from '../../platform/storage/index.js';

/** What sessions read and write: their own rows, and the accounts they point at. */
export type SessionServiceStore = SessionStore & Pick<AccountStore, 'resolveCanonicalAccount' | 'listIdentities' | 'listMergedInto'>;
import {
  accountIdFromDid,
  accountView,
  didOf,
  emailBadge,
  factsOf,
  needsIdentities,
  type AccountView,
  type ViewFacts,
} from './accounts.js';
import { mintSessionJwt, SESSION_LIFETIME_SECONDS, tokenHash } from './jwt.js';
import { signInMethodClaims } from './sign-in-method.js';
import { mayAct, standingAccount } from './standing.js';
import type { KeyRing } from './keys.js';
import type { ClientFacts } from './device.js';
import { freshnessOf, mintedFreshness, type TokenFreshness } from './freshness.js';

/** A presented token that matched a live row, with the account it belongs to. */
export interface Authenticated {
  readonly session: SessionRecord;
  readonly account: AccountRecord;
  /** Presented by a pinned tab (`x-oc-tab-session`): what it changes is answered to that tab, not the browser's cookie. */
  readonly pinned?: boolean;
  /**
   * The request carries this browser's `__Host-oc_roster` binding of the
   * row's roster (set by the HTTP layer): the session is this browser's own.
   */
  readonly ownBrowser?: boolean;
  /**
   * The step-up claims the presented token carries (identity/session/freshness.ts):
   * what every step-up gate reads, never the row's own columns.
   */
  readonly freshness: TokenFreshness;
  /**
   * A tab token superseded by a step-up or by newer tokens: it still reads as
   * its row on the host, with no freshness, and may change nothing.
   */
  readonly superseded?: boolean;
}

export interface IssuedSession {
  readonly token: string;
  readonly session: SessionRecord;
  readonly account: AccountView;
  /** Seconds until the row expires: the cookie's Max-Age. */
  readonly maxAgeSeconds: number;
  /** The step-up claims the token carries (identity/session/freshness.ts). */
  readonly freshness: TokenFreshness;
  /** A pinned tab's own token (docs/protocol.md §3): answered to the tab, never set as the cookie. */
  readonly forTab?: boolean;
  /** With a tab token: the row's re-minted own token, to be set as the browser's cookie (a step-up from the tab, {@link SessionService.reissue}). */
  readonly cookie?: IssuedSession;
}

/** What a step-up proved just now: written to the row (the cookie) or carried by the tab token it mints. */
type Freshness = { readonly sudo_at?: number; readonly step_up_at?: number };

/** A row keeps at most this many tab tokens; minting one more drops the oldest. */
const MAX_TAB_TOKENS_PER_SESSION = 32;

interface RosterEntry extends AccountView {
  readonly last_seen_at: string;
}

export interface MeView {
  readonly account: AccountView;
  /** Every other live member of the roster (never the active account). */
  readonly roster: RosterEntry[];
}

export interface SessionServiceOptions {
  readonly store: SessionServiceStore;
  /** The current key ring (it may be reloaded after a rotation). */
  readonly keys: () => KeyRing;
  /** `PUBLIC_URL`: the JWT `iss`. */
  readonly issuer: string;
  readonly now: () => Date;
  /** `last_seen_at` is written at most this often per row, so reads stay reads. */
  readonly touchIntervalMs?: number;
}

export type SigningMethod = 'bip322' | 'email_otp' | 'passkey' | `oauth:${string}`;

const SESSION_LIFETIME_MS = SESSION_LIFETIME_SECONDS * 1000;

function seconds(ms: number | null): number | null {
  return ms === null ? null : Math.floor(ms / 1000);
}

export class SessionService {
  readonly #store: SessionServiceStore;
  readonly #keys: () => KeyRing;
  readonly #issuer: string;
  readonly #now: () => Date;
  readonly #touchIntervalMs: number;

  constructor(options: SessionServiceOptions) {
    this.#store = options.store;
    this.#keys = options.keys;
    this.#issuer = options.issuer;
    this.#now = options.now;
    this.#touchIntervalMs = options.touchIntervalMs ?? 60_000;
  }

  /** The canonical account, following `merged_into` (docs/protocol.md §2). */
  async canonicalAccount(accountId: string): Promise<AccountRecord | null> {
    return this.#store.resolveCanonicalAccount(accountId);
  }

  /**
   * The account as responses show it. With the facts the roster statement
   * already read (GET /api/auth/me), the identities are listed only when
   * the display identity needs them.
   */
  async view(account: AccountRecord, facts?: ViewFacts): Promise<AccountView> {
    if (facts !== undefined && !needsIdentities(account)) return accountView(account, undefined, facts);
    const identities = await this.#store.listIdentities(account.id);
    return accountView(account, identities, facts ?? factsOf(identities));
  }

  /**
   * The session a request presents (docs/protocol.md §3 "Planted cookies").
   * Browsers may send several `oc_session` cookies: a stale host-only one
   * beside the family one, or one a sibling site of the family planted (it
   * may also have overwritten the browser's own). `isOwnRoster` is the
   * browser's `__Host-oc_roster` binding (roster-binding.ts), undefined when
   * the request carries none:
   * - with a binding, it alone decides: the first live row of the roster it
   *   names is the session, and a live row of any other roster is not this
   *   browser's. When only such rows are presented the answer is no session
   *   (`onForeign` is told, so the caller clears the cookies);
   * - without one, one token, or several whose live rows all belong to one
   *   roster, give the first live one; live rows of different rosters are
   *   refused as `ambiguous_session`, so neither `me` nor `add` ever acts
   *   on a planted roster.
   */
  async authenticate(
    tokens: readonly string[],
    isOwnRoster?: (rosterId: string) => boolean,
    onForeign?: () => void,
  ): Promise<Authenticated | null> {
    const now = this.#now().getTime();
    let first: RosterMemberRecord | undefined;
    let otherRoster = false;
    for (const token of tokens) {
      const found = await this.#store.findLiveSessionWithAccount(tokenHash(token), now);
      if (!found) continue;
      // A merged account's rows are revoked by the merge, a held one's by the
      // hold; a row that still points at one (a sign-in that raced them) is
      // treated as gone rather than silently re-targeted (identity/session/standing.ts).
      if (!mayAct(found.account)) continue;
      const rosterId = found.session.roster_id;
      if (isOwnRoster !== undefined) {
        if (rosterId !== null && isOwnRoster(rosterId)) return this.#ownToken(found, now);
        first ??= found;
        continue;
      }
      if (first === undefined) first = found;
      else if (rosterId === null || rosterId !== first.session.roster_id) otherRoster = true;
    }
    if (first === undefined) return null;
    if (isOwnRoster !== undefined) {
      onForeign?.();
      return null;
    }
    if (otherRoster) {
      throw new OcError(
        'ambiguous_session',
        'session: this browser holds sessions of several rosters (one was set by another site); sign in again',
      );
    }
    return this.#ownToken(first, now);
  }

  /**
   * The session a pinned tab presents in `x-oc-tab-session`: the row whose
   * own token it is, or whose tab token it is (docs/protocol.md §3 "Pinned
   * tabs"). Only this token counts; the browser's cookies are not looked at.
   *
   * A tab token superseded by a step-up still reads as its row unless
   * `strict` (GET /api/auth/me): there its 401 tells the client to pin
   * again, while the host's other routes keep serving a tab whose consumer
   * site cannot learn of the supersession. It carries no freshness and is
   * marked `superseded`, so it can change nothing (docs/protocol.md §3
   * "Freshness"). A tab token's freshness is its own record's, never the row's.
   */
  async authenticatePinned(token: string, strict = false): Promise<Authenticated | null> {
    const now = this.#now().getTime();
    const hash = tokenHash(token);
    const own = await this.#store.findLiveSessionWithAccount(hash, now);
    if (own !== null) return !mayAct(own.account) ? null : { ...(await this.#ownToken(own, now)), pinned: true };
    const found = await this.#store.findLiveSessionByTabToken(hash, now, { superseded: !strict });
    if (found === null || !mayAct(found.account)) return null;
    const seen = await this.#seen(found, now);
    return {
      session: seen.session,
      account: seen.account,
      freshness: freshnessOf(seen.session, found.tab),
      pinned: true,
      ...(found.tab.superseded_at === null ? {} : { superseded: true }),
    };
  }

  async #seen(found: RosterMemberRecord, now: number): Promise<RosterMemberRecord> {
    if (now - found.session.last_seen_at >= this.#touchIntervalMs) await this.#store.touchSession(found.session.jti, now);
    return found;
  }

  /** The row's own token presented: its claims are the row's (re-minted at every change). */
  async #ownToken(found: RosterMemberRecord, now: number): Promise<Authenticated> {
    const seen = await this.#seen(found, now);
    return { session: seen.session, account: seen.account, freshness: freshnessOf(seen.session) };
  }

  /** A fresh JWT for `session`, keeping its jti and its expiry (docs/protocol.md §3: never extended). */
  #mint(
    session: Pick<SessionRecord, 'jti' | 'expires_at' | 'signing_method' | 'step_up_at' | 'sudo_at'>,
    account: AccountRecord,
    view: AccountView,
    mergedFrom: readonly string[],
    nowMs: number,
  ): string {
    return mintSessionJwt(this.#keys().active, {
      iss: this.#issuer,
      sub: account.id,
      did_oc: didOf(account.id),
      jti: session.jti,
      iat: Math.floor(nowMs / 1000),
      exp: Math.floor(session.expires_at / 1000),
      name: account.display_name,
      primary_btc: account.primary_btc,
      // The JWT never carries an e-mail address, only a masked badge (docs/protocol.md §3).
      display_identity: view.display_identity.kind === 'email' ? emailBadge(view.display_identity.value) : view.display_identity,
      ...signInMethodClaims(session.signing_method, session.step_up_at),
      step_up_at: seconds(session.step_up_at),
      sudo_at: seconds(session.sudo_at),
      merged_from: mergedFrom.map(didOf),
    });
  }

  #issued(token: string, session: SessionRecord, view: AccountView, nowMs: number, freshness = freshnessOf(session)): IssuedSession {
    const maxAgeSeconds = Math.max(0, Math.floor((session.expires_at - nowMs) / 1000));
    return { token, session, account: view, maxAgeSeconds, freshness };
  }

  /**
   * Signs `accountId` in. With `add` and a current session that has a roster,
   * the new row joins that roster (a second sign-in of a rostered account
   * replaces its row: a re-authentication, not a duplicate). Otherwise a
   * fresh roster is created with this session as its only member.
   */
  async signIn(input: {
    accountId: string;
    method: SigningMethod;
    add: boolean;
    current: Authenticated | null;
    /** The identity the sign-in proved: unlinking it later revokes this session. */
    identity?: { kind: IdentityKind; value: string } | undefined;
    /** What the row remembers of the browser (docs/protocol.md §3 "Devices"). */
    client?: ClientFacts | undefined;
  }): Promise<IssuedSession> {
    const rosterId = input.add && input.current?.session.roster_id ? input.current.session.roster_id : randomUUID();
    // A merge can land between resolving the account and inserting its row
    // (the store refuses a row for a merged account): resolve again once.
    for (let attempt = 0; ; attempt += 1) {
      const nowMs = this.#now().getTime();
      const account = standingAccount(await this.#store.resolveCanonicalAccount(input.accountId), 'sign-in');
      const view = await this.view(account);
      const mergedFrom = await this.#store.listMergedInto(account.id);
      const draft = {
        jti: randomBytes(16).toString('hex'),
        expires_at: nowMs + SESSION_LIFETIME_MS,
        signing_method: input.method,
        // A sign-in proves an identity, nothing more: `step_up_at` is set only
        // by a hardware-key assertion and `sudo_at` only by a re-proof
        // (docs/protocol.md §3), as consumers read them.
        step_up_at: null,
        sudo_at: null,
      };
      const token = this.#mint(draft, account, view, mergedFrom, nowMs);
      try {
        const session = await this.#store.insertSession({
          ...draft,
          token_hash: tokenHash(token),
          account_id: account.id,
          roster_id: rosterId,
          created_at: nowMs,
          last_seen_at: nowMs,
          ...(input.identity === undefined ? {} : { opened_by: input.identity }),
          ...(input.client === undefined ? {} : { device: input.client.device, network: input.client.network }),
        });
        return this.#issued(token, session, view, nowMs);
      } catch (error) {
        const again = attempt === 0 ? standingAccount(await this.#store.resolveCanonicalAccount(input.accountId), 'sign-in') : null;
        if (again === null || again.id === account.id) throw error;
      }
    }
  }

  /** Re-mints the row's token (after a switch, a step-up or an account edit); the old token stops working. */
  async remint(session: SessionRecord, freshness?: Freshness): Promise<IssuedSession> {
    const { token, view, nowMs } = await this.#nextToken(session, freshness);
    const updated = await this.#store.updateSessionToken(session.jti, tokenHash(token), freshness);
    if (!updated) throw new OcError('not_authenticated', 'session: the session ended meanwhile');
    return this.#issued(token, updated, view, nowMs);
  }

  /**
   * One more token for `session`, for a pinned tab: the row's own token stays
   * as it is, so the cookie (and every other tab) keeps working
   * (docs/protocol.md §3). The token carries `freshness` and the host honours
   * no more for it (identity/session/freshness.ts); the row is not changed.
   */
  async mintForTab(session: SessionRecord, freshness: TokenFreshness): Promise<IssuedSession> {
    // A jti of its own, so the token can be superseded and listed in the
    // revocation feed without revoking the row.
    const jti = randomBytes(16).toString('hex');
    const { token, view, nowMs } = await this.#nextToken(session, freshness, jti);
    const record = { hash: tokenHash(token), jti, sudo_at: freshness.sudo_at, step_up_at: freshness.step_up_at };
    if (!(await this.#store.insertTabToken(session.jti, record, nowMs, MAX_TAB_TOKENS_PER_SESSION))) {
      throw new OcError('not_authenticated', 'session: the session ended meanwhile');
    }
    return { ...this.#issued(token, session, view, nowMs, freshness), forTab: true };
  }

  /** A superseded tab token mints nothing (docs/protocol.md §3 "Freshness"): its tab pins again from the cookie. */
  #requireCurrentToken(current: Authenticated, what: string): void {
    if (current.superseded === true) {
      throw new OcError('not_authenticated', `${what}: this tab token was superseded; pin the tab again from the session`);
    }
  }

  /** A JWT for the row as it will be with `freshness`, for its current (canonical) account. */
  async #nextToken(
    session: SessionRecord,
    freshness: Freshness | TokenFreshness | undefined,
    jti = session.jti,
  ): Promise<{ token: string; view: AccountView; nowMs: number }> {
    const nowMs = this.#now().getTime();
    const account = await this.#store.resolveCanonicalAccount(session.account_id);
    // Held or gone meanwhile: the row is as good as revoked (identity/session/standing.ts).
    if (!mayAct(account)) throw new OcError('not_authenticated', 'session: the account is disabled or no longer exists');
    const view = await this.view(account);
    const token = this.#mint({ ...session, ...freshness, jti }, account, view, await this.#store.listMergedInto(account.id), nowMs);
    return { token, view, nowMs };
  }

  /**
   * A new token for the current session after a change to it (step-up, edit,
   * link): to a pinned tab its own tab token, otherwise a re-mint of the row
   * for the cookie.
   *
   * A step-up or re-proof (`freshness`) from a pinned tab of this browser's
   * own roster also reaches the cookie and the row's other tabs
   * (docs/protocol.md §3 "Pinned tabs"): the row's own token is re-minted
   * for the cookie (which makes the row the browser's active account), a new
   * tab token is answered, and every older tab token of the row is
   * superseded. A tab still holding one gets 401 at GET /api/auth/me (and
   * nowhere else on the host, {@link authenticatePinned}), and the revocation
   * feed lists it, so a client that drops a dead pin and pins again from the
   * cookie comes back with the fresh claim.
   */
  async reissue(current: Authenticated, freshness?: Freshness): Promise<IssuedSession> {
    this.#requireCurrentToken(current, 'session');
    if (current.pinned !== true) return this.remint(current.session, freshness);
    // A tab's new token carries what its old one did, raised only by this request's own proof.
    if (freshness === undefined || current.ownBrowser !== true)
      return this.mintForTab(current.session, mintedFreshness(current.freshness, freshness));
    const cookie = await this.remint(current.session, freshness);
    const tab = await this.mintForTab(cookie.session, freshnessOf(cookie.session));
    await this.#store.supersedeTabTokens(current.session.jti, this.#now().getTime(), tokenHash(tab.token));
    return { ...tab, cookie };
  }

  /**
   * POST /api/auth/tab: a tab token for the current account, or for another
   * account of the same roster (`did`), checked like a switch.
   */
  async tabToken(current: Authenticated, did: string | undefined): Promise<IssuedSession> {
    this.#requireCurrentToken(current, 'tab');
    // For the presented token's own account: no more than that token carries.
    if (did === undefined || did === didOf(current.account.id)) return this.mintForTab(current.session, current.freshness);
    // Another member: its row's, as a switch to it gives (docs/api.md "States and transitions").
    const row = await this.#rosterRow(current, did, 'tab');
    return this.mintForTab(row, freshnessOf(row));
  }

  /** The live row of the account `did` in the current session's roster (a switch, or a tab token for it). */
  async #rosterRow(current: Authenticated, did: string, what: 'switch' | 'tab'): Promise<SessionRecord> {
    if (current.session.roster_id === null) throw new OcError('no_roster', `${what}: this session predates multi-account; sign in again`);
    const targetId = accountIdFromDid(did);
    if (targetId === null) throw new OcError('bad_request', 'did_oc: must be did:oc: followed by 32 lowercase hex characters');
    const target = standingAccount(await this.#store.resolveCanonicalAccount(targetId), what);
    if (what === 'switch' && target.id === current.account.id)
      throw new OcError('already_active', 'switch: this account is already active');
    const row = await this.#store.findLiveSessionInRoster(current.session.roster_id, target.id, this.#now().getTime());
    if (!row) throw new OcError('not_in_roster', `${what}: sign in to this account with add=1 first`);
    return row;
  }

  /**
   * The session rows of every live member of the current session's roster,
   * its own included: the host sessions of this browser (an app's end-session
   * looks among them for the provider session an account set aside,
   * docs/protocol.md §8 "Logout").
   */
  async rosterSessionJtis(current: Authenticated): Promise<string[]> {
    const rosterId = current.session.roster_id;
    if (rosterId === null) return [current.session.jti];
    return (await this.#store.listLiveRoster(rosterId, this.#now().getTime())).map((member) => member.session.jti);
  }

  /** GET /api/auth/me: the active account and every other live member of the roster. */
  async me(current: Authenticated): Promise<MeView> {
    if (current.session.roster_id === null) return { account: await this.view(current.account), roster: [] };
    return this.#meOf(current, await this.#store.listLiveRoster(current.session.roster_id, this.#now().getTime()));
  }

  /**
   * GET /api/auth/me straight from the presented tokens: the session and its
   * roster in one query (the route's hot path), with the same rules as
   * {@link authenticate} and {@link me}. Null when no token is live.
   */
  async meByTokens(
    presented: readonly string[],
    isOwnRoster?: (rosterId: string) => boolean,
    onForeign?: () => void,
  ): Promise<MeView | null> {
    let tokens = presented;
    if (tokens.length > 1) {
      // Several cookies: the same choice as every other route (authenticate),
      // so /me never answers as a planted roster's account.
      const chosen = await this.authenticate(tokens, isOwnRoster, onForeign);
      if (chosen === null) return null;
      tokens = tokens.filter((token) => tokenHash(token) === chosen.session.token_hash);
    }
    const now = this.#now().getTime();
    for (const token of tokens) {
      const found = await this.#store.findLiveRosterByTokenHash(tokenHash(token), now);
      if (!found || !mayAct(found.current.account)) continue;
      const current = found.current;
      const rosterId = current.session.roster_id;
      if (isOwnRoster !== undefined && (rosterId === null || !isOwnRoster(rosterId))) {
        // One cookie, of a roster the browser's binding does not name: planted (authenticate).
        onForeign?.();
        return null;
      }
      if (now - current.session.last_seen_at >= this.#touchIntervalMs) await this.#store.touchSession(current.session.jti, now);
      return this.#meOf(current, found.members);
    }
    return null;
  }

  async #meOf(
    current: Pick<Authenticated, 'account'> & { readonly facts?: ViewFacts },
    members: readonly { session: SessionRecord; account: AccountRecord; facts?: ViewFacts }[],
  ): Promise<MeView> {
    const account = await this.view(current.account, current.facts);
    const roster: RosterEntry[] = [];
    const seen = new Set<string>([current.account.id]);
    for (const member of members) {
      const canonical = member.account.merged_into === null ? member.account : await this.#store.resolveCanonicalAccount(member.account.id);
      if (!canonical || seen.has(canonical.id)) continue;
      seen.add(canonical.id);
      const facts = canonical === member.account ? member.facts : undefined;
      roster.push({ ...(await this.view(canonical, facts)), last_seen_at: new Date(member.session.last_seen_at).toISOString() });
    }
    return { account, roster };
  }

  /** POST /api/auth/switch (docs/api.md "Errors of POST /api/auth/switch"). */
  async switchTo(current: Authenticated, did: string): Promise<IssuedSession> {
    this.#requireCurrentToken(current, 'switch');
    const row = await this.#rosterRow(current, did, 'switch');
    // The target keeps its own freshness claims and its row's expiry. A
    // pinned tab switches itself only: the browser's cookie stays.
    return current.pinned === true ? this.mintForTab(row, freshnessOf(row)) : this.remint(row);
  }

  /**
   * Ends the session of `accountId` in the roster of `current`, the other
   * accounts staying signed in (an app's RP-initiated logout, docs/protocol.md
   * §8 "Logout"). When that is the active account, the browser moves on as
   * {@link logout} `current` does and `next` says where (null: no account
   * left); otherwise the cookie stays (`next` undefined). False `ended` when
   * the roster held no live session of that account.
   */
  async logoutAccount(current: Authenticated, accountId: string): Promise<{ ended: boolean; next?: IssuedSession | null }> {
    if (current.account.id === accountId) return { ended: true, next: (await this.logout(current, 'current')).next };
    const rosterId = current.session.roster_id;
    if (rosterId === null) return { ended: false };
    return { ended: (await this.#store.revokeAccountInRoster(rosterId, accountId, this.#now().getTime())) > 0 };
  }

  /**
   * POST /api/auth/logout. `all` revokes every row of the roster; `current`
   * revokes the active account's row and moves to the most recently seen
   * remaining member, if any (for a pinned tab, with a tab token: the route
   * then sees to the cookie).
   */
  async logout(current: Authenticated, scope: 'current' | 'all'): Promise<{ next: IssuedSession | null }> {
    const nowMs = this.#now().getTime();
    const rosterId = current.session.roster_id;
    if (scope === 'all' || rosterId === null) {
      if (rosterId === null) await this.#store.revokeSession(current.session.jti, nowMs);
      else await this.#store.revokeRoster(rosterId, nowMs);
      return { next: null };
    }
    await this.#store.revokeAccountInRoster(rosterId, current.account.id, nowMs);
    const remaining = await this.#store.listLiveRoster(rosterId, nowMs);
    remaining.sort((a, b) => b.session.last_seen_at - a.session.last_seen_at);
    for (const member of remaining) {
      try {
        const next = member.session;
        return { next: current.pinned === true ? await this.mintForTab(next, freshnessOf(next)) : await this.remint(next) };
      } catch (error) {
        // Revoked by a concurrent logout between the listing and the re-mint: try the next one.
        if (!(error instanceof OcError && error.code === 'not_authenticated')) throw error;
      }
    }
    return { next: null };
  }
}
