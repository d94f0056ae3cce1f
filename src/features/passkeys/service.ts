/**
 * Security keys and passkeys (docs/protocol.md §6): registering a WebAuthn
 * credential for the active account, listing, renaming and removing it, a
 * step-up assertion (the one path that sets `step_up_at`), a key as the
 * re-proof of `POST /api/auth/sudo`, and a passkey as a fourth way to sign in.
 *
 * The ceremonies are checked by @simplewebauthn/server. Before it runs, this
 * module reads the client data and the authenticator data itself, so that a
 * wrong origin, a wrong RP id or a response to another challenge each get a
 * code of their own rather than one generic failure. After it, this module
 * checks what the library leaves to the relying party: the signature counter
 * (WebAuthn Level 3 §6.1.1: a counter that does not grow, where one is kept,
 * means a cloned authenticator), the backup-eligibility flag (it never
 * changes for a credential), and single use of the challenge across instances.
 */
import {
  generateAuthenticationOptions,
  generateRegistrationOptions,
  verifyAuthenticationResponse,
  verifyRegistrationResponse,
  type AuthenticationResponseJSON,
  type PublicKeyCredentialCreationOptionsJSON,
  type PublicKeyCredentialRequestOptionsJSON,
  type RegistrationResponseJSON,
} from '@simplewebauthn/server';
import { decodeAttestationObject, isoBase64URL } from '@simplewebauthn/server/helpers';
import { createHash } from 'node:crypto';
import { cleanDisplayText } from '../../identity/account/index.js';
import { decodeBase64url, hmacSha256 } from '../../platform/crypto.js';
import { OcError, isOcError } from '../../platform/errors.js';
import { didOf } from '../../identity/session/index.js';
import type { Authenticated, IssuedSession, SessionService } from '../../identity/session/index.js';
import type { NonceGuard } from '../../platform/storage/index.js';
import type { SignInService, SignInTarget, ActivityLog } from '../../identity/account/index.js';
import type { WebAuthnAuthenticatorType, WebAuthnCredentialRecord, WebAuthnStore } from './store.js';
import {
  issueChallengeToken,
  openChallengeToken,
  WEBAUTHN_CHALLENGE_TTL_MS,
  type ChallengeClaims,
  type ChallengeKind,
} from './challenge-token.js';
import type { RelyingParty } from './relying-party.js';

/** Labels are short texts people give, under the display-name rules, at most this long. */
const MAX_CREDENTIAL_LABEL_LENGTH = 64;

/** An account keeps at most this many keys: enough for every device a person owns, bounded for the options list. */
const MAX_CREDENTIALS_PER_ACCOUNT = 20;

/** EdDSA, ES256, RS256 (COSE algorithm ids), in that order of preference. */
const ALGORITHMS = [-8, -7, -257];

/** The transports WebAuthn Level 3 names; anything else a browser reports is dropped, not stored. */
const TRANSPORTS = new Set(['ble', 'cable', 'hybrid', 'internal', 'nfc', 'smart-card', 'usb']);

const USER_HANDLE_LABEL = 'oc-host/webauthn-user-handle/v1\n';

/** A credential as the routes show it (the shape the OrangeCheck client reads, and what the account page needs). */
export interface CredentialView {
  readonly id: string;
  readonly label: string;
  readonly authenticator_type: WebAuthnAuthenticatorType;
  readonly transports: string[];
  readonly user_verified: boolean;
  readonly created_at: string;
  readonly last_used_at: string | null;
  /** A sign-in passkey; otherwise step-up only. */
  readonly sign_in: boolean;
  /** May be synced to the person's other devices (backup eligible). */
  readonly multi_device: boolean;
  readonly backed_up: boolean;
}

export interface CeremonyOptions<T> {
  readonly options: T;
  readonly challenge_token: string;
}

export interface WebAuthnServiceDeps {
  readonly store: WebAuthnStore;
  readonly sessions: Pick<SessionService, 'reissue'>;
  /** The door every sign-in goes through (src/identity/account/sign-in.ts). */
  readonly signIn: Pick<SignInService, 'open'>;
  readonly rp: RelyingParty;
  readonly secret: Uint8Array;
  readonly nonces: NonceGuard;
  readonly now: () => Date;
  readonly activity: Pick<ActivityLog, 'record'>;
}

function credentialView(record: WebAuthnCredentialRecord): CredentialView {
  return {
    id: record.id,
    label: record.label,
    authenticator_type: record.authenticator_type,
    transports: [...record.transports],
    user_verified: record.user_verified,
    created_at: new Date(record.created_at).toISOString(),
    last_used_at: record.last_used_at === null ? null : new Date(record.last_used_at).toISOString(),
    sign_in: record.sign_in,
    multi_device: record.device_type === 'multiDevice',
    backed_up: record.backed_up,
  };
}

function failed(detail: string, cause?: unknown): OcError {
  return new OcError('verify_failed', `webauthn: ${detail}`, cause === undefined ? undefined : { cause });
}

function text(value: unknown, what: string): string {
  if (typeof value !== 'string' || value === '') throw failed(`${what} is missing`);
  return value;
}

/** The fields of the client data this module checks itself (WebAuthn Level 3 §5.8.1). */
interface ClientData {
  readonly type: string;
  readonly challenge: string;
  readonly origin: string;
}

function clientDataOf(encoded: unknown): ClientData {
  const bytes = decodeBase64url(text(encoded, 'response.clientDataJSON'));
  if (bytes === null) throw failed('response.clientDataJSON is not base64url');
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(bytes).toString('utf8'));
  } catch {
    throw failed('response.clientDataJSON is not JSON');
  }
  const data = parsed as Partial<Record<keyof ClientData, unknown>> | null;
  if (
    data === null ||
    typeof data !== 'object' ||
    typeof data.type !== 'string' ||
    typeof data.challenge !== 'string' ||
    typeof data.origin !== 'string'
  ) {
    throw failed('response.clientDataJSON lacks type, challenge or origin');
  }
  return { type: data.type, challenge: data.challenge, origin: data.origin };
}

/** A copy on a plain ArrayBuffer, the byte type the library's signatures ask for. */
function bytesOf(bytes: Uint8Array): Uint8Array<ArrayBuffer> {
  return new Uint8Array(bytes);
}

function labelOf(value: string | undefined): string | undefined {
  return value === undefined ? undefined : cleanDisplayText('label', value, MAX_CREDENTIAL_LABEL_LENGTH);
}

export class WebAuthnService {
  readonly #deps: WebAuthnServiceDeps;

  constructor(deps: WebAuthnServiceDeps) {
    this.#deps = deps;
  }

  #nowMs(): number {
    return this.#deps.now().getTime();
  }

  #rpId(): string {
    const rp = this.#deps.rp;
    if (rp.id === null) throw new OcError('webauthn_unavailable', `webauthn: ${rp.unavailable ?? 'no relying-party id'}`);
    return rp.id;
  }

  /** The WebAuthn user handle of an account: opaque, stable, and not its id (WebAuthn Level 3 §14.6.1). */
  #userHandle(accountId: string): Uint8Array<ArrayBuffer> {
    return bytesOf(hmacSha256(this.#deps.secret, USER_HANDLE_LABEL + accountId).slice(0, 16));
  }

  #issue(claims: Omit<ChallengeClaims, 'challenge' | 'expiresAt'>): { token: string; challenge: Uint8Array<ArrayBuffer> } {
    const issued = issueChallengeToken(this.#deps.secret, claims, this.#nowMs());
    return { token: issued.token, challenge: bytesOf(isoBase64URL.toBuffer(issued.claims.challenge)) };
  }

  #open(token: string, kind: ChallengeKind, jti: string): ChallengeClaims {
    return openChallengeToken(this.#deps.secret, token, { kind, jti }, this.#nowMs());
  }

  /**
   * What the library leaves to error codes of their own: the ceremony type,
   * the challenge, the origin and the RP id hash. Answers the checked origin.
   */
  #precheck(
    client: ClientData,
    authData: Uint8Array,
    type: 'webauthn.create' | 'webauthn.get',
    claims: ChallengeClaims,
    rpId: string,
  ): string {
    if (client.type !== type) throw failed(`clientDataJSON.type is ${JSON.stringify(client.type).slice(0, 40)}, expected ${type}`);
    if (client.challenge !== claims.challenge) {
      throw new OcError('invalid_challenge', 'webauthn: the response answers another challenge than challenge_token holds', {
        codes: ['webauthn_challenge'],
      });
    }
    if (!this.#deps.rp.isAllowedOrigin(client.origin)) {
      throw new OcError(
        'webauthn_origin_mismatch',
        `webauthn: the ceremony ran on ${client.origin.slice(0, 200)}, which is not this host or a family site under ${rpId}`,
      );
    }
    const expected = createHash('sha256').update(rpId, 'utf8').digest();
    if (authData.length < 37 || !expected.equals(authData.subarray(0, 32))) {
      throw new OcError('webauthn_rp_id_mismatch', `webauthn: the authenticator signed for another relying party than ${rpId}`);
    }
    return client.origin;
  }

  async #consume(claims: ChallengeClaims): Promise<void> {
    if (!(await this.#deps.nonces.consume(`webauthn:${claims.challenge}`, claims.expiresAt))) {
      throw new OcError('nonce_reused', 'webauthn: this challenge was already used; ask for new options');
    }
  }

  // ---- registering ----

  #requireRoom(held: number): void {
    if (held >= MAX_CREDENTIALS_PER_ACCOUNT) {
      throw new OcError('bad_request', `webauthn: an account holds at most ${MAX_CREDENTIALS_PER_ACCOUNT} keys; remove one first`);
    }
  }

  /** POST /api/auth/webauthn/register/options: its route declares the re-proof (`sudo_at`) it needs (features/passkeys/routes.ts). */
  async registrationOptions(
    current: Authenticated,
    input: { label?: string | undefined; sign_in?: boolean | undefined },
  ): Promise<CeremonyOptions<PublicKeyCredentialCreationOptionsJSON>> {
    const rpId = this.#rpId();
    const label = labelOf(input.label);
    const signIn = input.sign_in === true;
    const existing = await this.#deps.store.listWebAuthnCredentials(current.account.id);
    this.#requireRoom(existing.length);
    const { token, challenge } = this.#issue({
      kind: 'register',
      jti: current.session.jti,
      ...(label === undefined ? {} : { label }),
      signIn,
    });
    const account = current.account;
    const userName = account.display_name ?? account.primary_btc ?? didOf(account.id);
    const options = await generateRegistrationOptions({
      rpName: this.#deps.rp.name,
      rpID: rpId,
      userName,
      userDisplayName: account.display_name ?? userName,
      userID: this.#userHandle(account.id),
      challenge,
      timeout: WEBAUTHN_CHALLENGE_TTL_MS,
      attestationType: 'none',
      excludeCredentials: existing.map((credential) => ({ id: credential.id, transports: [...credential.transports] })),
      // A sign-in passkey must be found without a name and must verify the
      // person; a step-up key only has to be present.
      authenticatorSelection: signIn
        ? { residentKey: 'required', requireResidentKey: true, userVerification: 'required' }
        : { residentKey: 'discouraged', userVerification: 'preferred' },
      supportedAlgorithmIDs: ALGORITHMS,
    });
    return { options, challenge_token: token };
  }

  /** POST /api/auth/webauthn/register/verify: stores the new credential for the active account. */
  async register(
    current: Authenticated,
    input: { challenge_token: string; response: RegistrationResponseJSON; label?: string | undefined },
  ): Promise<CredentialView> {
    const rpId = this.#rpId();
    const claims = this.#open(input.challenge_token, 'register', current.session.jti);
    const label = labelOf(input.label) ?? claims.label ?? (claims.signIn ? 'Passkey' : 'Security key');
    const response = input.response;
    let authData: Uint8Array;
    try {
      const attestation = decodeAttestationObject(
        isoBase64URL.toBuffer(text(response.response?.attestationObject, 'response.attestationObject')),
      );
      const found: unknown = attestation.get('authData');
      if (!(found instanceof Uint8Array)) throw failed('the attestation object holds no authenticator data');
      authData = found;
    } catch (error) {
      if (error instanceof OcError) throw error;
      throw failed('response.attestationObject is not a CBOR attestation object');
    }
    const origin = this.#precheck(clientDataOf(response.response.clientDataJSON), authData, 'webauthn.create', claims, rpId);
    let verified;
    try {
      verified = await verifyRegistrationResponse({
        response,
        expectedChallenge: claims.challenge,
        expectedOrigin: origin,
        expectedRPID: rpId,
        requireUserVerification: claims.signIn === true,
        supportedAlgorithmIDs: ALGORITHMS,
      });
    } catch (error) {
      throw failed(error instanceof Error ? error.message : 'the attestation does not verify', error);
    }
    if (!verified.verified) throw failed('the attestation does not verify');
    const info = verified.registrationInfo;
    if (claims.signIn === true && response.clientExtensionResults?.credProps?.rk === false) {
      throw new OcError(
        'credential_not_discoverable',
        'webauthn: the authenticator made a credential it cannot find without a name; it can be a step-up key, not a passkey',
      );
    }
    // Checked again here: several option tokens may have been asked for at once.
    this.#requireRoom((await this.#deps.store.listWebAuthnCredentials(current.account.id)).length);
    await this.#consume(claims);
    const attachment = response.authenticatorAttachment;
    const record: WebAuthnCredentialRecord = {
      id: info.credential.id,
      account_id: current.account.id,
      public_key: isoBase64URL.fromBuffer(info.credential.publicKey),
      counter: info.credential.counter,
      transports: (response.response.transports ?? []).filter((transport) => TRANSPORTS.has(transport)),
      label,
      authenticator_type: attachment === 'platform' || attachment === 'cross-platform' ? attachment : 'unknown',
      device_type: info.credentialDeviceType,
      backed_up: info.credentialBackedUp,
      user_verified: info.userVerified,
      sign_in: claims.signIn === true,
      user_handle: isoBase64URL.fromBuffer(this.#userHandle(current.account.id)),
      aaguid: info.aaguid,
      created_at: this.#nowMs(),
      last_used_at: null,
    };
    if (!(await this.#deps.store.insertWebAuthnCredential(record))) {
      throw new OcError('credential_exists', 'webauthn: this credential is already registered on this host');
    }
    await this.#deps.activity.record(current.account.id, 'key_added', {
      label: record.label,
      sign_in: record.sign_in,
      type: record.authenticator_type,
    });
    return credentialView(record);
  }

  // ---- managing ----

  async list(accountId: string): Promise<CredentialView[]> {
    return (await this.#deps.store.listWebAuthnCredentials(accountId)).map(credentialView);
  }

  /**
   * PATCH /api/auth/webauthn/credentials/:id: a new label, or `sign_in:
   * false` to keep a passkey for step-up only. Making a key a sign-in passkey
   * is a registration of its own (the authenticator must make a discoverable,
   * user-verifying credential), so `sign_in: true` is refused.
   */
  async update(
    accountId: string,
    id: string,
    input: { label?: string | undefined; sign_in?: boolean | undefined },
  ): Promise<CredentialView> {
    const label = labelOf(input.label);
    if (input.sign_in === true) {
      throw new OcError('bad_request', 'sign_in: a key becomes a sign-in passkey only by registering it as one');
    }
    if (label === undefined && input.sign_in === undefined) throw new OcError('bad_request', 'body: send label and/or sign_in');
    const updated = await this.#deps.store.updateWebAuthnCredential(id, accountId, {
      ...(label === undefined ? {} : { label }),
      ...(input.sign_in === undefined ? {} : { sign_in: false }),
    });
    if (updated === null) throw new OcError('not_found', 'webauthn: the active account has no key with this id');
    return credentialView(updated);
  }

  /** DELETE /api/auth/webauthn/credentials/:id: its route declares the step-up it needs (features/passkeys/routes.ts). */
  async remove(current: Authenticated, id: string): Promise<void> {
    const credential = await this.#deps.store.findWebAuthnCredential(id);
    if (
      credential === null ||
      credential.account_id !== current.account.id ||
      !(await this.#deps.store.deleteWebAuthnCredential(id, current.account.id))
    ) {
      throw new OcError('not_found', 'webauthn: the active account has no key with this id');
    }
    await this.#deps.activity.record(current.account.id, 'key_removed', { label: credential.label });
  }

  // ---- asserting ----

  /** POST /api/auth/webauthn/assertion/options: a challenge for one of the active account's keys. */
  async assertionOptions(current: Authenticated): Promise<CeremonyOptions<PublicKeyCredentialRequestOptionsJSON>> {
    const rpId = this.#rpId();
    const credentials = await this.#deps.store.listWebAuthnCredentials(current.account.id);
    if (credentials.length === 0)
      throw new OcError('no_credentials_registered', 'webauthn: the active account has no security key or passkey');
    const { token, challenge } = this.#issue({ kind: 'assert', jti: current.session.jti });
    const options = await generateAuthenticationOptions({
      rpID: rpId,
      allowCredentials: credentials.map((credential) => ({ id: credential.id, transports: [...credential.transports] })),
      challenge,
      timeout: WEBAUTHN_CHALLENGE_TTL_MS,
      userVerification: 'preferred',
    });
    return { options, challenge_token: token };
  }

  /**
   * A key assertion for the active account, then the row's freshness claim:
   * `step_up_at` (POST /api/auth/webauthn/assertion/verify) or `sudo_at`
   * (POST /api/auth/sudo with a key). Answers the re-minted session.
   */
  async stepUp(
    current: Authenticated,
    input: { challenge_token: string; response: AuthenticationResponseJSON },
    claim: 'step_up_at' | 'sudo_at',
  ): Promise<IssuedSession> {
    const claims = this.#open(input.challenge_token, 'assert', current.session.jti);
    let credential: WebAuthnCredentialRecord | null = null;
    try {
      credential = await this.#deps.store.findWebAuthnCredential(text(input.response.id, 'response.id'));
      if (credential === null || credential.account_id !== current.account.id) {
        throw new OcError('credential_outside_allowlist', 'webauthn: this key is not registered to the active account');
      }
      await this.#assert(credential, claims, input.response, false);
    } catch (error) {
      if (isOcError(error)) {
        const detail = {
          method: 'key',
          reason: error.code,
          ...(credential?.account_id === current.account.id ? { key: credential.label } : {}),
        };
        await this.#deps.activity.record(current.account.id, claim === 'sudo_at' ? 'sudo_failed' : 'step_up_failed', detail);
      }
      throw error;
    }
    const issued = await this.#deps.sessions.reissue(current, { [claim]: this.#nowMs() });
    await this.#deps.activity.record(current.account.id, claim === 'sudo_at' ? 'sudo' : 'step_up', {
      method: 'key',
      key: credential.label,
    });
    return issued;
  }

  /** POST /api/auth/passkey/options: a challenge any sign-in passkey of this host may answer. */
  async signInOptions(): Promise<CeremonyOptions<PublicKeyCredentialRequestOptionsJSON>> {
    const rpId = this.#rpId();
    const { token, challenge } = this.#issue({ kind: 'signin', jti: '' });
    const options = await generateAuthenticationOptions({
      rpID: rpId,
      allowCredentials: [],
      challenge,
      timeout: WEBAUTHN_CHALLENGE_TTL_MS,
      userVerification: 'required',
    });
    return { options, challenge_token: token };
  }

  /** POST /api/auth/passkey/signin: the account the passkey belongs to, signed in like every other path. */
  async signIn(input: { challenge_token: string; response: AuthenticationResponseJSON }, target: SignInTarget): Promise<IssuedSession> {
    const claims = this.#open(input.challenge_token, 'signin', '');
    const credential = await this.#deps.store.findWebAuthnCredential(text(input.response.id, 'response.id'));
    if (credential === null)
      throw new OcError('credential_outside_allowlist', 'webauthn: no passkey with this id is registered on this host');
    if (!credential.sign_in)
      throw new OcError('credential_outside_allowlist', 'webauthn: this key is for step-up only; sign in another way');
    // A discoverable credential names the user it was made for; it must be the one stored.
    if (input.response.response?.userHandle !== credential.user_handle) throw failed('the user handle does not match the passkey');
    await this.#assert(credential, claims, input.response, true);
    return this.#deps.signIn.open({ ...target, accountId: credential.account_id, method: 'passkey' });
  }

  async #assert(
    credential: WebAuthnCredentialRecord,
    claims: ChallengeClaims,
    response: AuthenticationResponseJSON,
    requireUserVerification: boolean,
  ): Promise<void> {
    const rpId = this.#rpId();
    const authData = decodeBase64url(text(response.response?.authenticatorData, 'response.authenticatorData'));
    if (authData === null) throw failed('response.authenticatorData is not base64url');
    const origin = this.#precheck(clientDataOf(response.response.clientDataJSON), authData, 'webauthn.get', claims, rpId);
    let info;
    try {
      const verified = await verifyAuthenticationResponse({
        response,
        expectedChallenge: claims.challenge,
        expectedOrigin: origin,
        expectedRPID: rpId,
        // The counter is checked below, after the signature, with its own code.
        credential: {
          id: credential.id,
          publicKey: bytesOf(isoBase64URL.toBuffer(credential.public_key)),
          counter: 0,
          transports: [...credential.transports] as never,
        },
        requireUserVerification,
      });
      if (!verified.verified) throw failed('the signature does not verify');
      info = verified.authenticationInfo;
    } catch (error) {
      if (error instanceof OcError) throw error;
      throw failed(error instanceof Error ? error.message : 'the assertion does not verify', error);
    }
    await this.#consume(claims);
    const counter = info.newCounter;
    if ((counter > 0 || credential.counter > 0) && counter <= credential.counter) {
      throw new OcError(
        'cloned_authenticator',
        "webauthn: the key's signature counter went back; it may have been cloned, so this use is refused",
      );
    }
    if (info.credentialDeviceType !== credential.device_type) {
      throw failed('the backup-eligibility flag of this credential changed, which WebAuthn does not allow');
    }
    const recorded = await this.#deps.store.recordWebAuthnUse(credential.id, {
      expected_counter: credential.counter,
      counter,
      backed_up: info.credentialBackedUp,
      at: this.#nowMs(),
    });
    if (!recorded) throw new OcError('cloned_authenticator', 'webauthn: another use of this key with the same counter came first');
  }
}

declare module '../../platform/services.js' {
  interface FeatureServices {
    /** Security keys and passkeys. */
    readonly webauthn: WebAuthnService;
  }
}
