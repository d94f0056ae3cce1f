/**
 * The browser half of security keys and passkeys (docs/protocol.md §6
 * "Security keys and passkeys"): the host answers WebAuthn options as JSON
 * (base64url for every byte field) and wants the credential back as JSON;
 * this turns one into the other around navigator.credentials, and turns the
 * browser's refusals into sentences.
 */
import { describeError, t } from './common.js';

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

/**
 * A credential the host names (PublicKeyCredentialDescriptorJSON), its id as bytes for the browser.
 *
 * @param {{id: string, type: string, transports?: string[]}} entry
 */
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

/** True for the browser's "the person closed the prompt" (or it timed out). @param {unknown} failure */
export function wasCancelled(failure) {
  return failure instanceof DOMException && (failure.name === 'NotAllowedError' || failure.name === 'AbortError');
}

/** A sentence for a browser refusal. @param {unknown} failure */
export function browserErrorText(failure) {
  if (wasCancelled(failure)) return t('key.prompt_closed');
  if (failure instanceof DOMException && failure.name === 'InvalidStateError') return t('key.already_added_here');
  if (failure instanceof DOMException && failure.name === 'SecurityError') return t('key.browser_refused');
  return t('key.browser_failed');
}

/** Sentences for the host's WebAuthn error codes (docs/errors.md), in the page's language. */
const KEY_ERRORS = {
  verify_failed: t('key.verify_failed'),
  cloned_authenticator: t('key.cloned_authenticator'),
  credential_outside_allowlist: t('key.credential_outside_allowlist'),
  no_credentials_registered: t('key.no_credentials_registered'),
  credential_exists: t('key.credential_exists'),
  credential_not_discoverable: t('key.credential_not_discoverable'),
  webauthn_origin_mismatch: t('key.webauthn_origin_mismatch'),
  webauthn_rp_id_mismatch: t('key.webauthn_rp_id_mismatch'),
  webauthn_unavailable: t('key.webauthn_unavailable'),
  nonce_reused: t('key.nonce_reused'),
  invalid_challenge: t('key.invalid_challenge'),
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
