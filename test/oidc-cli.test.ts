/**
 * The operator's OpenID commands (docs/protocol.md §8 "Clients" and "Keys"):
 * `oc-host oidc clients …` in process on every engine (a secret shown once
 * and kept hashed, metadata the provider refuses, a rotated secret that ends
 * the old one at the token endpoint), and `oc-host keys list|rotate --oidc`
 * as a process.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runOidcCommand } from '../src/cli/oidc.js';
import type { OperatorIo } from '../src/cli/operator.js';
import { UsageError } from '../src/cli/usage.js';
import { built } from './support/built.js';
import type { OidcService } from '../src/features/oidc/index.js';
import { operatorRegistry } from './support/oidc-rp.js';
import { ResourceRegistry } from '../src/features/oidc/resources.js';
import { AuthHarness, forEachEngine, LOCAL_ORIGIN } from './support/auth-harness.js';
import { TestClock } from './support/clock.js';

const root = join(import.meta.dirname, '..');

class RecordingIo implements OperatorIo {
  readonly lines: string[] = [];
  readonly errors: string[] = [];
  answer: string | null = null;
  out(line: string): void {
    this.lines.push(line);
  }
  err(line: string): void {
    this.errors.push(line);
  }
  async ask(): Promise<string | null> {
    return this.answer;
  }
}

function cliSuite(engine: 'sqlite' | 'postgres'): void {
  let harness: AuthHarness;
  let oidc: OidcService;

  beforeAll(async () => {
    harness = await AuthHarness.open(engine, new TestClock(Date.now()));
    oidc = await operatorRegistry(harness.store, LOCAL_ORIGIN, harness.clock.now);
  });
  afterAll(async () => {
    await harness.close();
  });

  async function run(args: string[], io = new RecordingIo()): Promise<{ code: number; io: RecordingIo }> {
    return { code: await runOidcCommand(args, { oidc, io }), io };
  }

  it('adds a confidential client, shows its secret once and keeps only its hash', async () => {
    const { code, io } = await run([
      'clients',
      'add',
      '--name',
      'Gitea',
      '--redirect-uri',
      'https://git.example/user/oauth2/oc/callback',
      '--json',
    ]);
    expect(code).toBe(0);
    const issued = JSON.parse(io.lines.join('\n'));
    expect(issued.client_id).toMatch(/^oc_[0-9a-f]{32}$/);
    expect(issued.client_secret).toMatch(/^[A-Za-z0-9_-]{43}$/);
    const stored = await harness.store.findOidcClient(issued.client_id);
    expect(stored?.metadata).not.toContain(issued.client_secret);
    expect(JSON.parse(stored?.metadata ?? '{}').client_secret).toMatch(/^sha256:[A-Za-z0-9_-]{43}$/);

    const shown = await run(['clients', 'show', issued.client_id]);
    expect(shown.io.lines.join('\n')).toContain('confidential (client_secret_basic)');
    expect(shown.io.lines.join('\n')).not.toContain(issued.client_secret);
    const listed = await run(['clients', 'list']);
    expect(listed.io.lines.some((line) => line.startsWith(`${issued.client_id}  Gitea  operator  https://git.example/`))).toBe(true);

    const rotated = await run(['clients', 'rotate-secret', issued.client_id]);
    const secret = /^secret {7}(\S+)$/.exec(rotated.io.lines[0] ?? '')?.[1];
    expect(secret).toBeDefined();
    expect(secret).not.toBe(issued.client_secret);

    expect((await run(['clients', 'first-party', issued.client_id, 'on'])).code).toBe(0);
    expect((await oidc.clients.find(issued.client_id))?.first_party).toBe(true);

    const refused = new RecordingIo();
    refused.answer = 'no';
    expect((await run(['clients', 'remove', issued.client_id], refused)).code).toBe(3);
    const confirmed = new RecordingIo();
    confirmed.answer = 'remove';
    expect((await run(['clients', 'remove', issued.client_id], confirmed)).code).toBe(0);
    expect((await run(['clients', 'show', issued.client_id])).code).toBe(1);
    expect((await run(['clients', 'rotate-secret', issued.client_id])).code).toBe(1);
  });

  it('adds a public client without a secret', async () => {
    const { code, io } = await run(['clients', 'add', '--name', 'SPA', '--public', '--redirect-uri', 'https://spa.example/cb', '--json']);
    expect(code).toBe(0);
    const issued = JSON.parse(io.lines.join('\n'));
    expect(issued.client_secret).toBeUndefined();
    expect(issued.metadata.token_endpoint_auth_method).toBe('none');
    await expect(run(['clients', 'rotate-secret', issued.client_id])).rejects.toThrow(/public client has no secret/);
  });

  it('adds a device client (RFC 8628): public unless given a method, no redirect URI, the device grant', async () => {
    const tv = await run(['clients', 'add', '--name', 'TV', '--device', '--json']);
    expect(tv.code).toBe(0);
    const issued = JSON.parse(tv.io.lines.join('\n'));
    expect(issued.client_secret).toBeUndefined();
    expect(issued.metadata).toMatchObject({
      token_endpoint_auth_method: 'none',
      redirect_uris: [],
      response_types: [],
      grant_types: ['urn:ietf:params:oauth:grant-type:device_code', 'refresh_token'],
    });
    const both = await run([
      'clients',
      'add',
      '--name',
      'Both ways',
      '--device',
      '--auth-method',
      'client_secret_post',
      '--redirect-uri',
      'https://b.example/cb',
      '--json',
    ]);
    const confidential = JSON.parse(both.io.lines.join('\n'));
    expect(confidential.client_secret).toBeTypeOf('string');
    expect(confidential.metadata.grant_types).toEqual([
      'authorization_code',
      'urn:ietf:params:oauth:grant-type:device_code',
      'refresh_token',
    ]);
    await expect(run(['clients', 'add', '--name', 'Bad', '--device', '--machine'])).rejects.toThrow(/either --machine or --device/);
    await run(['clients', 'remove', issued.client_id, '--yes']);
    await run(['clients', 'remove', confidential.client_id, '--yes']);
  });

  it('refuses metadata the provider would not load, and bad usage, as usage errors', async () => {
    const cases: string[][] = [
      ['clients', 'add', '--name', 'Frag', '--redirect-uri', 'https://a.example/cb#x'],
      ['clients', 'add', '--name', 'Rel', '--redirect-uri', '/relative'],
      ['clients', 'add', '--redirect-uri', 'https://a.example/cb'],
      ['clients', 'add', '--name', 'None'],
      ['clients', 'add', '--name', 'Alg', '--redirect-uri', 'https://a.example/cb', '--alg', 'HS256'],
      ['clients', 'add', '--name', 'Jwt', '--redirect-uri', 'https://a.example/cb', '--auth-method', 'client_secret_jwt'],
      ['clients', 'add', '--name', 'Both', '--redirect-uri', 'https://a.example/cb', '--public', '--auth-method', 'client_secret_post'],
      ['clients', 'show'],
      ['clients', 'show', 'a', 'b'],
      ['clients', 'frob'],
      ['keys'],
      ['clients', 'list', '--yes'],
    ];
    for (const args of cases) await expect(run(args), args.join(' ')).rejects.toBeInstanceOf(UsageError);
    expect(await harness.store.listOidcClients()).toHaveLength(1);
  });
  it('warns when an added logo is not https, and still adds the client; an https logo gets no warning', async () => {
    const plain = await run([
      'clients',
      'add',
      '--name',
      'Old',
      '--redirect-uri',
      'https://old.example/cb',
      '--logo-uri',
      'http://old.example/logo.png',
    ]);
    expect(plain.code).toBe(0);
    expect(plain.io.errors).toContain('warning: --logo-uri is not https, so the sign-in and consent pages will not show it');
    const secure = await run([
      'clients',
      'add',
      '--name',
      'New',
      '--redirect-uri',
      'https://new.example/cb',
      '--logo-uri',
      'https://new.example/logo.png',
      '--require-par',
      '--json',
    ]);
    expect(secure.code).toBe(0);
    expect(secure.io.errors.filter((line) => line.startsWith('warning'))).toEqual([]);
    expect(JSON.parse(secure.io.lines.join('\n')).metadata.require_pushed_authorization_requests).toBe(true);
  });
  it('registers, lists and removes APIs, and adds a machine client allowed some of their scopes', async () => {
    const added = await run([
      'resources',
      'add',
      'https://ledger.example/api',
      '--scopes',
      'read:ledger write:ledger',
      '--name',
      'Ledger',
      '--json',
    ]);
    expect(added.code).toBe(0);
    expect(JSON.parse(added.io.lines.join('\n'))).toMatchObject({
      uri: 'https://ledger.example/api',
      name: 'Ledger',
      scopes: ['read:ledger', 'write:ledger'],
      alg: 'ES256',
      access_token_seconds: 600,
    });
    await expect(run(['resources', 'add', 'https://ledger.example/api', '--scopes', 'x'])).rejects.toThrow(/registered already/);
    // (This registry is a developer's, on http://localhost: plain http is allowed there, as for redirect URIs.)
    await expect(run(['resources', 'add', 'ledger', '--scopes', 'x'])).rejects.toThrow(/absolute URI/);
    await expect(run(['resources', 'add', 'https://other.example/#frag', '--scopes', 'x'])).rejects.toThrow(/fragment/);
    await expect(run(['resources', 'add', 'https://other.example/', '--scopes', 'openid'])).rejects.toThrow(/OpenID scope/);
    await expect(run(['resources', 'add', 'https://other.example/'])).rejects.toThrow(/--scopes is required/);
    await expect(run(['resources', 'add', 'https://other.example/', '--scopes', 'x', '--token-seconds', '5'])).rejects.toThrow(
      /60 to 86400/,
    );
    await expect(run(['resources', 'add', 'https://other.example/', '--scopes', 'x', '--alg', 'HS256'])).rejects.toThrow(/--alg/);
    // Under the production rules an API is https (or any other absolute URI, a URN say), never plain http.
    const production = new ResourceRegistry({ store: harness.store, now: () => harness.clock.ms, development: false });
    await expect(production.add({ uri: 'http://ledger.example/v2', scopes: ['x'] })).rejects.toThrow(/must use https/);
    expect((await production.add({ uri: 'urn:example:ledger', scopes: ['x'] })).uri).toBe('urn:example:ledger');
    expect(await production.remove('urn:example:ledger')).toBe(true);
    const listed = await run(['resources', 'list']);
    expect(listed.io.lines).toEqual(['https://ledger.example/api  Ledger  ES256  600s  read:ledger write:ledger']);

    const machine = await run(['clients', 'add', '--name', 'Nightly', '--machine', '--api-scopes', 'read:ledger', '--json']);
    expect(machine.code).toBe(0);
    const issued = JSON.parse(machine.io.lines.join('\n'));
    expect(issued.client_secret).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(issued.metadata).toMatchObject({
      grant_types: ['client_credentials'],
      response_types: [],
      redirect_uris: [],
      oc_api_scopes: ['read:ledger'],
    });
    await expect(run(['clients', 'add', '--name', 'Bad', '--machine', '--redirect-uri', 'https://x.example/cb'])).rejects.toThrow(
      /no redirect URIs/,
    );

    const refused = new RecordingIo();
    expect((await run(['resources', 'remove', 'https://ledger.example/api'], refused)).code).toBe(3);
    expect((await run(['resources', 'remove', 'https://ledger.example/api', '--yes'])).code).toBe(0);
    expect((await run(['resources', 'remove', 'https://ledger.example/api', '--yes'])).code).toBe(1);
  });
}

await forEachEngine('oc-host oidc clients', cliSuite);

describe('oc-host keys with the OpenID provider', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'oc-oidc-keys-'));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  function cli(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
    return new Promise((resolve) => {
      execFile(
        process.execPath,
        [built('src/cli.ts'), ...args],
        { env: { ...process.env, LOG_LEVEL: 'silent', DATABASE_URL: `sqlite:${join(dir, 'oc.sqlite')}` }, cwd: root },
        (error, stdout, stderr) => resolve({ code: error ? Number(error.code ?? 1) : 0, stdout, stderr }),
      );
    });
  }

  it('lists the session key and one provider key per algorithm, rotates one algorithm with overlap, and answers --help', async () => {
    expect((await cli(['migrate'])).code).toBe(0);
    const first = await cli(['keys', 'list']);
    expect(first.code).toBe(0);
    const rows = first.stdout.trim().split('\n');
    expect(rows.filter((row) => row.startsWith('session  EdDSA ')).map((row) => row.split(/\s+/)[3])).toEqual(['signing']);
    expect(
      rows
        .filter((row) => row.startsWith('oidc '))
        .map((row) => `${row.split(/\s+/)[1]} ${row.split(/\s+/)[3]}`)
        .sort(),
    ).toEqual(['ES256 signing', 'EdDSA signing', 'RS256 signing']);
    const rotated = await cli(['keys', 'rotate', '--oidc', '--alg', 'ES256']);
    expect(rotated.code).toBe(0);
    expect(rotated.stdout).toMatch(/^new OpenID provider key ES256 [A-Za-z0-9_-]{43}\n$/);
    const after = (await cli(['keys', 'list'])).stdout.trim().split('\n');
    expect(
      after
        .filter((row) => row.startsWith('oidc     ES256'))
        .map((row) => row.split(/\s+/)[3])
        .sort(),
    ).toEqual(['published', 'signing']);
    expect((await cli(['keys', 'rotate', '--alg', 'ES256'])).code).toBe(2);
    expect((await cli(['keys', 'rotate', '--oidc', '--alg', 'HS256'])).code).toBe(2);
    const help = await cli(['oidc', '--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/^Usage:\n {2}oc-host oidc clients add /);
  }, 60_000);

  it('refuses a back-channel logout address the service would not send to, as the registration endpoint does', async () => {
    const add = (uri: string) =>
      cli(['oidc', 'clients', 'add', '--name', 'Wiki', '--redirect-uri', 'https://wiki.example/cb', '--backchannel-logout-uri', uri]);
    expect((await cli(['migrate'])).code).toBe(0);
    const refused = await add('https://10.1.2.3/logout');
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('oidc: backchannel_logout_uri: the address is not globally reachable');
    expect((await add('https://wiki.example/logout')).code).toBe(0);
  }, 60_000);
});
