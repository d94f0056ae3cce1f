/**
 * POST /api/verify under load (docs/performance.md "The chain"), through wrk
 * (50 connections) against the service in a process of its own, with the
 * chain answered by the loopback Esplora fake in this process, next to a
 * bare Fastify JSON route in the same run:
 *
 * 1. repeated addresses: 20 attestations, requested in turn, so every address
 *    is asked again and again (a site checking its active members);
 * 2. all-distinct addresses: every request a new address (a burst of new
 *    members), so each costs one chain query; the tip is read once every few
 *    seconds for all of them.
 *
 * Each row reports p50/p99, the Esplora questions the run cost (UTXO queries
 * and tip reads) and the service's peak RSS. Two more rows show where a
 * verify's time goes: the Esplora client alone and the verifier with the
 * chain answered from memory.
 */
import { verifyAttestation } from '../src/features/attestations/index.js';
import { createEsploraClient, type ChainSource } from '../src/chain/index.js';
import { startEsploraFake, type EsploraFake } from '../test/support/esplora-fake.js';
import { startInstance } from '../test/support/instances.js';
import { benchAttestations, serveUtxos, type BenchAttestation } from './attestations.js';
import { median, type BenchResult } from './lib.js';
import { cpuMsOf, luaList, peakRssMb, runWrk, startBareFastify, wrkAvailable, type WrkResult } from './wrk.js';
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

/** A wrk script that posts the bodies in turn (one wrk thread: one counter). */
function postingInTurn(bodies: readonly string[]): string {
  return [
    luaList('bodies', bodies),
    'local next = 0',
    'request = function()',
    '  next = next + 1',
    '  return wrk.format("POST", "/api/verify", nil, bodies[((next - 1) % #bodies) + 1])',
    'end',
  ].join('\n');
}

/** Esplora questions since the last reset: UTXO queries, and tip reads (a height and a hash, or a height alone before the block cache). */
export function chainQuestions(esplora: EsploraFake): string {
  return `chain: ${esplora.requests.utxo} UTXO queries, ${esplora.requests.tipHeight} tip reads`;
}

/** The median of each figure over the rounds. */
export function medianRun(results: readonly WrkResult[]): WrkResult {
  return {
    requestsPerSec: median(results.map((result) => result.requestsPerSec)),
    p50Ms: median(results.map((result) => result.p50Ms)),
    p99Ms: median(results.map((result) => result.p99Ms)),
    non2xx: results.reduce((sum, result) => sum + result.non2xx, 0),
    requests: results.reduce((sum, result) => sum + result.requests, 0),
  };
}

/** The service's CPU time a request cost over the runs (user and system, every thread): steadier than requests per second on a shared machine. */
export function cpuPerRequest(cpu: { readonly ms: number; readonly requests: number }): string {
  return `service CPU ${(cpu.ms / cpu.requests).toFixed(3)} ms/request`;
}

export function loadNote(result: WrkResult, extra: string): string {
  return `p50 ${result.p50Ms.toFixed(2)} ms, p99 ${result.p99Ms.toFixed(2)} ms; ${extra}`;
}

/** Rounds of (bare route, repeated verifies), so each ratio compares two runs taken seconds apart on a shared machine. */
const ROUNDS = 3;

export async function run(options: { durationSeconds?: number } = {}): Promise<BenchResult[]> {
  if (!wrkAvailable()) {
    return [{ name: 'POST /api/verify', opsPerSec: 0, note: 'skipped: wrk not installed (apt-get install wrk)' }];
  }
  const durationSeconds = options.durationSeconds ?? 3;
  const esplora = await startEsploraFake({ tipHeight: 1000 });
  const repeated = benchAttestations(1, 20);
  // A warm-up set and one set a round, each more than a run can ask for, so that no address comes twice.
  const distinctSets: BenchAttestation[][] = [
    benchAttestations(2, 2_500),
    ...Array.from({ length: ROUNDS }, (_, round) => benchAttestations(3 + round, 6_000)),
  ];
  serveUtxos(esplora, repeated);
  for (const set of distinctSets) serveUtxos(esplora, set);
  const service = await startInstance({
    ESPLORA_URLS: esplora.url,
    DATABASE_URL: 'sqlite::memory:',
    NOSTR_RELAYS: 'ws://127.0.0.1:9',
    ...RATE_LIMITS_OFF,
  });
  const bare = await startBareFastify();
  const pid = service.child.pid!;
  const verifyUrl = `${service.url}/api/verify`;
  const json = { 'content-type': 'application/json' };
  try {
    const baselines: WrkResult[] = [];
    const hots: WrkResult[] = [];
    const hotCpu = { ms: 0, requests: 0 };
    esplora.resetRequests();
    for (let round = 0; round < ROUNDS; round++) {
      baselines.push(await runWrk(bare.url, { durationSeconds }));
      const cpuBefore = cpuMsOf(pid);
      const hot = await runWrk(verifyUrl, { durationSeconds, headers: json, lua: postingInTurn(repeated.map((entry) => entry.body)) });
      hotCpu.ms += cpuMsOf(pid) - cpuBefore;
      hotCpu.requests += hot.requests;
      if (hot.non2xx > 0) throw new Error(`bench: /api/verify answered ${hot.non2xx} non-2xx responses`);
      hots.push(hot);
    }
    const baseline = medianRun(baselines);
    const baselineRow: BenchResult = {
      name: 'bare Fastify JSON route (wrk, 50 conns)',
      opsPerSec: baseline.requestsPerSec,
      note: `p50 ${baseline.p50Ms.toFixed(2)} ms, p99 ${baseline.p99Ms.toFixed(2)} ms; medians of ${ROUNDS} rounds`,
    };
    const hot = medianRun(hots);
    const hotRow: BenchResult = {
      name: 'POST /api/verify, 20 repeated addresses, loopback Esplora (wrk, 50 conns)',
      opsPerSec: hot.requestsPerSec,
      baseline: 'bare Fastify JSON route',
      ratio: median(hots.map((result, round) => result.requestsPerSec / baselines[round]!.requestsPerSec)),
      note: loadNote(hot, `${cpuPerRequest(hotCpu)}; ${chainQuestions(esplora)} in ${ROUNDS} rounds; goal ratio ≥ 0.25, p99 < 50 ms`),
    };

    // A burst of new addresses: a warm-up on addresses of its own (so the
    // rounds measure the path, not its first compilation), then ROUNDS runs,
    // each on addresses no earlier run asked for. The queries are counted at
    // the Esplora fake against the distinct addresses it was asked about,
    // which includes the requests wrk left in flight when a run stopped.
    await runWrk(verifyUrl, { durationSeconds: 1, headers: json, lua: postingInTurn(distinctSets[0]!.map((entry) => entry.body)) });
    const colds: WrkResult[] = [];
    const coldBaselines: WrkResult[] = [];
    const counted = { addresses: 0, utxo: 0, tips: 0 };
    const coldCpu = { ms: 0, requests: 0 };
    for (let round = 0; round < ROUNDS; round++) {
      coldBaselines.push(await runWrk(bare.url, { durationSeconds }));
      esplora.resetRequests();
      const set = distinctSets[round + 1]!;
      const cpuBefore = cpuMsOf(pid);
      const cold = await runWrk(verifyUrl, { durationSeconds, headers: json, lua: postingInTurn(set.map((entry) => entry.body)) });
      coldCpu.ms += cpuMsOf(pid) - cpuBefore;
      coldCpu.requests += cold.requests;
      if (cold.non2xx > 0) throw new Error(`bench: /api/verify answered ${cold.non2xx} non-2xx responses`);
      if (cold.requests >= set.length)
        throw new Error(`bench: a round asked for ${cold.requests} verifies, more than its ${set.length} addresses`);
      colds.push(cold);
      counted.addresses += new Set(esplora.queriedAddresses).size;
      counted.utxo += esplora.requests.utxo;
      counted.tips += esplora.requests.tipHeight;
    }
    const cold = medianRun(colds);
    const coldRow: BenchResult = {
      name: 'POST /api/verify, all-distinct addresses, loopback Esplora (wrk, 50 conns)',
      opsPerSec: cold.requestsPerSec,
      baseline: 'bare Fastify JSON route',
      ratio: median(colds.map((result, round) => result.requestsPerSec / coldBaselines[round]!.requestsPerSec)),
      note: loadNote(
        cold,
        `${cpuPerRequest(coldCpu)}; ${counted.addresses} addresses in ${ROUNDS} rounds (${durationSeconds * ROUNDS} s), chain: ${counted.utxo} UTXO queries, ${counted.tips} tip reads; ` +
          'goal: queries = addresses + a tip read per few seconds, p99 < 200 ms; ' +
          `service peak RSS ${peakRssMb(pid)?.toFixed(0) ?? '?'} MiB`,
      ),
    };

    const client = createEsploraClient({ bases: [esplora.url] });
    const address = repeated[0]!.address;
    const chainRate = await sequentialRate(() => client.addressUtxos(address));
    const answered = await client.addressUtxos(address);
    const inMemory: ChainSource = { addressUtxos: async () => answered };
    const deps = { chain: inMemory, network: 'mainnet' as const, minConfirmations: 1, now: () => new Date() };
    const { msg, sig } = repeated[0]!;
    const verifierRate = await sequentialRate(() => verifyAttestation({ addr: address, msg, sig, scheme: 'bip322' }, deps));
    return [
      baselineRow,
      hotRow,
      coldRow,
      { name: 'Esplora client alone: UTXOs + tip height over loopback HTTP (sequential)', opsPerSec: chainRate },
      { name: 'verifyAttestation with the chain answered from memory (sequential)', opsPerSec: verifierRate },
    ];
  } finally {
    await service.stop();
    await bare.app.close();
    await esplora.close();
  }
}
