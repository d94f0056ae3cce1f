/**
 * Wallet-signed attestations and their kind-30078 relay events for tests
 * (docs/protocol.md §7): one place that builds the canonical message, signs it
 * with BIP-322 and wraps it the way a publisher does.
 */
import { randomBytes } from 'node:crypto';
import { finalizeEvent, type NostrEvent } from 'nostr-tools/pure';
import { attestationId, buildAttestationMessage, parseAttestationMessage, scoreV0 } from '../../src/features/attestations/index.js';
import { signBip322 } from './bitcoin-signer.js';
import { buildAttestationEvent, buildEnvelope } from '../../src/relay/index.js';

export interface SignedAttestation {
  readonly msg: string;
  readonly sig: string;
  readonly id: string;
  readonly address: string;
}

/** A canonical message for `address` with a fresh nonce (or `options.nonce`), signed by `key`. */
export function signAttestation(
  key: Uint8Array,
  address: string,
  issuedAt: string,
  options: { identities?: readonly string[]; extensions?: Readonly<Record<string, string>>; nonce?: string } = {},
): SignedAttestation {
  const msg = buildAttestationMessage({
    address,
    identities: options.identities ?? [],
    nonce: options.nonce ?? randomBytes(16).toString('hex'),
    issuedAt,
    extensions: options.extensions ?? {},
  });
  return { msg, sig: signBip322({ privateKey: key, address, message: msg }), id: attestationId(msg), address };
}

/** The relay event a publisher with `publisherKey` would send for `attestation`. */
export function attestationEvent(
  attestation: Pick<SignedAttestation, 'msg' | 'sig' | 'id'>,
  options: { publisherKey: Uint8Array; createdAt: Date; signature?: string; relayHints?: readonly string[] },
): NostrEvent {
  const parsed = parseAttestationMessage(attestation.msg);
  if (!parsed.ok) throw new Error('test: the attestation message does not parse');
  const envelope = buildEnvelope({
    message: attestation.msg,
    signature: options.signature ?? attestation.sig,
    scheme: 'bip322',
    attestationId: attestation.id,
    address: parsed.value.address,
    identities: parsed.value.identities,
    issuedAt: parsed.value.issuedAt,
    expiresAt: parsed.value.expires,
    ...(options.relayHints ? { relayHints: options.relayHints } : {}),
  });
  return finalizeEvent(buildAttestationEvent(envelope, options.createdAt), options.publisherKey);
}

/**
 * The check result (docs/api.md) for an attestation of `address` naming
 * `github:alice` and `nostr:npub1alice`, over a bond of 250 000 sats held 45 days.
 */
export function aliceCheckResult(attestationId: string, address: string): Record<string, unknown> {
  return {
    ok: true,
    sats: 250_000,
    days: 45,
    score: scoreV0(250_000, 45),
    attestation_id: attestationId,
    address,
    identities: [
      { protocol: 'github', identifier: 'alice' },
      { protocol: 'nostr', identifier: 'npub1alice' },
    ],
    network: 'mainnet',
  };
}

/** The fields docs/api.md gives an envelope of `attestation` when it names `github:alice` alone. */
export function githubAliceEnvelope(attestation: SignedAttestation): Record<string, unknown> {
  return {
    attestation_id: attestation.id,
    scheme: 'bip322',
    address: attestation.address,
    identities: [{ protocol: 'github', identifier: 'alice' }],
    message: attestation.msg,
    message_b64url: Buffer.from(attestation.msg).toString('base64url'),
    signature: attestation.sig,
  };
}
