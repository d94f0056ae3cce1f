/**
 * Query plans on SQLite: every statement the store runs that reads
 * identities by account stays within that account's rows. The unique
 * (kind, value) index also matches `kind = …`, and without statistics SQLite
 * may prefer it: then a look-up for one account walks every identity of that
 * kind in the service (for /me with 100k OAuth identities, 40 ms instead of
 * 20 µs; `npm run bench sessions` measures it). The statements are the ones
 * the store really prepares, captured from the SQLite library while the
 * store works, and each is explained by SQLite itself.
 */
import { createRequire } from 'node:module';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { NewSession } from '../src/platform/storage/store.js';
import { openSqliteConnection, resolveSqliteDriver } from '../src/platform/storage/sqlite-driver.js';
import { openTestStore, type TestStore } from './support/databases.js';
import { mergeEverything } from './support/merge.js';

/** The prototype whose `prepare` every statement of the store's SQLite connection goes through. */
async function preparingPrototype(): Promise<{ prepare(sql: string): unknown }> {
  if (resolveSqliteDriver() === 'node') {
    const sqlite = (await import('node:sqlite' as string)) as { DatabaseSync: { prototype: { prepare(sql: string): unknown } } };
    return sqlite.DatabaseSync.prototype;
  }
  const Database = createRequire(import.meta.url)('better-sqlite3') as { prototype: { prepare(sql: string): unknown } };
  return Database.prototype;
}

const T0 = Date.UTC(2026, 10, 25, 12, 0, 0);

function session(accountId: string, rosterId: string, index: number): NewSession {
  return {
    jti: index.toString(16).padStart(32, '0'),
    token_hash: index.toString(16).padStart(64, '0'),
    account_id: accountId,
    roster_id: rosterId,
    signing_method: 'bip322',
    created_at: T0 + index,
    expires_at: T0 + 86_400_000,
  };
}

describe('SQLite query plans', () => {
  let opened: TestStore | undefined;
  afterEach(async () => {
    vi.restoreAllMocks();
    await opened?.dispose();
    opened = undefined;
  });

  /** Opens a SQLite test store that records every statement it prepares. */
  async function recordingStore(): Promise<{ statements: Set<string>; store: TestStore['store'] }> {
    const prototype = await preparingPrototype();
    const statements = new Set<string>();
    const original = prototype.prepare;
    vi.spyOn(prototype, 'prepare').mockImplementation(function (this: unknown, sql: string) {
      statements.add(sql);
      return original.call(this, sql);
    });
    opened = await openTestStore('sqlite');
    return { statements, store: opened.store };
  }

  /** The query plan of each statement, read on a second connection with every parameter null. */
  async function plansOf(statements: readonly string[]): Promise<Array<{ sql: string; plan: string[] }>> {
    const explainer = await openSqliteConnection(opened!.database.url.replace(/^sqlite:/, ''), { busyTimeoutMs: 1000 });
    try {
      return statements.map((sql) => {
        const parameters = new Array<null>((sql.match(/\?/g) ?? []).length).fill(null);
        const plan = (explainer.prepare(`explain query plan ${sql}`).all(parameters) as Array<{ detail: string }>).map((row) => row.detail);
        return { sql, plan };
      });
    } finally {
      explainer.close();
    }
  }

  it("reads an account's identities through an account index, never by walking one kind", async () => {
    const { statements, store } = await recordingStore();
    const account = async (address: string) =>
      (
        await store.createAccountWithIdentity({
          account: { kind: 'btc', primary_btc: address, display_identity_kind: 'btc', created_at: T0 },
          identity: { kind: 'btc', value: address, verified: true, created_at: T0 },
        })
      ).account;
    const first = await account('bc1qfirst');
    const second = await account('bc1qsecond');
    await store.addIdentity({ account_id: first.id, kind: 'email', value: 'first@example.org', verified: true, created_at: T0 });
    await store.addIdentity({ account_id: first.id, kind: 'oauth', value: `nostr:${'a'.repeat(64)}`, verified: true, created_at: T0 });
    await store.addIdentity({ account_id: second.id, kind: 'email', value: 'second@example.org', verified: true, created_at: T0 });
    await store.insertSession(session(first.id, 'roster-1', 1));
    await store.insertSession(session(second.id, 'roster-1', 2));
    // What every signed-in request and GET /api/auth/me read, then a merge and a deletion.
    expect((await store.findLiveRosterByTokenHash('1'.padStart(64, '0'), T0 + 10))?.members).toHaveLength(2);
    expect(await store.findLiveSessionWithAccount('2'.padStart(64, '0'), T0 + 10)).not.toBeNull();
    await mergeEverything(store, second.id, first.id, T0 + 20);
    await store.deleteAccount(first.id, T0 + 30);

    const reading = [...statements].filter((sql) => /^\s*select\b/i.test(sql) && /"identities"/.test(sql) && /account_id/.test(sql));
    expect(reading.length).toBeGreaterThanOrEqual(3);
    for (const { sql, plan } of await plansOf(reading)) {
      expect(
        plan.filter((line) => /identities USING (COVERING )?INDEX \S+ \(kind=\?\)$/.test(line)),
        `${sql}\n${plan.join('\n')}`,
      ).toEqual([]);
    }
  });

  it('reads the revocation feed through indexes: no source of it walks every session row or every tab token', async () => {
    const { statements, store } = await recordingStore();
    const { account } = await store.createAccountWithIdentity({
      account: { kind: 'btc', primary_btc: 'bc1qfeed', display_identity_kind: 'btc', created_at: T0 },
      identity: { kind: 'btc', value: 'bc1qfeed', verified: true, created_at: T0 },
    });
    const row = await store.insertSession(session(account.id, 'roster-feed', 1));
    await store.insertTabToken(row.jti, { hash: 'a'.repeat(64), jti: 'b'.repeat(32) }, T0 + 1, 32);
    await store.supersedeTabTokens(row.jti, T0 + 2);
    await store.listRevocations(null, T0 + 3, 1000);
    await store.listRevocations({ at: T0 + 2, jti: '' }, T0 + 3, 1000);

    const feed = [...statements].filter(
      (sql) => /^\s*select\b/i.test(sql) && /"revoked_at"|"superseded_at"/.test(sql) && /order by/i.test(sql),
    );
    expect(feed.length).toBeGreaterThanOrEqual(6);
    for (const { sql, plan } of await plansOf(feed)) {
      expect(
        plan.filter((line) => /^SCAN (sessions|tab_tokens)\b(?! USING)/.test(line)),
        `${sql}\n${plan.join('\n')}`,
      ).toEqual([]);
    }
  });
});
