/**
 * The operator's commands (docs/operations.md "Accounts"): `accounts show |
 * disable | enable | delete`, `sessions revoke --account`, `activity
 * --account`, on every engine in-process, and through the real `oc-host`
 * process for exit codes, --help and the confirmation read from stdin.
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { runOperatorCommand, type OperatorIo } from '../src/cli/operator.js';
import { UsageError } from '../src/cli/usage.js';
import { built } from './support/built.js';
import { DatabaseMissingError } from '../src/platform/storage/index.js';
import { openStore } from '../src/store.js';
import { newWallet } from './support/auth-client.js';
import { type AuthHarness, expectError, forEachEngine, useAuthSuite } from './support/auth-harness.js';
import { createTestDatabase, postgresTestUrl } from './support/databases.js';
import { useTempDir } from './support/temp-dir.js';

const root = fileURLToPath(new URL('..', import.meta.url));

interface Captured extends OperatorIo {
  readonly lines: string[];
  readonly errors: string[];
  answers: string[];
}

function capture(answers: string[] = []): Captured {
  const io: Captured = {
    lines: [],
    errors: [],
    answers,
    out: (line) => io.lines.push(line),
    err: (line) => io.errors.push(line),
    ask: async () => io.answers.shift() ?? null,
  };
  return io;
}

function operatorSuite(engine: 'sqlite' | 'postgres'): void {
  const auth = useAuthSuite(engine);

  const run = (argv: string[], io: Captured) =>
    runOperatorCommand(argv, { store: auth.harness.store, io, now: auth.harness.clock.now, publicUrl: 'http://localhost:8787' });

  async function account(): Promise<{ did: string; wallet: ReturnType<typeof newWallet>; client: ReturnType<AuthHarness['browser']> }> {
    const wallet = newWallet();
    const client = auth.harness.browser(auth.app);
    client.userAgent = 'Mozilla/5.0 (X11; Linux x86_64; rv:140.0) Gecko/20100101 Firefox/140.0';
    const reply = await client.signIn(wallet);
    expect(reply.status).toBe(200);
    return { did: reply.body.account.did_oc, wallet, client };
  }

  it('shows an account by did, address or e-mail, as text or JSON; 1 for none', async () => {
    const { did, wallet } = await account();
    let io = capture();
    expect(await run(['accounts', 'show', did], io)).toBe(0);
    expect(io.lines[0]).toBe(`account     ${did} (btc)`);
    expect(io.lines).toContain('status      active');
    expect(io.lines).toContain(`  btc      ${wallet.address}`);
    expect(io.lines.find((line) => line.startsWith('sessions'))).toBe('sessions    1 live');
    io = capture();
    expect(await run(['accounts', 'show', wallet.address, '--json'], io)).toBe(0);
    const shown = JSON.parse(io.lines.join('\n'));
    expect(shown).toMatchObject({ did_oc: did, status: 'active', identities: [{ kind: 'btc', value: wallet.address }] });
    expect(shown.live_sessions[0]).toMatchObject({ device: 'Firefox 140 on Linux' });
    io = capture();
    expect(await run(['accounts', 'show', 'nobody@example.org'], io)).toBe(1);
    expect(io.errors).toEqual(['no account holds nobody@example.org']);
  });

  it('disables after a confirmation (sessions end, sign-in refused), enables, and records both', async () => {
    const { did, wallet, client } = await account();
    let io = capture(['no']);
    expect(await run(['accounts', 'disable', did], io)).toBe(3);
    expect(io.errors).toEqual(['not confirmed; nothing was changed']);
    expect((await client.me()).status).toBe(200);
    io = capture(['disable']);
    expect(await run(['accounts', 'disable', did], io)).toBe(0);
    expect(io.lines).toEqual([`disabled ${did}; 1 session(s) revoked`]);
    expectError(await client.me(), 401, 'not_authenticated');
    expectError(await auth.harness.browser(auth.app).signIn(wallet), 403, 'account_disabled');
    io = capture();
    expect(await run(['accounts', 'show', did], io)).toBe(0);
    expect(io.lines[1]).toMatch(/^status {6}disabled since \d{4}-/);
    io = capture();
    expect(await run(['accounts', 'disable', did, '--yes'], io)).toBe(0);
    expect(io.lines).toEqual([`${did} was already disabled`]);
    io = capture();
    expect(await run(['accounts', 'enable', did], io)).toBe(0);
    expect((await auth.harness.browser(auth.app).signIn(wallet)).status).toBe(200);
    io = capture();
    expect(await run(['activity', '--account', did, '--json'], io)).toBe(0);
    expect(JSON.parse(io.lines.join('\n')).map((event: { kind: string }) => event.kind)).toEqual([
      'signin',
      'account_enabled',
      'account_disabled',
      'signin',
    ]);
    io = capture();
    expect(await run(['activity', '--account', did, '--limit', '2'], io)).toBe(0);
    expect(io.lines).toHaveLength(2);
    expect(io.lines[1]).toMatch(/^\d{4}-\S+Z {2}account_enabled {5}by="operator"$/);
  });

  it('revokes every session of an account and deletes it for good', async () => {
    const { did, wallet, client } = await account();
    const second = auth.harness.browser(auth.app);
    expect((await second.signIn(wallet)).status).toBe(200);
    let io = capture();
    expect(await run(['sessions', 'revoke', '--account', did, '--yes'], io)).toBe(0);
    expect(io.lines).toEqual([`revoked 2 session(s) of ${did}`]);
    expectError(await client.me(), 401, 'not_authenticated');
    expectError(await second.me(), 401, 'not_authenticated');

    io = capture(['delete']);
    expect(await run(['accounts', 'delete', did], io)).toBe(0);
    expect(io.lines).toEqual([`deleted ${did}: 1 identity(ies), 0 session(s) revoked, 0 key(s), 0 Connect app(s)`]);
    const id = did.slice('did:oc:'.length);
    expect((await auth.harness.store.listActivity(id, { limit: 5 })).map((event) => [event.kind, event.detail.by])).toEqual([
      ['account_deleted', 'operator'],
    ]);
    io = capture();
    expect(await run(['accounts', 'delete', did, '--yes'], io)).toBe(1);
    expect(io.errors[0]).toMatch(/^did:oc:[0-9a-f]{32} is deleted \d{4}-.*; nothing to delete$/);
    // The address is free again.
    expect((await auth.harness.browser(auth.app).signIn(wallet)).body.account.did_oc).not.toBe(did);
  });

  it('refuses bad command lines as usage errors, and unknown accounts with 1', async () => {
    for (const argv of [
      ['accounts'],
      ['accounts', 'frob'],
      ['accounts', 'disable'],
      ['accounts', 'disable', 'did:oc:xyz'],
      ['sessions', 'revoke'],
      ['activity', '--account', 'ab'.repeat(16), '--limit', '0'],
      ['accounts', 'show', 'a', 'b'],
      ['accounts', 'show', 'not an@address'],
    ]) {
      await expect(run(argv, capture()), argv.join(' ')).rejects.toBeInstanceOf(UsageError);
    }
    const io = capture();
    expect(await run(['accounts', 'enable', `did:oc:${'0'.repeat(32)}`], io)).toBe(1);
    expect(io.errors).toEqual([`no account did:oc:${'0'.repeat(32)}`]);
  });

  it('refuses an option the command does not take as a usage error, and changes nothing', async () => {
    const { did, client } = await account();
    for (const [argv, message] of [
      [['accounts', 'show', did, '--yes'], 'accounts show: unexpected --yes'],
      [['accounts', 'show', did, '--limit', '3'], 'accounts show: unexpected --limit'],
      [['accounts', 'enable', did, '--yes'], 'accounts enable: unexpected --yes'],
      [['accounts', 'disable', did, '--yes', '--json'], 'accounts disable: unexpected --json'],
      [['accounts', 'delete', did, '--yes', '--account', did], 'accounts delete: unexpected --account'],
      [['sessions', 'revoke', '--account', did, '--yes', '--json'], 'sessions revoke: unexpected --json'],
      [['sessions', 'revoke', '--account', did, '--yes', '--limit', '5'], 'sessions revoke: unexpected --limit'],
      [['activity', '--account', did, '--yes'], 'activity: unexpected --yes'],
    ] as const) {
      const io = capture(['disable', 'delete', 'revoke']);
      await expect(run([...argv], io), argv.join(' ')).rejects.toThrow(new UsageError(message));
      expect(io.lines, argv.join(' ')).toEqual([]);
    }
    expect((await client.me()).status).toBe(200);
  });

  it('with mustExist opens only a database already set up, and creates nothing', async () => {
    const fresh = await createTestDatabase(engine);
    try {
      await expect(openStore(fresh.url, { mustExist: true })).rejects.toBeInstanceOf(DatabaseMissingError);
      await expect(openStore(fresh.url, { mustExist: true })).rejects.toThrow(/^storage: (no database at|.* holds no oc-host database)/);
      if (engine === 'sqlite') {
        const path = fresh.url.slice('sqlite:'.length);
        expect(existsSync(dirname(path))).toBe(false);
      } else {
        const schema = new URL(fresh.url).searchParams.get('schema')!;
        const client = new pg.Client({ connectionString: postgresTestUrl() });
        await client.connect();
        try {
          expect((await client.query('SELECT 1 FROM information_schema.schemata WHERE schema_name = $1', [schema])).rowCount).toBe(0);
        } finally {
          await client.end();
        }
        const noSuchDatabase = new URL(postgresTestUrl());
        noSuchDatabase.pathname = '/oc_no_such_database';
        await expect(openStore(noSuchDatabase.toString(), { mustExist: true })).rejects.toThrow(/^storage: no database at postgres:/);
      }
      await (await openStore(fresh.url)).close();
      const opened = await openStore(fresh.url, { mustExist: true });
      await opened.close();
    } finally {
      await fresh.cleanup();
    }
  });
}

await forEachEngine('operator commands', operatorSuite);

describe('the oc-host process', () => {
  let dir: string;
  useTempDir('oc-operator-', (made) => {
    dir = made;
  });

  function cli(args: string[], stdin = ''): Promise<{ code: number; stdout: string; stderr: string }> {
    return new Promise((resolve) => {
      const child = execFile(
        process.execPath,
        [built('src/cli.ts'), ...args],
        { env: { ...process.env, LOG_LEVEL: 'silent', DATABASE_URL: `sqlite:${join(dir, 'oc.sqlite')}` }, cwd: root },
        (error, stdout, stderr) => resolve({ code: error ? Number(error.code ?? 1) : 0, stdout, stderr }),
      );
      child.stdin?.end(stdin);
    });
  }

  it('answers --help with 0, a usage error with 2, a refused confirmation with 3', async () => {
    const store = await openStore(`sqlite:${join(dir, 'oc.sqlite')}`);
    let did: string;
    try {
      const created = await store.createAccountWithIdentity({
        account: { kind: 'federated', created_at: Date.now() },
        identity: { kind: 'email', value: 'cli-operator@example.org', verified: true, created_at: Date.now() },
      });
      did = `did:oc:${created.account.id}`;
    } finally {
      await store.close();
    }
    for (const command of ['accounts', 'sessions', 'activity']) {
      const help = await cli([command, '--help']);
      expect(help.code).toBe(0);
      expect(help.stdout).toMatch(/^Usage:\n {2}oc-host /);
    }
    expect((await cli(['accounts', 'frob'])).code).toBe(2);
    const refused = await cli(['accounts', 'delete', did], 'no\n');
    expect(refused.code).toBe(3);
    expect(refused.stderr).toContain('Type "delete" to confirm');
    const closed = await cli(['accounts', 'disable', did]);
    expect(closed.code).toBe(3);
    const shown = await cli(['accounts', 'show', 'CLI-Operator@example.org', '--json']);
    expect(shown.code).toBe(0);
    expect(JSON.parse(shown.stdout)).toMatchObject({ did_oc: did, status: 'active' });
    const deleted = await cli(['accounts', 'delete', did], 'delete\n');
    expect(deleted.code).toBe(0);
    expect(deleted.stdout).toBe(`deleted ${did}: 1 identity(ies), 0 session(s) revoked, 0 key(s), 0 Connect app(s)\n`);
    expect((await cli(['accounts', 'show', did])).stdout).toMatch(/status {6}deleted /);
    expect((await cli(['activity', '--account', 'f'.repeat(32)])).code).toBe(1);
  }, 60_000);
});
