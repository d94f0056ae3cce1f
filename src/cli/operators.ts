/**
 * The operators' commands (docs/operations.md "Operators and the audit log"):
 *
 *   oc-host operators add <did|email|address>
 *   oc-host operators remove <did> [--yes]
 *   oc-host operators list [--json]
 *   oc-host operators tokens mint --operator <did> --name <text> [--scope read|write]… [--days N]
 *   oc-host operators tokens list [--operator <did>] [--json]
 *   oc-host operators tokens revoke <id>
 *   oc-host operators audit [--target T] [--action A] [--since ISO] [--limit N] [--jsonl]
 *
 * Each change is written to the audit log by `cli`; the first operator can
 * only be named here.
 */
import { didOf } from '../identity/session/index.js';
import { normalizeEmail } from '../platform/mail/index.js';
import type { AccountRecord } from '../platform/storage/index.js';
import {
  COMMAND_LINE,
  DEFAULT_TOKEN_DAYS,
  MAX_TOKEN_DAYS,
  OPERATOR_SCOPES,
  auditLine,
  type OperatorScope,
  type OperatorService,
} from '../features/admin/index.js';
import type { Store } from '../store.js';
import { didArgument, iso, UsageError } from './usage.js';

export const OPERATORS_HELP = `Usage:
  oc-host operators add <did|email|address>
                                   name an account an operator of the console and the
                                   admin API (only the command line names operators)
  oc-host operators remove <did> [--yes]
                                   take it back; its operator tokens end with it
  oc-host operators list [--json]  every operator
  oc-host operators tokens mint --operator <did> --name <text> [--scope read|write]... [--days N]
                                   an API token for automation, shown once (default
                                   scope read, ${DEFAULT_TOKEN_DAYS} days, at most ${MAX_TOKEN_DAYS})
  oc-host operators tokens list [--operator <did>] [--json]
  oc-host operators tokens revoke <id>
  oc-host operators audit [--target T] [--action A] [--since ISO-8601] [--limit N] [--jsonl]
                                   the audit log, newest first (default 50, at most
                                   10000); --jsonl prints one JSON object a line

--yes skips the confirmation prompt. Exit codes: 0 done, 1 no such account,
operator or token, 2 usage error, 3 not confirmed, 78 bad configuration.`;

export interface OperatorsCommandDeps {
  readonly store: Store;
  readonly operators: OperatorService;
  readonly out: (line: string) => void;
  readonly err: (line: string) => void;
  readonly confirmed: (word: string, question: string) => Promise<boolean>;
}

export interface OperatorsCommandValues {
  readonly yes?: boolean | undefined;
  readonly json?: boolean | undefined;
  readonly jsonl?: boolean | undefined;
  readonly operator?: string | undefined;
  readonly name?: string | undefined;
  readonly scope?: readonly string[] | undefined;
  readonly days?: string | undefined;
  readonly target?: string | undefined;
  readonly action?: string | undefined;
  readonly since?: string | undefined;
  readonly limit?: string | undefined;
}

/** The options each operators command takes, besides --help (and --yes where it confirms). */
const OPERATORS_OPTIONS: Readonly<Record<string, readonly string[]>> = {
  'operators add': [],
  'operators remove': ['yes'],
  'operators list': ['json'],
  'operators tokens mint': ['operator', 'name', 'scope', 'days'],
  'operators tokens list': ['operator', 'json'],
  'operators tokens revoke': [],
  'operators audit': ['target', 'action', 'since', 'limit', 'jsonl'],
};

function fail(message: string): never {
  throw new UsageError(message);
}

/** The account a did, an e-mail address or a Bitcoin address names, following merges. */
export async function accountOfSubject(store: Store, subject: string, what: string): Promise<AccountRecord | null> {
  if (subject.startsWith('did:oc:') || /^[0-9a-f]{32}$/.test(subject)) return store.findAccount(didArgument(subject, what));
  if (subject.includes('@')) {
    let email: string;
    try {
      email = normalizeEmail(subject);
    } catch {
      fail(`${what}: "${subject}" is not an e-mail address`);
    }
    return store.findAccountByIdentity('email', email);
  }
  return store.findAccountByIdentity('btc', subject);
}

function positiveInteger(value: string, what: string, max: number): number {
  if (!/^[0-9]{1,6}$/.test(value) || Number(value) < 1 || Number(value) > max) fail(`${what} must be 1 to ${max}`);
  return Number(value);
}

/** Runs `oc-host operators …` (its words after `operators`); answers the exit code. */
export async function runOperatorsCommand(
  words: readonly string[],
  values: OperatorsCommandValues,
  deps: OperatorsCommandDeps,
): Promise<number> {
  const { store, operators, out, err } = deps;
  const [action, second, third, ...extra] = words;
  const command = action === 'tokens' ? `operators tokens ${second ?? ''}` : `operators ${action ?? ''}`;
  const allowed = OPERATORS_OPTIONS[command];
  if (allowed === undefined) fail('operators: expected "add", "remove", "list", "tokens mint|list|revoke" or "audit"');
  const stray = Object.entries(values)
    .filter(([name, value]) => value !== undefined && !allowed.includes(name))
    .map(([name]) => `--${name}`);
  if (stray.length > 0) fail(`${command}: unexpected ${stray.join(' ')}`);

  switch (command) {
    case 'operators add': {
      if (second === undefined || third !== undefined) fail('operators add: one did, e-mail address or Bitcoin address is required');
      const account = await accountOfSubject(store, second, 'operators add');
      if (account === null) {
        err(`no account holds ${second}`);
        return 1;
      }
      if (account.disabled_at !== null || account.deleted_at !== null || account.merged_into !== null) {
        err(`${didOf(account.id)} is disabled, deleted or merged; only an active account can operate`);
        return 1;
      }
      const added = await operators.add(account, COMMAND_LINE);
      out(added ? `${didOf(account.id)} is an operator now` : `${didOf(account.id)} already was an operator`);
      return 0;
    }
    case 'operators remove': {
      if (third !== undefined) fail('operators remove: one did is expected');
      const id = didArgument(second, 'operators remove');
      if (!(await deps.confirmed('remove', `Remove ${didOf(id)} as an operator and end its tokens?`))) return 3;
      if (!(await operators.remove(id, COMMAND_LINE))) {
        err(`${didOf(id)} is not an operator`);
        return 1;
      }
      out(`${didOf(id)} is no longer an operator`);
      return 0;
    }
    case 'operators list': {
      if (second !== undefined) fail(`operators list: unexpected "${second}"`);
      const list = await operators.listOperators();
      if (values.json) {
        out(JSON.stringify(list.map((one) => ({ did_oc: didOf(one.account_id), added_at: iso(one.added_at), added_by: one.added_by }))));
        return 0;
      }
      if (list.length === 0) out('no operators; name one with: oc-host operators add <did|email|address>');
      for (const one of list) out(`${didOf(one.account_id)}  since ${iso(one.added_at)}  by ${one.added_by}`);
      return 0;
    }
    case 'operators tokens mint': {
      if (third !== undefined) fail(`operators tokens mint: unexpected "${third}"`);
      const id = didArgument(values.operator, 'operators tokens mint --operator');
      const name = values.name?.trim() ?? '';
      if (name.length < 1 || name.length > 100) fail('operators tokens mint: --name of 1 to 100 characters is required');
      const scopes = values.scope === undefined || values.scope.length === 0 ? ['read'] : values.scope;
      for (const scope of scopes) {
        if (!(OPERATOR_SCOPES as readonly string[]).includes(scope))
          fail(`operators tokens mint: --scope is read or write, not "${scope}"`);
      }
      const days =
        values.days === undefined ? DEFAULT_TOKEN_DAYS : positiveInteger(values.days, 'operators tokens mint: --days', MAX_TOKEN_DAYS);
      const minted = await operators.mintToken(id, { name, scopes: scopes as OperatorScope[], days }, COMMAND_LINE);
      if (minted === null) {
        err(`${didOf(id)} is not an operator`);
        return 1;
      }
      err(`token ${minted.record.id} (${minted.record.scopes.join(' ')}), expires ${iso(minted.record.expires_at)}; it is shown only now:`);
      out(minted.token);
      return 0;
    }
    case 'operators tokens list': {
      if (third !== undefined) fail(`operators tokens list: unexpected "${third}"`);
      const id = values.operator === undefined ? undefined : didArgument(values.operator, 'operators tokens list --operator');
      const tokens = await operators.listTokens(id);
      const views = tokens.map((token) => ({
        id: token.id,
        operator: didOf(token.account_id),
        name: token.name,
        scopes: token.scopes,
        created_at: iso(token.created_at),
        expires_at: iso(token.expires_at),
        revoked_at: token.revoked_at === null ? null : iso(token.revoked_at),
        last_used_at: token.last_used_at === null ? null : iso(token.last_used_at),
      }));
      if (values.json) {
        out(JSON.stringify(views));
        return 0;
      }
      if (views.length === 0) out('no tokens');
      for (const view of views) {
        const state = view.revoked_at !== null ? `revoked ${view.revoked_at}` : `expires ${view.expires_at}`;
        out(`${view.id}  ${view.operator}  ${view.scopes.join(' ').padEnd(10)} ${state}  ${JSON.stringify(view.name)}`);
      }
      return 0;
    }
    case 'operators tokens revoke': {
      if (third === undefined || extra.length > 0 || !/^[0-9a-f]{32}$/.test(third))
        fail('operators tokens revoke: one token id (32 hex) is required');
      if (!(await operators.revokeToken(third, COMMAND_LINE))) {
        err(`no live token ${third}`);
        return 1;
      }
      out(`revoked token ${third}`);
      return 0;
    }
    default: {
      // operators audit
      if (second !== undefined) fail(`operators audit: unexpected "${second}"`);
      let since: number | undefined;
      if (values.since !== undefined) {
        since = Date.parse(values.since);
        if (!/^\d{4}-\d{2}-\d{2}/.test(values.since) || Number.isNaN(since))
          fail('operators audit: --since must be an ISO 8601 date or time');
      }
      const limit = values.limit === undefined ? 50 : positiveInteger(values.limit, 'operators audit: --limit', 10_000);
      const rows = await operators.listAudit({
        ...(values.target === undefined ? {} : { target: values.target }),
        ...(values.action === undefined ? {} : { action: values.action }),
        ...(since === undefined ? {} : { since }),
        limit,
      });
      if (values.jsonl) {
        for (const row of rows) out(JSON.stringify(auditLine(row)));
        return 0;
      }
      if (rows.length === 0) out('no entries');
      for (const row of rows) {
        const line = auditLine(row);
        out(
          `${line.at}  ${line.actor.padEnd(42)} ${line.action.padEnd(18)} ${line.target ?? '-'}${line.reason === null ? '' : `  "${line.reason}"`}`,
        );
      }
      return 0;
    }
  }
}
