/**
 * GET /api/check (docs/performance.md "HTTP"):
 *
 * 1. cache hits through wrk (a separate process, 50 connections), next to the
 *    bare Fastify JSON route in the same run, in interleaved rounds; goal
 *    ≥ 0.6 of the bare route;
 * 2. cold check latency (cache off) with a loopback NIP-01 relay and the
 *    loopback Esplora fake: one relay REQ, one BIP-322 verify, one chain query;
 * 3. 100 concurrent cold checks of one subject: the single flight must turn
 *    them into one relay query and one chain query.
 *
 * Run directly: `node --import tsx bench/check.bench.ts`.
 */
import { randomBytes } from 'node:crypto';
import { pathToFileURL } from 'node:url';
import type { FastifyInstance } from 'fastify';
import { finalizeEvent, generateSecretKey } from 'nostr-tools/pure';
import { attestationId, buildAttestationMessage } from '../src/features/attestations/index.js';
import { addressFromPrivateKey, signBip322 } from '../test/support/bitcoin-signer.js';
import { loadConfig } from '../src/platform/config.js';
import { buildApp } from '../src/app.js';
import { buildAttestationEvent, buildEnvelope } from '../src/relay/index.js';
import { startEsploraFake, type EsploraFake } from '../test/support/esplora-fake.js';
import { startNostrRelay, type NostrRelay } from '../test/support/nostr-relay.js';
import { formatTable, median, type BenchResult } from './lib.js';
import { runWrk, startBareFastify, wrkAvailable, type WrkResult } from './wrk.js';
// Figures of the route itself: the rate limits are measured in scale.bench.ts.
import { RATE_LIMITS_OFF } from '../test/support/app.js';

const DAY = 86_400;

interface Fixture {
  esplora: EsploraFake;
  relay: NostrRelay;
  address: string;
}

async function startFixture(): Promise<Fixture> {
  const key = new Uint8Array(32).fill(61);
  const address = addressFromPrivateKey(key, 'p2wpkh', 'mainnet');
  const nowSeconds = Math.floor(Date.now() / 1000);
  const esplora = await startEsploraFake({
    tipHeight: 1000,
    utxosByAddress: {
      [address]: [
        {
          txid: 'ab'.repeat(32),
          vout: 0,
          value: 2_500_000,
          status: { confirmed: true, block_height: 900, block_hash: '00'.repeat(32), block_time: nowSeconds - 90 * DAY },
        },
      ],
    },
  });
  const relay = await startNostrRelay();
  const message = buildAttestationMessage({
    address,
    identities: ['github:bench', 'nostr:npub1bench'],
    nonce: randomBytes(16).toString('hex'),
    issuedAt: new Date(Date.now() - DAY * 1000).toISOString().replace(/\.\d+Z$/, 'Z'),
  });
  const envelope = buildEnvelope({
    message,
    signature: signBip322({ privateKey: key, address, message }),
    scheme: 'bip322',
    attestationId: attestationId(message),
    address,
    identities: [
      { protocol: 'github', identifier: 'bench' },
      { protocol: 'nostr', identifier: 'npub1bench' },
    ],
    issuedAt: message.split('\n')[5]!.slice('issued_at: '.length),
  });
  relay.publishRaw(finalizeEvent(buildAttestationEvent(envelope, new Date()), generateSecretKey()));
  return { esplora, relay, address };
}

async function listen(fixture: Fixture, env: Record<string, string> = {}): Promise<{ app: FastifyInstance; base: string }> {
  const config = loadConfig({
    ESPLORA_URLS: fixture.esplora.url,
    NOSTR_RELAYS: fixture.relay.url,
    LOG_LEVEL: 'silent',
    ...RATE_LIMITS_OFF,
    ...env,
  });
  const app = await buildApp(config, { logger: false });
  await app.listen({ port: 0, host: '127.0.0.1' });
  const port = (app.server.address() as { port: number }).port;
  return { app, base: `http://127.0.0.1:${port}` };
}

function percentile(values: readonly number[], fraction: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(fraction * sorted.length))]!;
}

export async function run(options: { durationSeconds?: number; rounds?: number } = {}): Promise<BenchResult[]> {
  const durationSeconds = options.durationSeconds ?? 3;
  const rounds = options.rounds ?? 5;
  const fixture = await startFixture();
  const results: BenchResult[] = [];
  try {
    // 1. Cache hits through wrk, next to the bare Fastify route.
    if (!wrkAvailable()) {
      results.push({ name: 'GET /api/check cache hit', opsPerSec: 0, note: 'skipped: wrk not installed (apt-get install wrk)' });
    } else {
      const cached = await listen(fixture);
      const bare = await startBareFastify();
      try {
        const url = `${cached.base}/api/check?addr=${fixture.address}&min_sats=1000&min_days=30`;
        const warm = await fetch(url);
        if (warm.status !== 200 || ((await warm.json()) as { ok: boolean }).ok !== true) throw new Error('bench: warm-up check failed');
        const baselines: WrkResult[] = [];
        const hits: WrkResult[] = [];
        for (let round = 0; round < rounds; round++) {
          baselines.push(await runWrk(bare.url, { durationSeconds }));
          hits.push(await runWrk(url, { durationSeconds }));
        }
        if (hits.some((hit) => hit.non2xx > 0)) throw new Error('bench: /api/check answered non-2xx responses');
        const ratio = median(hits.map((hit, round) => hit.requestsPerSec / baselines[round]!.requestsPerSec));
        results.push(
          {
            name: 'bare Fastify JSON route (wrk, 50 conns)',
            opsPerSec: Math.round(median(baselines.map((result) => result.requestsPerSec))),
            note: `p99 ${median(baselines.map((result) => result.p99Ms)).toFixed(2)} ms`,
          },
          {
            name: 'GET /api/check cache hit (wrk, 50 conns)',
            opsPerSec: Math.round(median(hits.map((result) => result.requestsPerSec))),
            baseline: 'bare Fastify JSON route (wrk, 50 conns)',
            ratio: Math.round(ratio * 1000) / 1000,
            note: `p99 ${median(hits.map((result) => result.p99Ms)).toFixed(2)} ms; goal ratio ≥ 0.6; median of ${rounds} interleaved rounds`,
          },
        );
      } finally {
        await cached.app.close();
        await bare.app.close();
      }
    }

    // 2. Cold checks, one after another, with the cache off.
    const cold = await listen(fixture, { CHECK_CACHE_SECONDS: '0' });
    try {
      const url = `${cold.base}/api/check?addr=${fixture.address}`;
      const latencies: number[] = [];
      for (let index = 0; index < 60; index++) {
        const started = performance.now();
        const response = await fetch(url);
        await response.arrayBuffer();
        if (response.status !== 200 || response.headers.get('x-cache') !== 'miss') throw new Error('bench: cold check failed');
        if (index >= 10) latencies.push(performance.now() - started); // the first ones warm up the JIT
      }
      const medianMs = median(latencies);
      results.push({
        name: 'GET /api/check cold (loopback relay + Esplora, sequential)',
        opsPerSec: Math.round(1000 / medianMs),
        note: `median ${medianMs.toFixed(2)} ms, p95 ${percentile(latencies, 0.95).toFixed(2)} ms over ${latencies.length}`,
      });
    } finally {
      await cold.app.close();
    }

    // 3. 100 concurrent cold checks of one subject.
    const burst = await listen(fixture);
    try {
      const requestsBefore = fixture.relay.requestCount;
      fixture.esplora.resetRequests();
      const started = performance.now();
      const responses = await Promise.all(
        Array.from({ length: 100 }, (_, index) => fetch(`${burst.base}/api/check?addr=${fixture.address}&min_sats=${index}`)),
      );
      await Promise.all(responses.map((response) => response.arrayBuffer()));
      const elapsed = performance.now() - started;
      if (responses.some((response) => response.status !== 200)) throw new Error('bench: a concurrent check failed');
      const relayQueries = fixture.relay.requestCount - requestsBefore;
      const chainQueries = fixture.esplora.requests.utxo;
      results.push({
        name: '100 concurrent cold checks, one subject',
        opsPerSec: Math.round((100 * 1000) / elapsed),
        note: `${elapsed.toFixed(1)} ms in all; relay REQs ${relayQueries}, chain queries ${chainQueries} (single flight: expect 1 and 1)`,
      });
      if (relayQueries !== 1 || chainQueries !== 1)
        throw new Error(`bench: single flight broken (${relayQueries} REQs, ${chainQueries} chain queries)`);
    } finally {
      await burst.app.close();
    }
  } finally {
    await fixture.relay.close();
    await fixture.esplora.close();
  }
  return results;
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const rows = await run();
  console.log(formatTable(rows));
}
