/**
 * The server and CLI as processes: `src/main.ts` serves with no settings but
 * a database path, shuts down gracefully on SIGTERM (in-flight requests
 * finish), and the CLI's migrate/keys commands and exit codes work.
 */
import { execFile, execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildAttestationMessage } from '../src/features/attestations/index.js';
import { addressFromPrivateKey, signBip322 } from './support/bitcoin-signer.js';
import { signAttestation } from './support/attestations.js';
import { startEsploraFake, type EsploraFake } from './support/esplora-fake.js';
import { startNostrRelay } from './support/nostr-relay.js';
import { freePort } from './support/instances.js';
import { built } from './support/built.js';

const root = new URL('..', import.meta.url).pathname;
let dir: string;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'oc-process-'));
});
afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

/** Runs the CLI; a process still running after `timeoutMs` (a read that never ends) is killed and fails the test. */
function cli(args: string[], env: Record<string, string>, timeoutMs = 0): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [built('src/cli.ts'), ...args],
      { env: { ...process.env, LOG_LEVEL: 'silent', ...env }, cwd: root, timeout: timeoutMs, maxBuffer: 1024 * 1024 },
      (error, stdout, stderr) => {
        resolve({ code: error ? (typeof error.code === 'number' ? error.code : 1) : 0, stdout, stderr });
      },
    );
  });
}

async function waitForReady(url: string, child: ChildProcess): Promise<void> {
  const deadline = Date.now() + 30_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`server exited early with ${child.exitCode}`);
    try {
      const response = await fetch(`${url}/readyz`);
      if (response.ok) return;
    } catch {
      // not listening yet
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error('server did not become ready');
}

describe('server process', () => {
  let esplora: EsploraFake;
  beforeAll(async () => {
    esplora = await startEsploraFake({ tipHeight: 100 });
  });
  afterAll(async () => {
    await esplora.close();
  });

  it('finishes an in-flight request on SIGTERM, then exits 0', async () => {
    const port = await freePort();
    const url = `http://127.0.0.1:${port}`;
    const child = spawn(process.execPath, [built('src/main.ts')], {
      cwd: root,
      env: {
        ...process.env,
        PORT: String(port),
        LOG_LEVEL: process.env.DEBUG_PROCESS ? 'debug' : 'silent',
        DATABASE_URL: `sqlite:${join(dir, 'serve.sqlite')}`,
        ESPLORA_URLS: esplora.url,
        NOSTR_RELAYS: 'ws://127.0.0.1:9',
      },
      stdio: process.env.DEBUG_PROCESS ? 'inherit' : 'ignore',
    });
    try {
      await waitForReady(url, child);
      const key = new Uint8Array(32).fill(3);
      const { address, msg, sig } = signAttestation(key, addressFromPrivateKey(key, 'p2wpkh', 'mainnet'), '2026-01-01T00:00:00Z', {
        nonce: '00112233445566778899aabbccddeeff',
      });
      // The chain answers slowly, so the request is in flight when SIGTERM arrives.
      esplora.setDelay(1500);
      const chainCalls = () => esplora.requests.utxo + esplora.requests.tipHeight + esplora.requests.tipHash;
      const before = chainCalls();
      const inFlight = fetch(`${url}/api/verify`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ addr: address, msg, sig }),
      });
      // In flight once the service has asked the chain.
      await expect.poll(chainCalls, { timeout: 10_000, interval: 10 }).toBeGreaterThan(before);
      const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
      child.kill('SIGTERM');
      const response = await inFlight;
      expect(response.status).toBe(200);
      expect(((await response.json()) as { codes: string[] }).codes).toContain('sig_ok_bip322');
      expect(await exited).toBe(0);
      // And it no longer accepts connections.
      await expect(fetch(`${url}/healthz`)).rejects.toThrow();
    } finally {
      esplora.setDelay(0);
      if (child.exitCode === null) child.kill('SIGKILL');
    }
  });

  it('refuses a bad setting with exit code 78 and names the variable', async () => {
    const result = await cli(['serve'], { PORT: 'eighty' });
    expect(result.code).toBe(78);
    expect(result.stderr).toContain('PORT');
  });
});

describe('oc-host CLI', () => {
  const env = () => ({ DATABASE_URL: `sqlite:${join(dir, 'cli.sqlite')}` });

  it('migrate applies the migrations once', async () => {
    const first = await cli(['migrate'], env());
    expect(first.code).toBe(0);
    expect(first.stdout).toMatch(/applied 1 /);
    const second = await cli(['migrate'], env());
    expect(second.stdout).toContain('already current');
  });

  it('keys public prints the JWK, keys rotate adds a key', async () => {
    const before = await cli(['keys', 'public'], env());
    expect(before.code).toBe(0);
    const jwk = JSON.parse(before.stdout);
    expect(jwk).toMatchObject({ kty: 'OKP', crv: 'Ed25519', alg: 'EdDSA', use: 'sig' });
    expect(jwk.d).toBeUndefined();
    const encoded = await cli(['keys', 'public', '--base64url'], env());
    expect(JSON.parse(Buffer.from(encoded.stdout.trim(), 'base64url').toString('utf8'))).toEqual(jwk);
    const rotated = await cli(['keys', 'rotate'], env());
    expect(rotated.code).toBe(0);
    const kid = /^new signing key (\S+)$/m.exec(rotated.stdout)?.[1];
    expect(kid).toBeDefined();
    expect(kid).not.toBe(jwk.kid);
    // The new key is published at once and signs 90 s later: until then the
    // active key, the one `keys public` prints, is the one before it.
    expect(JSON.parse((await cli(['keys', 'public'], env())).stdout).kid).toBe(jwk.kid);
    const listed = await cli(['keys', 'list'], env());
    expect(listed.stdout).toMatch(new RegExp(`^session {2}EdDSA {2}${kid} {2}published, signs from \\S+ {2}created `, 'm'));
    expect(listed.stdout).toMatch(new RegExp(`^session {2}EdDSA {2}${jwk.kid} {2}signing {2}`, 'm'));
  });

  it('publish --file puts an attestation on the relays, check --addr answers the threshold question', async () => {
    const relay = await startNostrRelay();
    const esplora = await startEsploraFake({ tipHeight: 1000 });
    try {
      const key = new Uint8Array(32).fill(9);
      const address = addressFromPrivateKey(key, 'p2wpkh', 'mainnet');
      const blockTime = Math.floor(Date.now() / 1000) - 40 * 86_400;
      esplora.setUtxos(address, [
        {
          txid: 'ab'.repeat(32),
          vout: 0,
          status: { confirmed: true, block_height: 900, block_hash: '00'.repeat(32), block_time: blockTime },
          value: 150_000,
        },
      ]);
      const msg = buildAttestationMessage({
        address,
        identities: ['github:cli-user'],
        nonce: 'aabbccddeeff00112233445566778899',
        issuedAt: new Date(),
      });
      const file = join(dir, 'attestation.json');
      writeFileSync(
        file,
        JSON.stringify({ addr: address, msg, sig: signBip322({ privateKey: key, address, message: msg }), scheme: 'bip322' }),
      );
      const chainEnv = { ...env(), NOSTR_RELAYS: relay.url, ESPLORA_URLS: esplora.url };
      const published = await cli(['publish', '--file', file], chainEnv);
      expect(published.code).toBe(0);
      expect(JSON.parse(published.stdout).status).toBe('published');

      const passing = await cli(['check', '--addr', address, '--min-sats', '100000', '--min-days', '30'], chainEnv);
      expect(passing.code).toBe(0);
      expect(JSON.parse(passing.stdout)).toMatchObject({ ok: true, sats: 150_000, days: 40, address });
      const failing = await cli(['check', '--identity', 'github:cli-user', '--min-sats', '200000'], chainEnv);
      expect(failing.code).toBe(1);
      expect(JSON.parse(failing.stdout)).toMatchObject({ ok: false, reasons: ['below_min_sats'] });
      const missing = await cli(['check', '--id', 'ab'.repeat(32)], chainEnv);
      expect(missing.code).toBe(1);
      expect(JSON.parse(missing.stdout)).toEqual({ ok: false, reasons: ['not_found'] });
      expect((await cli(['check', '--addr', address, '--id', 'ab'.repeat(32)], chainEnv)).code).toBe(2);
      expect((await cli(['check', '--addr', address, '--min-sats', '-1'], chainEnv)).code).toBe(2);
    } finally {
      await relay.close();
      await esplora.close();
    }
    // Six processes: like the other multi-command cases here, more than the default 30 s on a loaded machine.
  }, 120_000);

  it('answers usage errors with 2 and --help with 0', async () => {
    expect((await cli(['frobnicate'], env())).code).toBe(2);
    expect((await cli(['verify'], env())).code).toBe(2);
    const help = await cli(['--help'], env());
    expect(help.code).toBe(0);
    expect(help.stdout).toContain('oc-host migrate');
  });

  it('refuses extra arguments and options a command does not take with 2, before doing anything', async () => {
    const kid = JSON.parse((await cli(['keys', 'public'], env())).stdout).kid;
    const rotate = await cli(['keys', 'rotate', 'extra-args'], env());
    expect(rotate.code).toBe(2);
    expect(rotate.stderr).toContain('oc-host: keys rotate: unexpected "extra-args"');
    expect((await cli(['keys', 'rotate', '--base64url'], env())).code).toBe(2);
    expect(JSON.parse((await cli(['keys', 'public'], env())).stdout).kid).toBe(kid);
    for (const argv of [
      ['keys', 'public', 'now'],
      ['keys', 'public', '--file', 'x.json'],
      ['migrate', 'now'],
      ['migrate', '--base64url'],
      ['verify', '--file', 'x.json', 'extra'],
      ['verify', '--file', 'x.json', '--addr', 'bc1q'],
      ['publish', '--file', 'x.json', '--base64url'],
      ['check', '--addr', 'bc1q', 'extra'],
      ['check', '--addr', 'bc1q', '--file', 'x.json'],
      ['help', 'extra'],
      ['serve', 'extra'],
      ['serve', '--file', 'x.json'],
    ]) {
      const result = await cli(argv, env());
      expect(result.code, argv.join(' ')).toBe(2);
      expect(result.stderr, argv.join(' ')).toMatch(/^oc-host: [a-z ]+: unexpected /);
    }
  }, 120_000);

  it('every command but migrate and serve refuses a database that does not exist with 78, and creates nothing', async () => {
    const missing = join(dir, 'no-such-folder', 'deeper', 'oc.sqlite');
    const missingEnv = { DATABASE_URL: `sqlite:${missing}` };
    const did = `did:oc:${'ab'.repeat(16)}`;
    for (const argv of [
      ['keys', 'public'],
      ['keys', 'rotate'],
      ['accounts', 'show', did],
      ['accounts', 'disable', did, '--yes'],
      ['sessions', 'revoke', '--account', did, '--yes'],
      ['activity', '--account', did],
      ['publish', '--file', join(dir, 'attestation.json')],
    ]) {
      const result = await cli(argv, missingEnv);
      expect(result.code, argv.join(' ')).toBe(78);
      expect(result.stderr, argv.join(' ')).toContain(`oc-host: storage: no database at ${missing}; check DATABASE_URL`);
    }
    expect(existsSync(join(dir, 'no-such-folder'))).toBe(false);

    // A file that is there but is not this service's database is not made into one.
    const empty = join(dir, 'empty.sqlite');
    writeFileSync(empty, '');
    const refused = await cli(['keys', 'rotate'], { DATABASE_URL: `sqlite:${empty}` });
    expect(refused.code).toBe(78);
    expect(refused.stderr).toContain(`oc-host: storage: ${empty} holds no oc-host database`);
    expect(statSync(empty).size).toBe(0);

    // migrate creates it; then the others work on it.
    expect((await cli(['migrate'], missingEnv)).code).toBe(0);
    expect((await cli(['keys', 'public'], missingEnv)).code).toBe(0);
  }, 120_000);

  it('verify and publish read only a regular file of at most 64 KiB, and never print what it holds', async () => {
    const secret = join(dir, 'shadow');
    writeFileSync(secret, 'root:$6$SECRETHASH:19000:0:99999:7:::\n');
    const directory = join(dir, 'a-folder');
    mkdirSync(directory);
    const fifo = join(dir, 'a-fifo');
    execFileSync('mkfifo', [fifo]);
    const large = join(dir, 'large.json');
    writeFileSync(large, `{"addr": "${'a'.repeat(64 * 1024)}"}`);
    const cases: Array<[string, RegExp]> = [
      [secret, /^oc-host: cli: \S+ is not JSON$/m],
      [directory, /^oc-host: cli: \S+ is not a regular file$/m],
      [fifo, /^oc-host: cli: \S+ is not a regular file$/m],
      ['/dev/zero', /^oc-host: cli: \/dev\/zero is not a regular file$/m],
      [large, /^oc-host: cli: \S+ is larger than 64 KiB$/m],
      [join(dir, 'not-there.json'), /^oc-host: cli: cannot read \S+: ENOENT$/m],
    ];
    for (const command of ['verify', 'publish']) {
      for (const [file, message] of cases) {
        const result = await cli([command, '--file', file], env(), 20_000);
        expect(result.code, `${command} ${file}`).toBe(2);
        expect(result.stderr, `${command} ${file}`).toMatch(message);
        expect(result.stderr).not.toContain('SECRETHASH');
        expect(result.stderr).not.toContain('root:');
      }
    }
  }, 180_000);
});
