/**
 * SIGTERM and SIGINT always end the service (docs/operations.md "Stopping"),
 * tested on real processes started the ways the README and the Dockerfile
 * start them: `npm start` (npm, then node), `node dist/src/main.js` (the
 * Dockerfile's command) and `oc-host serve`, each in a process group of its
 * own, signalled as a supervisor does, idle, under load, with idle
 * keep-alive connections, right after start-up, and with a log pipe that
 * nobody reads any more. Every wait is bounded.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildAttestationMessage } from '../src/attest/index.js';
import { addressFromPrivateKey, signBip322 } from '../src/bitcoin/signer.js';
import { startEsploraFake } from './support/esplora-fake.js';
import { freePort } from './support/instances.js';

const root = new URL('..', import.meta.url).pathname;
/** SHUTDOWN_GRACE_MS (10 s) plus the final flush (1 s) plus slack for a loaded machine. */
const STOP_BOUND_MS = 14_000;

let dir: string;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'oc-shutdown-'));
  // The Dockerfile's command and `oc-host serve` run the compiled service.
  execFileSync('npm', ['run', 'build'], { cwd: root, stdio: 'ignore' });
}, 120_000);
afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

interface Started {
  readonly child: ChildProcess;
  readonly url: string;
  /** Stops reading the child's stdout, as a supervisor that only waits for the exit does. */
  stopReading(): void;
}

type How = 'npm start' | 'node dist/src/main.js' | 'oc-host serve';

async function start(how: How, name: string, env: Record<string, string> = {}): Promise<Started> {
  const port = await freePort();
  const [command, args] =
    how === 'npm start'
      ? ['npm', ['start', '--silent']]
      : how === 'oc-host serve'
        ? [process.execPath, [join(root, 'dist/src/cli.js'), 'serve']]
        : [process.execPath, [join(root, 'dist/src/main.js')]];
  const child = spawn(command as string, args as string[], {
    cwd: root,
    // A process group of its own, like a service under a supervisor.
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: {
      ...process.env,
      PORT: String(port),
      // Info level: every request writes log lines, so a stalled reader fills the pipe.
      LOG_LEVEL: 'info',
      DATABASE_URL: `sqlite:${join(dir, `${name}.sqlite`)}`,
      NOSTR_RELAYS: 'ws://127.0.0.1:9',
      ESPLORA_URLS: 'http://127.0.0.1:9',
      ...env,
    },
  });
  const drain = () => {};
  child.stdout!.on('data', drain);
  child.stderr!.on('data', drain);
  return {
    child,
    url: `http://127.0.0.1:${port}`,
    stopReading: () => {
      child.stdout!.off('data', drain);
      child.stdout!.pause();
    },
  };
}

async function waitForReady(url: string, child: ChildProcess): Promise<void> {
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null || child.signalCode !== null) throw new Error(`server exited early (${child.exitCode ?? child.signalCode})`);
    try {
      const response = await fetch(`${url}/readyz`, { signal: AbortSignal.timeout(1000) });
      if (response.ok) return;
    } catch {
      // not listening yet
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error('server did not become ready');
}

function groupAlive(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
    return true;
  } catch {
    return false;
  }
}

/**
 * Sends `signal` to the whole process group and waits until no process of
 * the group is left; answers how long that took, or kills the group and
 * fails past the bound.
 */
async function stopGroup(child: ChildProcess, signal: 'SIGTERM' | 'SIGINT'): Promise<number> {
  const pgid = child.pid!;
  const started = Date.now();
  process.kill(-pgid, signal);
  while (groupAlive(pgid)) {
    if (Date.now() - started > STOP_BOUND_MS) {
      process.kill(-pgid, 'SIGKILL');
      throw new Error(`process group still running ${STOP_BOUND_MS} ms after ${signal}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return Date.now() - started;
}

/** Sends `count` requests that stay open on keep-alive connections of `agent`. */
function hold(url: string, agent: Agent, count: number, path = '/healthz'): Promise<unknown[]> {
  return Promise.all(
    Array.from(
      { length: count },
      () =>
        new Promise((resolve) => {
          const req = request(`${url}${path}`, { agent }, (response) => {
            response.resume();
            response.on('end', () => resolve(response.statusCode));
            response.on('error', resolve);
          });
          req.on('error', resolve);
          req.end();
        }),
    ),
  );
}

/** Runs `body` against a started service, and never leaves its process group behind. */
async function withService(how: How, name: string, body: (started: Started) => Promise<void>, env: Record<string, string> = {}): Promise<void> {
  const started = await start(how, name, env);
  try {
    await body(started);
  } finally {
    if (groupAlive(started.child.pid!)) process.kill(-started.child.pid!, 'SIGKILL');
  }
}

describe('stopping the service', () => {
  it.each(['npm start', 'node dist/src/main.js'] as const)('%s, SIGTERM to the group, the log pipe no longer read: every process ends in time', async (how) => {
    await withService(how, `stalled-${how.replace(/\W+/g, '-')}`, async ({ child, url, stopReading }) => {
      await waitForReady(url, child);
      stopReading();
      // Enough requests that the unread log outgrows the pipe.
      const agent = new Agent({ keepAlive: true, maxSockets: 20 });
      for (let round = 0; round < 40; round += 1) await hold(url, agent, 50);
      agent.destroy();
      expect(await stopGroup(child, 'SIGTERM')).toBeLessThan(STOP_BOUND_MS);
    });
  });

  it('npm start, idle, SIGINT to the group: exits promptly', async () => {
    await withService('npm start', 'npm-idle', async ({ child, url }) => {
      await waitForReady(url, child);
      expect(await stopGroup(child, 'SIGINT')).toBeLessThan(5_000);
    });
  });

  it.each(['node dist/src/main.js', 'oc-host serve'] as const)('%s, idle: SIGTERM exits 0 promptly', async (how) => {
    await withService(how, `idle-${how.replace(/\W+/g, '-')}`, async ({ child, url }) => {
      await waitForReady(url, child);
      const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
      expect(await stopGroup(child, 'SIGTERM')).toBeLessThan(5_000);
      expect(await exited).toBe(0);
    });
  });

  it('under load, with 50 requests in flight on keep-alive connections: SIGTERM ends it in time', async () => {
    await withService('node dist/src/main.js', 'load', async ({ child, url }) => {
      await waitForReady(url, child);
      const agent = new Agent({ keepAlive: true, maxSockets: 50 });
      const load = (async () => {
        const deadline = Date.now() + STOP_BOUND_MS;
        while (Date.now() < deadline && groupAlive(child.pid!)) await hold(url, agent, 50, '/api/challenge?addr=bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq');
      })();
      await new Promise((resolve) => setTimeout(resolve, 500));
      expect(await stopGroup(child, 'SIGTERM')).toBeLessThan(STOP_BOUND_MS);
      await load;
      agent.destroy();
    });
  });

  it('with idle keep-alive connections held open: SIGTERM exits 0 promptly', async () => {
    await withService('node dist/src/main.js', 'keepalive', async ({ child, url }) => {
      await waitForReady(url, child);
      const agent = new Agent({ keepAlive: true, maxSockets: 10, keepAliveMsecs: 60_000 });
      await hold(url, agent, 10);
      const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
      expect(await stopGroup(child, 'SIGTERM')).toBeLessThan(5_000);
      expect(await exited).toBe(0);
      agent.destroy();
    });
  });

  it.each([0, 150, 400])('right after start-up (signal %i ms after spawn): SIGTERM ends it in time', async (delay) => {
    await withService('node dist/src/main.js', `startup-${delay}`, async ({ child }) => {
      await new Promise((resolve) => setTimeout(resolve, delay));
      expect(await stopGroup(child, 'SIGTERM')).toBeLessThan(STOP_BOUND_MS);
    });
  });

  it('a second signal during the shutdown ends it at once, a request still in flight', async () => {
    const esplora = await startEsploraFake({ tipHeight: 100 });
    esplora.setDelay(8_000);
    try {
      await withService('node dist/src/main.js', 'second', async ({ child, url }) => {
        await waitForReady(url, child);
        const key = new Uint8Array(32).fill(5);
        const address = addressFromPrivateKey(key, 'p2wpkh', 'mainnet');
        const msg = buildAttestationMessage({ address, identities: [], nonce: '00112233445566778899aabbccddeeff', issuedAt: '2026-01-01T00:00:00Z' });
        const inFlight = fetch(`${url}/api/verify`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ addr: address, msg, sig: signBip322({ privateKey: key, address, message: msg }) }),
        }).catch(() => undefined);
        await new Promise((resolve) => setTimeout(resolve, 300));
        process.kill(-child.pid!, 'SIGTERM');
        await new Promise((resolve) => setTimeout(resolve, 500));
        expect(groupAlive(child.pid!), 'still draining the request after the first signal').toBe(true);
        expect(await stopGroup(child, 'SIGINT')).toBeLessThan(3_000);
        await inFlight;
      }, { ESPLORA_URLS: esplora.url });
    } finally {
      await esplora.close();
    }
  });
});
