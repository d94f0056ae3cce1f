/**
 * GET /metrics in the Prometheus text format (docs/operations.md "Metrics").
 *
 * Not public by accident: metrics are served only on their own port,
 * `METRICS_PORT`, by a bare node:http server bound to `HOST`, and only when
 * that variable is set. The public port has no /metrics route at all (404),
 * so a deployment that forwards the public port does not leak request
 * counts, and the metrics port can be kept off the proxy or firewalled.
 * Without `METRICS_PORT` nothing is collected per request either.
 */
import { createServer, type Server } from 'node:http';
import type { FastifyInstance } from 'fastify';
import type { Config } from '../../platform/config.js';
import { PROMETHEUS_CONTENT_TYPE } from '../../platform/metrics/index.js';
import type { ServiceMetrics } from './service-metrics.js';

/** The route label of a request that matched no route: one series for every 404 path. */
const UNMATCHED = 'unmatched';

export function registerMetrics(app: FastifyInstance, config: Config, metrics: ServiceMetrics): void {
  const port = config.metricsPort;
  if (port === undefined) return;

  // A callback hook (no promise): it runs on every response.
  app.addHook('onResponse', (request, reply, done) => {
    const route = request.routeOptions.url ?? UNMATCHED;
    const labels = [request.method, route, String(reply.statusCode)];
    metrics.httpRequests.inc(labels);
    metrics.httpDuration.observe(labels, reply.elapsedTime / 1000);
    if (route === '/api/check') {
      const cache = reply.getHeader('x-cache');
      if (cache === 'hit' || cache === 'miss') metrics.checkCache.inc([cache]);
    }
    done();
  });

  let server: Server | undefined;
  // onReady: a taken port stops the start (app.ready() / listen() reject) instead of running unobserved.
  app.addHook('onReady', async () => {
    server = createServer((request, response) => {
      const path = (request.url ?? '').split('?')[0];
      if (path !== '/metrics' || (request.method !== 'GET' && request.method !== 'HEAD')) {
        response.writeHead(404, { 'content-type': 'text/plain; charset=utf-8' }).end('not found\n');
        return;
      }
      const body = metrics.render();
      response.writeHead(200, { 'content-type': PROMETHEUS_CONTENT_TYPE, 'cache-control': 'no-store' });
      response.end(request.method === 'HEAD' ? undefined : body);
    });
    const listening = server;
    await new Promise<void>((resolve, reject) => {
      listening.once('error', reject);
      listening.listen(port, config.host, () => {
        listening.off('error', reject);
        resolve();
      });
    });
    app.log.info({ port, host: config.host }, 'metrics: serving /metrics');
  });
  app.addHook('onClose', async () => {
    const running = server;
    if (running === undefined) return;
    running.closeAllConnections();
    await new Promise<void>((resolve) => running.close(() => resolve()));
  });
}
