/**
 * The browser half of security keys and passkeys (docs/protocol.md §6
 * "Security keys and passkeys"): the host answers WebAuthn options as JSON
 * (base64url for every byte field) and wants the credential back as JSON;
 * this turns one into the other around navigator.credentials, and turns the
 * browser's refusals into sentences.
 */
import { describeError } from './common.js';

/** @param {string} text base64url */
function bytes(text) {
  const base64 = text.replace(/-/g, '+').replace(/_/g, '/');
  const binary = atob(base64 + '='.repeat((4 - (base64.length % 4)) % 4));
  const out = new Uint8Array(binary.length);
  for (let index = 0; index < binary.length; index += 1) out[index] = binary.charCodeAt(index);
  return out;
}

/** @param {ArrayBuffer | null | undefined} buffer */
function text(buffer) {
  if (!buffer) return undefined;
  const view = new Uint8Array(buffer);
  let binary = '';
  for (const byte of view) binary += String.fromCharCode(byte);
  return btoa(binary).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

/** True when this browser can use security keys and passkeys at all. */
export function webauthnSupported() {
  return typeof window.PublicKeyCredential === 'function' && !!navigator.credentials;
}

/** True when the browser can offer passkeys in the autofill of a field (conditional mediation). */
export async function conditionalSupported() {
  if (!webauthnSupported() || typeof PublicKeyCredential.isConditionalMediationAvailable !== 'function') return false;
  try {
    return await PublicKeyCredential.isConditionalMediationAvailable();
  } catch {
    return false;
  }
}

const descriptor = (entry) => ({ ...entry, id: bytes(entry.id) });

/**
 * The JSON form of a PublicKeyCredential, with the ceremony's own response fields.
 *
 * @param {any} credential
 * @param {Record<string, unknown>} fields
 */
function credentialJSON(credential, fields) {
  return {
    id: credential.id,
    rawId: text(credential.rawId),
    type: credential.type,
    authenticatorAttachment: credential.authenticatorAttachment || undefined,
    clientExtensionResults: credential.getClientExtensionResults(),
    response: { clientDataJSON: text(credential.response.clientDataJSON), ...fields },
  };
}

/**
 * navigator.credentials.create for the host's PublicKeyCredentialCreationOptionsJSON;
 * answers the RegistrationResponseJSON the host verifies.
 *
 * @param {any} options
 */
export async function createCredential(options) {
  const publicKey = {
    ...options,
    challenge: bytes(options.challenge),
    user: { ...options.user, id: bytes(options.user.id) },
    excludeCredentials: (options.excludeCredentials || []).map(descriptor),
  };
  const credential = /** @type {any} */ (await navigator.credentials.create({ publicKey }));
  const response = credential.response;
  return credentialJSON(credential, {
    attestationObject: text(response.attestationObject),
    transports: typeof response.getTransports === 'function' ? response.getTransports() : [],
  });
}

/**
 * navigator.credentials.get for the host's PublicKeyCredentialRequestOptionsJSON;
 * answers the AuthenticationResponseJSON the host verifies.
 *
 * @param {any} options
 * @param {{mediation?: 'conditional', signal?: AbortSignal}} [how]
 */
export async function getAssertion(options, how = {}) {
  const publicKey = {
    ...options,
    challenge: bytes(options.challenge),
    allowCredentials: (options.allowCredentials || []).map(descriptor),
  };
  const credential = /** @type {any} */ (await navigator.credentials.get({ publicKey, ...how }));
  const response = credential.response;
  return credentialJSON(credential, {
    authenticatorData: text(response.authenticatorData),
    signature: text(response.signature),
    userHandle: text(response.userHandle),
  });
}

/** True for the browser's "the person closed the prompt" (or it timed out). */
export function wasCancelled(failure) {
  return failure instanceof DOMException && (failure.name === 'NotAllowedError' || failure.name === 'AbortError');
}

/** A sentence for a browser refusal. */
export function browserErrorText(failure) {
  if (wasCancelled(failure)) return 'The security key prompt was closed before it finished. Try again when you are ready.';
  if (failure instanceof DOMException && failure.name === 'InvalidStateError') return 'This security key is already added to this account.';
  if (failure instanceof DOMException && failure.name === 'SecurityError') return 'This browser refused to use security keys for this site.';
  return 'The browser could not use the security key. Try again, or use another way.';
}

/** Sentences for the host's WebAuthn error codes (docs/errors.md). */
export const KEY_ERRORS = {
  verify_failed: 'The security key\'s answer could not be verified. Try again.',
  cloned_authenticator: 'This security key answered with an old counter, which can mean it was copied. It was refused; remove it and add it again if you trust it.',
  credential_outside_allowlist: 'This key is not one this account can use here. Choose another key or another way.',
  no_credentials_registered: 'This account has no security key yet.',
  credential_exists: 'This security key is already added.',
  credential_not_discoverable: 'This key cannot be used to sign in without a name. Add it as a security key for confirming instead.',
  webauthn_origin_mismatch: 'Security keys for this service only work on its own sites.',
  webauthn_rp_id_mismatch: 'The key answered for another site.',
  webauthn_unavailable: 'Security keys are not available on this service.',
  nonce_reused: 'That answer was already used. Try again.',
  invalid_challenge: 'The request expired before the key answered. Try again.',
};

/**
 * describeError with the WebAuthn sentences first.
 *
 * @param {{status: number, code: string | null, body: any}} result
 * @param {Record<string, string>} [overrides]
 */
export function describeKeyError(result, overrides = {}) {
  return describeError(result, { ...KEY_ERRORS, ...overrides });
}
