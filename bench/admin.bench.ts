/**
 * The people search of the admin API on a million accounts
 * (docs/performance.md "The people search"): a case-insensitive prefix of an
 * e-mail address, as the route calls it (the match, the accounts, the audit
 * row), next to the
 * exact look-up of one identity that every sign-in makes, in the same run and
 * on the same database, SQLite and PostgreSQL. Also the time migration 24
 * takes to build its index over those million identities, next to the time
 * the identities' own unique index takes to build.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import pg from 'pg';
import { openStore, type Store } from '../src/store.js';
import { AdminAccounts, COMMAND_LINE, OperatorService } from '../src/features/admin/index.js';
import { median, type BenchResult } from './lib.js';

const PG_URL = process.env.TEST_DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/test';
const ACCOUNTS = 1_000_000;
const ROUNDS = 5;
const ROUND_MS = 400;

/** E-mail identities `person<i>@example.org`, each its own account. */
function seedSqlite(path: string): { indexMs: number; uniqueMs: number } {
  const db = new Database(path);
  const now = Date.now();
  db.pragma('journal_mode = WAL');
  db.exec('BEGIN');
  const chunk = 100_000;
  for (let start = 1; start <= ACCOUNTS; start += chunk) {
    const end = Math.min(ACCOUNTS, start + chunk - 1);
    db.prepare(
      `WITH RECURSIVE n(i) AS (SELECT ? UNION ALL SELECT i + 1 FROM n WHERE i < ?)
       INSERT INTO accounts (id, kind, created_at, updated_at) SELECT printf('%032x', i), 'federated', ?, ? FROM n`,
    ).run(start, end, now, now);
    db.prepare(
      `WITH RECURSIVE n(i) AS (SELECT ? UNION ALL SELECT i + 1 FROM n WHERE i < ?)
       INSERT INTO identities (id, account_id, kind, value, verified, created_at)
       SELECT printf('%032x', i), printf('%032x', i), 'email', 'person' || i || '@example.org', 1, ? FROM n`,
    ).run(start, end, now);
  }
  db.exec('COMMIT');
  // Migration 24's index, built again over the million rows, and a plain one on the same column beside it.
  db.exec('DROP INDEX identities_folded_value');
  let started = performance.now();
  db.exec('CREATE INDEX identities_folded_value ON identities (lower(value), id)');
  const indexMs = performance.now() - started;
  started = performance.now();
  db.exec('CREATE INDEX bench_identities_value ON identities (value)');
  const uniqueMs = performance.now() - started;
  db.exec('DROP INDEX bench_identities_value');
  db.exec('ANALYZE');
  db.close();
  return { indexMs, uniqueMs };
}

async function seedPostgres(schema: string): Promise<{ indexMs: number; uniqueMs: number }> {
  const client = new pg.Client({ connectionString: PG_URL });
  await client.connect();
  try {
    await client.query(`SET search_path TO ${schema}`);
    const now = Date.now();
    await client.query(
      `INSERT INTO accounts (id, kind, created_at, updated_at)
       SELECT lpad(to_hex(i), 32, '0'), 'federated', $1, $1 FROM generate_series(1, $2) AS i`,
      [now, ACCOUNTS],
    );
    await client.query(
      `INSERT INTO identities (id, account_id, kind, value, verified, created_at)
       SELECT lpad(to_hex(i), 32, '0'), lpad(to_hex(i), 32, '0'), 'email', 'person' || i || '@example.org', true, $1
       FROM generate_series(1, $2) AS i`,
      [now, ACCOUNTS],
    );
    await client.query('DROP INDEX identities_folded_value');
    let started = performance.now();
    await client.query('CREATE INDEX identities_folded_value ON identities ((lower(value) COLLATE "C"), id)');
    const indexMs = performance.now() - started;
    started = performance.now();
    await client.query('CREATE INDEX bench_identities_value ON identities (value)');
    const uniqueMs = performance.now() - started;
    await client.query('DROP INDEX bench_identities_value');
    await client.query('ANALYZE');
    return { indexMs, uniqueMs };
  } finally {
    await client.end();
  }
}

/** Calls per second of each, alternated in short rounds so load falls on both alike; medians and the median ratio. */
async function compare(
  search: () => Promise<unknown>,
  exact: () => Promise<unknown>,
): Promise<{ search: number; exact: number; ratio: number }> {
  const rate = async (fn: () => Promise<unknown>) => {
    let calls = 0;
    const started = performance.now();
    while (performance.now() - started < ROUND_MS) {
      await fn();
      calls++;
    }
    return (calls * 1000) / (performance.now() - started);
  };
  await rate(search);
  await rate(exact);
  const searches: number[] = [];
  const exacts: number[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    searches.push(await rate(search));
    exacts.push(await rate(exact));
  }
  return { search: median(searches), exact: median(exacts), ratio: median(searches.map((value, index) => value / exacts[index]!)) };
}

async function measureOn(label: string, store: Store, built: { indexMs: number; uniqueMs: number }): Promise<BenchResult[]> {
  const now = () => new Date();
  const operators = new OperatorService({ operators: store, accounts: store, now });
  // The search alone of the operator's account service: the other parts are never called.
  const people = new AdminAccounts({ store, oidc: {} as never, lifecycle: {} as never, activity: {} as never, operators, now });
  let turn = 0;
  // A prefix eleven people match (person12345@…, and person123450@… to person123459@…), typed in upper case.
  const search = () => {
    turn = (turn + 7919) % 80_000;
    return people.search(`PERSON${10_000 + turn}`, undefined, 20, COMMAND_LINE);
  };
  const exact = () => {
    turn = (turn + 7919) % 80_000;
    return store.findAccountByIdentity('email', `person${10_000 + turn}@example.org`);
  };
  const found = await people.search('PERSON12345', undefined, 20, COMMAND_LINE);
  if (found.people.length !== 11) throw new Error(`bench: the search found ${found.people.length} people, not 11`);
  const figures = await compare(search, exact);
  const baseline = `exact identity look-up, ${label}`;
  return [
    { name: baseline, opsPerSec: Math.round(figures.exact), note: 'findAccountByIdentity, as every sign-in' },
    {
      name: `people search, 1M accounts, ${label}`,
      opsPerSec: Math.round(figures.search),
      baseline,
      ratio: Number(figures.ratio.toFixed(3)),
      note: `an e-mail prefix 11 people match, any case: the index range, their 11 accounts, the audit row; median of ${ROUNDS} alternated rounds`,
    },
    {
      name: `migration 24's index over 1M identities, ${label}`,
      opsPerSec: Number((1000 / built.indexMs).toFixed(3)),
      baseline: `a plain index on the same column, ${label}`,
      ratio: Number((built.uniqueMs / built.indexMs).toFixed(3)),
      note: `built in ${(built.indexMs / 1000).toFixed(2)} s; the plain one in ${(built.uniqueMs / 1000).toFixed(2)} s`,
    },
  ];
}

export async function run(): Promise<BenchResult[]> {
  const results: BenchResult[] = [];
  const dir = mkdtempSync(join(tmpdir(), 'oc-bench-admin-'));
  try {
    const path = join(dir, 'oc.sqlite');
    await (await openStore(`sqlite:${path}`)).close();
    const built = seedSqlite(path);
    const store = await openStore(`sqlite:${path}`);
    try {
      results.push(...(await measureOn('SQLite', store, built)));
    } finally {
      await store.close();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }

  const schema = `oc_bench_admin_${process.pid}`;
  const probe = new pg.Client({ connectionString: PG_URL, connectionTimeoutMillis: 2000 });
  try {
    await probe.connect();
    await probe.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
  } catch {
    results.push({ name: 'people search, PostgreSQL', opsPerSec: 0, note: `skipped: no PostgreSQL at ${PG_URL}` });
    return results;
  } finally {
    await probe.end().catch(() => {});
  }
  const url = `${PG_URL}${PG_URL.includes('?') ? '&' : '?'}schema=${schema}`;
  try {
    await (await openStore(url)).close();
    const built = await seedPostgres(schema);
    const store = await openStore(url);
    try {
      results.push(...(await measureOn('PostgreSQL', store, built)));
    } finally {
      await store.close();
    }
  } finally {
    const client = new pg.Client({ connectionString: PG_URL });
    await client.connect();
    await client.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    await client.end();
  }
  return results;
}
