/**
 * The decisions behind `requireSession()`, `requireFreshSudo()` and
 * `requireFreshStepUp()`, shared by the Express, Fastify and Hono adapters so
 * that all three answer alike.
 *
 * Refusals use the host's error body (docs/protocol.md §4): `{ok: false, error,
 * reason}`, both keys carrying the code, with HTTP 401 as the host answers a
 * rejected session (docs/api.md Authentication 6) and a missing sudo
 * (docs/protocol.md §6: `sudo_required`). A missing key step-up is
 * `step_up_required`, a code of its own: the OrangeCheck client answers
 * `sudo_required` with a re-proof, which sets `sudo_at` and never
 * `step_up_at` (docs/protocol.md §3), so that code would send the person
 * round in a loop. A request whose pinned tab sent a
 * token that does not verify is refused as `tab_invalid` rather than
 * `not_authenticated`, the reason the OrangeCheck client libraries give it
 * (resolve.ts): the tab then drops its pin.
 */
import type { OcSessionClaims } from './claims.js';
import { AREA } from './area.js';
import type { NoSessionReason } from './resolve.js';

export type GuardCode = 'not_authenticated' | 'tab_invalid' | 'sudo_required' | 'step_up_required';

export interface GuardErrorBody {
  readonly ok: false;
  readonly error: GuardCode;
  readonly reason: GuardCode;
}

/** What an adapter sends when a guard refuses. */
export interface Refusal {
  readonly status: 401;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: GuardErrorBody;
}

function refusal(code: GuardCode): Refusal {
  return Object.freeze({
    status: 401,
    // A refusal depends on the caller's credentials: never cache it. RFC 9110
    // §11.6.1 wants a challenge with every 401; Bearer is the scheme accepted
    // besides the cookie.
    headers: Object.freeze({ 'cache-control': 'no-store', 'www-authenticate': 'Bearer' }),
    body: Object.freeze({ ok: false, error: code, reason: code }),
  });
}

export const NOT_AUTHENTICATED: Refusal = refusal('not_authenticated');
export const TAB_INVALID: Refusal = refusal('tab_invalid');
export const SUDO_REQUIRED: Refusal = refusal('sudo_required');
export const STEP_UP_REQUIRED: Refusal = refusal('step_up_required');

/**
 * A guard: null lets the request through, a refusal answers it. `reason` is
 * why `session` is null (resolve.ts); absent, a null session reads as `no_session`.
 */
export type SessionGuard = (session: OcSessionClaims | null, reason?: NoSessionReason | null) => Refusal | null;

function noSession(reason: NoSessionReason | null | undefined): Refusal {
  return reason === 'tab_invalid' ? TAB_INVALID : NOT_AUTHENTICATED;
}

export interface FreshSudoOptions {
  /** The clock; default the system clock. */
  readonly now?: (() => Date) | undefined;
}

/** The options of `requireFreshStepUp()`: the same as `requireFreshSudo()`'s. */
export type FreshStepUpOptions = FreshSudoOptions;

/** The message when a guard runs on a request the session middleware never saw. */
export const MIDDLEWARE_MISSING = `${AREA}: the session middleware did not run on this request; install it before requireSession()/requireFreshSudo()/requireFreshStepUp()`;

export function sessionGuard(): SessionGuard {
  return (session, reason) => (session === null ? noSession(reason) : null);
}

/** A guard on one freshness claim; `name` is the guard's, for the setup errors. */
function freshClaimGuard(
  claim: 'sudo_at' | 'step_up_at',
  refused: Refusal,
  name: string,
  maxAgeSeconds: number,
  options: FreshSudoOptions,
): SessionGuard {
  if (typeof maxAgeSeconds !== 'number' || !Number.isFinite(maxAgeSeconds) || maxAgeSeconds <= 0) {
    throw new TypeError(`${AREA}: ${name}(maxAgeSeconds) needs a positive number of seconds, got ${String(maxAgeSeconds)}`);
  }
  const now = options.now ?? (() => new Date());
  if (typeof now !== 'function') throw new TypeError(`${AREA}: ${name} option now must be a function returning a Date`);
  return (session, reason) => {
    if (session === null) return noSession(reason);
    const at = session[claim];
    if (typeof at !== 'number' || !Number.isFinite(at)) return refused;
    const ageSeconds = now().getTime() / 1000 - at;
    return ageSeconds > maxAgeSeconds ? refused : null;
  };
}

/**
 * Passes when the session's `sudo_at` is at most `maxAgeSeconds` old
 * (docs/protocol.md §6 uses 5 minutes for its own sensitive routes). Without a
 * session: `not_authenticated` (or `tab_invalid`); without `sudo_at`, or too old: `sudo_required`.
 * A bad `maxAgeSeconds` throws here, at setup.
 */
export function freshSudoGuard(maxAgeSeconds: number, options: FreshSudoOptions = {}): SessionGuard {
  return freshClaimGuard('sudo_at', SUDO_REQUIRED, 'requireFreshSudo', maxAgeSeconds, options);
}

/**
 * Passes when the session's `step_up_at` is at most `maxAgeSeconds` old: a
 * security key or passkey was tapped on the host that recently (`POST
 * /api/auth/webauthn/assertion/verify`, the only route that sets it,
 * docs/protocol.md §3). Without a session: `not_authenticated` (or
 * `tab_invalid`); without `step_up_at`, or too old: `step_up_required`.
 * A bad `maxAgeSeconds` throws here, at setup.
 */
export function freshStepUpGuard(maxAgeSeconds: number, options: FreshStepUpOptions = {}): SessionGuard {
  return freshClaimGuard('step_up_at', STEP_UP_REQUIRED, 'requireFreshStepUp', maxAgeSeconds, options);
}
