/**
 * Back-channel logout delivery (docs/protocol.md §8 "Logout", OpenID Connect
 * Back-Channel Logout 1.0). Every logout the provider decides on (the
 * library's own end-session, and every host session revoked) is a row of the
 * outbox (src/features/oidc/logout-store.ts); this worker sends them.
 *
 * - The logout token is built when it is sent, so each attempt carries a
 *   fresh `iat` and `jti`; it is signed by the library's own IdToken
 *   (`issue({ use: 'logout' })`) with the client's ID token algorithm, as the
 *   library signs it itself (src/features/oidc/service.ts `logoutToken`).
 * - It is POSTed as `application/x-www-form-urlencoded` `logout_token=…` with
 *   the webhook endpoint rules (src/features/connect/webhooks.ts `postToEndpoint`,
 *   handed in by the services): every resolved address checked, no redirect
 *   followed, a timeout, any 2xx is delivered.
 * - Otherwise it is retried with the webhook backoff, up to
 *   {@link MAX_LOGOUT_ATTEMPTS} attempts; rows are claimed by a lease, so one
 *   worker sends a row at a time and a worker that died loses nothing.
 * - A client that is gone, or has no `backchannel_logout_uri` any more, or
 *   requires a `sid` the row cannot give, ends the row as failed at once.
 */
import { type OutboxAttempt, OutboxWorker, type SendResult } from '../../platform/outbox-worker.js';
import type { ClaimedOidcLogout, OidcLogoutStore } from './logout-store.js';

const MAX_LOGOUT_ATTEMPTS = 10;
/** Logouts a worker sends at once. */
const PARALLEL = 4;

/** A built logout: where it goes and the signed token; null when the client can no longer be told. */
export type LogoutToken = { readonly uri: string; readonly token: string } | { readonly refused: string };

export interface BackchannelDispatcherDeps {
  readonly store: Pick<OidcLogoutStore, 'claimOidcLogouts' | 'finishOidcLogoutAttempt'>;
  /** Builds and signs the token of one logout (src/features/oidc/service.ts). */
  readonly build: (logout: ClaimedOidcLogout) => Promise<LogoutToken>;
  /** One POST under the endpoint rules: its status, and a short error code or null on success. */
  readonly post: (
    uri: string,
    body: string,
    headers: Readonly<Record<string, string>>,
  ) => Promise<{ readonly status: number | null; readonly error: string | null }>;
  /** Backoff before attempt `attempts + 1`, after `attempts` failed ones. */
  readonly backoffMs: (attempts: number) => number;
  readonly timeoutMs: number;
  readonly pollMs: number;
  readonly now: () => Date;
  readonly userAgent: string;
  readonly onError: (error: unknown) => void;
  /** One line per finished attempt, for the log: never the token or the URI. */
  readonly onAttempt?: (entry: {
    id: string;
    client_id: string;
    outcome: string;
    status: number | null;
    error: string | null;
    attempts: number;
  }) => void;
}

export class BackchannelLogoutDispatcher extends OutboxWorker<ClaimedOidcLogout> {
  readonly #deps: BackchannelDispatcherDeps;

  constructor(deps: BackchannelDispatcherDeps) {
    super(deps, {
      claim: (...claim) => deps.store.claimOidcLogouts(...claim),
      finish: (...finish) => deps.store.finishOidcLogoutAttempt(...finish),
      parallel: PARALLEL,
      maxAttempts: MAX_LOGOUT_ATTEMPTS,
      backoffMs: deps.backoffMs,
    });
    this.#deps = deps;
  }

  protected async send(logout: ClaimedOidcLogout): Promise<SendResult> {
    let built: LogoutToken;
    try {
      built = await this.#deps.build(logout);
    } catch (error) {
      // A passing failure (the database, the keys): retried like a failed POST.
      this.#deps.onError(error);
      return { status: null, error: 'token' };
    }
    // A client that can no longer be told (gone, or its URI now refused): no retry mends it.
    if ('refused' in built) return { status: null, error: built.refused, final: true };
    const body = new URLSearchParams({ logout_token: built.token }).toString();
    return this.#deps.post(built.uri, body, {
      'content-type': 'application/x-www-form-urlencoded',
      'content-length': String(Buffer.byteLength(body)),
      'user-agent': this.#deps.userAgent,
    });
  }

  protected attempted(logout: ClaimedOidcLogout, { outcome, status, error, attempts }: OutboxAttempt & { attempts: number }): void {
    this.#deps.onAttempt?.({ id: logout.id, client_id: logout.client_id, outcome, status, error, attempts });
  }
}
