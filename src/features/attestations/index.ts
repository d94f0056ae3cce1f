/** OrangeCheck attestations (docs/protocol.md §7): canonical message, metrics, score, verification. */
export {
  attestationId,
  buildAttestationMessage,
  parseAttestationMessage,
} from '../../format/index.js';

export { scoreV0 } from './score.js';

export { createSignatureVerdicts, verifyAttestation, type VerifyAttestationDeps } from './verify.js';
export {
  createLruCache,
  createSingleFlight,
  type ResultCache,
  type SingleFlight,
} from '../../platform/cache.js';

export {
  checkResultBody,
  createAttestationLookup,
  parseSubject,
  subjectKey,
  type AttestationLookupService,
  type CheckOutcome,
  type CheckSubject,
} from './lookup.js';
export { createAttestationPublisher, type PublishOutcome } from './publish.js';
export { registerAttestationRoutes } from './routes.js';
export { registerLookupRoutes } from './lookup-routes.js';
export { buildAttestationLookup, sharedCheckCache, verificationUrlOf } from './assemble.js';
