/**
 * Where an account is signed in (docs/protocol.md §3 "Devices"): every live
 * session of the active account, in every browser, with what each row
 * remembers of its browser, and signing other devices out. Signing another
 * device out needs a recent step-up (a stolen cookie alone must not lock the
 * owner out of their other devices); this browser's own session is a logout
 * and needs none. A roster that held a revoked row simply loses that member.
 * Also the tab tokens of a roster's rows, and the activity they leave.
 */
import { OcError } from '../../platform/errors.js';
import { didOf } from '../../identity/session/index.js';
import type { ClientFacts, Authenticated, IssuedSession, SessionService } from '../../identity/session/index.js';
import type { SessionStore } from '../../platform/storage/index.js';
import type { ActivityLog } from '../../identity/account/index.js';

/** One device as GET /api/auth/sessions shows it. */
export interface DeviceView {
  /** The session's id (its `jti`). */
  readonly id: string;
  readonly created_at: string;
  readonly last_seen_at: string;
  /** How it signed in: `bip322`, `email_otp`, `oauth:<provider>`, `passkey`. */
  readonly signing_method: string | null;
  /** "Chrome 156 on Linux", or null when the browser sent nothing readable. */
  readonly device: string | null;
  /** An IPv4 /24 or IPv6 /48 of the sign-in, or null. */
  readonly network: string | null;
  /** The session of this request: this browser. */
  readonly current: boolean;
}

export interface DeviceServiceDeps {
  readonly store: Pick<SessionStore, 'listLiveSessionsOfAccount' | 'revokeSessionOfAccount' | 'revokeOtherSessionsOfAccount'>;
  readonly now: () => Date;
  readonly activity: Pick<ActivityLog, 'record'>;
  readonly sessions: Pick<SessionService, 'tabToken'>;
}

export class DeviceService {
  readonly #deps: DeviceServiceDeps;

  constructor(deps: DeviceServiceDeps) {
    this.#deps = deps;
  }

  /** This browser's session first, then the others, most recently seen first. */
  async list(current: Authenticated): Promise<DeviceView[]> {
    const rows = await this.#deps.store.listLiveSessionsOfAccount(current.account.id, this.#deps.now().getTime());
    const views = rows.map((row) => ({
      id: row.jti,
      created_at: new Date(row.created_at).toISOString(),
      last_seen_at: new Date(row.last_seen_at).toISOString(),
      signing_method: row.signing_method,
      device: row.device,
      network: row.network,
      current: row.jti === current.session.jti,
    }));
    return [...views.filter((view) => view.current), ...views.filter((view) => !view.current)];
  }

  /**
   * Signs another device of the account out. The current session is a
   * logout, and the step-up another device needs is declared, both by the route (features/devices/routes.ts).
   */
  async revoke(current: Authenticated, id: string): Promise<void> {
    const nowMs = this.#deps.now().getTime();
    if (!(await this.#deps.store.revokeSessionOfAccount(current.account.id, id, nowMs))) {
      throw new OcError('not_found', 'sessions: the active account has no live session with this id');
    }
    await this.#deps.activity.record(current.account.id, 'sessions_revoked', { count: 1, scope: 'one' });
  }

  /**
   * POST /api/auth/tab: a tab token for the active account or another member
   * of the roster (docs/protocol.md §3). One for another member is recorded
   * on that member, with the request's device and network and the account
   * that was active: any family site can ask for one, and the token works
   * from anywhere until its row ends, so its owner should see it. One for
   * the active account is not: the OrangeCheck client asks for it on every
   * page load.
   */
  async tab(current: Authenticated, did: string | undefined, client: ClientFacts): Promise<IssuedSession> {
    const issued = await this.#deps.sessions.tabToken(current, did);
    if (issued.session.account_id !== current.account.id) {
      await this.#deps.activity.record(issued.session.account_id, 'tab_pinned', {
        device: client.device,
        network: client.network,
        active_account: didOf(current.account.id),
      });
    }
    return issued;
  }

  /** Signs every other device of the account out; answers how many. Its route declares the step-up it needs. */
  async revokeOthers(current: Authenticated): Promise<number> {
    const nowMs = this.#deps.now().getTime();
    const count = await this.#deps.store.revokeOtherSessionsOfAccount(current.account.id, current.session.jti, nowMs);
    await this.#deps.activity.record(current.account.id, 'sessions_revoked', { count, scope: 'others' });
    return count;
  }
}

declare module '../../platform/services.js' {
  interface FeatureServices {
    /** Where the active account is signed in. */
    readonly devices: DeviceService;
  }
}
