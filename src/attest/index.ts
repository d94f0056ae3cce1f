/** OrangeCheck attestations (docs/protocol.md §7): canonical message, metrics, score, verification. */
export {
  attestationId,
  buildAttestationMessage,
  parseAttestationMessage,
} from '../format/index.js';
export { scoreV0 } from './score.js';
export {
  createSignatureVerdicts,
  verifyAttestation,
  type Thresholds,
  type SignatureVerdicts,
  type VerifyAttestationDeps,
} from './verify.js';
export {
  createLruCache,
  createSingleFlight,
  type ResultCache,
  type SingleFlight,
} from '../cache.js';
export {
  checkResultBody,
  createAttestationLookup,
  parseSubject,
  subjectKey,
  DISCOVER_DEFAULT_LIMIT,
  DISCOVER_MAX_LIMIT,
  type AttestationLookupService,
  type CheckOutcome,
  type CheckSubject,
  type SubjectQuery,
} from './lookup.js';
export {
  createAttestationPublisher,
  type AttestationPublisher,
  type PublishAttestationInput,
  type PublishOutcome,
} from './publish.js';
