/**
 * `oc-host publish <file>`: publishes a wallet-signed attestation read from a
 * JSON file, exactly as POST /api/attestations does (src/attest/publish.ts):
 * verify (without the chain), wrap in a kind-30078 event signed with the
 * service's Nostr key, send to every configured relay (docs/protocol.md §7).
 *
 * The file holds `{addr, msg, sig, scheme?}`. The CLI entry hooks this in
 * and turns the outcome into an exit status: success only for `published`.
 */
import { readFile } from 'node:fs/promises';
import { generateSecretKey } from 'nostr-tools/pure';
import { createAttestationPublisher, type PublishOutcome } from '../attest/index.js';
import type { Config } from '../config.js';
import { createRelayPool } from '../relay/index.js';

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
  /** Per-relay deadline, ms; default 4000. */
  readonly relayTimeoutMs?: number;
  readonly now?: () => Date;
}

/** Most bytes read from the file: the API's body limit (docs/protocol.md §4). */
const MAX_FILE_BYTES = 64 * 1024;

interface AttestationFile {
  addr: string;
  msg: string;
  sig: string;
  scheme?: string;
}

/** Reads and checks the file; a bad file is the operator's mistake, reported with a message naming the field. */
async function readAttestationFile(path: string): Promise<AttestationFile> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    throw new Error(`cli: cannot read ${path}: ${(error as NodeJS.ErrnoException).code ?? 'error'}`);
  }
  if (Buffer.byteLength(text, 'utf8') > MAX_FILE_BYTES) throw new Error(`cli: ${path} is larger than 64 KiB`);
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new Error(`cli: ${path} is not JSON`);
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw new Error(`cli: ${path} must hold a JSON object {addr, msg, sig, scheme?}`);
  }
  const record = parsed as Record<string, unknown>;
  for (const field of ['addr', 'msg', 'sig'] as const) {
    if (typeof record[field] !== 'string' || record[field] === '') throw new Error(`cli: ${path}: ${field} must be a non-empty string`);
  }
  if (record.scheme !== undefined && typeof record.scheme !== 'string') throw new Error(`cli: ${path}: scheme must be a string`);
  return {
    addr: record.addr as string,
    msg: record.msg as string,
    sig: record.sig as string,
    ...(typeof record.scheme === 'string' ? { scheme: record.scheme } : {}),
  };
}

export async function publishFromFile(path: string, options: PublishFromFileOptions): Promise<PublishOutcome> {
  const { config, log } = options;
  const input = await readAttestationFile(path);
  const relays = createRelayPool({ relays: config.nostrRelays, timeoutMs: options.relayTimeoutMs ?? 4000 });
  try {
    const publisher = createAttestationPublisher({
      relays,
      network: config.bitcoinNetwork,
      now: options.now ?? (() => new Date()),
      secretKey: options.nostrSecretKey ?? generateSecretKey(),
    });
    const outcome = await publisher.publish(input);
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
