/**
 * Scale-out benchmarks: several instances and the cost of protection.
 *
 * - BIP-322 sign-ins per second and GET /api/auth/me per second over real
 *   HTTP (wrk), on PostgreSQL (+ Redis) with one instance and with two
 *   instances (two child processes; two wrk processes at once, one per
 *   instance, figures added up), next to one instance on SQLite, all in the
 *   same run. Sign-ins post proofs signed beforehand (one fresh wallet and
 *   nonce each: a nonce is single use), so the load generator does no
 *   signing while it measures.
 * - Rate-limit overhead per request: the same route (GET /api/auth/jwks, a
 *   read-class route with no I/O) with the limiter off, on in memory and on
 *   in Redis, each limit too large to refuse anything, same run.
 *
 * Every instance, wrk, PostgreSQL and Redis share the machine's cores
 * (docs/performance.md: two), so a second instance can add throughput only where
 * one instance leaves a core idle; the figures say how much it does here.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import pg from 'pg';
import type { FastifyInstance } from 'fastify';
import { signBip322 } from '../test/support/bitcoin-signer.js';
import { loadConfig } from '../src/platform/config.js';
import { buildApp } from '../src/app.js';
import { RATE_LIMITS_OFF } from '../test/support/app.js';
import { newWallet } from '../test/support/auth-client.js';
import { HttpBrowser } from '../test/support/http-client.js';
import { startInstance, type Instance } from '../test/support/instances.js';
import { median, roundRatio, type BenchResult } from './lib.js';
import { runWrk, startBareFastify, wrkAvailable, type WrkResult } from './wrk.js';

const PG_URL = process.env.TEST_DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/test';
const REDIS_URL = process.env.TEST_REDIS_URL || 'redis://127.0.0.1:6379/0';
const ORIGIN = 'http://localhost:8787';
const LIMITS_OFF = RATE_LIMITS_OFF;
/** Limits no bench can reach: the limiter runs on every request and never refuses. */
const LIMITS_HUGE = { ...LIMITS_OFF, RATE_LIMIT_READ_PER_MIN: '1000000', RATE_LIMIT_AUTH_PER_MIN: '1000000' };

interface Deployment {
  readonly label: string;
  readonly instances: readonly Instance[];
  close(): Promise<void>;
}

async function reachable(check: () => Promise<unknown>): Promise<boolean> {
  try {
    await check();
    return true;
  } catch {
    return false;
  }
}

async function postgresUp(): Promise<boolean> {
  const client = new pg.Client({ connectionString: PG_URL, connectionTimeoutMillis: 2000 });
  return reachable(async () => {
    try {
      await client.connect();
      await client.query('SELECT 1');
    } finally {
      await client.end().catch(() => {});
    }
  });
}

async function redisUp(): Promise<boolean> {
  const client = new Redis(REDIS_URL, { lazyConnect: true, enableOfflineQueue: false, retryStrategy: () => null });
  client.on('error', () => {});
  return reachable(async () => {
    try {
      await client.connect();
      await client.ping();
    } finally {
      client.disconnect();
    }
  });
}

async function dropSchema(schema: string): Promise<void> {
  const client = new pg.Client({ connectionString: PG_URL });
  await client.connect();
  try {
    await client.query(`DROP SCHEMA IF EXISTS ${pg.escapeIdentifier(schema)} CASCADE`);
  } finally {
    await client.end();
  }
}

async function deleteKeys(prefix: string): Promise<void> {
  const client = new Redis(REDIS_URL);
  try {
    let cursor = '0';
    do {
      const [next, keys] = await client.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000);
      cursor = next;
      if (keys.length > 0) await client.del(...keys);
    } while (cursor !== '0');
  } finally {
    client.disconnect();
  }
}

async function sqliteDeployment(): Promise<Deployment> {
  const dir = mkdtempSync(join(tmpdir(), 'oc-scale-'));
  const instance = await startInstance({
    ...LIMITS_OFF,
    PUBLIC_URL: ORIGIN,
    DATABASE_URL: `sqlite:${join(dir, 'oc.sqlite')}`,
    NOSTR_RELAYS: 'ws://127.0.0.1:9',
    ESPLORA_URLS: 'http://127.0.0.1:9',
  });
  return {
    label: 'SQLite, 1 instance',
    instances: [instance],
    close: async () => {
      await instance.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

async function postgresDeployment(count: number): Promise<Deployment> {
  const schema = `oc_scale_${process.pid}_${count}`;
  const prefix = `bench-${process.pid}-${count}:`;
  await dropSchema(schema);
  const env = {
    ...LIMITS_OFF,
    PUBLIC_URL: ORIGIN,
    DATABASE_URL: `${PG_URL}${PG_URL.includes('?') ? '&' : '?'}schema=${schema}`,
    REDIS_URL: `${REDIS_URL}${REDIS_URL.includes('?') ? '&' : '?'}keyPrefix=${prefix}`,
    TRUST_PROXY: 'true',
    NOSTR_RELAYS: 'ws://127.0.0.1:9',
    ESPLORA_URLS: 'http://127.0.0.1:9',
  };
  const first = await startInstance(env, { readyTimeoutMs: 60_000 });
  const instances = [first];
  for (let i = 1; i < count; i++) instances.push(await startInstance(env, { readyTimeoutMs: 60_000 }));
  return {
    label: `PostgreSQL + Redis, ${count} instance${count > 1 ? 's' : ''}`,
    instances,
    close: async () => {
      await Promise.all(instances.map((instance) => instance.stop()));
      await dropSchema(schema);
      await deleteKeys(prefix);
    },
  };
}

/** `count` login proofs from `base`, one fresh wallet each, as JSON lines for wrk. */
async function proofsFile(base: string, count: number, dir: string, name: string): Promise<string> {
  const lines: string[] = [];
  const browser = new HttpBrowser(ORIGIN);
  const batch = 32;
  for (let start = 0; start < count; start += batch) {
    const wallets = Array.from({ length: Math.min(batch, count - start) }, () => newWallet());
    const challenges = await Promise.all(
      wallets.map((wallet) =>
        browser.get(
          base,
          `/api/challenge?${new URLSearchParams({ addr: wallet.address, audience: ORIGIN, purpose: 'login', ttl: '3600' })}`,
        ),
      ),
    );
    challenges.forEach((challenge, index) => {
      if (challenge.status !== 200) throw new Error(`bench: challenge failed: ${JSON.stringify(challenge.body)}`);
      const wallet = wallets[index]!;
      const signature = signBip322({ privateKey: wallet.privateKey, address: wallet.address, message: challenge.body.message });
      lines.push(JSON.stringify({ address: wallet.address, message: challenge.body.message, signature, nonce: challenge.body.nonce }));
    });
  }
  const path = join(dir, name);
  writeFileSync(path, `${lines.join('\n')}\n`);
  return path;
}

/** wrk posting one proof per request, in order; a proof used twice would be a 401, so there are enough. */
function signInLua(path: string): string {
  return [
    'local bodies = {}',
    `for line in io.lines(${JSON.stringify(path)}) do bodies[#bodies + 1] = line end`,
    'local next_index = 0',
    'request = function()',
    '  next_index = next_index + 1',
    '  local body = bodies[((next_index - 1) % #bodies) + 1]',
    `  return wrk.format("POST", "/api/auth/signin", { ["content-type"] = "application/json", ["origin"] = ${JSON.stringify(ORIGIN)} }, body)`,
    'end',
  ].join('\n');
}

/** Runs one wrk per instance at once and adds the figures up. */
async function together(
  runs: readonly Promise<WrkResult>[],
  durationSeconds: number,
): Promise<{ rps: number; ok: number; p99: number; non2xx: number }> {
  const results = await Promise.all(runs);
  const rps = results.reduce((sum, result) => sum + result.requestsPerSec, 0);
  const non2xx = results.reduce((sum, result) => sum + result.non2xx, 0);
  return { rps, ok: rps - non2xx / durationSeconds, p99: Math.max(...results.map((result) => result.p99Ms)), non2xx };
}

async function measureDeployment(
  deployment: Deployment,
  durationSeconds: number,
  proofsPerInstance: number,
): Promise<{ signIns: number; signInP99: number; me: number; meP99: number; non2xx: number }> {
  const dir = mkdtempSync(join(tmpdir(), 'oc-scale-proofs-'));
  try {
    const files = await Promise.all(
      deployment.instances.map((instance, index) => proofsFile(instance.url, proofsPerInstance, dir, `proofs-${index}.txt`)),
    );
    // Connections split between the wrk processes: the same total load either way.
    const connections = Math.max(8, Math.floor(50 / deployment.instances.length));
    const signIns = await together(
      deployment.instances.map((instance, index) => runWrk(instance.url, { durationSeconds, connections, lua: signInLua(files[index]!) })),
      durationSeconds,
    );
    const browser = new HttpBrowser(ORIGIN);
    const signedIn = await browser.signIn(deployment.instances[0]!.url, newWallet());
    if (signedIn.status !== 200) throw new Error(`bench: sign-in failed: ${JSON.stringify(signedIn.body)}`);
    await browser.signIn(deployment.instances[0]!.url, newWallet(), { add: true });
    const headers = { cookie: `oc_session=${browser.cookie}` };
    const me = await together(
      deployment.instances.map((instance) => runWrk(`${instance.url}/api/auth/me`, { durationSeconds, connections, headers })),
      durationSeconds,
    );
    if (me.non2xx > 0) throw new Error(`bench: /me answered ${me.non2xx} non-2xx`);
    return { signIns: signIns.ok, signInP99: signIns.p99, me: me.rps, meP99: me.p99, non2xx: signIns.non2xx };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

async function serveInProcess(env: Record<string, string>): Promise<{ app: FastifyInstance; url: string }> {
  const app = await buildApp(
    loadConfig({
      DATABASE_URL: 'sqlite::memory:',
      LOG_LEVEL: 'silent',
      NOSTR_RELAYS: 'ws://127.0.0.1:9',
      ESPLORA_URLS: 'http://127.0.0.1:9',
      ...env,
    }),
    { logger: false },
  );
  await app.listen({ port: 0, host: '127.0.0.1' });
  const port = (app.server.address() as { port: number }).port;
  return { app, url: `http://127.0.0.1:${port}/api/auth/jwks` };
}

async function limiterOverhead(durationSeconds: number, withRedis: boolean): Promise<BenchResult[]> {
  const prefix = `bench-rl-${process.pid}:`;
  const variants: { name: string; env: Record<string, string> }[] = [
    { name: 'GET /api/auth/jwks, rate limits off', env: LIMITS_OFF },
    { name: 'GET /api/auth/jwks, limiter in memory (huge limit)', env: LIMITS_HUGE },
  ];
  if (withRedis) {
    variants.push({
      name: 'GET /api/auth/jwks, limiter in Redis (huge limit)',
      env: { ...LIMITS_HUGE, REDIS_URL: `${REDIS_URL}${REDIS_URL.includes('?') ? '&' : '?'}keyPrefix=${prefix}` },
    });
  }
  // Interleaved rounds, each variant's ratio taken against "off" of the same
  // round and the median kept: drift from other load falls on every variant alike.
  const rounds = 3;
  const figures = new Map<string, { rps: number[]; p99: number[] }>(variants.map((variant) => [variant.name, { rps: [], p99: [] }]));
  const servers = await Promise.all(variants.map(async (variant) => ({ variant, served: await serveInProcess(variant.env) })));
  try {
    for (let round = 0; round < rounds; round++) {
      for (const { variant, served } of servers) {
        const result = await runWrk(served.url, { durationSeconds });
        if (result.non2xx > 0) throw new Error(`bench: ${variant.name} answered ${result.non2xx} non-2xx`);
        figures.get(variant.name)!.rps.push(result.requestsPerSec);
        figures.get(variant.name)!.p99.push(result.p99Ms);
      }
    }
  } finally {
    await Promise.all(servers.map(({ served }) => served.app.close()));
    if (withRedis) await deleteKeys(prefix);
  }
  const offName = variants[0]!.name;
  const off = figures.get(offName)!;
  return variants.map((variant, index) => {
    const own = figures.get(variant.name)!;
    const rps = median(own.rps);
    // Server time per request: 1/rps (the server is the bottleneck), per round.
    const overheadUs = median(own.rps.map((value, round) => 1e6 / value - 1e6 / off.rps[round]!));
    return {
      name: `${variant.name} (wrk, 50 conns)`,
      opsPerSec: rps,
      ...(index === 0 ? {} : { baseline: `${offName} (wrk, 50 conns)`, ratio: roundRatio(own.rps, off.rps) }),
      note: `median of ${rounds} rounds; p99 ${median(own.p99).toFixed(2)} ms${index === 0 ? '' : `; ~${overheadUs.toFixed(1)} µs/request`}`,
    };
  });
}

export async function run(options: { durationSeconds?: number; proofsPerInstance?: number } = {}): Promise<BenchResult[]> {
  if (!wrkAvailable()) return [{ name: 'scale', opsPerSec: 0, note: 'skipped: wrk not installed (apt-get install wrk)' }];
  const durationSeconds = options.durationSeconds ?? 4;
  const proofsPerInstance = options.proofsPerInstance ?? 4000;
  const results: BenchResult[] = [];
  const bare = await startBareFastify();
  let bareRps: number;
  try {
    bareRps = (await runWrk(bare.url, { durationSeconds })).requestsPerSec;
  } finally {
    await bare.app.close();
  }
  results.push({ name: 'bare Fastify JSON route (wrk, 50 conns)', opsPerSec: bareRps });

  const withPostgres = (await postgresUp()) && (await redisUp());
  const builders: (() => Promise<Deployment>)[] = [sqliteDeployment];
  if (withPostgres)
    builders.push(
      () => postgresDeployment(1),
      () => postgresDeployment(2),
    );
  let single: { signIns: number; me: number } | undefined;
  let sqlite: { signIns: number; me: number } | undefined;
  for (const build of builders) {
    const deployment = await build();
    try {
      const figures = await measureDeployment(deployment, durationSeconds, proofsPerInstance);
      if (deployment.label.startsWith('SQLite')) sqlite = figures;
      const compareTo = deployment.instances.length > 1 ? single : sqlite;
      const compareLabel = deployment.instances.length > 1 ? 'PostgreSQL + Redis, 1 instance' : 'SQLite, 1 instance';
      if (deployment.label.startsWith('PostgreSQL') && deployment.instances.length === 1) single = figures;
      const ownBaseline = compareTo !== undefined && !deployment.label.startsWith('SQLite');
      results.push({
        name: `BIP-322 sign-ins/s, ${deployment.label} (wrk, 50 conns)`,
        opsPerSec: figures.signIns,
        ...(ownBaseline
          ? { baseline: `BIP-322 sign-ins/s, ${compareLabel} (wrk, 50 conns)`, ratio: figures.signIns / compareTo.signIns }
          : {}),
        note: `p99 ${figures.signInP99.toFixed(1)} ms; new account + session row each${figures.non2xx > 0 ? `; ${figures.non2xx} non-2xx not counted` : ''}`,
      });
      results.push({
        name: `GET /api/auth/me/s, ${deployment.label} (wrk, 50 conns)`,
        opsPerSec: figures.me,
        ...(ownBaseline
          ? { baseline: `GET /api/auth/me/s, ${compareLabel} (wrk, 50 conns)`, ratio: figures.me / compareTo.me }
          : { baseline: 'bare Fastify JSON route (wrk, 50 conns)', ratio: figures.me / bareRps }),
        note: `p99 ${figures.meP99.toFixed(2)} ms`,
      });
    } finally {
      await deployment.close();
    }
  }
  if (!withPostgres)
    results.push({ name: 'PostgreSQL + Redis deployments', opsPerSec: 0, note: 'skipped: PostgreSQL or Redis unreachable' });
  results.push(...(await limiterOverhead(durationSeconds, await redisUp())));
  return results;
}
