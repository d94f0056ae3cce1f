/**
 * Signed attestations and their chain data for the load benchmarks: one
 * P2WPKH wallet per address, a realistic confirmed UTXO each, served by the
 * loopback Esplora fake.
 */
import { buildAttestationMessage } from '../src/features/attestations/index.js';
import { addressFromPrivateKey, signBip322 } from '../test/support/bitcoin-signer.js';
import type { EsploraFake, EsploraUtxoJson } from '../test/support/esplora-fake.js';

export interface BenchAttestation {
  readonly key: Uint8Array;
  readonly address: string;
  readonly msg: string;
  readonly sig: string;
  /** The POST /api/verify body. */
  readonly body: string;
}

/** A private key for index `index` of a series; series keep their addresses apart. */
function keyOf(series: number, index: number): Uint8Array {
  const key = new Uint8Array(32);
  key[0] = 1;
  key[1] = series;
  key[28] = (index >>> 24) & 255;
  key[29] = (index >>> 16) & 255;
  key[30] = (index >>> 8) & 255;
  key[31] = index & 255;
  return key;
}

/** `count` attestations of distinct addresses, each signed with BIP-322 (about 0.6 ms each). */
export function benchAttestations(series: number, count: number, issuedAt: Date = new Date()): BenchAttestation[] {
  return Array.from({ length: count }, (_, index) => {
    const key = keyOf(series, index);
    const address = addressFromPrivateKey(key, 'p2wpkh', 'mainnet');
    const msg = buildAttestationMessage({
      address,
      identities: [`github:bench${series}x${index}`],
      nonce: '0123456789abcdef0123456789abcdef',
      issuedAt,
    });
    const sig = signBip322({ privateKey: key, address, message: msg });
    return { key, address, msg, sig, body: JSON.stringify({ addr: address, msg, sig, scheme: 'bip322' }) };
  });
}

/** One confirmed output of 2,500,000 sats, 90 days old, under a tip of 1000. */
function benchUtxo(index: number): EsploraUtxoJson {
  return {
    txid: index.toString(16).padStart(64, 'a'),
    vout: 0,
    value: 2_500_000,
    status: { confirmed: true, block_height: 900, block_hash: '00'.repeat(32), block_time: Math.floor(Date.now() / 1000) - 90 * 86_400 },
  };
}

export function serveUtxos(esplora: EsploraFake, attestations: readonly BenchAttestation[]): void {
  for (const [index, attestation] of attestations.entries()) esplora.setUtxos(attestation.address, [benchUtxo(index)]);
}
