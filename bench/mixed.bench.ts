/**
 * A mixed workload through wrk (50 connections) against the service in a
 * process of its own with 100k sessions stored, on SQLite and on PostgreSQL
 * with Redis (docs/performance.md "The chain"): of every 100 requests, 90
 * `/api/check` cache hits over 20 subjects, 5 `POST /api/verify` over 50
 * addresses, 3 BIP-322 sign-ins (each with its own challenge, signed before
 * the run) and 2 `GET /api/auth/me`. The relay and the Esplora fake run in
 * this process. A 2 s run of the same mix warms the service up first. Each
 * row gives its ratio to the bare Fastify route measured just before it,
 * p50/p99 (the bare route's p99 beside them), the service's CPU time a
 * request, the chain questions and the service's peak RSS.
 */
import { randomBytes } from 'node:crypto';
import { generateSecretKey } from 'nostr-tools/pure';
import { attestationId } from '../src/features/attestations/index.js';
import { newWallet } from '../test/support/auth-client.js';
import { attestationEvent } from '../test/support/attestations.js';
import { startEsploraFake, type EsploraFake } from '../test/support/esplora-fake.js';
import { HttpBrowser } from '../test/support/http-client.js';
import { signInOnInstance, startInstance } from '../test/support/instances.js';
import { startNostrRelay, type NostrRelay } from '../test/support/nostr-relay.js';
import { redisTestBaseUrl } from '../test/support/redis.js';
import { benchAttestations, serveUtxos, type BenchAttestation } from './attestations.js';
import { chainQuestions, cpuPerRequest, loadNote } from './http-verify.bench.js';
import type { BenchResult } from './lib.js';
import { postgresWithRows, sqliteWithRows } from './sessions.bench.js';
import { cpuMsOf, luaList, peakRssMb, runWrk, startBareFastify, wrkAvailable } from './wrk.js';
// Figures of the routes themselves: the rate limits are measured in scale.bench.ts.
import { RATE_LIMITS_OFF } from '../test/support/app.js';

const ORIGIN = 'http://localhost:8787';
/** More sign-ins than a run makes: a challenge can be used once. */
const SIGN_IN_PROOFS = 3_000;
/** The warm-up's own sign-ins, and how long it runs before the measured run. */
const WARM_UP_PROOFS = 800;
const WARM_UP_SECONDS = 2;

interface Fixture {
  readonly esplora: EsploraFake;
  readonly relay: NostrRelay;
  readonly checked: readonly BenchAttestation[];
  readonly verified: readonly BenchAttestation[];
}

async function startFixture(): Promise<Fixture> {
  const esplora = await startEsploraFake({ tipHeight: 1000 });
  const relay = await startNostrRelay();
  const issuedAt = new Date(Date.now() - 86_400_000);
  issuedAt.setUTCMilliseconds(0);
  const checked = benchAttestations(3, 20, issuedAt);
  const verified = benchAttestations(4, 50);
  serveUtxos(esplora, checked);
  serveUtxos(esplora, verified);
  for (const attestation of checked) {
    relay.publishRaw(
      attestationEvent(
        { ...attestation, id: attestationId(attestation.msg) },
        { publisherKey: generateSecretKey(), createdAt: new Date() },
      ),
    );
  }
  return { esplora, relay, checked, verified };
}

/** The wrk script: the mix by request number (one wrk thread: one counter). */
function mixScript(fixture: Fixture, proofs: readonly string[], cookie: string): string {
  return [
    luaList(
      'checks',
      fixture.checked.map((entry) => `/api/check?addr=${entry.address}&min_sats=1000&min_days=30`),
    ),
    luaList(
      'verifies',
      fixture.verified.map((entry) => entry.body),
    ),
    luaList('proofs', proofs),
    `local cookie = ${JSON.stringify(cookie)}`,
    'local n, c, v, s = 0, 0, 0, 0',
    'local json = { ["content-type"] = "application/json" }',
    `local signin = { ["content-type"] = "application/json", ["origin"] = ${JSON.stringify(ORIGIN)} }`,
    'local me = { ["cookie"] = cookie }',
    'request = function()',
    '  n = n + 1',
    '  local slot = n % 100',
    '  if slot < 90 then',
    '    c = c + 1',
    '    return wrk.format("GET", checks[(c % #checks) + 1], {})',
    '  elseif slot < 95 then',
    '    v = v + 1',
    '    return wrk.format("POST", "/api/verify", json, verifies[(v % #verifies) + 1])',
    '  elseif slot < 98 then',
    '    s = s + 1',
    '    return wrk.format("POST", "/api/auth/signin", signin, proofs[((s - 1) % #proofs) + 1])',
    '  end',
    '  return wrk.format("GET", "/api/auth/me", me)',
    'end',
  ].join('\n');
}

async function mixOn(label: string, env: Record<string, string>, fixture: Fixture, bareUrl: string, durationSeconds: number) {
  const service = await startInstance(
    {
      ...env,
      PUBLIC_URL: ORIGIN,
      ESPLORA_URLS: fixture.esplora.url,
      NOSTR_RELAYS: fixture.relay.url,
      ...RATE_LIMITS_OFF,
    },
    { readyTimeoutMs: 60_000 },
  );
  try {
    const token = await signInOnInstance(service, ORIGIN, newWallet());
    // Every checked subject once, so the run's checks are cache hits.
    for (const attestation of fixture.checked) {
      const answer = await fetch(`${service.url}/api/check?addr=${attestation.address}`);
      if (answer.status !== 200) throw new Error(`bench: warm-up check answered ${answer.status}`);
    }
    const browser = new HttpBrowser(ORIGIN);
    const proofs: string[] = [];
    for (let index = 0; index < WARM_UP_PROOFS + SIGN_IN_PROOFS; index++)
      proofs.push(JSON.stringify(await browser.prove(service.url, newWallet())));
    // A short run of the same mix first, so the measured run sees the routes compiled and the chain answers cached, as a running service has them.
    const warmUp = await runWrk(service.url, {
      durationSeconds: WARM_UP_SECONDS,
      lua: mixScript(fixture, proofs.slice(0, WARM_UP_PROOFS), `oc_session=${token}`),
    });
    if (Math.round(warmUp.requests * 0.03) > WARM_UP_PROOFS)
      throw new Error('bench: the warm-up used up its sign-in challenges; raise WARM_UP_PROOFS');
    const baseline = await runWrk(bareUrl, { durationSeconds });
    fixture.esplora.resetRequests();
    const pid = service.child.pid!;
    const cpuBefore = cpuMsOf(pid);
    const mixed = await runWrk(service.url, {
      durationSeconds,
      lua: mixScript(fixture, proofs.slice(WARM_UP_PROOFS), `oc_session=${token}`),
    });
    const cpu = { ms: cpuMsOf(pid) - cpuBefore, requests: mixed.requests };
    const signIns = Math.round(mixed.requests * 0.03);
    if (mixed.non2xx > 0) throw new Error(`bench: the mix answered ${mixed.non2xx} non-2xx responses`);
    if (signIns > SIGN_IN_PROOFS) throw new Error('bench: the run used up its sign-in challenges; raise SIGN_IN_PROOFS');
    return {
      name: `mixed 90% check hits, 5% verify, 3% sign-in, 2% /me, ${label} (wrk, 50 conns)`,
      opsPerSec: mixed.requestsPerSec,
      baseline: 'bare Fastify JSON route',
      ratio: mixed.requestsPerSec / baseline.requestsPerSec,
      note: loadNote(
        mixed,
        `bare ${Math.round(baseline.requestsPerSec)}/s, its p99 ${baseline.p99Ms.toFixed(2)} ms; ${cpuPerRequest(cpu)}; ${chainQuestions(fixture.esplora)}; ` +
          `service peak RSS ${peakRssMb(pid)?.toFixed(0) ?? '?'} MiB; goal p99 < 50 ms (SQLite), RSS < 250 MiB`,
      ),
    } satisfies BenchResult;
  } finally {
    await service.stop();
  }
}

export async function run(options: { durationSeconds?: number } = {}): Promise<BenchResult[]> {
  if (!wrkAvailable()) return [{ name: 'mixed workload', opsPerSec: 0, note: 'skipped: wrk not installed (apt-get install wrk)' }];
  const durationSeconds = options.durationSeconds ?? 5;
  const fixture = await startFixture();
  const bare = await startBareFastify();
  const results: BenchResult[] = [];
  try {
    const sqlite = await sqliteWithRows(100_000);
    try {
      results.push(await mixOn('SQLite, 100k sessions', { DATABASE_URL: sqlite.url }, fixture, bare.url, durationSeconds));
    } finally {
      sqlite.cleanup();
    }
    const postgres = await postgresWithRows(100_000);
    if (postgres === undefined) {
      results.push({ name: 'mixed workload, PostgreSQL + Redis', opsPerSec: 0, note: 'skipped: no PostgreSQL' });
    } else {
      try {
        const base = redisTestBaseUrl();
        const redisUrl = `${base}${base.includes('?') ? '&' : '?'}keyPrefix=oc-bench-${randomBytes(4).toString('hex')}:`;
        results.push(
          await mixOn(
            'PostgreSQL + Redis, 100k sessions',
            { DATABASE_URL: postgres.url, REDIS_URL: redisUrl },
            fixture,
            bare.url,
            durationSeconds,
          ),
        );
      } finally {
        await postgres.cleanup();
      }
    }
  } finally {
    await bare.app.close();
    await fixture.relay.close();
    await fixture.esplora.close();
  }
  return results;
}
