/**
 * Server entry: parse the config, build the app, listen, and shut down on
 * SIGTERM/SIGINT (stop accepting, finish in-flight requests, close
 * resources), always within {@link SHUTDOWN_GRACE_MS} plus a second
 * (docs/operations.md "Stopping").
 *
 * Why a watchdog thread: the log is written to stdout, and on exit the
 * logger flushes what it still holds synchronously, retrying for as long as
 * the pipe is full. A supervisor that sends SIGTERM and stops reading the
 * pipe (npm exits first, a harness only waits for the exit) leaves the main
 * thread blocked in that retry loop forever, and every timer of the main
 * thread, the force-exit one included, with it. The watchdog runs on its own
 * thread, so it ends the process whatever the main thread is stuck in.
 */
import { Worker } from 'node:worker_threads';
import { ConfigError, loadConfig } from './config.js';
import { buildApp } from './http/app.js';

/** How long in-flight requests get to finish after the first signal. */
export const SHUTDOWN_GRACE_MS = 10_000;
/** After the service is closed, how long the final log flush may take. */
const FINAL_FLUSH_MS = 1_000;

/**
 * A thread that kills this process with SIGKILL when its deadline passes.
 * It never keeps the process alive; `exitSoon` moves the deadline closer.
 */
function startWatchdog(deadlineMs: number): { exitSoon(ms: number): void } {
  const worker = new Worker(
    `const { parentPort, workerData } = require('node:worker_threads');
     const kill = () => process.kill(workerData.pid, 'SIGKILL');
     let timer = setTimeout(kill, workerData.deadlineMs);
     parentPort.on('message', (ms) => { clearTimeout(timer); timer = setTimeout(kill, ms); });`,
    { eval: true, workerData: { pid: process.pid, deadlineMs } },
  );
  worker.unref();
  return { exitSoon: (ms) => worker.postMessage(ms) };
}

export async function serve(env: NodeJS.ProcessEnv = process.env): Promise<void> {
  let config;
  try {
    config = loadConfig(env);
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`${error.message}\n`);
      process.exit(78); // EX_CONFIG
    }
    throw error;
  }

  // Signals are handled from the very start, so one that arrives while the
  // database is migrated or the keys are loaded is not lost: the start is
  // cut short once the app exists (closing it half built is not possible).
  let app: Awaited<ReturnType<typeof buildApp>> | undefined;
  let stopping: string | undefined;
  let watchdog: { exitSoon(ms: number): void } | undefined;
  const exit = (code: number): never => {
    watchdog?.exitSoon(FINAL_FLUSH_MS);
    process.exit(code);
  };
  const shutdown = (signal: string): void => {
    if (stopping !== undefined) {
      // A second signal: the operator does not want to wait.
      app?.log.warn({ signal }, 'server: second signal, exiting now');
      exit(1);
    }
    stopping = signal;
    watchdog = startWatchdog(SHUTDOWN_GRACE_MS + FINAL_FLUSH_MS);
    const force = setTimeout(() => {
      app?.log.error('server: shutdown took over 10 s, exiting');
      exit(1);
    }, SHUTDOWN_GRACE_MS);
    force.unref();
    if (app === undefined) return; // still starting: see below
    app.log.info({ signal }, 'server: shutting down');
    // close() drops the connections idle at that moment; keep-alive
    // connections whose in-flight request finishes later go idle afterwards,
    // so keep dropping idle ones until the server is closed.
    const server = app.server;
    const sweep = setInterval(() => server.closeIdleConnections(), 100);
    sweep.unref();
    app.close().then(
      () => exit(0),
      (error: unknown) => {
        app?.log.error({ err: error }, 'server: error while closing');
        exit(1);
      },
    );
  };
  process.on('SIGTERM', () => shutdown('SIGTERM'));
  process.on('SIGINT', () => shutdown('SIGINT'));

  app = await buildApp(config);
  if (stopping !== undefined) {
    app.log.info({ signal: stopping }, 'server: stopped during start-up');
    await app.close();
    exit(0);
  }
  await app.listen({ port: config.port, host: config.host });
  if (stopping !== undefined) {
    // The signal came while listen() was binding: close what it opened.
    await app.close();
    exit(0);
  }
  app.log.info({ publicUrl: config.publicUrl }, 'server: ready');
}

const entry = process.argv[1] ?? '';
if (entry.endsWith('main.js') || entry.endsWith('main.ts')) {
  serve().catch((error: unknown) => {
    process.stderr.write(`server: failed to start: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(1);
  });
}
