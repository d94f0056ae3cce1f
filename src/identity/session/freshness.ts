/**
 * How fresh a presented token's proof is (docs/protocol.md §3 "Freshness"):
 * the one place that decides it, for every door that accepts a session token
 * (the cookie, a pinned tab's header, a bearer token) and every gate that
 * asks for a recent re-proof or key step-up (src/identity/account/step-up.ts).
 *
 * The rule: a token never carries more freshness than it was minted with.
 * - The row's own token (the cookie) is re-minted whenever the row's claims
 *   change, so the row's `sudo_at` and `step_up_at` are its claims.
 * - A tab token carries the claims recorded beside it when it was minted; a
 *   step-up that reaches its row later does not reach it. A re-proof or a
 *   key step-up reaches a tab only by minting it a new token.
 * - A superseded tab token carries none, and may not change anything: it
 *   cannot mint tokens, pass a step-up gate or issue credentials.
 */
import type { SessionRecord, TabTokenRecord } from '../../platform/storage/index.js';

/** The step-up claims the host honours for one presented token. */
export interface TokenFreshness {
  /** When the token's account last proved itself again (a re-proof), or null. */
  readonly sudo_at: number | null;
  /** When the token's account last asserted a security key, or null. */
  readonly step_up_at: number | null;
}

/** No step-up at all: a superseded token's, or a sign-in's before any step-up. */
const NO_FRESHNESS: TokenFreshness = Object.freeze({ sudo_at: null, step_up_at: null });

/**
 * The freshness of a presented token: its row's for the row's own token,
 * the token's own record for a tab token (none once superseded).
 */
export function freshnessOf(row: Pick<SessionRecord, 'sudo_at' | 'step_up_at'>, tab?: TabTokenRecord): TokenFreshness {
  if (tab === undefined) return { sudo_at: row.sudo_at, step_up_at: row.step_up_at };
  if (tab.superseded_at !== null) return NO_FRESHNESS;
  return { sudo_at: tab.sudo_at, step_up_at: tab.step_up_at };
}

/**
 * The freshness a token minted now carries: what the minting request's own
 * token carried, raised only by the proof this request made (`proven`).
 */
export function mintedFreshness(carried: TokenFreshness, proven?: Partial<TokenFreshness>): TokenFreshness {
  return {
    sudo_at: proven?.sudo_at ?? carried.sudo_at,
    step_up_at: proven?.step_up_at ?? carried.step_up_at,
  };
}
