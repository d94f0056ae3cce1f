/**
 * The one gate of the admin API and the console (docs/operations.md "The
 * console"): who a request acts as, decided before anything else of it is
 * read. Two doors reach it:
 *
 * - an operator's API token (`Authorization: Bearer oc_op_…`), for
 *   automation: its scopes decide;
 * - the session cookie of an operator's account, for the console: it needs
 *   a security-key or passkey step-up younger than 10 minutes
 *   ({@link CONSOLE_STEP_UP_MS}), younger than 1 minute for a destructive
 *   action ({@link DESTRUCTIVE_STEP_UP_MS}), and every change must come
 *   from this service's own pages (CSRF).
 *
 * A request that is neither (no credential, a bad or revoked token, a
 * removed operator, an account that may not act, a token without the scope,
 * a session of an account that is no operator) is answered word for word as
 * a path no route serves: 404 `not_found`. Both doors do the same two
 * look-ups for every such request, whichever of them refuses, so the time
 * of a refusal tells nothing either. Only an operator learns that the
 * console wants a fresher key (401 `step_up_required`) or that a change
 * came from another site (403 `cross_site`).
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { OcError } from '../../platform/errors.js';
import { requireKeyStepUp } from '../../identity/account/index.js';
import { coarseNetwork, type Authenticated } from '../../identity/session/index.js';
import { provenSameOrigin } from '../../web/cors.js';
import type { SessionDoor } from '../../web/session.js';
import type { Actor, OperatorService } from './operators.js';
import type { OperatorScope } from './store.js';

/** A pinned tab's token (src/web/session.ts). */
const TAB_HEADER = 'x-oc-tab-session';

/** How young the key step-up of a console session must be for anything. */
export const CONSOLE_STEP_UP_MS = 10 * 60 * 1000;
/** How young it must be for a destructive action: the console asks for the key again just before one. */
export const DESTRUCTIVE_STEP_UP_MS = 60 * 1000;

/** What one admin route asks of the gate. */
interface AdminNeed {
  /** The token scope: `read` for reads, `write` for changes. The console may do both. */
  readonly scope: OperatorScope;
  /** A change that cannot be undone (a deletion, a key or secret that ends now): the console's step-up must be a minute old at most. */
  readonly destructive?: boolean;
  /** The console's own state (GET /api/admin/session): an operator's session without a fresh step-up is let in. */
  readonly stale?: boolean;
}

/** Whom a request was let in as. */
interface Admitted {
  readonly accountId: string;
  /** `console`, or `token:<id>`. */
  readonly via: string;
  /** The console session, or null for a token. */
  readonly session: Authenticated | null;
}

export interface AdminGateDeps {
  readonly operators: OperatorService;
  readonly door: SessionDoor;
  readonly publicOrigin: string;
  readonly now: () => Date;
}

/** The hook of one admin route, and what it let in. */
export interface AdminGate {
  (need: AdminNeed | OperatorScope): (request: FastifyRequest, reply: FastifyReply) => Promise<void>;
  /** Whom the gate let `request` in as; only a handler behind the gate may ask. */
  admitted(request: FastifyRequest): Admitted;
  /** Answers `request` as a path no route serves, after the same look-ups a refused credential costs. */
  refuse(request: FastifyRequest): Promise<never>;
}

/** The not-found handler's words (src/platform/http/errors.ts): the path as it was sent. */
function notFound(request: FastifyRequest): OcError {
  return new OcError('not_found', `no route ${request.method} ${request.url.split('?')[0]}`);
}

/** RFC 6750 §2.1: the scheme's name is case-insensitive. */
function bearerOf(request: FastifyRequest): string | null {
  const header = request.headers.authorization;
  if (header === undefined) return null;
  return /^bearer +(\S+) *$/i.exec(header)?.[1] ?? '';
}

export function adminGate(deps: AdminGateDeps): AdminGate {
  const admittedBy = new WeakMap<FastifyRequest, Admitted>();

  /**
   * The console door: the cookie's active account, if it is an operator;
   * both look-ups run whatever the first finds. Only the cookie: a tab's
   * token (which the family's pages hold in script) opens no console, nor
   * does a session token sent as a bearer (that header is the API tokens').
   */
  async function consoleOperator(request: FastifyRequest): Promise<Authenticated | null> {
    const current = await deps.door.current(request);
    const operator = await deps.operators.operatorOf(current?.account.id ?? '');
    const fromCookie = current !== null && current.pinned !== true && request.headers[TAB_HEADER] === undefined;
    return fromCookie && operator && current.superseded !== true ? current : null;
  }

  const hook = (asked: AdminNeed | OperatorScope) => {
    const need: AdminNeed = typeof asked === 'string' ? { scope: asked } : asked;
    return async (request: FastifyRequest): Promise<void> => {
      const presented = bearerOf(request);
      if (presented !== null) {
        // A token decides alone: a bad one is refused even beside an operator's cookie.
        const principal = presented === '' ? null : await deps.operators.authenticate(presented);
        if (principal === null || !principal.token.scopes.includes(need.scope)) throw notFound(request);
        admittedBy.set(request, { accountId: principal.account.id, via: `token:${principal.token.id}`, session: null });
        return;
      }
      const current = await consoleOperator(request);
      if (current === null) throw notFound(request);
      if (!provenSameOrigin(request, deps.publicOrigin) && request.method !== 'GET' && request.method !== 'HEAD') {
        throw new OcError('cross_site', 'request: only this site may post here');
      }
      const nowMs = deps.now().getTime();
      if (need.stale !== true) requireKeyStepUp(current.freshness, nowMs, CONSOLE_STEP_UP_MS, 'the console');
      if (need.destructive === true) requireKeyStepUp(current.freshness, nowMs, DESTRUCTIVE_STEP_UP_MS, 'this action');
      admittedBy.set(request, { accountId: current.account.id, via: 'console', session: current });
    };
  };

  return Object.assign(hook, {
    admitted(request: FastifyRequest): Admitted {
      const found = admittedBy.get(request);
      if (found === undefined) throw new Error('admin: a handler ran without its gate');
      return found;
    },
    async refuse(request: FastifyRequest): Promise<never> {
      const presented = bearerOf(request);
      if (presented !== null) {
        if (presented !== '') await deps.operators.authenticate(presented);
      } else {
        await consoleOperator(request);
      }
      throw notFound(request);
    },
  });
}

/** Who acts, for the audit log: the operator, the door (`console` or the token), the request's coarse network. */
export function actorOf(gate: AdminGate, request: FastifyRequest): Actor {
  const { accountId, via } = gate.admitted(request);
  return { accountId, via, network: coarseNetwork(request.ip) };
}
