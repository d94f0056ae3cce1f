/**
 * Publishing an attestation to the Nostr relays (docs/protocol.md §7 "Relay
 * envelopes"): POST /api/attestations and the `publish` CLI command.
 *
 * The attestation is verified first, and only what the wallet signed is
 * checked: the canonical message, the id, the address, the expiry and the
 * Bitcoin signature. The chain is NOT consulted: a bond is a property of the
 * chain at read time, which every reader (/api/check) measures itself, so a
 * `bond_zero`, a `bond_insufficient` or an Esplora outage must not stop a
 * publication. Codes that only the chain can give are therefore absent from
 * the answer.
 *
 * The envelope travels in a kind-30078 event signed with the service's own
 * Nostr key. That key is a transport key only; readers trust nothing about it
 * (docs/protocol.md §7, "The event's pubkey is not trusted for anything else").
 */
import { finalizeEvent, getPublicKey } from 'nostr-tools/pure';
import type { ChainSource } from '../../chain/index.js';
import type { BitcoinNetwork } from '../../platform/config.js';
import { buildAttestationEvent, buildEnvelope, type RelayPool } from '../../relay/index.js';
import { codesPass, type VerifyCode } from './codes.js';
import { subjectsOf, type AttestationLookupService } from './lookup.js';
import { verifyAttestation } from './verify.js';

export interface PublishAttestationInput {
  readonly addr: string;
  readonly msg: string;
  readonly sig: string;
  /** `bip322` or `legacy`; absent means "detect" (docs/protocol.md §7 "Signatures"). */
  readonly scheme?: string | undefined;
}

export interface AttestationPublisherDeps {
  readonly relays: Pick<RelayPool, 'publish'>;
  /** `BITCOIN_NETWORK`: decides `network_testmode` (a warning, which does not block). */
  readonly network: BitcoinNetwork;
  readonly now: () => Date;
  /** The service's Nostr secret key (32 bytes) that signs the events. */
  readonly secretKey: Uint8Array;
  /** The `verification_url` the published envelopes carry. */
  readonly verificationUrlOf?: (attestationId: string) => string;
  /** The /api/check results to forget once an attestation is published, so that it shows at once. */
  readonly checkResults?: Pick<AttestationLookupService, 'forget'>;
}

export type PublishOutcome =
  /** The attestation does not verify; nothing was sent. */
  | { readonly status: 'rejected'; readonly attestation_id: string; readonly codes: readonly VerifyCode[] }
  /** At least one relay acknowledged the event with OK true (`published`), or none did (`relays_unavailable`). */
  | {
      readonly status: 'published' | 'relays_unavailable';
      readonly attestation_id: string;
      readonly codes: readonly VerifyCode[];
      readonly event_id: string;
      readonly published: readonly string[];
      readonly failed: readonly string[];
    };

export interface AttestationPublisher {
  /** The service's Nostr public key (hex), the `pubkey` of the events it publishes. */
  readonly pubkey: string;
  publish(input: PublishAttestationInput): Promise<PublishOutcome>;
}

/**
 * Stands in for the chain while publishing, so that verifyAttestation never
 * makes a network request here. Its failure becomes `chain_unavailable`,
 * which {@link createAttestationPublisher} drops from the codes.
 */
const CHAIN_NOT_CONSULTED: ChainSource = {
  addressUtxos: () => Promise.reject(new Error('attest: the chain is not consulted when publishing')),
};

export function createAttestationPublisher(deps: AttestationPublisherDeps): AttestationPublisher {
  if (!(deps.secretKey instanceof Uint8Array) || deps.secretKey.length !== 32) {
    throw new TypeError('attest: the Nostr secret key must be 32 bytes');
  }
  const secretKey = deps.secretKey;
  const pubkey = getPublicKey(secretKey);

  return {
    pubkey,
    async publish(input) {
      const result = await verifyAttestation(
        { addr: input.addr, msg: input.msg, sig: input.sig, scheme: input.scheme },
        { chain: CHAIN_NOT_CONSULTED, network: deps.network, minConfirmations: 1, now: deps.now },
      );
      const codes = result.codes.filter((code) => code !== 'chain_unavailable');
      const signatureScheme = codes.includes('sig_ok_bip322') ? 'bip322' : codes.includes('sig_ok_legacy') ? 'legacy' : undefined;
      if (!codesPass(codes) || signatureScheme === undefined || result.issued_at === undefined) {
        return { status: 'rejected', attestation_id: result.attestation_id, codes };
      }

      let event;
      try {
        // The scheme recorded is the one that verified, so that readers
        // check it the same way (a legacy signature sent as `bip322` on a
        // P2PKH address verifies as `sig_ok_legacy`).
        const envelope = buildEnvelope({
          message: input.msg,
          signature: input.sig,
          scheme: signatureScheme,
          attestationId: result.attestation_id,
          address: result.address,
          identities: result.identities,
          issuedAt: result.issued_at,
          ...(result.expires_at !== undefined ? { expiresAt: result.expires_at } : {}),
          ...(deps.verificationUrlOf ? { verificationUrl: deps.verificationUrlOf(result.attestation_id) } : {}),
        });
        event = finalizeEvent(buildAttestationEvent(envelope, deps.now()), secretKey);
      } catch {
        // buildEnvelope refuses what readers would drop (e.g. a message
        // listing one identity twice, which the canonical parser folds):
        // publishing it would only put junk on the relays.
        return { status: 'rejected', attestation_id: result.attestation_id, codes: [...codes, 'decode_error'] };
      }

      const sent = await deps.relays.publish(event);
      // A cached result of any of its subjects must not hide it (docs/api.md "Attestation routes").
      if (sent.published.length > 0) await deps.checkResults?.forget(subjectsOf(result));
      return {
        status: sent.published.length > 0 ? 'published' : 'relays_unavailable',
        attestation_id: result.attestation_id,
        codes,
        event_id: event.id,
        published: sent.published,
        failed: sent.failed,
      };
    },
  };
}

declare module '../../platform/services.js' {
  interface FeatureServices {
    /** Publishes wallet-signed attestations to the relays. */
    readonly attestationPublisher: AttestationPublisher;
    /** The service's own Nostr secret key (32 bytes): signs the events it publishes. */
    readonly nostrSecretKey: Uint8Array;
  }
}
