/**
 * The public statistics (docs/api.md "Public and form routes", docs/protocol.md
 * §6): GET /api/family-stats (public CORS, src/web/cors.ts). Thin: a schema,
 * one cached domain call, a reply.
 */
import { Type } from 'typebox';
import type { FamilyStats, StatsStore } from './store.js';
import type { EventCounter } from './counter.js';
import { ANSWER, answer, errorResponses } from '../../platform/http/schemas.js';
import { POLICY } from '../../platform/http/policy.js';
import type { TypedApp } from '../../platform/http/schema-types.js';
import { route } from '../../web/route.js';

/** docs/protocol.md §6: "cached 60 s". */
const FAMILY_STATS_TTL_MS = 60_000;

const Count = Type.Integer({ minimum: 0 });
const FamilyStatsBody = Type.Object(
  {
    ok: Type.Literal(true),
    generated_at: Type.String({ description: 'ISO 8601 UTC: when these counts were taken' }),
    accounts: Type.Object(
      { total: Count, btc: Count, federated: Count },
      { description: 'Accounts; merged ones count once, as their survivor' },
    ),
    sessions: Type.Object({ active: Count }, { description: 'Unrevoked, unexpired sessions' }),
    rosters: Type.Object({ multi_account: Count }, { description: 'Browsers holding two or more accounts' }),
    attest: Type.Object(
      { checks_24h: Count, verifies_24h: Count },
      { description: 'Calls of /api/check and /api/verify in the last 24 hours' },
    ),
  },
  answer('Aggregate counts only, never personal data', {
    ok: true,
    generated_at: ANSWER.now,
    accounts: { total: 1284, btc: 931, federated: 353 },
    sessions: { active: 2107 },
    rosters: { multi_account: 86 },
    attest: { checks_24h: 5920, verifies_24h: 412 },
  }),
);

interface CachedStats {
  readonly body: FamilyStats & { readonly ok: true; readonly generated_at: string };
  readonly expiresAtMs: number;
}

/**
 * The counts, taken at most once per {@link FAMILY_STATS_TTL_MS} per instance.
 * Requests that arrive while the counts are being taken share that one query
 * (so a burst at expiry costs one set of aggregate queries, not one each); a
 * failed query is not kept.
 */
function createFamilyStatsCache(store: StatsStore, counter: EventCounter, now: () => Date): () => Promise<CachedStats> {
  let cached: CachedStats | undefined;
  let pending: Promise<CachedStats> | undefined;
  return () => {
    if (cached !== undefined && now().getTime() < cached.expiresAtMs) return Promise.resolve(cached);
    pending ??= (async () => {
      try {
        // This instance's pending counts first, so its own calls are in the totals.
        await counter.flush();
        const takenAt = now();
        const stats = await store.familyStats(takenAt.getTime());
        cached = {
          body: { ok: true, generated_at: takenAt.toISOString(), ...stats },
          expiresAtMs: takenAt.getTime() + FAMILY_STATS_TTL_MS,
        };
        return cached;
      } finally {
        pending = undefined;
      }
    })();
    return pending;
  };
}

/** What the statistics use. */
export interface StatsRoutes {
  readonly stats: StatsStore;
  readonly attestCounter: EventCounter;
  readonly now: () => Date;
}

export function registerStatsRoutes(app: TypedApp, deps: StatsRoutes): void {
  const familyStats = createFamilyStatsCache(deps.stats, deps.attestCounter, deps.now);

  app.get(
    '/api/family-stats',
    route(POLICY.publicRead, 'public', 'Family-wide aggregate statistics (no authentication, cached 60 s)', {
      response: { 200: FamilyStatsBody, ...errorResponses(429, 503) },
    }),
    async (_request, reply) => {
      const stats = await familyStats();
      // The entry's remaining lifetime, so no HTTP cache keeps the counts past the 60 s.
      const maxAge = Math.max(0, Math.ceil((stats.expiresAtMs - deps.now().getTime()) / 1000));
      reply.header('cache-control', `public, max-age=${maxAge}`);
      return stats.body;
    },
  );
}
