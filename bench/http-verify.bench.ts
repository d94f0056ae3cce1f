/**
 * POST /api/verify requests per second through wrk, with the chain answered
 * by the loopback Esplora fake, next to a bare Fastify JSON route in the same
 * run (docs/performance.md "HTTP"). Two more rows show where a verify's time goes:
 * the Esplora client alone (two HTTP requests per verify, by design: the
 * route is not cached) and the verifier with the chain answered from memory.
 */
import { loadConfig } from '../src/config.js';
import { buildAttestationMessage, verifyAttestation } from '../src/attest/index.js';
import { createEsploraClient, type ChainSource } from '../src/chain/index.js';
import { addressFromPrivateKey, signBip322 } from '../test/support/bitcoin-signer.js';
import { buildApp } from '../src/http/app.js';
import { startEsploraFake } from '../test/support/esplora-fake.js';
import type { BenchResult } from './lib.js';
import { runWrk, startBareFastify, wrkAvailable } from './wrk.js';
// Figures of the route itself: the rate limits are measured in scale.bench.ts.
import { RATE_LIMITS_OFF } from '../test/support/app.js';

/** Calls per second of `call`, one at a time, for about 2 s after a warm-up. */
async function sequentialRate(call: () => Promise<unknown>): Promise<number> {
  for (let index = 0; index < 100; index++) await call();
  let done = 0;
  const started = performance.now();
  while (performance.now() - started < 2000) {
    await call();
    done += 1;
  }
  return (done * 1000) / (performance.now() - started);
}

export async function run(options: { durationSeconds?: number } = {}): Promise<BenchResult[]> {
  if (!wrkAvailable()) {
    return [{ name: 'POST /api/verify', opsPerSec: 0, note: 'skipped: wrk not installed (apt-get install wrk)' }];
  }
  const durationSeconds = options.durationSeconds ?? 5;
  const key = new Uint8Array(32).fill(11);
  const address = addressFromPrivateKey(key, 'p2wpkh', 'mainnet');
  const nowSeconds = Math.floor(Date.now() / 1000);
  const esplora = await startEsploraFake({
    tipHeight: 1000,
    utxosByAddress: {
      [address]: [
        {
          txid: 'ab'.repeat(32),
          vout: 0,
          status: { confirmed: true, block_height: 900, block_hash: '00'.repeat(32), block_time: nowSeconds - 90 * 86_400 },
          value: 2_500_000,
        },
      ],
    },
  });
  const msg = buildAttestationMessage({
    address,
    identities: ['nostr:npub1bench', 'github:bench'],
    nonce: '0123456789abcdef0123456789abcdef',
    issuedAt: new Date(),
  });
  const sig = signBip322({ privateKey: key, address, message: msg });
  const app = await buildApp(
    loadConfig({
      ESPLORA_URLS: esplora.url,
      LOG_LEVEL: 'silent',
      DATABASE_URL: 'sqlite::memory:',
      NOSTR_RELAYS: 'ws://127.0.0.1:9',
      ...RATE_LIMITS_OFF,
    }),
    { logger: false },
  );
  await app.listen({ port: 0, host: '127.0.0.1' });
  const port = (app.server.address() as { port: number }).port;
  const bare = await startBareFastify();
  try {
    const baseline = await runWrk(bare.url, { durationSeconds });
    const verify = await runWrk(`http://127.0.0.1:${port}/api/verify`, {
      durationSeconds,
      method: 'POST',
      body: JSON.stringify({ addr: address, msg, sig, scheme: 'bip322' }),
      headers: { 'content-type': 'application/json' },
    });
    if (verify.non2xx > 0) throw new Error(`bench: /api/verify answered ${verify.non2xx} non-2xx responses`);

    const client = createEsploraClient({ bases: [esplora.url] });
    const chainRate = await sequentialRate(() => client.addressUtxos(address));
    const answered = await client.addressUtxos(address);
    const inMemory: ChainSource = { addressUtxos: async () => answered };
    const deps = { chain: inMemory, network: 'mainnet' as const, minConfirmations: 1, now: () => new Date() };
    const verifierRate = await sequentialRate(() => verifyAttestation({ addr: address, msg, sig, scheme: 'bip322' }, deps));
    return [
      { name: 'bare Fastify JSON route (wrk, 50 conns)', opsPerSec: baseline.requestsPerSec, note: `p99 ${baseline.p99Ms.toFixed(2)} ms` },
      {
        name: 'POST /api/verify, P2WPKH, loopback Esplora (wrk, 50 conns)',
        opsPerSec: verify.requestsPerSec,
        baseline: 'bare Fastify JSON route',
        ratio: verify.requestsPerSec / baseline.requestsPerSec,
        note: `p99 ${verify.p99Ms.toFixed(2)} ms`,
      },
      { name: 'Esplora client alone: UTXOs + tip height over loopback HTTP (sequential)', opsPerSec: chainRate },
      { name: 'verifyAttestation with the chain answered from memory (sequential)', opsPerSec: verifierRate },
    ];
  } finally {
    await app.close();
    await bare.app.close();
    await esplora.close();
  }
}
