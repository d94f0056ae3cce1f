/**
 * Session benchmarks.
 *
 * - GET /api/auth/me through wrk with 100k session rows, on SQLite and on
 *   PostgreSQL, next to a bare Fastify JSON route in the same run; and on
 *   SQLite with 10k against 1M rows, to show the look-up cost does not grow
 *   with the table (one indexed look-up by token hash); and on SQLite with
 *   100k sessions whose accounts each hold an OAuth identity (half of them
 *   Nostr keys), to show that /me reads only the account's own identities.
 * - Full BIP-322 sign-ins per second (challenge, sign, sign-in; in process
 *   through inject, one at a time) next to the raw signature check of the
 *   same kind of signature.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import pg from 'pg';
import * as secp from 'tiny-secp256k1';
import { sha256 } from '@noble/hashes/sha2.js';
import type { FastifyInstance } from 'fastify';
import { loadConfig } from '../src/platform/config.js';
import { buildApp } from '../src/app.js';
import { openStore } from '../src/store.js';
import { Browser, newWallet } from '../test/support/auth-client.js';
import type { BenchResult } from './lib.js';
import { measure, median, roundRatio } from './lib.js';
import { runWrk, startBareFastify, wrkAvailable } from './wrk.js';
// Figures of the route itself: the rate limits are measured in scale.bench.ts.
import { RATE_LIMITS_OFF } from '../test/support/app.js';

const PG_URL = process.env.TEST_DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/test';
const DAY = 86_400_000;

function seedSqlite(path: string, rows: number, oauthIdentities = false): void {
  const db = new Database(path);
  const now = Date.now();
  db.pragma('journal_mode = WAL');
  db.exec('BEGIN');
  const chunk = 100_000;
  for (let start = 1; start <= rows; start += chunk) {
    const end = Math.min(rows, start + chunk - 1);
    db.prepare(
      `WITH RECURSIVE n(i) AS (SELECT ? UNION ALL SELECT i + 1 FROM n WHERE i < ?)
       INSERT INTO accounts (id, kind, created_at, updated_at) SELECT printf('%032x', i), 'btc', ?, ? FROM n`,
    ).run(start, end, now, now);
    db.prepare(
      `WITH RECURSIVE n(i) AS (SELECT ? UNION ALL SELECT i + 1 FROM n WHERE i < ?)
       INSERT INTO sessions (jti, token_hash, account_id, roster_id, signing_method, created_at, expires_at, last_seen_at)
       SELECT printf('%032x', i), printf('%064x', i), printf('%032x', i), printf('%032x', i), 'bip322', ?, ?, ? FROM n`,
    ).run(start, end, now, now + 30 * DAY, now);
    if (oauthIdentities) {
      db.prepare(
        `WITH RECURSIVE n(i) AS (SELECT ? UNION ALL SELECT i + 1 FROM n WHERE i < ?)
         INSERT INTO identities (id, account_id, kind, value, verified, created_at)
         SELECT printf('%032x', i), printf('%032x', i), 'oauth', CASE WHEN i % 2 = 0 THEN 'nostr:' || printf('%064x', i) ELSE 'github:' || i END, 1, ? FROM n`,
      ).run(start, end, now);
    }
  }
  db.exec('COMMIT');
  db.close();
}

async function seedPostgres(url: string, schema: string, rows: number): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query(`SET search_path TO ${schema}`);
    const now = Date.now();
    await client.query(
      `INSERT INTO accounts (id, kind, created_at, updated_at)
       SELECT lpad(to_hex(i), 32, '0'), 'btc', $1, $1 FROM generate_series(1, $2) AS i`,
      [now, rows],
    );
    await client.query(
      `INSERT INTO sessions (jti, token_hash, account_id, roster_id, signing_method, created_at, expires_at, last_seen_at)
       SELECT lpad(to_hex(i), 32, '0'), lpad(to_hex(i), 64, '0'), lpad(to_hex(i), 32, '0'), lpad(to_hex(i), 32, '0'), 'bip322', $1, $2, $1
       FROM generate_series(1, $3) AS i`,
      [now, now + 30 * DAY, rows],
    );
    await client.query('ANALYZE');
  } finally {
    await client.end();
  }
}

/** Serves the real app on a port with two accounts in one roster; returns the active one's cookie. */
async function serveWithSignedInBrowser(databaseUrl: string): Promise<{ app: FastifyInstance; url: string; cookie: string }> {
  const app = await buildApp(
    loadConfig({
      DATABASE_URL: databaseUrl,
      LOG_LEVEL: 'silent',
      NOSTR_RELAYS: 'ws://127.0.0.1:9',
      ESPLORA_URLS: 'http://127.0.0.1:9',
      ...RATE_LIMITS_OFF,
    }),
    { logger: false },
  );
  const browser = new Browser(app);
  await browser.signIn(newWallet());
  await browser.signIn(newWallet('p2tr'), { add: true });
  const me = await browser.me();
  if (me.status !== 200 || me.body.roster.length !== 1) throw new Error('bench: could not sign in');
  await app.listen({ port: 0, host: '127.0.0.1' });
  const port = (app.server.address() as { port: number }).port;
  return { app, url: `http://127.0.0.1:${port}/api/auth/me`, cookie: `oc_session=${browser.cookie}` };
}

/** Rounds of (bare route, /me), so each ratio compares two runs taken seconds apart. */
const ROUNDS = 3;

async function meOn(label: string, databaseUrl: string, durationSeconds: number, bareUrl: string): Promise<BenchResult> {
  const served = await serveWithSignedInBrowser(databaseUrl);
  try {
    const bare: number[] = [];
    const me: number[] = [];
    const p99: number[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      bare.push((await runWrk(bareUrl, { durationSeconds })).requestsPerSec);
      const result = await runWrk(served.url, { durationSeconds, headers: { cookie: served.cookie } });
      if (result.non2xx > 0) throw new Error(`bench: /me answered ${result.non2xx} non-2xx`);
      me.push(result.requestsPerSec);
      p99.push(result.p99Ms);
    }
    return {
      name: `GET /api/auth/me, ${label} (wrk, 50 conns)`,
      opsPerSec: median(me),
      baseline: 'bare Fastify JSON route',
      ratio: roundRatio(me, bare),
      note: `p99 ${median(p99).toFixed(2)} ms; bare ${Math.round(median(bare))}/s; median of ${ROUNDS} interleaved rounds; goal ≥ 0.25`,
    };
  } finally {
    await served.app.close();
  }
}

export async function sqliteWithRows(rows: number, oauthIdentities = false): Promise<{ url: string; cleanup: () => void }> {
  const dir = mkdtempSync(join(tmpdir(), 'oc-bench-'));
  const url = `sqlite:${join(dir, 'oc.sqlite')}`;
  const store = await openStore(url);
  await store.close();
  seedSqlite(join(dir, 'oc.sqlite'), rows, oauthIdentities);
  return { url, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

export async function postgresWithRows(rows: number): Promise<{ url: string; cleanup: () => Promise<void> } | undefined> {
  const schema = `oc_bench_${process.pid}`;
  const probe = new pg.Client({ connectionString: PG_URL, connectionTimeoutMillis: 2000 });
  try {
    await probe.connect();
    await probe.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
  } catch {
    return undefined;
  } finally {
    await probe.end().catch(() => {});
  }
  const url = `${PG_URL}${PG_URL.includes('?') ? '&' : '?'}schema=${schema}`;
  const store = await openStore(url);
  await store.close();
  await seedPostgres(PG_URL, schema, rows);
  return {
    url,
    cleanup: async () => {
      const client = new pg.Client({ connectionString: PG_URL });
      await client.connect();
      await client.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
      await client.end();
    },
  };
}

async function signInRate(): Promise<BenchResult[]> {
  const app = await buildApp(
    loadConfig({
      DATABASE_URL: 'sqlite::memory:',
      LOG_LEVEL: 'silent',
      NOSTR_RELAYS: 'ws://127.0.0.1:9',
      ESPLORA_URLS: 'http://127.0.0.1:9',
      FAMILY_ORIGINS: 'http://localhost:8787',
      ...RATE_LIMITS_OFF,
    }),
    { logger: false },
  );
  try {
    // A challenge is a pure function of address, times, audience and purpose
    // (docs/protocol.md §5), so one address gets one distinct challenge a second:
    // cycle through enough wallets that none repeats within a second.
    const wallets = Array.from({ length: 4096 }, () => newWallet());
    let index = 0;
    const signIns = async (count: number) => {
      for (let i = 0; i < count; i++) {
        const browser = new Browser(app);
        const reply = await browser.signIn(wallets[index++ % wallets.length]!);
        if (reply.status !== 200) throw new Error(`bench: sign-in failed: ${JSON.stringify(reply.body)}`);
      }
    };
    await signIns(50); // warm-up
    const started = performance.now();
    let done = 0;
    while (performance.now() - started < 3000) {
      await signIns(25);
      done += 25;
    }
    const rate = (done * 1000) / (performance.now() - started);

    // The floor: one ECDSA check of a P2WPKH-sized signature through libsecp256k1.
    const privateKey = new Uint8Array(32).fill(5);
    const publicKey = secp.pointFromScalar(privateKey, true)!;
    const hash = sha256(new TextEncoder().encode('floor'));
    const signature = secp.sign(hash, privateKey);
    const raw = measure('raw ECDSA verify', () => secp.verify(hash, publicKey, signature));
    return [
      { name: 'raw libsecp256k1 ECDSA verify (tiny-secp256k1)', opsPerSec: raw },
      {
        name: 'full BIP-322 sign-in: GET challenge + sign + POST signin (inject, sequential, SQLite)',
        opsPerSec: rate,
        baseline: 'raw libsecp256k1 ECDSA verify (tiny-secp256k1)',
        ratio: rate / raw,
        note: 'includes client-side signing, JSON, session row insert and account creation',
      },
    ];
  } finally {
    await app.close();
  }
}

export async function run(options: { durationSeconds?: number; large?: boolean } = {}): Promise<BenchResult[]> {
  const results: BenchResult[] = [];
  if (!wrkAvailable()) {
    results.push({ name: 'GET /api/auth/me', opsPerSec: 0, note: 'skipped: wrk not installed (apt-get install wrk)' });
  } else {
    const durationSeconds = options.durationSeconds ?? 4;
    const bare = await startBareFastify();
    try {
      const sizes: Array<[string, number, boolean]> = [
        ['SQLite, 10k sessions', 10_000, false],
        ['SQLite, 100k sessions', 100_000, false],
        ['SQLite, 100k sessions and 100k OAuth identities', 100_000, true],
      ];
      if (options.large !== false) sizes.push(['SQLite, 1M sessions', 1_000_000, false]);
      for (const [label, rows, oauthIdentities] of sizes) {
        const database = await sqliteWithRows(rows, oauthIdentities);
        try {
          results.push(await meOn(label, database.url, durationSeconds, bare.url));
        } finally {
          database.cleanup();
        }
      }
      const postgres = await postgresWithRows(100_000);
      if (postgres) {
        try {
          results.push(await meOn('PostgreSQL, 100k sessions', postgres.url, durationSeconds, bare.url));
        } finally {
          await postgres.cleanup();
        }
      } else {
        results.push({ name: 'GET /api/auth/me, PostgreSQL', opsPerSec: 0, note: `skipped: no PostgreSQL at ${PG_URL}` });
      }
    } finally {
      await bare.app.close();
    }
  }
  results.push(...(await signInRate()));
  return results;
}
