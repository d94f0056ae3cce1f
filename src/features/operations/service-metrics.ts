/**
 * The service's metrics (docs/operations.md "Metrics" lists them). Served
 * only on `METRICS_PORT` (src/features/operations/metrics-routes.ts), never on the public port.
 *
 * Every label is bounded: route patterns (`/api/auth/:provider/start`, not
 * the path), status codes, sign-in methods (`oauth:<provider>` is bounded
 * by the configured providers), and fixed words.
 */
import { ChainUnavailableError, type ChainReader, type ChainSource } from '../../chain/index.js';
import type { RelayPool } from '../../relay/index.js';
import { Registry, type Counter, type Histogram } from '../../platform/metrics/index.js';

export interface ServiceMetrics {
  readonly registry: Registry;
  /** method, route pattern (`unmatched` for 404s), status code. */
  readonly httpRequests: Counter;
  readonly httpDuration: Histogram;
  /** method: `bip322`, `email_otp`, `oauth:<provider>`, `passkey`. */
  readonly signIns: Counter;
  /** result: `hit` or `miss` (the `x-cache` answer of /api/check). */
  readonly checkCache: Counter;
  /** result: `answered` or `relays_unavailable`. */
  readonly relayQueries: Counter;
  /** result: `published` or `relays_unavailable`. */
  readonly relayPublishes: Counter;
  /** result: `ok`, `chain_unavailable` or `error`: look-ups as the verifier sees them, from the block cache or Esplora. */
  readonly chainQueries: Counter;
  /** kind: `utxo` or `tip`; result: `ok` or `chain_unavailable`: what was asked of Esplora. */
  readonly chainRequests: Counter;
  /** class: `read`, `auth`, `otp_ip`, `otp_email`, `otp_address`, `contact`. */
  readonly rateLimited: Counter;
  /** mode: `open` (decided per instance) or `closed` (refused with 503). */
  readonly rateLimitStoreFailures: Counter;
  /** use: `cache`, `single_flight`, `rate_limit`, `nonce`. */
  readonly redisErrors: Counter;
  render(): string;
}

export interface ServiceMetricsOptions {
  readonly version: string;
  /** Present when `REDIS_URL` is set: whether the client is connected. */
  readonly redisReady?: () => boolean;
}

export function createServiceMetrics(options: ServiceMetricsOptions): ServiceMetrics {
  const registry = new Registry();
  const started = process.hrtime.bigint();
  const metrics: ServiceMetrics = {
    registry,
    httpRequests: registry.counter('oc_http_requests_total', 'HTTP requests answered, by method, route pattern and status.', [
      'method',
      'route',
      'status',
    ]),
    httpDuration: registry.histogram(
      'oc_http_request_duration_seconds',
      'Time from request to response, by method, route pattern and status.',
      ['method', 'route', 'status'],
    ),
    signIns: registry.counter('oc_signins_total', 'Successful sign-ins, by path (bip322, email_otp, oauth:<provider>, passkey).', [
      'method',
    ]),
    checkCache: registry.counter('oc_check_cache_total', '/api/check answers by cache result (hit, miss).', ['result']),
    relayQueries: registry.counter('oc_relay_queries_total', 'Nostr relay look-ups, by result (answered, relays_unavailable).', ['result']),
    relayPublishes: registry.counter('oc_relay_publishes_total', 'Attestation publications, by result (published, relays_unavailable).', [
      'result',
    ]),
    chainQueries: registry.counter(
      'oc_chain_queries_total',
      'Chain look-ups of the verifier, from the block cache or Esplora, by result (ok, chain_unavailable, error).',
      ['result'],
    ),
    chainRequests: registry.counter(
      'oc_chain_requests_total',
      'Questions asked of Esplora (every base in turn), by kind (utxo, tip) and result (ok, chain_unavailable).',
      ['kind', 'result'],
    ),
    rateLimited: registry.counter(
      'oc_rate_limited_total',
      'Requests refused with 429, by limit (read, auth, otp_ip, otp_email, otp_address, contact).',
      ['class'],
    ),
    rateLimitStoreFailures: registry.counter(
      'oc_rate_limit_store_failures_total',
      'Rate-limit decisions made while Redis was unreachable: open = decided per instance, closed = refused with 503.',
      ['mode'],
    ),
    redisErrors: registry.counter('oc_redis_errors_total', 'Failed Redis commands, by use (cache, single_flight, rate_limit, nonce).', [
      'use',
    ]),
    render: () => registry.render(),
  };
  registry.gauge('oc_build_info', 'Version of the running service; always 1.', ['version'], () => [
    { labels: [options.version], value: 1 },
  ]);
  registry.gauge('process_uptime_seconds', 'Seconds since the metrics were created (the process start).', [], () => [
    { labels: [], value: Number(process.hrtime.bigint() - started) / 1e9 },
  ]);
  registry.gauge('process_resident_memory_bytes', 'Resident memory size in bytes.', [], () => [
    { labels: [], value: process.memoryUsage.rss() },
  ]);
  registry.gauge('nodejs_heap_used_bytes', 'V8 heap in use, bytes.', [], () => [{ labels: [], value: process.memoryUsage().heapUsed }]);
  const redisReady = options.redisReady;
  if (redisReady !== undefined) {
    registry.gauge('oc_redis_up', '1 when the Redis client is connected, else 0.', [], () => [{ labels: [], value: redisReady() ? 1 : 0 }]);
  }
  return metrics;
}

/** Counts what Esplora itself is asked, below the block cache; answers are passed on unchanged. */
export function meteredChainReader(reader: ChainReader, metrics: ServiceMetrics): ChainReader {
  async function counted<T>(kind: 'utxo' | 'tip', ask: () => Promise<T>): Promise<T> {
    try {
      const answer = await ask();
      metrics.chainRequests.inc([kind, 'ok']);
      return answer;
    } catch (error) {
      metrics.chainRequests.inc([kind, 'chain_unavailable']);
      throw error;
    }
  }
  return {
    addressUtxos: (address) => counted('utxo', () => reader.addressUtxos(address)),
    tip: () => counted('tip', () => reader.tip()),
    utxos: (address) => counted('utxo', () => reader.utxos(address)),
  };
}

/** Counts chain look-ups by outcome, as the verifier sees them; the answer is passed on unchanged. */
export function meteredChain(chain: ChainSource, metrics: ServiceMetrics): ChainSource {
  return {
    async addressUtxos(address) {
      try {
        const answer = await chain.addressUtxos(address);
        metrics.chainQueries.inc(['ok']);
        return answer;
      } catch (error) {
        metrics.chainQueries.inc([error instanceof ChainUnavailableError ? 'chain_unavailable' : 'error']);
        throw error;
      }
    },
  };
}

/** Counts relay look-ups and publications that no relay answered (docs/protocol.md §7 `relays_unavailable`). */
export function meteredRelays(pool: RelayPool, metrics: ServiceMetrics): RelayPool {
  return {
    relays: pool.relays,
    async queryAttestations(lookup, options) {
      const result = await pool.queryAttestations(lookup, options);
      metrics.relayQueries.inc([result.relaysAnswered === 0 ? 'relays_unavailable' : 'answered']);
      return result;
    },
    async publish(event) {
      const result = await pool.publish(event);
      metrics.relayPublishes.inc([result.published.length === 0 ? 'relays_unavailable' : 'published']);
      return result;
    },
    close: () => pool.close(),
  };
}
