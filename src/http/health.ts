import { Type } from 'typebox';
import type { FastifyInstance } from 'fastify';
import type { ServiceContext } from './context.js';
import { POLICY } from './policy.js';
import { route } from './route.js';

const Health = Type.Object({ ok: Type.Boolean(), checks: Type.Optional(Type.Record(Type.String(), Type.String())) });

/** GET /healthz: the process is alive. GET /readyz: storage, keys and config are ready. */
export function registerHealthRoutes(app: FastifyInstance, context: ServiceContext): void {
  app.get('/healthz', route(POLICY.unlimited, 'ops', 'Process alive', { response: { 200: Health } }), async (_request, reply) => {
    reply.header('cache-control', 'no-store');
    return { ok: true };
  });
  app.get(
    '/readyz',
    route(POLICY.unlimited, 'ops', 'Ready to serve (storage, keys, config, and Redis when REDIS_URL is set)', {
      response: { 200: Health, 503: Health },
    }),
    async (_request, reply) => {
      const checks = await context.readiness();
      const ok = Object.values(checks).every((status) => status === 'ok');
      reply.header('cache-control', 'no-store');
      return reply.code(ok ? 200 : 503).send({ ok, checks });
    },
  );
}
