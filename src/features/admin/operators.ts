/**
 * Who may operate the service, their API tokens, and the audit log
 * (docs/operations.md "Operators and the audit log").
 *
 * - An operator is an account the command line named (`oc-host operators
 *   add`); only the command line names or removes one.
 * - An operator token (`oc_op_` and 43 base64url characters, 256 random
 *   bits) is shown once when minted; only its SHA-256 is stored. It opens
 *   the admin API while it is unexpired and unrevoked, its account is still
 *   an operator, and the account may act (the one rule every door asks,
 *   src/identity/session/standing.ts). A removed operator's tokens go with
 *   the operator.
 * - Every action that changes something, or reads one person's data, is
 *   written to the audit log once, before it is answered; the log is only
 *   appended to, and only the retention removes rows.
 */
import { randomBytes } from 'node:crypto';
import { newRandomId } from '../../platform/storage/index.js';
import { sha256Hex } from '../../platform/crypto.js';
import { isJsonObject } from '../../platform/json.js';
import { didOf, mayAct } from '../../identity/session/index.js';
import type { AccountRecord, AccountStore } from '../../platform/storage/index.js';
import type { AuditQuery, AuditRecord, OperatorRecord, OperatorScope, OperatorStore, OperatorTokenRecord } from './store.js';

const OPERATOR_TOKEN_PREFIX = 'oc_op_';
/** `oc_op_` and the base64url of 32 random bytes. */
const TOKEN_FORMAT = /^oc_op_[A-Za-z0-9_-]{43}$/;

/** Tokens live at most a year; 90 days unless the command line says otherwise. */
export const MAX_TOKEN_DAYS = 366;
export const DEFAULT_TOKEN_DAYS = 90;
export const OPERATOR_SCOPES: readonly OperatorScope[] = ['read', 'write'];

/** The longest reason kept in the audit log. */
const MAX_REASON = 500;

/** Who did something, and how they came. */
export interface Actor {
  /** The operator's account id; null for the command line. */
  readonly accountId: string | null;
  /** `cli`, `console`, or `token:<id>`. */
  readonly via: string;
  /** The coarse network of the request; null from the command line. */
  readonly network: string | null;
}

export const COMMAND_LINE: Actor = { accountId: null, via: 'cli', network: null };

/** One entry to write. */
export interface AuditEntry {
  readonly action: string;
  readonly target?: string | null;
  readonly reason?: string | null;
  readonly detail?: Readonly<Record<string, unknown>> | null;
}

/** What an operator token opened: the operator and what the token may do. */
export interface OperatorPrincipal {
  readonly account: AccountRecord;
  readonly token: OperatorTokenRecord;
}

export interface OperatorServiceDeps {
  readonly operators: OperatorStore;
  readonly accounts: Pick<AccountStore, 'findAccount'>;
  readonly now: () => Date;
}

/**
 * An audit entry's id: the time (12 hex digits of milliseconds), a counter of
 * this process (4 hex) and 16 random hex digits, so that entries written in
 * the same millisecond by one instance list in the order they were written.
 */
let sequence = 0;
function auditId(at: number): string {
  sequence = (sequence + 1) % 0x10000;
  return `${at.toString(16).padStart(12, '0')}${sequence.toString(16).padStart(4, '0')}${randomBytes(8).toString('hex')}`;
}

export class OperatorService {
  readonly #deps: OperatorServiceDeps;

  constructor(deps: OperatorServiceDeps) {
    this.#deps = deps;
  }

  /** Writes one audit entry by `actor`. */
  async audit(actor: Actor, entry: AuditEntry): Promise<AuditRecord> {
    const at = this.#deps.now().getTime();
    const record: AuditRecord = {
      id: auditId(at),
      at,
      actor: actor.accountId === null ? 'cli' : didOf(actor.accountId),
      via: actor.via,
      action: entry.action,
      target: entry.target ?? null,
      reason: entry.reason === undefined || entry.reason === null ? null : entry.reason.slice(0, MAX_REASON),
      network: actor.network,
      detail: entry.detail === undefined || entry.detail === null ? null : JSON.stringify(entry.detail),
    };
    await this.#deps.operators.appendAudit(record);
    return record;
  }

  listAudit(query: AuditQuery): Promise<AuditRecord[]> {
    return this.#deps.operators.listAudit(query);
  }

  listOperators(): Promise<OperatorRecord[]> {
    return this.#deps.operators.listOperators();
  }

  /** Names the account an operator; false when it already is one. The account must be able to act. */
  async add(account: AccountRecord, actor: Actor): Promise<boolean> {
    if (!mayAct(account)) throw new Error('operators: only an active account can be named an operator');
    const added = await this.#deps.operators.addOperator({
      account_id: account.id,
      added_at: this.#deps.now().getTime(),
      added_by: actor.accountId === null ? 'cli' : didOf(actor.accountId),
    });
    if (added) await this.audit(actor, { action: 'operator.add', target: didOf(account.id) });
    return added;
  }

  /** Removes an operator and its tokens; false when the account was none. */
  async remove(accountId: string, actor: Actor): Promise<boolean> {
    const removed = await this.#deps.operators.removeOperator(accountId);
    if (removed) await this.audit(actor, { action: 'operator.remove', target: didOf(accountId) });
    return removed;
  }

  /** Mints a token for an operator: the token itself (shown once) and its record. */
  async mintToken(
    accountId: string,
    options: { readonly name: string; readonly scopes: readonly OperatorScope[]; readonly days: number },
    actor: Actor,
  ): Promise<{ token: string; record: OperatorTokenRecord } | null> {
    if ((await this.#deps.operators.findOperator(accountId)) === null) return null;
    if (!(options.days >= 1 && options.days <= MAX_TOKEN_DAYS)) throw new Error(`operators: a token lives 1 to ${MAX_TOKEN_DAYS} days`);
    const token = `${OPERATOR_TOKEN_PREFIX}${randomBytes(32).toString('base64url')}`;
    const now = this.#deps.now().getTime();
    const record: OperatorTokenRecord = {
      id: newRandomId(),
      account_id: accountId,
      name: options.name,
      scopes: OPERATOR_SCOPES.filter((scope) => options.scopes.includes(scope)),
      created_at: now,
      expires_at: now + options.days * 24 * 60 * 60 * 1000,
      revoked_at: null,
      last_used_at: null,
    };
    await this.#deps.operators.insertOperatorToken({
      id: record.id,
      token_hash: sha256Hex(token),
      account_id: record.account_id,
      name: record.name,
      scopes: record.scopes,
      created_at: record.created_at,
      expires_at: record.expires_at,
    });
    await this.audit(actor, {
      action: 'token.mint',
      target: didOf(accountId),
      detail: {
        token_id: record.id,
        name: record.name,
        scopes: record.scopes.join(' '),
        expires_at: new Date(record.expires_at).toISOString(),
      },
    });
    return { token, record };
  }

  listTokens(accountId?: string): Promise<OperatorTokenRecord[]> {
    return this.#deps.operators.listOperatorTokens(accountId);
  }

  /** Revokes a token by id; false when no live token has it. */
  async revokeToken(tokenId: string, actor: Actor): Promise<boolean> {
    const revoked = await this.#deps.operators.revokeOperatorToken(tokenId, this.#deps.now().getTime());
    if (revoked) await this.audit(actor, { action: 'token.revoke', target: `token:${tokenId}` });
    return revoked;
  }

  /** Whether the account is an operator now (the console's door, src/features/admin/gate-routes.ts). */
  async operatorOf(accountId: string): Promise<boolean> {
    return (await this.#deps.operators.findOperator(accountId)) !== null;
  }

  /**
   * The operator a presented token opens, or null: a malformed, unknown,
   * revoked or expired token, one whose account is no longer an operator, or
   * whose account may not act. The token is looked up by its SHA-256, so no
   * comparison of the secret itself runs in time that depends on it.
   */
  async authenticate(presented: string): Promise<OperatorPrincipal | null> {
    if (!TOKEN_FORMAT.test(presented)) return null;
    const token = await this.#deps.operators.findOperatorTokenByHash(sha256Hex(presented));
    const now = this.#deps.now().getTime();
    if (token === null || token.revoked_at !== null || token.expires_at <= now) return null;
    const [operator, account] = await Promise.all([
      this.#deps.operators.findOperator(token.account_id),
      this.#deps.accounts.findAccount(token.account_id),
    ]);
    if (operator === null || !mayAct(account)) return null;
    await this.#deps.operators.touchOperatorToken(token.id, now);
    return { account, token };
  }
}

/** An audit entry as the export and the admin API give it: one JSON object, times in ISO 8601. */
export interface AuditLine extends Omit<AuditRecord, 'at' | 'detail'> {
  readonly at: string;
  readonly detail: Readonly<Record<string, unknown>> | null;
}

export function auditLine(record: AuditRecord): AuditLine {
  let detail: Record<string, unknown> | null = null;
  if (record.detail !== null) {
    const parsed: unknown = JSON.parse(record.detail);
    detail = isJsonObject(parsed) ? parsed : null;
  }
  return {
    id: record.id,
    at: new Date(record.at).toISOString(),
    actor: record.actor,
    via: record.via,
    action: record.action,
    target: record.target,
    reason: record.reason,
    network: record.network,
    detail,
  };
}

declare module '../../platform/services.js' {
  interface FeatureServices {
    /** Who may operate, their API tokens and the audit log. */
    readonly operators: OperatorService;
  }
}
