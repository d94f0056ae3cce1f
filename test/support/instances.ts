/**
 * Real oc-host processes for multi-instance tests and benches: the compiled
 * service, `node dist/src/main.js` as `npm start` runs it (main.js serves
 * when it is the entry), on a free loopback port, with the environment
 * given. The tests' global setup (test/support/global-setup.ts) and
 * `npm run bench` build it first.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';
import { signBip322 } from './bitcoin-signer.js';
import { built } from './built.js';
import type { Wallet } from './auth-client.js';

const root = fileURLToPath(new URL('../..', import.meta.url));

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.listen(0, '127.0.0.1', () => {
      const port = (server.address() as { port: number }).port;
      server.close(() => resolve(port));
    });
    server.on('error', reject);
  });
}

/**
 * A free port held by a placeholder listener until `release()`: setup that
 * binds other servers meanwhile (an OpenID provider on port 0) cannot be
 * handed the same port, as it can between freePort() and a later listen.
 */
export async function reservePort(): Promise<{ port: number; release: () => Promise<void> }> {
  const server = createServer();
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const port = (server.address() as { port: number }).port;
  return { port, release: () => new Promise((resolve) => server.close(() => resolve())) };
}

export interface Instance {
  /** `http://127.0.0.1:<port>` */
  readonly url: string;
  readonly port: number;
  readonly child: ChildProcess;
  /** Resolves with the exit code (or signal name) once the process is gone. */
  readonly exited: Promise<number | string | null>;
  /** SIGTERM, then SIGKILL after `graceMs`; resolves when the process is gone. */
  stop(graceMs?: number): Promise<void>;
}

export async function startInstance(env: Record<string, string>, options: { readyTimeoutMs?: number } = {}): Promise<Instance> {
  const port = env.PORT ? Number(env.PORT) : await freePort();
  const url = `http://127.0.0.1:${port}`;
  const debug = process.env.DEBUG_PROCESS !== undefined;
  // OC_CPU_PROF_DIR: each instance writes a V8 CPU profile there when it exits (docs/testing.md "Profiling").
  const profileDir = process.env.OC_CPU_PROF_DIR;
  const profiling = profileDir === undefined || profileDir === '' ? [] : ['--cpu-prof', '--cpu-prof-dir', profileDir];
  const child = spawn(process.execPath, [...profiling, built('src/main.ts')], {
    cwd: root,
    env: { ...process.env, HOST: '127.0.0.1', LOG_LEVEL: debug ? 'info' : 'silent', ...env, PORT: String(port) },
    stdio: ['ignore', debug ? 'inherit' : 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr = (stderr + chunk.toString('utf8')).slice(-4000);
  });
  const exited = new Promise<number | string | null>((resolve) => child.once('exit', (code, signal) => resolve(code ?? signal)));
  const instance: Instance = {
    url,
    port,
    child,
    exited,
    async stop(graceMs = 5000) {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
      await exited;
      clearTimeout(timer);
    },
  };
  const deadline = Date.now() + (options.readyTimeoutMs ?? 30_000);
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`instance: exited early with ${child.exitCode}: ${stderr}`);
    try {
      const response = await fetch(`${url}/readyz`);
      if (response.ok) return instance;
    } catch {
      // not listening yet
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  await instance.stop(0);
  throw new Error(`instance: not ready within the deadline: ${stderr}`);
}

/** Signs `wallet` in on a running instance by a BIP-322 challenge, as a browser of `origin` would; answers the session token. */
export async function signInOnInstance(instance: Pick<Instance, 'url'>, origin: string, wallet: Wallet): Promise<string> {
  const challenge = (await (
    await fetch(`${instance.url}/api/challenge?addr=${wallet.address}&audience=${encodeURIComponent(origin)}&purpose=login`)
  ).json()) as { message: string; nonce: string };
  const signature = signBip322({ privateKey: wallet.privateKey, address: wallet.address, message: challenge.message });
  const signedIn = await fetch(`${instance.url}/api/auth/signin`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', origin },
    body: JSON.stringify({ address: wallet.address, message: challenge.message, signature, nonce: challenge.nonce }),
  });
  if (signedIn.status !== 200) throw new Error(`instance: sign-in answered ${signedIn.status}`);
  return ((await signedIn.json()) as { token: string }).token;
}
