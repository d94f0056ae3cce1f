/** OrangeCheck attestations (docs/protocol.md §7): canonical message, metrics, score, verification. */
export {
  attestationId,
  buildAttestationMessage,
  parseAttestationMessage,
  MAX_BOND_SATS,
  type AttestationFields,
  type AttestationNetwork,
  type ParsedAttestation,
  type ParseResult,
} from '../format/index.js';
export { codesPass, severityOf, VERIFY_CODES, type Severity, type VerifyCode } from './codes.js';
export { formatIdentity, identityLookupKeys, parseIdentity, type Identity } from '../format/index.js';
export { computeBondMetrics, type BondMetrics, type BondMetricsInput } from './metrics.js';
export { scoreV0 } from './score.js';
export {
  applyThresholds,
  createSignatureVerdicts,
  DEFAULT_SIGNATURE_VERDICTS,
  verifyAttestation,
  type AttestationMetrics,
  type AttestationResult,
  type Thresholds,
  type SignatureVerdicts,
  type ThresholdOutcome,
  type VerifyAttestationDeps,
  type VerifyAttestationInput,
} from './verify.js';
export {
  createLruCache,
  createSingleFlight,
  DEFAULT_MAX_CACHE_ENTRIES,
  type CacheEntry,
  type LruCacheOptions,
  type MemoryCache,
  type ResultCache,
  type SingleFlight,
} from '../cache.js';
export {
  checkResultBody,
  createAttestationLookup,
  parseSubject,
  subjectKey,
  subjectsOf,
  DISCOVER_DEFAULT_LIMIT,
  DISCOVER_MAX_LIMIT,
  SHORT_TTL_MS,
  type AttestationLookupDeps,
  type AttestationLookupService,
  type CheckAnswer,
  type CheckedAttestation,
  type CheckOutcome,
  type CheckResultBody,
  type CheckSubject,
  type DiscoverAnswer,
  type DiscoveredEnvelope,
  type RejectedAttestation,
  type SubjectQuery,
} from './lookup.js';
export {
  createAttestationPublisher,
  type AttestationPublisher,
  type AttestationPublisherDeps,
  type PublishAttestationInput,
  type PublishOutcome,
} from './publish.js';
