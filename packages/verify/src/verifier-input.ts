/**
 * Middleware takes either verifier options or a verifier made with
 * `createSessionVerifier()`, so that several stacks (or several routers of
 * one app) can share one key cache and one JWKS fetcher.
 */
import { createSessionVerifier, type SessionVerifier, type VerifySessionOptions } from './verifier.js';

export type VerifierInput = VerifySessionOptions | SessionVerifier;

function isVerifier(input: VerifierInput): input is SessionVerifier {
  return (
    typeof (input as Partial<SessionVerifier>).verifyAny === 'function' && typeof (input as Partial<SessionVerifier>).verify === 'function'
  );
}

export function toVerifier(input: VerifierInput): SessionVerifier {
  return isVerifier(input) ? input : createSessionVerifier(input);
}
