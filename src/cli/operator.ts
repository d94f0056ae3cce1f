/**
 * The operator's account commands (docs/operations.md "Accounts"):
 *
 *   oc-host accounts show <did|email|address> [--json]
 *   oc-host accounts disable <did> [--yes]
 *   oc-host accounts enable <did>
 *   oc-host accounts delete <did> [--yes]
 *   oc-host sessions revoke --account <did> [--yes]
 *   oc-host activity --account <did> [--json] [--limit N]
 *
 * - Exit codes: 0 done; 1 no such account, or nothing to do; 2 a usage error;
 *   3 the confirmation was not given; 78 bad configuration.
 * - A destructive command (disable, delete, sessions revoke) asks on the
 *   terminal for the word it names, unless `--yes` is given; without a
 *   terminal, stdin's first line answers.
 * - Each command is recorded in the account's activity with `by: "operator"`,
 *   and in the operators' audit log (`operators audit`): what changes an
 *   account and what reads one person's data (`show`, `activity`).
 * - `operators …` (src/cli/operators.ts) names the operators, mints their
 *   tokens and reads the audit log.
 */
import { createInterface } from 'node:readline';
import { ActivityLog, activityView } from '../identity/account/index.js';
import { AccountLifecycle } from '../features/account-data/lifecycle.js';
import { didOf } from '../identity/session/index.js';
import type { AccountRecord } from '../platform/storage/index.js';
import type { Store } from '../store.js';
import { COMMAND_LINE, OperatorService } from '../features/admin/index.js';
import { OPERATORS_HELP, accountOfSubject, runOperatorsCommand } from './operators.js';
import { didArgument, iso, parseCommandLine, UsageError } from './usage.js';

/** Where the commands read and write; the real one is the process's terminal. */
export interface OperatorIo {
  out(line: string): void;
  err(line: string): void;
  /** Shows `prompt` and answers the line typed (null at end of input). */
  ask(prompt: string): Promise<string | null>;
}

export const OPERATOR_COMMANDS = ['accounts', 'sessions', 'activity', 'operators'] as const;

export const EXIT = { ok: 0, failed: 1, usage: 2, notConfirmed: 3 } as const;

const HELP: Record<string, string> = {
  accounts: `Usage:
  oc-host accounts show <did|email|address> [--json]
                                   the account, its identities, sessions, keys and apps
  oc-host accounts disable <did> [--yes]
                                   lock the account: its sessions end, it cannot sign in
                                   or be switched to (account_disabled) until enabled
  oc-host accounts enable <did>    lift the lock
  oc-host accounts delete <did> [--yes]
                                   delete it for good (as DELETE /api/auth/account):
                                   sessions revoked, identities freed, a tombstone kept

--yes skips the confirmation prompt. Exit codes: 0 done, 1 no such account or
nothing to do, 2 usage error, 3 not confirmed, 78 bad configuration.`,
  sessions: `Usage:
  oc-host sessions revoke --account <did> [--yes]
                                   sign the account out of every browser; consumer
                                   sites polling revocations refuse its cookies too

--yes skips the confirmation prompt. Exit codes: 0 done, 1 no such account,
2 usage error, 3 not confirmed, 78 bad configuration.`,
  activity: `Usage:
  oc-host activity --account <did> [--json] [--limit N]
                                   the account's security events, newest first
                                   (default 50, at most 1000)

Exit codes: 0 done, 1 no such account, 2 usage error, 78 bad configuration.`,
  operators: OPERATORS_HELP,
};

function fail(message: string): never {
  throw new UsageError(message);
}

/**
 * The options each command takes (besides --help); any other is a usage
 * error before any account is read or changed, since a command that ignored it
 * might do what was not meant (docs/operations.md "Command line").
 */
const OPTIONS: Readonly<Record<string, readonly string[]>> = {
  'accounts show': ['json'],
  'accounts disable': ['yes'],
  'accounts enable': [],
  'accounts delete': ['yes'],
  'sessions revoke': ['account', 'yes'],
  activity: ['account', 'json', 'limit'],
};

function onlyOptions(command: string, values: Readonly<Record<string, unknown>>): void {
  const allowed = OPTIONS[command] ?? [];
  const stray = Object.keys(values).filter((name) => name !== 'help' && values[name] !== undefined && !allowed.includes(name));
  if (stray.length > 0) fail(`${command}: unexpected ${stray.map((name) => `--${name}`).join(' ')}`);
}

function status(account: AccountRecord): string {
  if (account.deleted_at !== null) return `deleted ${iso(account.deleted_at)}`;
  if (account.merged_into !== null) return `merged into ${didOf(account.merged_into)}`;
  if (account.disabled_at !== null) return `disabled since ${iso(account.disabled_at)}`;
  return 'active';
}

export interface OperatorDeps {
  readonly store: Store;
  readonly io: OperatorIo;
  readonly now: () => Date;
  readonly publicUrl: string;
}

/** The help text when `argv` asks for it (`--help` or `-h` anywhere), else null. */
export function operatorHelp(argv: readonly string[]): string | null {
  const [command] = argv;
  if (command === undefined || HELP[command] === undefined) return null;
  return argv.includes('--help') || argv.includes('-h') ? HELP[command] : null;
}

/** The process's terminal: stdout, stderr, and a prompt on stderr answered on stdin. */
export function terminalIo(): OperatorIo {
  return {
    out: (line) => process.stdout.write(`${line}\n`),
    err: (line) => process.stderr.write(`${line}\n`),
    ask: (prompt) =>
      new Promise((resolve) => {
        const lines = createInterface({ input: process.stdin, output: process.stderr, terminal: process.stdin.isTTY === true });
        let answered = false;
        lines.once('close', () => {
          if (!answered) resolve(null);
        });
        lines.question(prompt, (answer) => {
          answered = true;
          lines.close();
          resolve(answer);
        });
      }),
  };
}

/** Runs one operator command; answers the exit code. */
export async function runOperatorCommand(argv: readonly string[], deps: OperatorDeps): Promise<number> {
  const { values, positionals } = parseCommandLine(argv, {
    account: { type: 'string' },
    limit: { type: 'string' },
    operator: { type: 'string' },
    name: { type: 'string' },
    scope: { type: 'string', multiple: true },
    days: { type: 'string' },
    target: { type: 'string' },
    action: { type: 'string' },
    since: { type: 'string' },
    jsonl: { type: 'boolean' },
  });
  const [command, action, subject, ...extra] = positionals;
  if (command === undefined || !(OPERATOR_COMMANDS as readonly string[]).includes(command)) fail(`unknown command "${command ?? ''}"`);
  if (values.help) {
    deps.io.out(HELP[command]!);
    return EXIT.ok;
  }
  const { io, store } = deps;
  // The account lifecycle (export, deletion, the operator's hold) and the activity log it records to, as the service builds them.
  const activity = new ActivityLog({
    store,
    now: deps.now,
    onError: (error: unknown) => io.err(`warning: the event was not recorded: ${(error as Error).message}`),
  });
  const lifecycle = new AccountLifecycle({ store, activity, now: deps.now, publicUrl: deps.publicUrl });

  async function confirmed(word: string, question: string): Promise<boolean> {
    if (values.yes) return true;
    const answer = await io.ask(`${question} Type "${word}" to confirm: `);
    if (answer?.trim().toLowerCase() === word) return true;
    io.err('not confirmed; nothing was changed');
    return false;
  }

  const operators = new OperatorService({ operators: store, accounts: store, now: deps.now });
  /** Writes the audit entry of an account command by the command line. */
  const audited = (what: string, id: string) => operators.audit(COMMAND_LINE, { action: what, target: didOf(id) });

  if (command === 'operators') {
    const { help: _help, account, ...own } = values;
    if (account !== undefined) fail('operators: unexpected --account');
    return runOperatorsCommand(positionals.slice(1), own, { store, operators, out: io.out, err: io.err, confirmed });
  }

  async function existing(id: string): Promise<AccountRecord | null> {
    const account = await store.findAccount(id);
    if (account === null) io.err(`no account ${didOf(id)}`);
    return account;
  }

  if (command === 'accounts') {
    if (extra.length > 0) fail(`accounts: unexpected "${extra.join(' ')}"`);
    if (action !== undefined && OPTIONS[`accounts ${action}`] !== undefined) onlyOptions(`accounts ${action}`, values);
    switch (action) {
      case 'show': {
        if (subject === undefined) fail('accounts show: a did, an e-mail address or a Bitcoin address is required');
        const account = await accountOfSubject(store, subject, 'accounts show');
        if (account === null) {
          io.err(`no account holds ${subject}`);
          return EXIT.failed;
        }
        // One person's data is read: the audit log says so before it is shown.
        await audited('account.view', account.id);
        const [identities, live, keys, apps] = await Promise.all([
          store.listIdentities(account.id),
          store.listLiveSessionsOfAccount(account.id, deps.now().getTime()),
          store.listWebAuthnCredentials(account.id),
          store.listConnectApps(account.id),
        ]);
        if (values.json) {
          io.out(
            JSON.stringify(
              {
                did_oc: didOf(account.id),
                kind: account.kind,
                status: status(account),
                display_name: account.display_name,
                created_at: iso(account.created_at),
                disabled_at: account.disabled_at === null ? null : iso(account.disabled_at),
                deleted_at: account.deleted_at === null ? null : iso(account.deleted_at),
                merged_into: account.merged_into === null ? null : didOf(account.merged_into),
                identities: identities.map((identity) => ({
                  kind: identity.kind,
                  value: identity.value,
                  created_at: iso(identity.created_at),
                })),
                live_sessions: live.map((row) => ({
                  id: row.jti,
                  signing_method: row.signing_method,
                  device: row.device,
                  network: row.network,
                  last_seen_at: iso(row.last_seen_at),
                })),
                keys: keys.map((key) => ({
                  id: key.id,
                  label: key.label,
                  sign_in: key.sign_in,
                  last_used_at: key.last_used_at === null ? null : iso(key.last_used_at),
                })),
                connect_apps: apps.map((app) => ({ id: app.id, name: app.name })),
              },
              null,
              2,
            ),
          );
          return EXIT.ok;
        }
        io.out(`account     ${didOf(account.id)} (${account.kind})`);
        io.out(`status      ${status(account)}`);
        io.out(`name        ${account.display_name ?? '-'}`);
        io.out(`created     ${iso(account.created_at)}`);
        io.out(`identities  ${identities.length}`);
        for (const identity of identities) io.out(`  ${identity.kind.padEnd(8)} ${identity.value}`);
        io.out(`sessions    ${live.length} live`);
        for (const row of live)
          io.out(
            `  ${row.jti.slice(0, 12)}  ${row.device ?? 'unknown device'}, ${row.network ?? 'unknown network'}, last seen ${iso(row.last_seen_at)}`,
          );
        io.out(`keys        ${keys.length}`);
        io.out(`apps        ${apps.length}`);
        return EXIT.ok;
      }
      case 'disable':
      case 'enable': {
        const id = didArgument(subject, `accounts ${action}`);
        const account = await existing(id);
        if (account === null) return EXIT.failed;
        if (account.deleted_at !== null || account.merged_into !== null) {
          io.err(`${didOf(id)} is ${status(account)}; nothing to ${action}`);
          return EXIT.failed;
        }
        if (action === 'disable' && !(await confirmed('disable', `Disable ${didOf(id)} and sign it out everywhere?`)))
          return EXIT.notConfirmed;
        const result = await lifecycle.setDisabled(id, action === 'disable');
        if (result === null) return EXIT.failed;
        if (result.changed) await audited(`account.${action}`, id);
        if (!result.changed) {
          io.out(`${didOf(id)} was already ${action}d`);
          return EXIT.ok;
        }
        io.out(action === 'disable' ? `disabled ${didOf(id)}; ${result.revoked_sessions} session(s) revoked` : `enabled ${didOf(id)}`);
        return EXIT.ok;
      }
      case 'delete': {
        const id = didArgument(subject, 'accounts delete');
        const account = await existing(id);
        if (account === null) return EXIT.failed;
        if (account.deleted_at !== null || account.merged_into !== null) {
          io.err(`${didOf(id)} is ${status(account)}; nothing to delete`);
          return EXIT.failed;
        }
        const identities = await store.listIdentities(id);
        if (!(await confirmed('delete', `Delete ${didOf(id)} and its ${identities.length} identity(ies) for good?`)))
          return EXIT.notConfirmed;
        const deleted = await lifecycle.deleteById(id, 'operator');
        if (deleted === null) {
          io.err(`${didOf(id)} could not be deleted (deleted or merged meanwhile)`);
          return EXIT.failed;
        }
        await audited('account.delete', id);
        io.out(
          `deleted ${didOf(id)}: ${deleted.identities} identity(ies), ${deleted.revoked_sessions} session(s) revoked, ` +
            `${deleted.keys} key(s), ${deleted.connect_apps} Connect app(s)`,
        );
        return EXIT.ok;
      }
      default:
        fail('accounts: expected "show", "disable", "enable" or "delete"');
    }
  }

  if (command === 'sessions') {
    if (action !== 'revoke' || subject !== undefined) fail('sessions: expected "revoke --account <did>"');
    onlyOptions('sessions revoke', values);
    const id = didArgument(values.account, 'sessions revoke --account');
    if ((await existing(id)) === null) return EXIT.failed;
    if (!(await confirmed('revoke', `Sign ${didOf(id)} out of every browser?`))) return EXIT.notConfirmed;
    const count = await store.revokeAllForAccount(id, deps.now().getTime());
    await activity.record(id, 'sessions_revoked', { count, scope: 'all', by: 'operator' });
    await audited('sessions.revoke', id);
    io.out(`revoked ${count} session(s) of ${didOf(id)}`);
    return EXIT.ok;
  }

  // activity
  if (action !== undefined) fail(`activity: unexpected "${action}"`);
  onlyOptions('activity', values);
  const id = didArgument(values.account, 'activity --account');
  let limit = 50;
  if (values.limit !== undefined) {
    if (!/^[0-9]{1,4}$/.test(values.limit) || Number(values.limit) < 1 || Number(values.limit) > 1000)
      fail('activity: --limit must be 1 to 1000');
    limit = Number(values.limit);
  }
  if ((await existing(id)) === null) return EXIT.failed;
  await audited('account.activity.view', id);
  const events = (await store.listActivity(id, { limit })).map(activityView);
  if (values.json) {
    io.out(JSON.stringify(events, null, 2));
    return EXIT.ok;
  }
  if (events.length === 0) io.out('no events');
  for (const event of events) {
    const detail = Object.entries(event.detail)
      .map(([key, value]) => `${key}=${JSON.stringify(value)}`)
      .join(' ');
    io.out(`${event.at}  ${event.kind.padEnd(19)} ${detail}`.trimEnd());
  }
  return EXIT.ok;
}
