import { Type } from 'typebox';
import type { FastifyInstance } from 'fastify';

import { POLICY } from '../../platform/http/policy.js';
import { answer } from '../../platform/http/schemas.js';
import { route } from '../../web/route.js';

const HEALTH_FIELDS = { ok: Type.Boolean(), checks: Type.Optional(Type.Record(Type.String(), Type.String())) };
const Alive = Type.Object(HEALTH_FIELDS, answer('The process answers', { ok: true }));
/** What /readyz checks (the services' `readiness`): `ok`, or what is wrong. */
const READY_CHECKS = { config: 'ok', keys: 'ok', storage: 'ok', redis: 'ok' };
const Ready = Type.Object(HEALTH_FIELDS, answer('Every check is `ok`', { ok: true, checks: READY_CHECKS }));
const NotReady = Type.Object(
  HEALTH_FIELDS,
  answer('A check failed: it says what', { ok: false, checks: { ...READY_CHECKS, storage: 'unreachable' } }),
);

/** What the health routes use. */
export interface HealthRoutes {
  readonly readiness: () => Promise<Record<string, string>>;
}

/** GET /healthz: the process is alive. GET /readyz: storage, keys and config are ready. */
export function registerHealthRoutes(app: FastifyInstance, deps: HealthRoutes): void {
  app.get('/healthz', route(POLICY.unlimited, 'ops', 'Process alive', { response: { 200: Alive } }), async (_request, reply) => {
    reply.header('cache-control', 'no-store');
    return { ok: true };
  });
  app.get(
    '/readyz',
    route(POLICY.unlimited, 'ops', 'Ready to serve (storage, keys, config, and Redis when REDIS_URL is set)', {
      response: { 200: Ready, 503: NotReady },
    }),
    async (_request, reply) => {
      const checks = await deps.readiness();
      const ok = Object.values(checks).every((status) => status === 'ok');
      reply.header('cache-control', 'no-store');
      return reply.code(ok ? 200 : 503).send({ ok, checks });
    },
  );
}
