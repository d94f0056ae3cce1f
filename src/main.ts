/**
 * Server entry: parse the config, build the app, listen, and shut down on
 * SIGTERM/SIGINT (stop accepting, finish in-flight requests, close
 * resources), always within {@link SHUTDOWN_GRACE_MS} plus the final log
 * flush (docs/operations.md "Stopping").
 *
 * What used to keep a stopped service running, and what answers it here:
 * - the logger's flush at exit retried for as long as nobody read the log
 *   pipe: the log goes through a sink whose flush has a deadline
 *   (src/platform/log-sink.ts);
 * - a signal that came while the modules loaded or the app was built found
 *   no handler, and as PID 1 of a container such a signal is ignored: the
 *   handlers come first, the app's modules are loaded after them;
 * - npm passes the supervisor's signal on to the service, which so sees one
 *   signal twice: a repeat within {@link REPEAT_WINDOW_MS} is the same
 *   request, only a later one means "exit now".
 */
import type { FastifyInstance } from 'fastify';
import { createLogSink } from './platform/log-sink.js';

/** How long in-flight requests get to finish after the first signal. */
export const SHUTDOWN_GRACE_MS = 10_000;
/** How long the final flush of the log may wait for its reader. */
export const FINAL_FLUSH_MS = 1_000;
/** A second signal this soon after the first is the same one passed on (npm), not an operator's "now". */
export const REPEAT_WINDOW_MS = 1_000;

export async function serve(env: NodeJS.ProcessEnv = process.env): Promise<void> {
  let app: FastifyInstance | undefined;
  let stopping: { readonly signal: string; readonly at: number } | undefined;
  const close = (running: FastifyInstance, signal: string): void => {
    running.log.info({ signal }, 'server: shutting down');
    // close() drops the connections idle at that moment; keep-alive
    // connections whose in-flight request finishes later go idle afterwards,
    // so keep dropping idle ones until the server is closed.
    const server = running.server;
    const sweep = setInterval(() => server.closeIdleConnections(), 100);
    sweep.unref();
    running.close().then(
      () => process.exit(0),
      (error: unknown) => {
        running.log.error({ err: error }, 'server: error while closing');
        process.exit(1);
      },
    );
  };
  const shutdown = (signal: string): void => {
    if (stopping !== undefined) {
      if (Date.now() - stopping.at < REPEAT_WINDOW_MS) return;
      // A second signal: the operator does not want to wait.
      app?.log.warn({ signal }, 'server: second signal, exiting now');
      process.exit(1);
    }
    stopping = { signal, at: Date.now() };
    const force = setTimeout(() => {
      app?.log.error(`server: shutdown took over ${SHUTDOWN_GRACE_MS / 1000} s, exiting`);
      process.exit(1);
    }, SHUTDOWN_GRACE_MS);
    force.unref();
    // Still starting: the start is cut short at its next step (below).
    if (app !== undefined) close(app, signal);
  };
  // Before anything that takes time, so no signal finds the process without them.
  process.on('SIGTERM', () => shutdown('SIGTERM'));
  process.on('SIGINT', () => shutdown('SIGINT'));
  // The handlers set `stopping` while the start awaits; read it through a
  // function, since a narrowed variable would not see that.
  const stoppedBy = (): string | undefined => stopping?.signal;

  // The configuration module pulls in the storage layer (its SQLite driver
  // check), which takes a few hundred milliseconds to load: after the handlers.
  const { ConfigError, loadConfig } = await import('./platform/config.js');
  if (stoppedBy() !== undefined) process.exit(0);
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
  const sink = createLogSink();
  // Every way out (a clean close, the force timer, a second signal) ends
  // with this flush, and it cannot outlast its deadline.
  process.on('exit', () => sink.flushSync(FINAL_FLUSH_MS));

  const { buildApp } = await import('./app.js');
  if (stoppedBy() !== undefined) process.exit(0);
  const built = await buildApp(config, { logStream: sink });
  const early = stoppedBy();
  if (early !== undefined) {
    built.log.info({ signal: early }, 'server: stopped during start-up');
    await built.close();
    process.exit(0);
  }
  await built.listen({ port: config.port, host: config.host });
  app = built;
  const binding = stoppedBy();
  if (binding !== undefined) {
    // The signal came while listen() was binding.
    close(built, binding);
    return;
  }
  built.log.info({ publicUrl: config.publicUrl }, 'server: ready');
}

const entry = process.argv[1] ?? '';
if (entry.endsWith('main.js') || entry.endsWith('main.ts')) {
  serve().catch((error: unknown) => {
    process.stderr.write(`server: failed to start: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(1);
  });
}
