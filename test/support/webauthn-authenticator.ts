/**
 * A software WebAuthn authenticator and client for the server tests: it makes
 * real credentials (ES256 on P-256, or EdDSA on Ed25519), real attestation
 * objects (`none`, or `packed` self-attestation) and real assertions, byte
 * for byte as WebAuthn Level 3 §6.1 and §6.5 lay them out, and the client
 * data a browser would wrap them in. What a browser or a key would never do
 * (a foreign origin, another RP id, a counter that goes back) is one option
 * away, so the tests can show the host refusing it.
 */
import { createHash, generateKeyPairSync, randomBytes, sign, type KeyObject } from 'node:crypto';

type Algorithm = 'ES256' | 'EdDSA';

// ---- a little CBOR (RFC 8949): what COSE keys and attestation objects use ----

function head(major: number, value: number): Buffer {
  if (value < 24) return Buffer.from([(major << 5) | value]);
  if (value < 0x100) return Buffer.from([(major << 5) | 24, value]);
  if (value < 0x10000) return Buffer.from([(major << 5) | 25, value >> 8, value & 0xff]);
  const out = Buffer.alloc(5);
  out[0] = (major << 5) | 26;
  out.writeUInt32BE(value, 1);
  return out;
}

type Cbor = number | string | Uint8Array | Map<number | string, Cbor> | Cbor[];

function cbor(value: Cbor): Buffer {
  if (typeof value === 'number') return value >= 0 ? head(0, value) : head(1, -1 - value);
  if (typeof value === 'string') {
    const bytes = Buffer.from(value, 'utf8');
    return Buffer.concat([head(3, bytes.length), bytes]);
  }
  if (value instanceof Uint8Array) return Buffer.concat([head(2, value.length), value]);
  if (Array.isArray(value)) return Buffer.concat([head(4, value.length), ...value.map(cbor)]);
  const parts: Buffer[] = [head(5, value.size)];
  for (const [key, entry] of value) parts.push(cbor(key), cbor(entry));
  return Buffer.concat(parts);
}

// ---- keys ----

function coseKey(alg: Algorithm, publicKey: KeyObject): Buffer {
  const jwk = publicKey.export({ format: 'jwk' });
  const x = Buffer.from(jwk.x as string, 'base64url');
  if (alg === 'EdDSA') {
    return cbor(
      new Map<number, Cbor>([
        [1, 1],
        [3, -8],
        [-1, 6],
        [-2, x],
      ]),
    );
  }
  const y = Buffer.from(jwk.y as string, 'base64url');
  return cbor(
    new Map<number, Cbor>([
      [1, 2],
      [3, -7],
      [-1, 1],
      [-2, x],
      [-3, y],
    ]),
  );
}

function signWith(alg: Algorithm, privateKey: KeyObject, data: Buffer): Buffer {
  // ES256 signatures are DER, as WebAuthn expects; Ed25519 ones are the raw 64 bytes.
  return alg === 'EdDSA' ? sign(null, data, privateKey) : sign('sha256', data, privateKey);
}

const sha256 = (data: string | Buffer): Buffer => createHash('sha256').update(data).digest();

const FLAG_UP = 0x01;
const FLAG_UV = 0x04;
const FLAG_BE = 0x08;
const FLAG_BS = 0x10;
const FLAG_AT = 0x40;

export interface StoredCredential {
  readonly id: Buffer;
  readonly alg: Algorithm;
  readonly privateKey: KeyObject;
  readonly publicKey: KeyObject;
  readonly rpId: string;
  readonly userHandle: string;
  counter: number;
}

export interface AuthenticatorOptions {
  readonly alg?: Algorithm;
  /** `packed` makes a self-attestation signed by the credential key. Default `none`. */
  readonly attestation?: 'none' | 'packed';
  /** The page origin the client reports. */
  readonly origin: string;
  /** Verifies the person (UV flag). Default true. */
  readonly userVerifying?: boolean;
  /** Backup eligible and backed up (a synced passkey). Default false. */
  readonly backedUp?: boolean;
  /** Counts signatures (a hardware key); false keeps the counter at 0 (many passkeys). Default true. */
  readonly counts?: boolean;
  readonly attachment?: 'platform' | 'cross-platform';
}

/** What a test may bend in one ceremony. */
export interface Bend {
  readonly origin?: string;
  readonly rpId?: string;
  readonly challenge?: string;
  readonly type?: string;
  /** Use this counter value instead of the next one. */
  readonly counter?: number;
  /** Sign as this credential (one of this authenticator's). */
  readonly credential?: StoredCredential;
  readonly userHandle?: string;
  readonly rk?: boolean;
  readonly userVerified?: boolean;
  readonly backupEligible?: boolean;
  /** create: make the credential with this id (an authenticator that repeats one). */
  readonly credentialId?: Buffer;
}

interface CreationOptions {
  readonly challenge: string;
  readonly rp: { readonly id?: string; readonly name: string };
  readonly user: { readonly id: string; readonly name: string };
  readonly excludeCredentials?: ReadonlyArray<{ readonly id: string }>;
  readonly pubKeyCredParams: ReadonlyArray<{ readonly alg: number }>;
  readonly authenticatorSelection?: { readonly residentKey?: string; readonly userVerification?: string };
}

interface RequestOptions {
  readonly challenge: string;
  readonly rpId?: string;
  readonly allowCredentials?: ReadonlyArray<{ readonly id: string }>;
}

export class SoftwareAuthenticator {
  readonly options: Required<Omit<AuthenticatorOptions, 'attachment'>> & { attachment: AuthenticatorOptions['attachment'] };
  readonly credentials: StoredCredential[] = [];

  constructor(options: AuthenticatorOptions) {
    this.options = {
      alg: options.alg ?? 'ES256',
      attestation: options.attestation ?? 'none',
      origin: options.origin,
      userVerifying: options.userVerifying ?? true,
      backedUp: options.backedUp ?? false,
      counts: options.counts ?? true,
      attachment: options.attachment,
    };
  }

  #clientData(type: string, challenge: string, bend: Bend): Buffer {
    return Buffer.from(
      JSON.stringify({
        type: bend.type ?? type,
        challenge: bend.challenge ?? challenge,
        origin: bend.origin ?? this.options.origin,
        crossOrigin: false,
      }),
    );
  }

  #flags(bend: Bend, attested: boolean): number {
    const backup = bend.backupEligible ?? this.options.backedUp;
    let flags = FLAG_UP;
    if (bend.userVerified ?? this.options.userVerifying) flags |= FLAG_UV;
    if (backup) flags |= FLAG_BE | (this.options.backedUp ? FLAG_BS : 0);
    if (attested) flags |= FLAG_AT;
    return flags;
  }

  #counter(credential: StoredCredential, bend: Bend): Buffer {
    if (bend.counter === undefined && this.options.counts) credential.counter += 1;
    const out = Buffer.alloc(4);
    out.writeUInt32BE(bend.counter ?? credential.counter);
    return out;
  }

  /** navigator.credentials.create: the RegistrationResponseJSON for `options` (PublicKeyCredentialCreationOptionsJSON). */
  create(options: CreationOptions, bend: Bend = {}): Record<string, unknown> {
    const alg = this.options.alg;
    if (!options.pubKeyCredParams.some((param) => param.alg === (alg === 'EdDSA' ? -8 : -7)))
      throw new Error(`authenticator: ${alg} not offered`);
    const excluded = new Set((options.excludeCredentials ?? []).map((entry) => entry.id));
    if (this.credentials.some((credential) => excluded.has(credential.id.toString('base64url'))))
      throw new Error('InvalidStateError: already registered');
    const pair = alg === 'EdDSA' ? generateKeyPairSync('ed25519') : generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const rpId = bend.rpId ?? options.rp.id ?? new URL(this.options.origin).hostname;
    const credential: StoredCredential = {
      id: bend.credentialId ?? randomBytes(32),
      alg,
      privateKey: pair.privateKey,
      publicKey: pair.publicKey,
      rpId,
      userHandle: options.user.id,
      counter: 0,
    };
    const length = Buffer.alloc(2);
    length.writeUInt16BE(credential.id.length);
    const authData = Buffer.concat([
      sha256(rpId),
      Buffer.from([this.#flags(bend, true)]),
      this.#counter(credential, bend),
      Buffer.alloc(16), // AAGUID: none given
      length,
      credential.id,
      coseKey(alg, pair.publicKey),
    ]);
    const clientDataJSON = this.#clientData('webauthn.create', options.challenge, bend);
    const attStmt =
      this.options.attestation === 'packed'
        ? new Map<string, Cbor>([
            ['alg', alg === 'EdDSA' ? -8 : -7],
            ['sig', signWith(alg, pair.privateKey, Buffer.concat([authData, sha256(clientDataJSON)]))],
          ])
        : new Map<string, Cbor>();
    const attestationObject = cbor(
      new Map<string, Cbor>([
        ['fmt', this.options.attestation],
        ['attStmt', attStmt],
        ['authData', authData],
      ]),
    );
    this.credentials.push(credential);
    const id = credential.id.toString('base64url');
    const rk = bend.rk ?? options.authenticatorSelection?.residentKey === 'required';
    return {
      id,
      rawId: id,
      type: 'public-key',
      ...(this.options.attachment === undefined ? {} : { authenticatorAttachment: this.options.attachment }),
      clientExtensionResults: { credProps: { rk } },
      response: {
        clientDataJSON: clientDataJSON.toString('base64url'),
        attestationObject: attestationObject.toString('base64url'),
        transports: this.options.attachment === 'platform' ? ['internal'] : ['usb', 'nfc'],
      },
    };
  }

  /** navigator.credentials.get: the AuthenticationResponseJSON for `options` (PublicKeyCredentialRequestOptionsJSON). */
  get(options: RequestOptions, bend: Bend = {}): Record<string, unknown> {
    const allowed = new Set((options.allowCredentials ?? []).map((entry) => entry.id));
    const credential =
      bend.credential ?? this.credentials.find((candidate) => allowed.size === 0 || allowed.has(candidate.id.toString('base64url')));
    if (credential === undefined) throw new Error('NotAllowedError: no credential of this authenticator is allowed');
    const rpId = bend.rpId ?? options.rpId ?? credential.rpId;
    const authData = Buffer.concat([sha256(rpId), Buffer.from([this.#flags(bend, false)]), this.#counter(credential, bend)]);
    const clientDataJSON = this.#clientData('webauthn.get', options.challenge, bend);
    const signature = signWith(credential.alg, credential.privateKey, Buffer.concat([authData, sha256(clientDataJSON)]));
    const id = credential.id.toString('base64url');
    return {
      id,
      rawId: id,
      type: 'public-key',
      ...(this.options.attachment === undefined ? {} : { authenticatorAttachment: this.options.attachment }),
      clientExtensionResults: {},
      response: {
        clientDataJSON: clientDataJSON.toString('base64url'),
        authenticatorData: authData.toString('base64url'),
        signature: signature.toString('base64url'),
        userHandle: bend.userHandle ?? credential.userHandle,
      },
    };
  }
}
