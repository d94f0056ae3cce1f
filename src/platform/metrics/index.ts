/** Prometheus metrics (docs/operations.md "Metrics"): the registry, the service's metrics and the wrappers that feed them. */
export { PROMETHEUS_CONTENT_TYPE, Registry, type Counter, type Histogram } from './registry.js';
