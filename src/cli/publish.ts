/**
 * `oc-host publish <file>`: publishes a wallet-signed attestation read from a
 * JSON file, exactly as POST /api/attestations does (src/features/attestations/publish.ts):
 * verify (without the chain), wrap in a kind-30078 event signed with the
 * service's Nostr key, send to every configured relay (docs/protocol.md §7).
 *
 * The file holds `{addr, msg, sig, scheme?}` and is read as
 * attestation-file.ts says (a file that cannot be used is a UsageError).
 * The CLI entry hooks this in and turns the outcome into an exit status:
 * success only for `published`.
 */
import { generateSecretKey } from 'nostr-tools/pure';
import { createAttestationPublisher, type PublishOutcome } from '../features/attestations/index.js';
import type { Config } from '../platform/config.js';
import { buildRelayPool } from '../services.js';
import { readAttestationFile } from './attestation-file.js';

export interface PublishFromFileOptions {
  readonly config: Config;
  /** Where progress lines go (the CLI passes stdout). */
  readonly log: (line: string) => void;
  /**
   * The service's Nostr key. Until it is kept in storage, a run without one
   * signs with a fresh key, which readers accept: the event pubkey is
   * trusted for nothing (docs/protocol.md §7).
   */
  readonly nostrSecretKey?: Uint8Array;
  /** Per-relay deadline, ms; default the service's (DEFAULT_RELAY_TIMEOUT_MS). */
  readonly relayTimeoutMs?: number;
  readonly now?: () => Date;
}

export async function publishFromFile(path: string, options: PublishFromFileOptions): Promise<PublishOutcome> {
  const { config, log } = options;
  const input = await readAttestationFile(path);
  const relays = buildRelayPool(config, options.relayTimeoutMs);
  try {
    const publisher = createAttestationPublisher({
      relays,
      network: config.bitcoinNetwork,
      now: options.now ?? (() => new Date()),
      secretKey: options.nostrSecretKey ?? generateSecretKey(),
    });
    const outcome = await publisher.publish({
      addr: input.addr,
      msg: input.msg,
      sig: input.sig,
      ...(input.scheme === undefined ? {} : { scheme: input.scheme }),
    });
    switch (outcome.status) {
      case 'rejected':
        log(`publish: attestation ${outcome.attestation_id} does not verify: ${outcome.codes.join(', ')}`);
        break;
      case 'relays_unavailable':
        log(`publish: no relay accepted attestation ${outcome.attestation_id}; failed: ${outcome.failed.join(', ')}`);
        break;
      case 'published':
        log(`publish: attestation ${outcome.attestation_id} as event ${outcome.event_id}`);
        log(`publish: accepted by ${outcome.published.join(', ')}`);
        if (outcome.failed.length > 0) log(`publish: failed on ${outcome.failed.join(', ')}`);
        break;
    }
    return outcome;
  } finally {
    await relays.close();
  }
}
