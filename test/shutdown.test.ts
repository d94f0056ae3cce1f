/**
 * SIGTERM and SIGINT always end the service (docs/operations.md "Stopping"),
 * tested on real processes started the ways the README and the Dockerfile
 * start them: `npm start` (npm, then node), `node dist/src/main.js` (the
 * Dockerfile's command, also as PID 1 of a PID namespace of its own, as in a
 * container) and `oc-host serve`, each in a process group of its own,
 * signalled as a supervisor does: idle, under load, with idle keep-alive
 * connections, right after start-up, during the prestart build, and with a
 * log pipe that nobody reads any more. Every wait is bounded.
 */
import { execFileSync, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addressFromPrivateKey } from './support/bitcoin-signer.js';
import { signAttestation } from './support/attestations.js';
import { FINAL_FLUSH_MS, REPEAT_WINDOW_MS, SHUTDOWN_GRACE_MS } from '../src/main.js';
import { startEsploraFake, type EsploraFake } from './support/esplora-fake.js';
import { freePort } from './support/instances.js';

const root = new URL('..', import.meta.url).pathname;
/** The documented bound (grace plus final flush) with slack for a loaded machine. */
const STOP_BOUND_MS = SHUTDOWN_GRACE_MS + FINAL_FLUSH_MS + 2_000;
/** What a stop without requests left to finish may take: the final flush and slack. */
const PROMPT_MS = FINAL_FLUSH_MS + 3_000;

/** A PID namespace needs root (or user namespaces); where there is none, the container cases are skipped. */
const pidNamespaces = spawnSync('unshare', ['--pid', '--fork', 'true'], { stdio: 'ignore' }).status === 0;

let dir: string;
let esplora: EsploraFake;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'oc-shutdown-'));
  esplora = await startEsploraFake({ tipHeight: 100 });
  // The compiled service, as `npm start` would build it first (`npm run build`). Exit status
  // 2 means type errors with the JavaScript emitted all the same: those are
  // the typecheck's to report, these tests need only the output.
  const build = spawnSync(process.execPath, [join(root, 'node_modules/typescript/bin/tsc'), '-p', 'tsconfig.build.json'], {
    cwd: root,
    stdio: 'ignore',
  });
  if (build.status !== 0 && build.status !== 2) throw new Error(`build failed (${build.status})`);
  // Then the page bundles, the rest of `npm run build`, which the compiled service reads (src/http/page-bundle.ts).
  const pages = spawnSync(process.execPath, [join(root, 'dist/src/build-pages.js')], { cwd: root, stdio: 'ignore' });
  if (pages.status !== 0) throw new Error(`page build failed (${pages.status})`);
}, 120_000);
afterAll(async () => {
  await esplora?.close();
  rmSync(dir, { recursive: true, force: true });
});

type How = 'npm start' | 'npm start with its build' | 'node dist/src/main.js' | 'node dist/src/main.js as PID 1' | 'oc-host serve';

interface Started {
  /** The process the supervisor started (npm, node, or unshare for PID 1). */
  readonly child: ChildProcess;
  readonly url: string;
  readonly database: string;
  /** Exit code of `child`, or its signal. */
  readonly exited: Promise<number | string>;
  /** Stops reading the child's standard output, as a supervisor that only waits for the exit does. */
  stopReading(): void;
}

async function start(how: How, name: string, env: Record<string, string> = {}): Promise<Started> {
  const port = await freePort();
  const database = join(dir, `${name}.sqlite`);
  const node = [process.execPath, join(root, 'dist/src/main.js')];
  const [command, ...args] =
    how === 'npm start'
      ? // The build is done (beforeAll); the prestart build has a case of its own.
        ['npm', 'start', '--silent', '--ignore-scripts']
      : how === 'npm start with its build'
        ? ['npm', 'start', '--silent']
        : how === 'oc-host serve'
          ? [process.execPath, join(root, 'dist/src/cli.js'), 'serve']
          : how === 'node dist/src/main.js as PID 1'
            ? ['unshare', '--pid', '--fork', '--kill-child', ...node]
            : node;
  const child = spawn(command!, args, {
    cwd: root,
    // A process group of its own, like a service under a supervisor.
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: {
      ...process.env,
      PORT: String(port),
      // Info level: every request writes log lines, so a stalled reader fills the pipe.
      LOG_LEVEL: 'info',
      DATABASE_URL: `sqlite:${database}`,
      NOSTR_RELAYS: 'ws://127.0.0.1:9',
      ESPLORA_URLS: esplora.url,
      ...env,
    },
  });
  const exited = new Promise<number | string>((resolve) => child.once('exit', (code, signal) => resolve(code ?? signal ?? 'unknown')));
  const drain = () => {};
  child.stdout!.on('data', drain);
  child.stderr!.on('data', drain);
  return {
    child,
    url: `http://127.0.0.1:${port}`,
    database,
    exited,
    stopReading: () => {
      child.stdout!.off('data', drain);
      child.stdout!.pause();
    },
  };
}

async function waitForReady(url: string, child: ChildProcess): Promise<void> {
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null || child.signalCode !== null)
      throw new Error(`server exited early (${child.exitCode ?? child.signalCode})`);
    try {
      const response = await fetch(`${url}/readyz`, { signal: AbortSignal.timeout(1000) });
      if (response.ok) return;
    } catch {
      // not listening yet
    }
    await sleep(100);
  }
  throw new Error('server did not become ready');
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

function groupAlive(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
    return true;
  } catch {
    return false;
  }
}

/** The node process that unshare started as PID 1 of its namespace. */
async function namespaceInit(unshare: ChildProcess): Promise<number> {
  const deadline = Date.now() + 10_000;
  while (Date.now() < deadline) {
    const children = readFileSync(`/proc/${unshare.pid}/task/${unshare.pid}/children`, 'utf8').trim();
    if (children !== '') return Number(children.split(' ')[0]);
    await sleep(5);
  }
  throw new Error('unshare started no process');
}

/**
 * Sends `signal` to `target` (default: the whole process group, as a
 * supervisor does) and waits until no process of the group is left; answers
 * how long that took, or kills the group and fails past the bound.
 */
async function stopGroup(child: ChildProcess, signal: 'SIGTERM' | 'SIGINT', target = -child.pid!): Promise<number> {
  const pgid = child.pid!;
  const started = Date.now();
  process.kill(target, signal);
  while (groupAlive(pgid)) {
    if (Date.now() - started > STOP_BOUND_MS) {
      const left = execFileSync('ps', ['-o', 'pid,ppid,stat,cmd', '-g', String(pgid)], { encoding: 'utf8' });
      process.kill(-pgid, 'SIGKILL');
      throw new Error(`process group still running ${STOP_BOUND_MS} ms after ${signal}:\n${left}`);
    }
    await sleep(25);
  }
  return Date.now() - started;
}

function cleanUp(child: ChildProcess): void {
  if (groupAlive(child.pid!)) process.kill(-child.pid!, 'SIGKILL');
}

/** Sends `count` requests at once on keep-alive connections of `agent`; answers their statuses. */
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

/** A POST /api/verify that waits on the (slowed) chain source. */
function slowVerify(url: string): Promise<Response | undefined> {
  const key = new Uint8Array(32).fill(5);
  const { address, msg, sig } = signAttestation(key, addressFromPrivateKey(key, 'p2wpkh', 'mainnet'), '2026-01-01T00:00:00Z', {
    nonce: '00112233445566778899aabbccddeeff',
  });
  return fetch(`${url}/api/verify`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ addr: address, msg, sig }),
  }).catch(() => undefined);
}

/** Starts the service `how`, waits until it is ready, runs `test`, and cleans up its process group after. */
async function withReadyService(
  how: How,
  name: string,
  test: (started: Started) => Promise<void>,
  env: Record<string, string> = {},
): Promise<void> {
  const started = await start(how, name, env);
  try {
    await waitForReady(started.url, started.child);
    await test(started);
  } finally {
    cleanUp(started.child);
  }
}

/**
 * {@link withReadyService} over a chain source that answers after `delayMs`,
 * with a POST /api/verify put in flight and 300 ms for the service to take it
 * in before `test` runs.
 */
async function withRequestInFlight(
  how: How,
  name: string,
  delayMs: number,
  test: (started: Started, inFlight: Promise<Response | undefined>) => Promise<void>,
): Promise<void> {
  const slow = await startEsploraFake({ tipHeight: 100 });
  slow.setDelay(delayMs);
  try {
    await withReadyService(
      how,
      name,
      async (started) => {
        const inFlight = slowVerify(started.url);
        await sleep(300);
        await test(started, inFlight);
      },
      { ESPLORA_URLS: slow.url },
    );
  } finally {
    await slow.close();
  }
}

describe('stopping the service', () => {
  it('npm start, SIGTERM to the group with a request in flight: npm waits for the service, which finishes the request and exits 0', async () => {
    await withRequestInFlight('npm start', 'npm-drain', 1_500, async ({ child, exited }, inFlight) => {
      process.kill(-child.pid!, 'SIGTERM');
      // npm passes the signal on, so the service gets it twice: still one request to stop.
      await sleep(REPEAT_WINDOW_MS / 2);
      expect(child.exitCode ?? child.signalCode, 'npm exited before the service').toBeNull();
      expect((await inFlight)?.status).toBe(200);
      expect(await exited).toBe(0);
      const started = Date.now();
      while (groupAlive(child.pid!) && Date.now() - started < PROMPT_MS) await sleep(25);
      expect(groupAlive(child.pid!)).toBe(false);
    });
  });

  it("npm start, SIGTERM to npm alone (npm as a container's PID 1, a supervisor that signals the main process): the service ends too", async () => {
    await withReadyService('npm start', 'npm-only', async ({ child, exited }) => {
      expect(await stopGroup(child, 'SIGTERM', child.pid!)).toBeLessThan(PROMPT_MS);
      expect(await exited).toBe(0);
    });
  });

  it('npm start, idle, SIGINT to the group (Ctrl-C): exits 0 promptly', async () => {
    await withReadyService('npm start', 'npm-idle', async ({ child, exited }) => {
      expect(await stopGroup(child, 'SIGINT')).toBeLessThan(PROMPT_MS);
      expect(await exited).toBe(0);
    });
  });

  it('npm start, SIGTERM to the group during the prestart build: every process ends in time', async () => {
    const { child } = await start('npm start with its build', 'npm-build');
    try {
      await sleep(1_500);
      expect(await stopGroup(child, 'SIGTERM')).toBeLessThan(STOP_BOUND_MS);
    } finally {
      cleanUp(child);
    }
  });

  const containers = pidNamespaces ? (['node dist/src/main.js as PID 1'] as const) : [];
  it.each(['npm start', 'node dist/src/main.js', ...containers] as const)(
    '%s, SIGTERM, the log pipe no longer read: exits 0 within the final flush',
    async (how) => {
      await withReadyService(how, `stalled-${how.replace(/\W+/g, '-')}`, async ({ child, url, exited, stopReading }) => {
        stopReading();
        // Far more log than the pipe and the reader's buffer take.
        const agent = new Agent({ keepAlive: true, maxSockets: 20 });
        for (let round = 0; round < 40; round += 1) await hold(url, agent, 50);
        agent.destroy();
        const target = how === 'node dist/src/main.js as PID 1' ? await namespaceInit(child) : -child.pid!;
        expect(await stopGroup(child, 'SIGTERM', target)).toBeLessThan(PROMPT_MS);
        expect(await exited).toBe(0);
      });
    },
  );

  it.each(['node dist/src/main.js', 'oc-host serve', ...containers] as const)('%s, idle: SIGTERM exits 0 promptly', async (how) => {
    await withReadyService(how, `idle-${how.replace(/\W+/g, '-')}`, async ({ child, exited }) => {
      const target = how === 'node dist/src/main.js as PID 1' ? await namespaceInit(child) : -child.pid!;
      expect(await stopGroup(child, 'SIGTERM', target)).toBeLessThan(PROMPT_MS);
      expect(await exited).toBe(0);
    });
  });

  it.skipIf(!pidNamespaces)(
    'node dist/src/main.js as PID 1, SIGTERM while the database is migrated: the start is cut short, exit 0',
    async () => {
      const { child, database, exited } = await start('node dist/src/main.js as PID 1', 'pid1-startup');
      try {
        const init = await namespaceInit(child);
        const deadline = Date.now() + 30_000;
        while (!existsSync(database) && Date.now() < deadline) await sleep(2);
        // As `docker stop` does: to PID 1 alone, from outside its namespace.
        expect(await stopGroup(child, 'SIGTERM', init)).toBeLessThan(STOP_BOUND_MS);
        expect(await exited).toBe(0);
      } finally {
        cleanUp(child);
      }
    },
  );

  it.skipIf(!pidNamespaces)('node dist/src/main.js as PID 1, SIGTERM 300 ms after spawn, while the modules load: exit 0', async () => {
    // PID 1 ignores a signal it has no handler for, so one that came before
    // the handlers were in place was lost and the start carried on.
    const { child, exited } = await start('node dist/src/main.js as PID 1', 'pid1-modules');
    try {
      const init = await namespaceInit(child);
      await sleep(300);
      expect(await stopGroup(child, 'SIGTERM', init)).toBeLessThan(STOP_BOUND_MS);
      expect(await exited).toBe(0);
    } finally {
      cleanUp(child);
    }
  });

  it.each([0, 150, 400])('node dist/src/main.js, SIGTERM %i ms after spawn (start-up): ends in time', async (delay) => {
    const { child } = await start('node dist/src/main.js', `startup-${delay}`);
    try {
      await sleep(delay);
      expect(await stopGroup(child, 'SIGTERM')).toBeLessThan(STOP_BOUND_MS);
    } finally {
      cleanUp(child);
    }
  });

  it.each(['node dist/src/main.js', 'npm start'] as const)(
    '%s, under load, 50 requests in flight on keep-alive connections: SIGTERM ends it in time',
    async (how) => {
      await withReadyService(how, `load-${how.replace(/\W+/g, '-')}`, async ({ child, url, exited }) => {
        const agent = new Agent({ keepAlive: true, maxSockets: 50 });
        const load = (async () => {
          const deadline = Date.now() + STOP_BOUND_MS;
          while (Date.now() < deadline && groupAlive(child.pid!))
            await hold(url, agent, 50, '/api/challenge?addr=bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq');
        })();
        await sleep(500);
        expect(await stopGroup(child, 'SIGTERM')).toBeLessThan(PROMPT_MS);
        expect(await exited).toBe(0);
        await load;
        agent.destroy();
      });
    },
  );

  it('with idle keep-alive connections held open: SIGTERM exits 0 promptly', async () => {
    await withReadyService('node dist/src/main.js', 'keepalive', async ({ child, url, exited }) => {
      const agent = new Agent({ keepAlive: true, maxSockets: 10, keepAliveMsecs: 60_000 });
      await hold(url, agent, 10);
      expect(await stopGroup(child, 'SIGTERM')).toBeLessThan(PROMPT_MS);
      expect(await exited).toBe(0);
      agent.destroy();
    });
  });

  it('a second signal, past the repeat window, ends the shutdown at once with a request still in flight: exit 1', async () => {
    await withRequestInFlight('node dist/src/main.js', 'second', 8_000, async ({ child, exited }, inFlight) => {
      process.kill(-child.pid!, 'SIGTERM');
      // A repeat right away (npm passing the signal on) is the same request.
      process.kill(-child.pid!, 'SIGTERM');
      await sleep(REPEAT_WINDOW_MS + 300);
      expect(groupAlive(child.pid!), 'still draining the request after the first signal').toBe(true);
      expect(await stopGroup(child, 'SIGINT')).toBeLessThan(PROMPT_MS);
      expect(await exited).toBe(1);
      await inFlight;
    });
  });
});
