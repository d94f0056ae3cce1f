/** Prometheus metrics (docs/operations.md "Metrics"): the registry, the service's metrics and the wrappers that feed them. */
export { Counter, DEFAULT_SECONDS_BUCKETS, Gauge, Histogram, PROMETHEUS_CONTENT_TYPE, Registry, type GaugeSample } from './registry.js';
export {
  createServiceMetrics,
  meteredChain,
  meteredChainReader,
  meteredRelays,
  type ServiceMetrics,
  type ServiceMetricsOptions,
} from './service.js';
