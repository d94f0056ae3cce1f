/**
 * The health of what the service depends on, as the operator asks for it
 * (docs/api.md "Admin"): the database, Redis, every Esplora base on its own
 * and every Nostr relay, each asked now, with how long it took and why it
 * failed. Nothing here is cached, so an answer is as fresh as the request.
 */
import { ChainUnavailableError, createEsploraClient } from '../../chain/index.js';
import type { Config } from '../../platform/config.js';
import type { RelayPool } from '../../relay/index.js';

/** How long each Esplora base may take before it counts as down (a relay has the pool's own deadline). */
const PROBE_TIMEOUT_MS = 3000;

/** An id no attestation has: a relay answers the look-up with its end of stored events at once. */
const NO_ATTESTATION = '0'.repeat(64);

interface DependencyHealth {
  readonly name: string;
  readonly ok: boolean;
  /** How long the probe took, in ms; null where it is not timed. */
  readonly ms: number | null;
  /** Why it failed, in a few words; null when it answered. */
  readonly error: string | null;
}

export interface HealthReport {
  readonly database: DependencyHealth;
  /** Null without REDIS_URL. */
  readonly redis: DependencyHealth | null;
  readonly esplora: readonly (DependencyHealth & { readonly tip_height: number | null })[];
  readonly relays: readonly DependencyHealth[];
  /** The signing key ring reloads (every instance re-reads it each minute). */
  readonly keys: DependencyHealth;
}

export interface AdminHealthDeps {
  readonly config: Pick<Config, 'esploraUrls' | 'redisUrl'>;
  readonly ping: () => Promise<void>;
  readonly readiness: () => Promise<Record<string, string>>;
  readonly relays: Pick<RelayPool, 'queryAttestations' | 'relays'>;
  /** The fetch Esplora is asked through (a test's); the client's own agents otherwise. */
  readonly fetch?: typeof fetch | undefined;
}

async function timed<T>(probe: () => Promise<T>): Promise<{ value: T | null; ms: number; error: string | null }> {
  const started = performance.now();
  try {
    const value = await probe();
    return { value, ms: Math.round(performance.now() - started), error: null };
  } catch (error) {
    const reason =
      error instanceof ChainUnavailableError
        ? (error.failures[0]?.reason ?? 'no answer')
        : error instanceof Error
          ? error.message
          : 'failed';
    return { value: null, ms: Math.round(performance.now() - started), error: reason.slice(0, 200) };
  }
}

export class AdminHealth {
  readonly #deps: AdminHealthDeps;

  constructor(deps: AdminHealthDeps) {
    this.#deps = deps;
  }

  async report(): Promise<HealthReport> {
    const { config, relays } = this.#deps;
    const [database, readiness, esplora, relayQuery] = await Promise.all([
      timed(() => this.#deps.ping()),
      this.#deps.readiness(),
      Promise.all(
        config.esploraUrls.map(async (base) => {
          const client = createEsploraClient({
            bases: [base],
            timeoutMs: PROBE_TIMEOUT_MS,
            ...(this.#deps.fetch === undefined ? {} : { fetch: this.#deps.fetch }),
          });
          const probe = await timed(() => client.tip());
          return { name: base, ok: probe.error === null, ms: probe.ms, error: probe.error, tip_height: probe.value?.height ?? null };
        }),
      ),
      relays.relays.length === 0 ? Promise.resolve(null) : relays.queryAttestations({ by: 'id', id: NO_ATTESTATION }),
    ]);
    const redisState = readiness.redis;
    return {
      database: { name: 'database', ok: database.error === null, ms: database.ms, error: database.error },
      redis:
        config.redisUrl === undefined || redisState === undefined
          ? null
          : { name: 'redis', ok: redisState === 'ok', ms: null, error: redisState === 'ok' ? null : redisState },
      esplora,
      relays: (relayQuery?.outcomes ?? []).map((outcome) => ({
        name: outcome.relay,
        ok: outcome.status === 'answered',
        ms: Math.round(outcome.elapsedMs),
        error: outcome.status === 'answered' ? null : outcome.status,
      })),
      keys: { name: 'keys', ok: readiness.keys === 'ok', ms: null, error: readiness.keys === 'ok' ? null : (readiness.keys ?? 'unknown') },
    };
  }
}

declare module '../../platform/services.js' {
  interface FeatureServices {
    /** The health of the database, Redis, each Esplora base and each relay, asked now. */
    readonly adminHealth: AdminHealth;
  }
}
