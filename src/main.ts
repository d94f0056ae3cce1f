/**
 * Server entry: parse the config, build the app, listen, and shut down
 * gracefully on SIGTERM/SIGINT (stop accepting, finish in-flight requests,
 * close resources).
 */
import { ConfigError, loadConfig } from './config.js';
import { buildApp } from './http/app.js';

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
  const app = await buildApp(config);
  let closing = false;
  const shutdown = (signal: string): void => {
    if (closing) return;
    closing = true;
    app.log.info({ signal }, 'server: shutting down');
    const force = setTimeout(() => {
      app.log.error('server: shutdown took over 10 s, exiting');
      process.exit(1);
    }, 10_000);
    force.unref();
    // close() drops the connections idle at that moment; keep-alive
    // connections whose in-flight request finishes later go idle afterwards,
    // so keep dropping idle ones until the server is closed.
    const sweep = setInterval(() => app.server.closeIdleConnections(), 100);
    sweep.unref();
    app.close().then(
      () => process.exit(0),
      (error: unknown) => {
        app.log.error({ err: error }, 'server: error while closing');
        process.exit(1);
      },
    );
  };
  process.once('SIGTERM', () => shutdown('SIGTERM'));
  process.once('SIGINT', () => shutdown('SIGINT'));
  await app.listen({ port: config.port, host: config.host });
  app.log.info({ publicUrl: config.publicUrl }, 'server: ready');
}

const entry = process.argv[1] ?? '';
if (entry.endsWith('main.js') || entry.endsWith('main.ts')) {
  serve().catch((error: unknown) => {
    process.stderr.write(`server: failed to start: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(1);
  });
}
