/**
 * One conformance suite for the Store (src/platform/storage/store.ts), run against real
 * SQLite and real PostgreSQL (docs/architecture.md: "One conformance suite runs on SQLite
 * and on PostgreSQL"). Each test gets a fresh, migrated database, so counts
 * are exact. Invariants that docs/protocol.md requires of the schema itself are
 * proven with direct Kysely inserts that bypass the store's code.
 */
import { spawn } from 'node:child_process';
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { sql } from 'kysely';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openDatabase, parseDatabaseUrl } from '../src/platform/storage/database.js';
import type { OpenDatabase } from '../src/platform/storage/database.js';
import { applyMigrations, MIGRATIONS, migrate, openStore, type Store } from '../src/store.js';
import { MergeRefused } from '../src/platform/storage/index.js';
import { grantReference } from '../src/features/oidc/index.js';
import type { AccountRecord, NewSession, SessionRecord } from '../src/platform/storage/index.js';
import type { WebAuthnCredentialRecord } from '../src/features/passkeys/index.js';
import { credentialRecord } from './support/credential-record.js';
import type { NewHandoff } from '../src/features/phone/store.js';
import { createTestDatabase, sqliteDrivers, testEngines } from './support/databases.js';
import type { SqliteDriverName } from '../src/platform/storage/sqlite-driver.js';
import type { TestDatabase, TestEngine } from './support/databases.js';
import { mergeEverything } from './support/merge.js';
import { built } from './support/built.js';

const SECOND = 1000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;
/** docs/api.md Limits: session rows live 30 days. */
const SESSION_LIFETIME = 30 * DAY;
/** A fixed "now"; the store never reads the wall clock. */
const T0 = Date.UTC(2025, 0, 15, 12, 0, 0);

const LATEST_VERSION = Math.max(...MIGRATIONS.map((migration) => migration.version));

/** A stored security key of `accountId`, as registration would keep it. */
function credentialFor(accountId: string, overrides: Partial<WebAuthnCredentialRecord> = {}): WebAuthnCredentialRecord {
  return credentialRecord(accountId, T0, overrides);
}

/** A pending phone hand-off as src/features/phone/handoff.ts stores it. */
function handoffFor(id: string, overrides: Partial<NewHandoff> = {}): NewHandoff {
  return {
    id,
    token_hash: tokenHash(),
    key_hash: tokenHash(),
    code: '123456',
    desktop: 'Chrome 131 on Linux',
    network: '198.51.100.0/24',
    site: 'id.example',
    return_to: null,
    created_at: T0,
    expires_at: T0 + 3 * MINUTE,
    ...overrides,
  };
}

function tokenHash(): string {
  return createHash('sha256').update(randomBytes(32)).digest('hex');
}

function btcAddress(): string {
  return `bc1q${randomBytes(16).toString('hex')}`;
}

function sessionFor(accountId: string, rosterId: string | null, overrides: Partial<NewSession> = {}): NewSession {
  const created = overrides.created_at ?? T0;
  return {
    jti: randomUUID(),
    token_hash: tokenHash(),
    account_id: accountId,
    roster_id: rosterId,
    signing_method: 'bip322',
    created_at: created,
    expires_at: created + SESSION_LIFETIME,
    ...overrides,
  };
}

async function versionsRecorded(url: string): Promise<number[]> {
  const database = await openDatabase(url);
  try {
    const rows = await database.db.selectFrom('schema_migrations').select('version').orderBy('version').execute();
    return rows.map((row) => Number(row.version));
  } finally {
    await database.close();
  }
}

/** The compiled storage module (test/support/built.ts): a second instance starts as the service does, without a TypeScript loader. */
const storageEntry = built('src/store.ts');

/** Runs `script` in a separate Node process (a second server instance) with `store` opened on `url`. */
function runInstance(url: string, script: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const program = [
    `import { openStore } from ${JSON.stringify(storageEntry)};`,
    `const store = await openStore(${JSON.stringify(url)});`,
    `try { ${script} } finally { await store.close(); }`,
  ].join('\n');
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--input-type=module', '-e', program], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

function storageConformance(engine: TestEngine, sqliteDriver?: SqliteDriverName): void {
  // Every store and raw connection of this suite opens through the driver under test.
  const opening = sqliteDriver === undefined ? {} : { sqliteDriver };
  let database: TestDatabase;
  let store: Store;
  /** A second, raw connection to the same database, for checks that bypass the store. */
  let raw: OpenDatabase;

  beforeEach(async () => {
    database = await createTestDatabase(engine);
    store = await openStore(database.url, opening);
    raw = await openDatabase(database.url, opening);
  });

  afterEach(async () => {
    await raw.close();
    await store.close();
    await database.cleanup();
  });

  async function btcAccount(at = T0, address = btcAddress()): Promise<AccountRecord> {
    const result = await store.createAccountWithIdentity({
      account: { kind: 'btc', primary_btc: address, display_identity_kind: 'btc', created_at: at },
      identity: { kind: 'btc', value: address, verified: true, created_at: at },
    });
    expect(result.created).toBe(true);
    return result.account;
  }

  async function emailAccount(email: string, at = T0): Promise<AccountRecord> {
    const result = await store.createAccountWithIdentity({
      account: { kind: 'federated', display_identity_kind: 'email', created_at: at },
      identity: { kind: 'email', value: email, verified: true, created_at: at },
    });
    return result.account;
  }

  async function liveRows(rosterId: string, accountId: string): Promise<number> {
    const rows = await raw.db
      .selectFrom('sessions')
      .select('jti')
      .where('roster_id', '=', rosterId)
      .where('account_id', '=', accountId)
      .where('revoked_at', 'is', null)
      .execute();
    return rows.length;
  }

  describe('migrations', () => {
    it('records every migration once and applies nothing on a second run', async () => {
      expect(await versionsRecorded(database.url)).toEqual(MIGRATIONS.map((migration) => migration.version));
      const again = await applyMigrations(raw);
      expect(again).toEqual({ applied: [], currentVersion: LATEST_VERSION });
      const reopened = await openStore(database.url, opening);
      await reopened.close();
      expect(await versionsRecorded(database.url)).toEqual(MIGRATIONS.map((migration) => migration.version));
    });

    it('version 18 adds the replaced codes of an e-mail code, empty for a code stored before it', async () => {
      const fresh = await createTestDatabase(engine);
      try {
        const before = await openDatabase(fresh.url, opening);
        try {
          const report = await applyMigrations(before, { migrations: MIGRATIONS.filter((migration) => migration.version < 18) });
          expect(report.currentVersion).toBe(17);
          // A code as a server before version 18 wrote it (the new column is not named).
          await before.db
            .insertInto('email_codes')
            .values({
              email: 'a@example.com',
              code_hash: 'a'.repeat(64),
              token: 'b'.repeat(32),
              expires_at: T0 + 10 * MINUTE,
              attempts: 1,
              tokenless_attempts: 0,
              created_at: T0,
            })
            .execute();
          const upgrade = await applyMigrations(before);
          expect(upgrade.applied).toEqual(
            MIGRATIONS.filter((migration) => migration.version >= 18).map(({ version, name }) => ({ version, name })),
          );
          expect(upgrade.applied[0]).toEqual({ version: 18, name: 'email_codes_replaced_code_hashes' });
        } finally {
          await before.close();
        }
        const upgraded = await openStore(fresh.url, opening);
        try {
          expect(await upgraded.findEmailCode('a@example.com')).toMatchObject({
            code_hash: 'a'.repeat(64),
            attempts: 1,
            replaced_code_hashes: [],
            link_hash: null,
          });
        } finally {
          await upgraded.close();
        }
      } finally {
        await fresh.cleanup();
      }
    });

    it('migrate() (the CLI entry) brings a store opened without migrations up to date', async () => {
      const fresh = await createTestDatabase(engine);
      try {
        const unmigrated = await openStore(fresh.url, { ...opening, migrate: false });
        await unmigrated.ping();
        await expect(unmigrated.getSetting('x')).rejects.toThrow();
        const report = await migrate(fresh.url);
        expect(report.applied.map((entry) => entry.version)).toEqual(MIGRATIONS.map((m) => m.version));
        expect(report.currentVersion).toBe(LATEST_VERSION);
        expect(await unmigrated.getSetting('x')).toBeNull();
        await unmigrated.close();
        expect((await migrate(fresh.url)).applied).toEqual([]);
      } finally {
        await fresh.cleanup();
      }
    });

    it('lets several stores start on one fresh database at once, applying each version once', async () => {
      const fresh = await createTestDatabase(engine);
      try {
        const stores = await Promise.all([1, 2, 3, 4].map(() => openStore(fresh.url, opening)));
        const values = await Promise.all(stores.map((s, i) => s.getOrCreateSetting('server_secret', () => `v${i}`)));
        expect(new Set(values).size).toBe(1);
        await Promise.all(stores.map((s) => s.close()));
        expect(await versionsRecorded(fresh.url)).toEqual(MIGRATIONS.map((migration) => migration.version));
      } finally {
        await fresh.cleanup();
      }
    });

    it('lets separate processes start on one fresh database at once', async () => {
      const fresh = await createTestDatabase(engine);
      try {
        const nonceExpiry = T0 + 5 * MINUTE;
        const results = await Promise.all(
          [1, 2, 3].map(() =>
            runInstance(
              fresh.url,
              `const secret = await store.getOrCreateSetting('server_secret', () => String(process.pid));
               const won = await store.consumeNonce('shared-nonce', ${nonceExpiry}, ${T0});
               console.log(JSON.stringify({ secret, won }));`,
            ),
          ),
        );
        for (const result of results) expect(result.stderr).toBe('');
        expect(results.map((result) => result.code)).toEqual([0, 0, 0]);
        const outputs = results.map((result) => JSON.parse(result.stdout.trim()) as { secret: string; won: boolean });
        expect(new Set(outputs.map((output) => output.secret)).size).toBe(1);
        expect(outputs.filter((output) => output.won)).toHaveLength(1);
        expect(await versionsRecorded(fresh.url)).toEqual(MIGRATIONS.map((migration) => migration.version));
      } finally {
        await fresh.cleanup();
      }
    }, 60_000);
  });

  describe('schema invariants (direct inserts, bypassing the store)', () => {
    it('the partial unique index admits one unrevoked row per (roster, account)', async () => {
      const account = await btcAccount();
      const row = (jti: string, revokedAt: number | null, rosterId: string | null = 'roster-1') => ({
        jti,
        token_hash: tokenHash(),
        account_id: account.id,
        roster_id: rosterId,
        signing_method: 'bip322',
        created_at: T0,
        expires_at: T0 + SESSION_LIFETIME,
        last_seen_at: T0,
        revoked_at: revokedAt,
        step_up_at: null,
        sudo_at: null,
      });
      await raw.db.insertInto('sessions').values(row('a', null)).execute();
      await expect(raw.db.insertInto('sessions').values(row('b', null)).execute()).rejects.toThrow();
      // Revoked rows do not count, and rows that predate rosters (NULL) are not constrained.
      await raw.db.insertInto('sessions').values(row('c', T0)).execute();
      await raw.db
        .insertInto('sessions')
        .values(row('d', null, null))
        .execute();
      await raw.db
        .insertInto('sessions')
        .values(row('e', null, null))
        .execute();
      await raw.db.updateTable('sessions').set({ revoked_at: T0 }).where('jti', '=', 'a').execute();
      await raw.db.insertInto('sessions').values(row('f', null)).execute();
      expect(await liveRows('roster-1', account.id)).toBe(1);
    });

    it('an identity (kind, value) belongs to one account', async () => {
      const first = await btcAccount();
      const second = await btcAccount();
      const [identity] = await store.listIdentities(first.id);
      await expect(
        raw.db
          .insertInto('identities')
          .values({
            id: 'dup',
            account_id: second.id,
            kind: 'btc',
            value: identity!.value,
            verified: engine === 'postgres' ? true : 1,
            created_at: T0,
          })
          .execute(),
      ).rejects.toThrow();
    });

    it('rejects malformed account ids, upper-case e-mails and unknown kinds', async () => {
      const account = (id: string, kind = 'btc') =>
        raw.db
          .insertInto('accounts')
          .values({
            id,
            kind: kind as 'btc',
            display_name: null,
            display_identity_kind: null,
            primary_btc: null,
            merged_into: null,
            created_at: T0,
            updated_at: T0,
          })
          .execute();
      await expect(account('ABCDEF0123456789ABCDEF0123456789')).rejects.toThrow();
      await expect(account('abc')).rejects.toThrow();
      await expect(account('0123456789abcdef0123456789abcdeg')).rejects.toThrow();
      await expect(account('0123456789abcdef0123456789abcdef', 'robot')).rejects.toThrow();
      await account('0123456789abcdef0123456789abcdef');
      await expect(
        raw.db
          .insertInto('identities')
          .values({
            id: 'upper',
            account_id: '0123456789abcdef0123456789abcdef',
            kind: 'email',
            value: 'Alice@Example.com',
            verified: engine === 'postgres' ? true : 1,
            created_at: T0,
          })
          .execute(),
      ).rejects.toThrow();
    });
  });

  describe('accounts and identities', () => {
    it('creates an account with its first identity', async () => {
      const result = await store.createAccountWithIdentity({
        account: { kind: 'federated', display_name: 'Alice', display_identity_kind: 'email', created_at: T0 },
        identity: { kind: 'email', value: 'alice@example.com', verified: false, created_at: T0 },
      });
      expect(result.created).toBe(true);
      expect(result.account).toMatchObject({
        kind: 'federated',
        display_name: 'Alice',
        display_identity_kind: 'email',
        primary_btc: null,
        merged_into: null,
        created_at: T0,
        updated_at: T0,
      });
      expect(result.account.id).toMatch(/^[0-9a-f]{32}$/);
      expect(await store.findAccount(result.account.id)).toEqual(result.account);
      expect(await store.listIdentities(result.account.id)).toEqual([result.identity]);
      expect(result.identity).toMatchObject({ kind: 'email', value: 'alice@example.com', verified: false });
    });

    it('returns the existing owner instead of creating a second account for a known identity', async () => {
      const address = btcAddress();
      const first = await btcAccount(T0, address);
      const wantedId = randomBytes(16).toString('hex');
      const again = await store.createAccountWithIdentity({
        account: { id: wantedId, kind: 'btc', created_at: T0 + 1 },
        identity: { kind: 'btc', value: address, verified: true, created_at: T0 + 1 },
      });
      expect(again.created).toBe(false);
      expect(again.account).toEqual(first);
      expect(await store.findAccount(wantedId)).toBeNull();
    });

    it('concurrent first sign-ins with one address end with one account', async () => {
      const address = btcAddress();
      const results = await Promise.all(
        Array.from({ length: 10 }, (_, i) =>
          store.createAccountWithIdentity({
            account: { kind: 'btc', created_at: T0 + i },
            identity: { kind: 'btc', value: address, verified: true, created_at: T0 + i },
          }),
        ),
      );
      expect(results.filter((result) => result.created)).toHaveLength(1);
      expect(new Set(results.map((result) => result.account.id)).size).toBe(1);
      expect((await store.familyStats(T0)).accounts.total).toBe(1);
    });

    it('refuses upper-case e-mails and malformed account ids', async () => {
      await expect(
        store.createAccountWithIdentity({
          account: { kind: 'federated', created_at: T0 },
          identity: { kind: 'email', value: 'Bob@Example.com', verified: true, created_at: T0 },
        }),
      ).rejects.toThrow(/lowercased/);
      await expect(
        store.createAccountWithIdentity({
          account: { id: 'not-hex', kind: 'btc', created_at: T0 },
          identity: { kind: 'btc', value: btcAddress(), verified: true, created_at: T0 },
        }),
      ).rejects.toThrow(/32 lowercase hex/);
      await expect(store.findAccountByIdentity('email', 'Bob@Example.com')).rejects.toThrow(/lowercased/);
    });

    it('finds the canonical account by identity and follows merged_into', async () => {
      const a = await btcAccount();
      const b = await emailAccount('b@example.com');
      expect(await store.findAccountByIdentity('email', 'b@example.com')).toEqual(b);
      expect(await store.findAccountByIdentity('email', 'nobody@example.com')).toBeNull();
      expect(await store.resolveCanonicalAccount(a.id)).toEqual(a);
      expect(await store.resolveCanonicalAccount('0'.repeat(32))).toBeNull();
      // A pointer written without moving identities (as an old merge might have left it).
      await raw.db.updateTable('accounts').set({ merged_into: a.id }).where('id', '=', b.id).execute();
      expect((await store.findAccountByIdentity('email', 'b@example.com'))?.id).toBe(a.id);
      expect((await store.resolveCanonicalAccount(b.id))?.id).toBe(a.id);
      expect((await store.findAccount(b.id))?.merged_into).toBe(a.id);
    });

    it('resolving merged_into is loop-safe and depth-limited', async () => {
      const a = await btcAccount();
      const b = await btcAccount();
      await raw.db.updateTable('accounts').set({ merged_into: b.id }).where('id', '=', a.id).execute();
      await raw.db.updateTable('accounts').set({ merged_into: a.id }).where('id', '=', b.id).execute();
      await expect(store.resolveCanonicalAccount(a.id)).rejects.toThrow(/loops/);

      const chain: AccountRecord[] = [];
      for (let i = 0; i < 12; i += 1) chain.push(await btcAccount());
      for (let i = 0; i < chain.length - 1; i += 1) {
        await raw.db
          .updateTable('accounts')
          .set({ merged_into: chain[i + 1]!.id })
          .where('id', '=', chain[i]!.id)
          .execute();
      }
      await expect(store.resolveCanonicalAccount(chain[0]!.id)).rejects.toThrow(/longer than/);
      expect((await store.resolveCanonicalAccount(chain[9]!.id))?.id).toBe(chain[11]!.id);
    });

    it('adds identities and reports ones already linked here or elsewhere', async () => {
      const a = await btcAccount();
      const b = await btcAccount();
      const added = await store.addIdentity({
        account_id: a.id,
        kind: 'email',
        value: 'a@example.com',
        verified: true,
        created_at: T0 + 1,
      });
      expect(added.status).toBe('added');
      expect(added.identity).toMatchObject({ account_id: a.id, kind: 'email', value: 'a@example.com', verified: true });
      const again = await store.addIdentity({
        account_id: a.id,
        kind: 'email',
        value: 'a@example.com',
        verified: true,
        created_at: T0 + 2,
      });
      expect(again).toEqual({ status: 'already_linked', identity: added.identity });
      const elsewhere = await store.addIdentity({
        account_id: b.id,
        kind: 'email',
        value: 'a@example.com',
        verified: true,
        created_at: T0 + 3,
      });
      expect(elsewhere).toEqual({ status: 'linked_elsewhere', identity: added.identity });
      expect((await store.listIdentities(a.id)).map((identity) => identity.kind)).toEqual(['btc', 'email']);
      await expect(
        store.addIdentity({ account_id: a.id, kind: 'email', value: 'A@x.org', verified: true, created_at: T0 }),
      ).rejects.toThrow(/lowercased/);
    });

    it('removes identities, never the last one, and keeps display fields valid', async () => {
      const address = btcAddress();
      const account = await btcAccount(T0, address);
      const second = btcAddress();
      await store.addIdentity({ account_id: account.id, kind: 'btc', value: second, verified: true, created_at: T0 + 1 });
      const other = await btcAccount();
      const [first] = await store.listIdentities(account.id);

      expect(await store.removeIdentity(other.id, first!.id, T0 + 5)).toBe('not_found');
      expect(await store.removeIdentity(account.id, 'no-such-identity', T0 + 5)).toBe('not_found');
      expect(await store.removeIdentity(account.id, first!.id, T0 + 5)).toBe('removed');
      const after = await store.findAccount(account.id);
      // The primary address moves to the remaining address.
      expect(after).toMatchObject({ primary_btc: second, display_identity_kind: 'btc', updated_at: T0 + 5 });
      const [remaining] = await store.listIdentities(account.id);
      expect(remaining!.value).toBe(second);
      expect(await store.removeIdentity(account.id, remaining!.id, T0 + 6)).toBe('last_identity');

      // Display kind e-mail, e-mail removed: the kind is cleared (docs/protocol.md §2 default applies).
      const federated = await emailAccount('c@example.com');
      await store.addIdentity({ account_id: federated.id, kind: 'btc', value: btcAddress(), verified: true, created_at: T0 + 1 });
      const emailIdentity = (await store.listIdentities(federated.id)).find((identity) => identity.kind === 'email');
      expect(await store.removeIdentity(federated.id, emailIdentity!.id, T0 + 7)).toBe('removed');
      expect((await store.findAccount(federated.id))?.display_identity_kind).toBeNull();
    });

    it('removing an identity revokes the live sessions it opened, except the one named', async () => {
      const address = btcAddress();
      const account = await btcAccount(T0, address);
      const second = btcAddress();
      await store.addIdentity({ account_id: account.id, kind: 'btc', value: second, verified: true, created_at: T0 + 1 });
      const [, secondIdentity] = await store.listIdentities(account.id);
      const viaSecond = await store.insertSession(sessionFor(account.id, 'r1', { opened_by: { kind: 'btc', value: second } }));
      const viaSecondKept = await store.insertSession(sessionFor(account.id, 'r2', { opened_by: { kind: 'btc', value: second } }));
      const viaFirst = await store.insertSession(sessionFor(account.id, 'r3', { opened_by: { kind: 'btc', value: address } }));
      const unknownOrigin = await store.insertSession(sessionFor(account.id, 'r4'));

      expect(await store.removeIdentity(account.id, secondIdentity!.id, T0 + HOUR, viaSecondKept.jti)).toBe('removed');
      expect(await store.findLiveSessionByTokenHash(viaSecond.token_hash, T0 + HOUR)).toBeNull();
      for (const alive of [viaSecondKept, viaFirst, unknownOrigin]) {
        expect(await store.findLiveSessionByTokenHash(alive.token_hash, T0 + HOUR)).not.toBeNull();
      }
    });

    it('concurrent unlinks never leave an account without identities', async () => {
      const account = await btcAccount();
      for (let i = 0; i < 3; i += 1) {
        await store.addIdentity({ account_id: account.id, kind: 'btc', value: btcAddress(), verified: true, created_at: T0 + i });
      }
      const identities = await store.listIdentities(account.id);
      const results = await Promise.all(identities.map((identity) => store.removeIdentity(account.id, identity.id, T0 + 9)));
      expect(results.filter((result) => result === 'removed')).toHaveLength(3);
      expect(results.filter((result) => result === 'last_identity')).toHaveLength(1);
      expect(await store.listIdentities(account.id)).toHaveLength(1);
    });

    it('updates only the given account fields', async () => {
      const account = await btcAccount();
      const renamed = await store.updateAccount(account.id, { display_name: 'Satoshi' }, T0 + 10);
      expect(renamed).toEqual({ ...account, display_name: 'Satoshi', updated_at: T0 + 10 });
      const changed = await store.updateAccount(account.id, { display_identity_kind: 'did', primary_btc: null }, T0 + 11);
      expect(changed).toEqual({
        ...account,
        display_name: 'Satoshi',
        display_identity_kind: 'did',
        primary_btc: null,
        updated_at: T0 + 11,
      });
      expect(await store.findAccount(account.id)).toEqual(changed);
      expect(await store.updateAccount('0'.repeat(32), { display_name: 'x' }, T0)).toBeNull();
    });
  });

  describe('mergeAccounts', () => {
    it('moves identities, points the merged account at the survivor and revokes its sessions', async () => {
      const intoAddress = btcAddress();
      const into = await btcAccount(T0, intoAddress);
      const fromAddress = btcAddress();
      const from = await store.createAccountWithIdentity({
        account: { kind: 'btc', display_name: 'Old name', primary_btc: fromAddress, created_at: T0 },
        identity: { kind: 'btc', value: fromAddress, verified: true, created_at: T0 },
      });
      await store.addIdentity({ account_id: from.account.id, kind: 'email', value: 'from@example.com', verified: true, created_at: T0 });
      const legacy = await store.insertSession(sessionFor(from.account.id, null));
      const app = await store.createConnectApp({
        owner_account_id: from.account.id,
        name: 'Shop',
        key_hash: 'c'.repeat(64),
        created_at: T0,
      });

      const result = await mergeEverything(store, from.account.id, into.id, T0 + HOUR);
      // The merged account's integrator apps follow it to the survivor.
      expect((await store.listConnectApps(into.id)).map((entry) => entry.id)).toEqual([app.id]);
      expect(await store.listConnectApps(from.account.id)).toEqual([]);
      expect(result.moved_identities).toBe(2);
      expect(result.revoked_sessions).toBe(1);
      // `into` keeps its own primary address and adopts the display name it lacked.
      expect(result.account).toEqual({ ...into, display_name: 'Old name', updated_at: T0 + HOUR });
      expect(await store.listIdentities(from.account.id)).toEqual([]);
      expect((await store.listIdentities(into.id)).map((identity) => identity.value).sort()).toEqual(
        [intoAddress, fromAddress, 'from@example.com'].sort(),
      );
      expect((await store.findAccount(from.account.id))?.merged_into).toBe(into.id);
      expect((await store.findAccountByIdentity('btc', fromAddress))?.id).toBe(into.id);
      expect(await store.findLiveSessionByTokenHash(legacy.token_hash, T0 + HOUR)).toBeNull();
      await expect(store.insertSession(sessionFor(from.account.id, 'r'))).rejects.toThrow(/merged/);
    });

    it('revokes every row of the merged account and gives no roster a row for the survivor', async () => {
      const into = await btcAccount();
      const from = await btcAccount();
      const bystander = await btcAccount();
      const now = T0 + DAY;
      // Roster "both": held both accounts (the roster that performs the merge).
      // Roster "only-from": held only `from` (another browser of `from`).
      // Roster "stale-into": held `from` live and `into` expired but unrevoked.
      const bothInto = await store.insertSession(sessionFor(into.id, 'both', { sudo_at: T0 }));
      const bothFrom = await store.insertSession(sessionFor(from.id, 'both'));
      const onlyFrom = await store.insertSession(sessionFor(from.id, 'only-from', { created_at: T0 + HOUR }));
      await store.insertSession(sessionFor(bystander.id, 'only-from'));
      await store.insertSession(sessionFor(into.id, 'stale-into', { created_at: T0 - 40 * DAY }));
      const staleFrom = await store.insertSession(sessionFor(from.id, 'stale-into'));

      const result = await mergeEverything(store, from.id, into.id, now);
      expect(result.revoked_sessions).toBe(3);

      const both = await store.listLiveRoster('both', now);
      expect(both.map((member) => member.account.id)).toEqual([into.id]);
      expect(both[0]!.session).toEqual(bothInto);
      // The other rosters lose `from` and gain nothing.
      expect((await store.listLiveRoster('only-from', now)).map((member) => member.account.id)).toEqual([bystander.id]);
      expect(await store.listLiveRoster('stale-into', now)).toEqual([]);
      expect(await liveRows('only-from', into.id)).toBe(0);
      for (const kept of [bothFrom, onlyFrom, staleFrom]) {
        expect(await store.findLiveSessionByTokenHash(kept.token_hash, now)).toBeNull();
      }
      expect(await liveRows('both', from.id)).toBe(0);
    });

    it('moves only the identities and apps the selection names; the rest of the merged account is removed', async () => {
      const into = await btcAccount();
      const provenAddress = btcAddress();
      const plantedAddress = btcAddress();
      const from = await store.createAccountWithIdentity({
        account: { kind: 'btc', display_name: null, primary_btc: plantedAddress, created_at: T0 },
        identity: { kind: 'btc', value: plantedAddress, verified: true, created_at: T0 },
      });
      const proven = await store.addIdentity({
        account_id: from.account.id,
        kind: 'btc',
        value: provenAddress,
        verified: true,
        created_at: T0 + 1,
      });
      const kept = await store.addIdentity({
        account_id: from.account.id,
        kind: 'email',
        value: 'kept@example.com',
        verified: true,
        created_at: T0 + 2,
      });
      const keptApp = await store.createConnectApp({
        owner_account_id: from.account.id,
        name: 'Kept',
        key_hash: 'd'.repeat(64),
        created_at: T0,
      });
      const droppedApp = await store.createConnectApp({
        owner_account_id: from.account.id,
        name: 'Planted',
        key_hash: 'e'.repeat(64),
        created_at: T0,
      });
      const key = credentialFor(from.account.id);
      await store.insertWebAuthnCredential(key);
      if (proven.status !== 'added' || kept.status !== 'added') throw new Error('test: identities not added');

      const held = await store.transferHoldings(from.account.id);
      expect(held?.identities.map((identity) => identity.value)).toEqual([plantedAddress, provenAddress, 'kept@example.com']);
      expect(held?.apps.map((app) => app.name).sort()).toEqual(['Kept', 'Planted']);
      expect(held?.keys).toEqual([{ id: key.id, name: key.label }]);

      const result = await store.mergeAccounts(from.account.id, into.id, T0 + HOUR, {
        identityIds: [proven.identity.id, kept.identity.id],
        appIds: [keptApp.id],
      });
      expect(result.moved.identities.map((identity) => identity.value)).toEqual([provenAddress, 'kept@example.com']);
      expect(result.moved.apps).toEqual([{ id: keptApp.id, name: 'Kept' }]);
      expect(result.removed.identities.map((identity) => identity.value)).toEqual([plantedAddress]);
      expect(result.removed.apps).toEqual([{ id: droppedApp.id, name: 'Planted' }]);
      expect(result.removed.keys).toEqual([{ id: key.id, name: key.label }]);
      // The planted address is free again and reaches nothing of `into`; `into` did not adopt it as primary.
      expect(await store.findAccountByIdentity('btc', plantedAddress)).toBeNull();
      expect(result.account.primary_btc).toBe(into.primary_btc);
      expect((await store.findAccountByIdentity('btc', provenAddress))?.id).toBe(into.id);
      expect((await store.listConnectApps(into.id)).map((app) => app.id)).toEqual([keptApp.id]);
      expect(await store.listConnectApps(from.account.id)).toEqual([]);
      expect(await store.listWebAuthnCredentials(into.id)).toEqual([]);
    });

    it('refuses a merge of or into a disabled account, and a selection the merged account does not hold, changing nothing', async () => {
      const into = await btcAccount();
      const from = await btcAccount();
      const other = await btcAccount();
      const fromIdentities = (await store.transferHoldings(from.id))!.identities.map((identity) => identity.id);
      const otherIdentity = (await store.transferHoldings(other.id))!.identities[0]!.id;
      const refusal = (promise: Promise<unknown>) =>
        promise.then(
          () => 'merged',
          (error: unknown) => (error instanceof MergeRefused ? error.code : String(error)),
        );

      await store.setAccountDisabled(from.id, true, T0 + 1);
      expect(await refusal(store.mergeAccounts(from.id, into.id, T0 + 2, { identityIds: fromIdentities, appIds: [] }))).toBe(
        'account_disabled',
      );
      await store.setAccountDisabled(from.id, false, T0 + 3);
      await store.setAccountDisabled(into.id, true, T0 + 4);
      expect(await refusal(store.mergeAccounts(from.id, into.id, T0 + 5, { identityIds: fromIdentities, appIds: [] }))).toBe(
        'account_disabled',
      );
      await store.setAccountDisabled(into.id, false, T0 + 6);
      expect(
        await refusal(store.mergeAccounts(from.id, into.id, T0 + 7, { identityIds: [...fromIdentities, otherIdentity], appIds: [] })),
      ).toBe('selection_changed');
      expect(await refusal(store.mergeAccounts(from.id, into.id, T0 + 7, { identityIds: fromIdentities, appIds: ['no-such-app'] }))).toBe(
        'selection_changed',
      );
      expect((await store.findAccount(from.id))?.merged_into).toBeNull();
      expect((await store.transferHoldings(from.id))!.identities.map((identity) => identity.id)).toEqual(fromIdentities);
      expect((await store.transferHoldings(other.id))!.identities.map((identity) => identity.id)).toEqual([otherIdentity]);
    });

    it('keeps merge chains one step long and refuses loops and repeats', async () => {
      const a = await btcAccount();
      const b = await btcAccount();
      const c = await btcAccount();
      await mergeEverything(store, c.id, b.id, T0 + 1);
      await mergeEverything(store, b.id, a.id, T0 + 2);
      expect((await store.findAccount(c.id))?.merged_into).toBe(a.id);
      expect((await store.findAccount(b.id))?.merged_into).toBe(a.id);
      expect(await store.listMergedInto(a.id)).toEqual([b.id, c.id].sort());
      expect(await store.listMergedInto(b.id)).toEqual([]);
      await expect(mergeEverything(store, a.id, a.id, T0 + 3)).rejects.toThrow(/itself/);
      await expect(mergeEverything(store, b.id, a.id, T0 + 3)).rejects.toThrow(/already merged/);
      // Merging into a merged account lands in its survivor; into oneself through a chain is a loop.
      const d = await btcAccount();
      expect((await mergeEverything(store, d.id, b.id, T0 + 4)).account.id).toBe(a.id);
      await expect(mergeEverything(store, a.id, c.id, T0 + 5)).rejects.toThrow(/loop/);
      await expect(mergeEverything(store, '0'.repeat(32), a.id, T0)).rejects.toThrow(/unknown/);
      const stats = await store.familyStats(T0 + 5);
      expect(stats.accounts).toEqual({ total: 1, btc: 1, federated: 0 });
    });
  });

  describe('sessions and rosters', () => {
    it('inserts a row and finds it by token hash while it is live', async () => {
      const account = await btcAccount();
      const input = sessionFor(account.id, 'roster-1', { step_up_at: T0, signing_method: 'email_otp' });
      const inserted = await store.insertSession(input);
      expect(inserted).toEqual({
        jti: input.jti,
        token_hash: input.token_hash,
        account_id: account.id,
        roster_id: 'roster-1',
        signing_method: 'email_otp',
        created_at: T0,
        expires_at: T0 + SESSION_LIFETIME,
        last_seen_at: T0,
        revoked_at: null,
        step_up_at: T0,
        sudo_at: null,
      });
      expect(await store.findLiveSessionByTokenHash(input.token_hash, T0 + DAY)).toEqual(inserted);
      expect(await store.findLiveSessionByTokenHash(input.token_hash, T0 + SESSION_LIFETIME)).toBeNull();
      expect(await store.findLiveSessionByTokenHash(tokenHash(), T0)).toBeNull();
      expect(await store.findLiveSessionInRoster('roster-1', account.id, T0)).toEqual(inserted);
      expect(await store.findLiveSessionInRoster('roster-2', account.id, T0)).toBeNull();
      await expect(store.insertSession(sessionFor('0'.repeat(32), 'r'))).rejects.toThrow(/unknown account/);
      await expect(store.insertSession(sessionFor(account.id, 'r', { expires_at: T0 }))).rejects.toThrow(/expire/);
    });

    it('finds a live row with its whole roster in one call, and a row without roster alone', async () => {
      const first = await btcAccount();
      const second = await btcAccount();
      const stranger = await btcAccount();
      const a = await store.insertSession(sessionFor(first.id, 'roster-me'));
      const b = await store.insertSession(sessionFor(second.id, 'roster-me', { created_at: T0 + 1 }));
      await store.insertSession(sessionFor(stranger.id, 'roster-other'));
      const found = await store.findLiveRosterByTokenHash(b.token_hash, T0 + DAY);
      expect(found?.current.session.jti).toBe(b.jti);
      expect(found?.current.account.id).toBe(second.id);
      expect(found?.members.map((member) => member.session.jti)).toEqual([a.jti, b.jti]);
      expect(found?.members.map((member) => member.account.id)).toEqual([first.id, second.id]);
      // A revoked member leaves the listing; a revoked current row finds nothing.
      await store.revokeSession(a.jti, T0 + DAY);
      expect((await store.findLiveRosterByTokenHash(b.token_hash, T0 + DAY))?.members.map((member) => member.session.jti)).toEqual([b.jti]);
      await store.revokeSession(b.jti, T0 + DAY);
      expect(await store.findLiveRosterByTokenHash(b.token_hash, T0 + DAY)).toBeNull();
      // A row from before multi-account (no roster) is its own only member; expired rows are not found.
      const legacy = await store.insertSession(sessionFor(stranger.id, null));
      const alone = await store.findLiveRosterByTokenHash(legacy.token_hash, T0 + DAY);
      expect(alone?.members.map((member) => member.session.jti)).toEqual([legacy.jti]);
      expect(await store.findLiveRosterByTokenHash(legacy.token_hash, T0 + SESSION_LIFETIME)).toBeNull();
    });

    it('a second sign-in of a rostered account replaces its row (re-authentication)', async () => {
      const a = await btcAccount();
      const b = await btcAccount();
      const firstA = await store.insertSession(sessionFor(a.id, 'roster'));
      const rowB = await store.insertSession(sessionFor(b.id, 'roster'));
      const secondA = await store.insertSession(sessionFor(a.id, 'roster', { created_at: T0 + HOUR }));
      expect(await store.findLiveSessionByTokenHash(firstA.token_hash, T0 + HOUR)).toBeNull();
      expect(await store.findLiveSessionByTokenHash(secondA.token_hash, T0 + HOUR)).toEqual(secondA);
      expect(await store.findLiveSessionByTokenHash(rowB.token_hash, T0 + HOUR)).toEqual(rowB);
      const revoked = await raw.db.selectFrom('sessions').select('revoked_at').where('jti', '=', firstA.jti).executeTakeFirst();
      expect(Number(revoked?.revoked_at)).toBe(T0 + HOUR);
      // The same account in another roster (another browser) is unaffected.
      const otherBrowser = await store.insertSession(sessionFor(a.id, 'other-roster'));
      expect(await store.findLiveSessionInRoster('roster', a.id, T0 + HOUR)).toEqual(secondA);
      expect(await store.findLiveSessionInRoster('other-roster', a.id, T0 + HOUR)).toEqual(otherBrowser);
    });

    it('signing in again after expiry restores the account to the roster', async () => {
      const account = await btcAccount();
      await store.insertSession(sessionFor(account.id, 'roster', { created_at: T0 - 31 * DAY }));
      expect(await store.findLiveSessionInRoster('roster', account.id, T0)).toBeNull();
      const fresh = await store.insertSession(sessionFor(account.id, 'roster'));
      expect(await store.findLiveSessionInRoster('roster', account.id, T0)).toEqual(fresh);
      expect(await liveRows('roster', account.id)).toBe(1);
    });

    it('20 parallel inserts for one (roster, account) all succeed and leave one live row', async () => {
      const account = await btcAccount();
      const inputs = Array.from({ length: 20 }, (_, i) => sessionFor(account.id, 'busy', { created_at: T0 + i }));
      const results = await Promise.allSettled(inputs.map((input) => store.insertSession(input)));
      expect(results.filter((result) => result.status === 'rejected')).toEqual([]);
      expect(await liveRows('busy', account.id)).toBe(1);
      const all = await raw.db.selectFrom('sessions').select('jti').where('roster_id', '=', 'busy').execute();
      expect(all).toHaveLength(20);
      const live = await store.findLiveSessionInRoster('busy', account.id, T0 + 100);
      expect(inputs.map((input) => input.jti)).toContain(live?.jti);
    });

    it('rows without a roster (pre-multi-account) are not limited per account', async () => {
      const account = await btcAccount();
      const first = await store.insertSession(sessionFor(account.id, null));
      const second = await store.insertSession(sessionFor(account.id, null));
      expect(await store.findLiveSessionByTokenHash(first.token_hash, T0)).toEqual(first);
      expect(await store.findLiveSessionByTokenHash(second.token_hash, T0)).toEqual(second);
    });

    it('lists the live roster with accounts in joining order', async () => {
      const a = await btcAccount();
      const b = await emailAccount('b@example.com');
      const c = await btcAccount();
      const rowA = await store.insertSession(sessionFor(a.id, 'roster', { created_at: T0 }));
      const rowB = await store.insertSession(sessionFor(b.id, 'roster', { created_at: T0 + MINUTE }));
      const rowC = await store.insertSession(sessionFor(c.id, 'roster', { created_at: T0 + 2 * MINUTE }));
      await store.insertSession(sessionFor(c.id, 'elsewhere'));
      await store.touchSession(rowB.jti, T0 + HOUR);
      await store.revokeSession(rowC.jti, T0 + HOUR);
      const roster = await store.listLiveRoster('roster', T0 + HOUR);
      // Each member also carries the identity facts its view shows: a holds an address, b an e-mail.
      expect(roster).toEqual([
        { session: rowA, account: a, facts: { has_email: false, nostr_npub: null } },
        { session: { ...rowB, last_seen_at: T0 + HOUR }, account: b, facts: { has_email: true, nostr_npub: null } },
      ]);
      await store.addIdentity({ account_id: a.id, kind: 'oauth', value: 'nostr:npub1aaa', verified: true, created_at: T0 });
      const withNostr = await store.listLiveRoster('roster', T0 + HOUR);
      expect(withNostr[0]?.facts).toEqual({ has_email: false, nostr_npub: 'npub1aaa' });
      expect(await store.listLiveRoster('roster', T0 + SESSION_LIFETIME + MINUTE)).toEqual([]);
      expect(await store.listLiveRoster('empty', T0)).toEqual([]);
    });

    it('re-mints a row: new token hash, optional freshness, same expiry', async () => {
      const account = await btcAccount();
      const row = await store.insertSession(sessionFor(account.id, 'roster', { step_up_at: T0 }));
      const newHash = tokenHash();
      const updated = await store.updateSessionToken(row.jti, newHash, { sudo_at: T0 + MINUTE });
      expect(updated).toEqual({ ...row, token_hash: newHash, sudo_at: T0 + MINUTE });
      expect(await store.findLiveSessionByTokenHash(row.token_hash, T0 + MINUTE)).toBeNull();
      expect(await store.findLiveSessionByTokenHash(newHash, T0 + MINUTE)).toEqual(updated);
      const cleared = await store.updateSessionToken(row.jti, tokenHash(), { step_up_at: null });
      expect(cleared).toMatchObject({ step_up_at: null, sudo_at: T0 + MINUTE, expires_at: row.expires_at });
      await store.revokeSession(row.jti, T0 + HOUR);
      expect(await store.updateSessionToken(row.jti, tokenHash())).toBeNull();
      expect(await store.updateSessionToken('no-such-jti', tokenHash())).toBeNull();
    });

    it('touches last_seen_at forwards only, and not on revoked rows', async () => {
      const account = await btcAccount();
      const row = await store.insertSession(sessionFor(account.id, 'roster'));
      await store.touchSession(row.jti, T0 + HOUR);
      await store.touchSession(row.jti, T0 + MINUTE);
      expect((await store.findLiveSessionInRoster('roster', account.id, T0))?.last_seen_at).toBe(T0 + HOUR);
      await store.revokeSession(row.jti, T0 + 2 * HOUR);
      await store.touchSession(row.jti, T0 + 3 * HOUR);
      const stored = await raw.db.selectFrom('sessions').select('last_seen_at').where('jti', '=', row.jti).executeTakeFirst();
      expect(Number(stored?.last_seen_at)).toBe(T0 + HOUR);
    });

    it('revokes one row, one account in a roster, a whole roster, or an account everywhere', async () => {
      const a = await btcAccount();
      const b = await btcAccount();
      const rowA1 = await store.insertSession(sessionFor(a.id, 'r1'));
      const rowB1 = await store.insertSession(sessionFor(b.id, 'r1'));
      const rowA2 = await store.insertSession(sessionFor(a.id, 'r2'));
      const rowB2 = await store.insertSession(sessionFor(b.id, 'r2'));
      const rowA3 = await store.insertSession(sessionFor(a.id, 'r3'));
      const rowB3 = await store.insertSession(sessionFor(b.id, 'r3'));
      const now = T0 + MINUTE;

      expect(await store.revokeSession(rowA1.jti, now)).toBe(true);
      expect(await store.revokeSession(rowA1.jti, now)).toBe(false);
      expect(await store.findLiveSessionByTokenHash(rowA1.token_hash, now)).toBeNull();

      expect(await store.revokeAccountInRoster('r2', b.id, now)).toBe(1);
      expect(await store.revokeAccountInRoster('r2', b.id, now)).toBe(0);
      expect((await store.listLiveRoster('r2', now)).map((m) => m.session.jti)).toEqual([rowA2.jti]);
      expect(await store.findLiveSessionByTokenHash(rowB2.token_hash, now)).toBeNull();

      expect(await store.revokeRoster('r1', now)).toBe(1);
      expect(await store.listLiveRoster('r1', now)).toEqual([]);
      expect(await store.findLiveSessionByTokenHash(rowB1.token_hash, now)).toBeNull();

      expect(await store.revokeAllForAccount(a.id, now)).toBe(2);
      expect(await store.findLiveSessionByTokenHash(rowA2.token_hash, now)).toBeNull();
      expect(await store.findLiveSessionByTokenHash(rowA3.token_hash, now)).toBeNull();
      expect(await store.findLiveSessionByTokenHash(rowB3.token_hash, now)).toEqual(rowB3);
      expect(await store.revokeAllForAccount(a.id, now)).toBe(0);
    });

    it("lists an account's live rows in every roster with their device facts, and revokes one or all others", async () => {
      const account = await btcAccount();
      const stranger = await btcAccount();
      const phone = await store.insertSession(
        sessionFor(account.id, 'roster-phone', {
          device: 'Safari 18 on iOS (mobile)',
          network: '203.0.113.0/24',
          last_seen_at: T0 + MINUTE,
        }),
      );
      const laptop = await store.insertSession(
        sessionFor(account.id, 'roster-laptop', { device: 'Firefox 140 on Linux', network: '2001:db8:1::/48' }),
      );
      const old = await store.insertSession(sessionFor(account.id, null));
      const theirs = await store.insertSession(sessionFor(stranger.id, 'roster-phone'));
      const expired = await store.insertSession(sessionFor(account.id, 'roster-old', { created_at: T0 - SESSION_LIFETIME }));

      const listed = await store.listLiveSessionsOfAccount(account.id, T0 + 2 * MINUTE);
      expect(listed.map((row) => row.jti)).toEqual([phone.jti, ...[laptop.jti, old.jti].sort()]);
      expect(listed[0]).toEqual({ ...phone, device: 'Safari 18 on iOS (mobile)', network: '203.0.113.0/24' });
      expect(listed.find((row) => row.jti === old.jti)).toMatchObject({ device: null, network: null });

      expect(await store.revokeSessionOfAccount(account.id, theirs.jti, T0 + HOUR)).toBe(false);
      expect(await store.revokeSessionOfAccount(account.id, expired.jti, T0 + HOUR)).toBe(false);
      expect(await store.revokeSessionOfAccount(account.id, laptop.jti, T0 + HOUR)).toBe(true);
      expect(await store.revokeSessionOfAccount(account.id, laptop.jti, T0 + HOUR)).toBe(false);
      expect(await store.revokeOtherSessionsOfAccount(account.id, phone.jti, T0 + HOUR)).toBe(2);
      expect((await store.listLiveSessionsOfAccount(account.id, T0 + HOUR)).map((row) => row.jti)).toEqual([phone.jti]);
      expect(await store.findLiveSessionByTokenHash(theirs.token_hash, T0 + HOUR)).not.toBeNull();
    });

    it('lists revoked rows whose tokens have not expired, in revocation order, after a cursor', async () => {
      const account = await btcAccount();
      const rows = [];
      for (const roster of ['r1', 'r2', 'r3', 'r4']) rows.push(await store.insertSession(sessionFor(account.id, roster)));
      const expiring = await store.insertSession(sessionFor(account.id, 'r5', { created_at: T0 - SESSION_LIFETIME + HOUR }));
      await store.revokeSession(rows[2]!.jti, T0 + MINUTE);
      await store.revokeSession(rows[0]!.jti, T0 + 2 * MINUTE);
      await store.revokeSession(rows[1]!.jti, T0 + 2 * MINUTE);
      await store.revokeSession(expiring.jti, T0 + MINUTE);
      const sameTime = [rows[0]!.jti, rows[1]!.jti].sort();
      const all = await store.listRevocations(null, T0 + 3 * MINUTE, 10);
      expect(all.map((row) => row.jti)).toEqual([...[rows[2]!.jti, expiring.jti].sort(), ...sameTime]);
      expect(all.find((row) => row.jti === expiring.jti)).toEqual({
        jti: expiring.jti,
        revoked_at: T0 + MINUTE,
        expires_at: expiring.expires_at,
      });
      // Once its token expired, a revoked row is no longer listed.
      expect((await store.listRevocations(null, T0 + 2 * HOUR, 10)).map((row) => row.jti)).not.toContain(expiring.jti);
      const page = await store.listRevocations(null, T0 + 3 * MINUTE, 3);
      const last = page.at(-1)!;
      expect((await store.listRevocations({ at: last.revoked_at, jti: last.jti }, T0 + 3 * MINUTE, 10)).map((row) => row.jti)).toEqual([
        sameTime[1],
      ]);
      expect(await store.listRevocations({ at: T0 + 2 * MINUTE, jti: 'zzzz' }, T0 + 3 * MINUTE, 10)).toEqual([]);
    });

    it('keeps tab tokens of a row: live with it, untouched by a re-mint, the newest `keep` only', async () => {
      const account = await btcAccount();
      const row = await store.insertSession(sessionFor(account.id, 'tabs'));
      const hashes = Array.from({ length: 4 }, () => tokenHash());
      const jtis = hashes.map((hash) => hash.slice(0, 32));
      for (const [index, hash] of hashes.entries())
        expect(await store.insertTabToken(row.jti, { hash, jti: jtis[index]! }, T0 + index, 3)).toBe(true);
      // The same token twice is recorded once.
      expect(await store.insertTabToken(row.jti, { hash: hashes[3]!, jti: jtis[3]! }, T0 + 9, 3)).toBe(true);
      expect(await store.findLiveSessionByTabToken(hashes[0] as string, T0 + MINUTE)).toBeNull();
      const found = await store.findLiveSessionByTabToken(hashes[1] as string, T0 + MINUTE);
      expect(found?.session).toEqual(row);
      expect(found?.account.id).toBe(account.id);
      // Not the row's own token, and not the other way round.
      expect(await store.findLiveSessionByTokenHash(hashes[1] as string, T0)).toBeNull();
      expect(await store.findLiveSessionByTabToken(row.token_hash, T0)).toBeNull();

      expect(await store.updateSessionToken(row.jti, tokenHash())).not.toBeNull();
      expect(await store.findLiveSessionByTabToken(hashes[2] as string, T0 + MINUTE)).not.toBeNull();
      const fresher = await store.updateSessionToken(row.jti, tokenHash(), { sudo_at: T0 + MINUTE });
      expect(fresher?.sudo_at).toBe(T0 + MINUTE);
      // The row's claims are read with it; the token keeps those it was minted with (none here).
      const afterStepUp = await store.findLiveSessionByTabToken(hashes[2] as string, T0 + MINUTE);
      expect(afterStepUp?.session.sudo_at).toBe(T0 + MINUTE);
      expect(afterStepUp?.tab).toEqual({ sudo_at: null, step_up_at: null, superseded_at: null });
      // A token records the claims it carries.
      const carrying = { hash: tokenHash(), jti: 'd'.repeat(32), sudo_at: T0 + MINUTE, step_up_at: T0 + 2 * MINUTE };
      expect(await store.insertTabToken(row.jti, carrying, T0 + 2 * MINUTE, 3)).toBe(true);
      expect((await store.findLiveSessionByTabToken(carrying.hash, T0 + 2 * MINUTE))?.tab).toEqual({
        sudo_at: T0 + MINUTE,
        step_up_at: T0 + 2 * MINUTE,
        superseded_at: null,
      });

      expect(await store.findLiveSessionByTabToken(hashes[3] as string, T0 + SESSION_LIFETIME)).toBeNull();
      await store.revokeSession(row.jti, T0 + HOUR);
      expect(await store.findLiveSessionByTabToken(hashes[3] as string, T0 + HOUR)).toBeNull();
      expect(await store.insertTabToken(row.jti, { hash: tokenHash(), jti: 'a'.repeat(32) }, T0 + HOUR, 3)).toBe(false);
      expect(await store.updateSessionToken(row.jti, tokenHash(), { sudo_at: T0 + HOUR })).toBeNull();
      expect(await store.insertTabToken('no-such-row', { hash: tokenHash(), jti: 'b'.repeat(32) }, T0, 3)).toBe(false);

      // Purged with their row.
      await store.purgeExpired(T0 + 30 * DAY, { sessionRetentionMs: 0 });
      expect(await raw.db.selectFrom('tab_tokens').select('token_hash').where('jti', '=', row.jti).execute()).toEqual([]);
    });

    it('supersedes tab tokens, and lists superseded ones and those of revoked rows in the revocation feed by their own jti', async () => {
      const account = await btcAccount();
      const row = await store.insertSession(sessionFor(account.id, 'superseding'));
      const other = await store.insertSession(sessionFor(account.id, 'superseding-other'));
      const tab = (n: number) => ({ hash: tokenHash(), jti: `${String(n).padStart(2, '0')}${'c'.repeat(30)}` });
      const [t1, t2, t3, t4, t5] = [tab(1), tab(2), tab(3), tab(4), tab(5)];
      for (const [index, token] of [t1, t2, t3].entries()) expect(await store.insertTabToken(row.jti, token!, T0 + index, 2)).toBe(true);
      // Past `keep`, the oldest live token is superseded, not forgotten.
      expect(await store.findLiveSessionByTabToken(t1!.hash, T0 + MINUTE)).toBeNull();
      expect(await store.listRevocations(null, T0 + MINUTE, 10)).toEqual([
        { jti: t1!.jti, revoked_at: T0 + 2, expires_at: row.expires_at },
      ]);

      // A step-up supersedes every live token of the row but the one it answers.
      expect(await store.insertTabToken(row.jti, t4!, T0 + MINUTE, 3)).toBe(true);
      expect(await store.supersedeTabTokens(row.jti, T0 + 2 * MINUTE, t4!.hash)).toBe(2);
      expect(await store.supersedeTabTokens(row.jti, T0 + 2 * MINUTE, t4!.hash)).toBe(0);
      expect(await store.findLiveSessionByTabToken(t2!.hash, T0 + 2 * MINUTE)).toBeNull();
      // Asked for, a superseded token still names its live row (the host's routes other than /me).
      expect((await store.findLiveSessionByTabToken(t2!.hash, T0 + 2 * MINUTE, { superseded: true }))?.session.jti).toBe(row.jti);
      expect(await store.findLiveSessionByTabToken(t4!.hash, T0 + 2 * MINUTE)).not.toBeNull();
      // The row itself lives on: its own token, and the other row's tokens, are untouched.
      expect(await store.findLiveSessionByTokenHash(row.token_hash, T0 + 2 * MINUTE)).not.toBeNull();
      expect(await store.insertTabToken(other.jti, t5!, T0 + MINUTE, 2)).toBe(true);
      // Revoking a row lists its live tab tokens at the revocation's time, and ends its superseded ones too.
      await store.revokeSession(other.jti, T0 + 3 * MINUTE);
      expect(await store.findLiveSessionByTabToken(t5!.hash, T0 + 3 * MINUTE, { superseded: true })).toBeNull();
      const feed = await store.listRevocations(null, T0 + 4 * MINUTE, 10);
      expect(feed).toEqual([
        { jti: t1!.jti, revoked_at: T0 + 2, expires_at: row.expires_at },
        { jti: t2!.jti, revoked_at: T0 + 2 * MINUTE, expires_at: row.expires_at },
        { jti: t3!.jti, revoked_at: T0 + 2 * MINUTE, expires_at: row.expires_at },
        ...[
          { jti: other.jti, revoked_at: T0 + 3 * MINUTE, expires_at: other.expires_at },
          { jti: t5!.jti, revoked_at: T0 + 3 * MINUTE, expires_at: other.expires_at },
        ].sort((a, b) => (a.jti < b.jti ? -1 : 1)),
      ]);
      // Paging across the three sources keeps the one order.
      const first = await store.listRevocations(null, T0 + 4 * MINUTE, 3);
      expect(first).toEqual(feed.slice(0, 3));
      expect(await store.listRevocations({ at: first[2]!.revoked_at, jti: first[2]!.jti }, T0 + 4 * MINUTE, 10)).toEqual(feed.slice(3));
      // However many are superseded since, none is forgotten before its row expires: the feed lists each until then.
      expect(await store.insertTabToken(row.jti, tab(6), T0 + 5 * MINUTE, 1)).toBe(true);
      expect((await raw.db.selectFrom('tab_tokens').select('token_hash').where('jti', '=', row.jti).execute()).length).toBe(5);
      expect((await store.listRevocations(null, T0 + 6 * MINUTE, 10)).map((entry) => entry.jti)).toEqual(
        expect.arrayContaining([t1!.jti, t2!.jti, t3!.jti, t4!.jti]),
      );
      // Once the rows expire, nothing of them is listed.
      expect(await store.listRevocations(null, T0 + SESSION_LIFETIME + HOUR, 10)).toEqual([]);
    });
  });

  describe('challenge nonces', () => {
    it('consumes a nonce once, and refuses an expired one', async () => {
      expect(await store.consumeNonce('n1', T0 + 5 * MINUTE, T0)).toBe(true);
      expect(await store.consumeNonce('n1', T0 + 5 * MINUTE, T0 + SECOND)).toBe(false);
      expect(await store.consumeNonce('n2', T0, T0)).toBe(false);
      expect(await store.consumeNonce('n2', T0 + 1, T0)).toBe(true);
    });

    it('50 parallel consumers of one nonce: exactly one wins', async () => {
      const results = await Promise.all(Array.from({ length: 50 }, () => store.consumeNonce('contested', T0 + 5 * MINUTE, T0)));
      expect(results.filter(Boolean)).toHaveLength(1);
    });
  });

  describe('settings and signing keys', () => {
    it('creates a setting once and returns the stored value afterwards', async () => {
      expect(await store.getSetting('server_secret')).toBeNull();
      let calls = 0;
      const create = () => {
        calls += 1;
        return `secret-${calls}`;
      };
      expect(await store.getOrCreateSetting('server_secret', create)).toBe('secret-1');
      expect(await store.getOrCreateSetting('server_secret', create)).toBe('secret-1');
      expect(calls).toBe(1);
      expect(await store.getSetting('server_secret')).toBe('secret-1');
    });

    it('instances racing to create a setting all get the first stored value', async () => {
      const other = await openStore(database.url, opening);
      try {
        const values = await Promise.all(
          Array.from({ length: 10 }, (_, i) =>
            (i % 2 === 0 ? store : other).getOrCreateSetting('nostr_key', () => randomBytes(8).toString('hex')),
          ),
        );
        expect(new Set(values).size).toBe(1);
        expect(await other.getSetting('nostr_key')).toBe(values[0]);
      } finally {
        await other.close();
      }
    });

    it('keeps signing keys; the newest activated unretired key is active', async () => {
      const key = (kid: string, activatedAt: number) => ({
        kid,
        private_jwk: JSON.stringify({ kty: 'OKP', crv: 'Ed25519', d: kid }),
        public_jwk: JSON.stringify({ kty: 'OKP', crv: 'Ed25519', x: kid }),
        created_at: T0,
        activated_at: activatedAt,
      });
      expect(await store.findActiveSigningKey(T0)).toBeNull();
      expect(await store.insertSigningKey(key('k1', T0))).toBe(true);
      expect(await store.insertSigningKey(key('k1', T0))).toBe(false);
      expect(await store.insertSigningKey(key('k2', T0 + DAY))).toBe(true);
      expect(await store.insertSigningKey(key('k3', T0 + 2 * DAY))).toBe(true);
      // k3 is published ahead of its activation; k2 signs.
      expect((await store.findActiveSigningKey(T0 + DAY))?.kid).toBe('k2');
      expect((await store.findActiveSigningKey(T0 + 2 * DAY))?.kid).toBe('k3');
      expect(await store.retireSigningKey('k3', T0 + 3 * DAY)).toBe(true);
      expect(await store.retireSigningKey('k3', T0 + 4 * DAY)).toBe(false);
      expect(await store.retireSigningKey('nope', T0)).toBe(false);
      expect((await store.findActiveSigningKey(T0 + 3 * DAY))?.kid).toBe('k2');
      const all = await store.listSigningKeys();
      expect(all.map((k) => k.kid)).toEqual(['k3', 'k2', 'k1']);
      expect(all[0]).toEqual({ ...key('k3', T0 + 2 * DAY), retired_at: T0 + 3 * DAY });
      expect(all[2]).toEqual({ ...key('k1', T0), retired_at: null });
    });
  });

  describe('e-mail codes', () => {
    const code = (email: string, codeHash: string, at = T0) => ({
      email,
      code_hash: codeHash,
      token: `token-${codeHash}`,
      expires_at: at + 10 * MINUTE,
      created_at: at,
    });

    it('stores one code per address; a new one kills the old one and resets both try counts', async () => {
      expect(await store.findEmailCode('a@example.com')).toBeNull();
      await store.putEmailCode(code('a@example.com', 'h1'));
      expect(await store.findEmailCode('a@example.com')).toEqual({
        ...code('a@example.com', 'h1'),
        attempts: 0,
        tokenless_attempts: 0,
        replaced_code_hashes: [],
        link_hash: null,
      });
      expect(await store.incrementEmailCodeAttempts('a@example.com', 'token-h1', 'token')).toBe(1);
      expect(await store.incrementEmailCodeAttempts('a@example.com', 'token-h1', 'token')).toBe(2);
      expect(await store.incrementEmailCodeAttempts('a@example.com', 'token-h1', 'tokenless')).toBe(1);
      expect(await store.findEmailCode('a@example.com')).toMatchObject({ attempts: 2, tokenless_attempts: 1 });
      await store.putEmailCode(code('a@example.com', 'h2', T0 + MINUTE));
      expect(await store.findEmailCode('a@example.com')).toEqual({
        ...code('a@example.com', 'h2', T0 + MINUTE),
        attempts: 0,
        tokenless_attempts: 0,
        replaced_code_hashes: [],
        link_hash: null,
      });
      expect(await store.incrementEmailCodeAttempts('nobody@example.com', 'token-h1', 'token')).toBeNull();
      await expect(store.putEmailCode(code('A@example.com', 'h3'))).rejects.toThrow(/lowercased/);
    });

    it("keeps a code's replaced codes as given, newest first, and never the older row's list", async () => {
      const hashes = ['c3', 'c2', 'c1'].map((prefix) => prefix.padEnd(64, '0'));
      await store.putEmailCode({ ...code('a@example.com', 'h1'), replaced_code_hashes: hashes });
      expect(await store.findEmailCode('a@example.com')).toMatchObject({ code_hash: 'h1', replaced_code_hashes: hashes });
      // A new code without a list (an ordinary start) does not inherit the older one's.
      await store.putEmailCode(code('a@example.com', 'h2'));
      expect(await store.findEmailCode('a@example.com')).toMatchObject({ code_hash: 'h2', replaced_code_hashes: [] });
      await store.putEmailCode({ ...code('a@example.com', 'h3'), replaced_code_hashes: [] });
      expect(await store.findEmailCode('a@example.com')).toMatchObject({ replaced_code_hashes: [] });
      // Stored as comma-separated hex: anything else is refused.
      await expect(store.putEmailCode({ ...code('a@example.com', 'h4'), replaced_code_hashes: ['a,b'] })).rejects.toThrow(/hex/);
    });

    it("keeps a code's link hash as given, and a newer code never keeps the older one's", async () => {
      await store.putEmailCode({ ...code('a@example.com', 'h1'), link_hash: 'f'.repeat(64) });
      expect(await store.findEmailCode('a@example.com')).toMatchObject({ code_hash: 'h1', link_hash: 'f'.repeat(64) });
      await store.putEmailCode(code('a@example.com', 'h2'));
      expect(await store.findEmailCode('a@example.com')).toMatchObject({ code_hash: 'h2', link_hash: null });
    });

    it('counts a try only on the code whose token was read, never on the code that replaced it', async () => {
      await store.putEmailCode(code('a@example.com', 'h1'));
      await store.putEmailCode(code('a@example.com', 'h2'));
      expect(await store.incrementEmailCodeAttempts('a@example.com', 'token-h1', 'token')).toBeNull();
      expect(await store.incrementEmailCodeAttempts('a@example.com', 'token-h1', 'tokenless')).toBeNull();
      expect(await store.findEmailCode('a@example.com')).toMatchObject({ attempts: 0, tokenless_attempts: 0 });
    });

    it('counts parallel wrong tries one by one', async () => {
      await store.putEmailCode(code('a@example.com', 'h1'));
      for (const kind of ['token', 'tokenless'] as const) {
        const counts = await Promise.all(
          Array.from({ length: 8 }, () => store.incrementEmailCodeAttempts('a@example.com', 'token-h1', kind)),
        );
        expect([...counts].sort((x, y) => x! - y!)).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
      }
    });

    it('a code is consumed by exactly one delete, and only the code that was checked', async () => {
      await store.putEmailCode(code('a@example.com', 'h1'));
      expect(await store.deleteEmailCode('a@example.com', 'other-hash')).toBe(false);
      const results = await Promise.all([1, 2, 3].map(() => store.deleteEmailCode('a@example.com', 'h1')));
      expect(results.filter(Boolean)).toHaveLength(1);
      expect(await store.findEmailCode('a@example.com')).toBeNull();
      await store.putEmailCode(code('b@example.com', 'h1'));
      expect(await store.deleteEmailCode('b@example.com')).toBe(true);
      expect(await store.deleteEmailCode('b@example.com')).toBe(false);
    });
  });

  describe('Connect apps', () => {
    it('creates, lists, finds by key, rotates and deletes apps of their owner only', async () => {
      const owner = await btcAccount();
      const stranger = await btcAccount();
      const first = await store.createConnectApp({
        owner_account_id: owner.id,
        name: 'Shop',
        key_hash: 'key-1',
        created_at: T0,
      });
      expect(first).toMatchObject({ owner_account_id: owner.id, name: 'Shop', key_hash: 'key-1', rotated_at: null });
      expect(first.id).not.toContain(':');
      const second = await store.createConnectApp({
        id: 'app2',
        owner_account_id: owner.id,
        name: 'Forum',
        key_hash: 'key-2',
        created_at: T0 + 1,
      });
      await expect(
        store.createConnectApp({ owner_account_id: stranger.id, name: 'Dup', key_hash: 'key-1', created_at: T0 }),
      ).rejects.toThrow();
      await expect(
        store.createConnectApp({ id: 'a:b', owner_account_id: owner.id, name: 'x', key_hash: 'k', created_at: T0 }),
      ).rejects.toThrow(/:/);
      expect(await store.listConnectApps(owner.id)).toEqual([first, second]);
      expect(await store.listConnectApps(stranger.id)).toEqual([]);
      expect(await store.findConnectAppByKeyHash('key-2')).toEqual(second);
      expect(await store.findConnectAppByKeyHash('nope')).toBeNull();
      expect(await store.findConnectApp('app2')).toEqual(second);
      expect(await store.findConnectApp('nope')).toBeNull();

      expect(await store.rotateConnectAppKey(second.id, stranger.id, 'key-3', T0 + 2)).toBe(false);
      expect(await store.rotateConnectAppKey(second.id, owner.id, 'key-3', T0 + 2)).toBe(true);
      expect(await store.findConnectAppByKeyHash('key-2')).toBeNull();
      expect(await store.findConnectAppByKeyHash('key-3')).toEqual({ ...second, key_hash: 'key-3', rotated_at: T0 + 2 });

      expect(await store.deleteConnectApp(first.id, stranger.id)).toBe(false);
      expect(await store.deleteConnectApp(first.id, owner.id)).toBe(true);
      expect(await store.deleteConnectApp(first.id, owner.id)).toBe(false);
      expect((await store.listConnectApps(owner.id)).map((app) => app.id)).toEqual(['app2']);
      expect(await store.findConnectApp(first.id)).toBeNull();
    });
  });

  describe('security keys and passkeys', () => {
    it('keeps credentials per account, with ids unique on the host, and edits or deletes them for their account only', async () => {
      const owner = await btcAccount();
      const stranger = await btcAccount();
      const first = credentialFor(owner.id);
      const second = credentialFor(owner.id, {
        created_at: T0 + 1,
        transports: [],
        sign_in: true,
        device_type: 'multiDevice',
        backed_up: true,
        authenticator_type: 'platform',
      });
      expect(await store.insertWebAuthnCredential(first)).toBe(true);
      expect(await store.insertWebAuthnCredential(second)).toBe(true);
      // The same credential id for anyone else, or again: refused.
      expect(await store.insertWebAuthnCredential({ ...first, account_id: stranger.id })).toBe(false);
      expect(await store.insertWebAuthnCredential(first)).toBe(false);
      await expect(store.insertWebAuthnCredential(credentialFor(owner.id, { transports: ['a,b'] }))).rejects.toThrow(/transport/);
      await expect(store.insertWebAuthnCredential(credentialFor(owner.id, { authenticator_type: 'other' as never }))).rejects.toThrow();

      expect(await store.listWebAuthnCredentials(owner.id)).toEqual([first, second]);
      expect(await store.listWebAuthnCredentials(stranger.id)).toEqual([]);
      expect(await store.findWebAuthnCredential(second.id)).toEqual(second);
      expect(await store.findWebAuthnCredential('missing')).toBeNull();

      expect(await store.updateWebAuthnCredential(first.id, stranger.id, { label: 'Mine now' })).toBeNull();
      expect(await store.updateWebAuthnCredential(first.id, owner.id, { label: 'Desk key' })).toEqual({ ...first, label: 'Desk key' });
      expect(await store.updateWebAuthnCredential(second.id, owner.id, { sign_in: false })).toEqual({ ...second, sign_in: false });
      expect(await store.updateWebAuthnCredential(second.id, owner.id, {})).toEqual({ ...second, sign_in: false });

      expect(await store.deleteWebAuthnCredential(first.id, stranger.id)).toBe(false);
      expect(await store.deleteWebAuthnCredential(first.id, owner.id)).toBe(true);
      expect(await store.deleteWebAuthnCredential(first.id, owner.id)).toBe(false);
      expect((await store.listWebAuthnCredentials(owner.id)).map((credential) => credential.id)).toEqual([second.id]);
    });

    it('records a use by compare-and-set on the counter: of parallel uses from one counter value, one wins', async () => {
      const owner = await btcAccount();
      const key = credentialFor(owner.id, { counter: 5 });
      await store.insertWebAuthnCredential(key);
      expect(await store.recordWebAuthnUse(key.id, { expected_counter: 4, counter: 6, backed_up: false, at: T0 + 1 })).toBe(false);
      const uses = await Promise.all(
        Array.from({ length: 10 }, (_, index) =>
          store.recordWebAuthnUse(key.id, { expected_counter: 5, counter: 6 + index, backed_up: true, at: T0 + MINUTE }),
        ),
      );
      expect(uses.filter(Boolean)).toHaveLength(1);
      const stored = await store.findWebAuthnCredential(key.id);
      expect(stored).toMatchObject({ backed_up: true, last_used_at: T0 + MINUTE });
      expect(stored?.counter).toBe(6 + uses.indexOf(true));
      expect(await store.recordWebAuthnUse('missing', { expected_counter: 0, counter: 1, backed_up: false, at: T0 })).toBe(false);
    });

    it("a merge never moves the merged account's keys: they are removed and reported", async () => {
      const survivor = await btcAccount();
      const merged = await btcAccount();
      const key = credentialFor(merged.id);
      await store.insertWebAuthnCredential(key);
      const result = await mergeEverything(store, merged.id, survivor.id, T0 + MINUTE);
      expect(result.removed.keys).toEqual([{ id: key.id, name: key.label }]);
      expect(await store.listWebAuthnCredentials(merged.id)).toEqual([]);
      expect(await store.listWebAuthnCredentials(survivor.id)).toEqual([]);
      expect(await store.findWebAuthnCredential(key.id)).toBeNull();
    });
  });

  describe('activity', () => {
    it('keeps events per account, newest first, paged by time and id', async () => {
      const account = await btcAccount();
      const other = await btcAccount();
      const events = [];
      for (const [index, at] of [T0, T0 + MINUTE, T0 + MINUTE, T0 + 2 * MINUTE].entries()) {
        events.push(
          await store.recordActivity({
            account_id: account.id,
            at,
            kind: index === 0 ? 'signin' : 'sudo',
            detail: { method: 'bip322', index, tags: ['a', 'b'], gone: null, ok: true },
          }),
        );
      }
      await store.recordActivity({ account_id: other.id, at: T0, kind: 'signin', detail: {} });
      expect(events[0]).toMatchObject({
        account_id: account.id,
        at: T0,
        kind: 'signin',
        detail: { method: 'bip322', index: 0, tags: ['a', 'b'], gone: null, ok: true },
      });
      expect(events[0]?.id).toMatch(/^[0-9a-f]{32}$/);

      const sameMinute = [events[1], events[2]].sort((a, b) => (a!.id < b!.id ? 1 : -1));
      const newestFirst = [events[3], ...sameMinute, events[0]];
      expect(await store.listActivity(account.id, { limit: 10 })).toEqual(newestFirst);
      const first = await store.listActivity(account.id, { limit: 2 });
      expect(first).toEqual(newestFirst.slice(0, 2));
      const last = first.at(-1)!;
      expect(await store.listActivity(account.id, { limit: 10, before: { at: last.at, id: last.id } })).toEqual(newestFirst.slice(2));
      expect(await store.listActivity(other.id, { limit: 10 })).toHaveLength(1);
    });
  });

  describe('family statistics', () => {
    it('counts canonical accounts, live sessions, multi-account rosters and 24-hour attestation calls', async () => {
      const a = await btcAccount();
      const b = await btcAccount();
      const c = await emailAccount('c@example.com');
      const d = await emailAccount('d@example.com');
      await mergeEverything(store, d.id, c.id, T0);
      await store.insertSession(sessionFor(a.id, 'two'));
      await store.insertSession(sessionFor(b.id, 'two'));
      await store.insertSession(sessionFor(a.id, 'one'));
      const revoked = await store.insertSession(sessionFor(b.id, 'revoked-pair'));
      await store.insertSession(sessionFor(c.id, 'revoked-pair'));
      await store.revokeSession(revoked.jti, T0);
      await store.insertSession(sessionFor(c.id, 'expired-pair', { created_at: T0 - 31 * DAY }));
      await store.insertSession(sessionFor(a.id, 'expired-pair'));
      await store.insertSession(sessionFor(c.id, null));

      const now = T0 + HOUR;
      await store.recordAttestEvent('check', now - 25 * HOUR);
      await store.recordAttestEvent('check', now - 23 * HOUR);
      await store.recordAttestEvent('check', now);
      await store.recordAttestEvent('verify', now - MINUTE);

      expect(await store.familyStats(now)).toEqual({
        accounts: { total: 3, btc: 2, federated: 1 },
        sessions: { active: 6 },
        rosters: { multi_account: 1 },
        attest: { checks_24h: 2, verifies_24h: 1 },
      });
    });
  });

  describe('the OpenID provider', () => {
    it('keeps signing keys newest first and retires each once', async () => {
      await store.insertOidcKey({ kid: 'k1', alg: 'RS256', private_jwk: '{"kty":"RSA"}', created_at: T0 });
      await store.insertOidcKey({ kid: 'k2', alg: 'RS256', private_jwk: '{"kty":"RSA"}', created_at: T0 + MINUTE });
      expect(await store.insertOidcKey({ kid: 'k2', alg: 'ES256', private_jwk: '{}', created_at: T0 })).toBe(false);
      expect((await store.listOidcKeys()).map((key) => key.kid).slice(0, 2)).toEqual(['k2', 'k1']);
      expect(await store.retireOidcKey('k1', T0 + HOUR)).toBe(true);
      expect(await store.retireOidcKey('k1', T0 + 2 * HOUR)).toBe(false);
      expect((await store.listOidcKeys()).find((key) => key.kid === 'k1')?.retired_at).toBe(T0 + HOUR);
    });

    it('registers clients per owner, updates and deletes them with their consents and grants', async () => {
      const owner = await store.createAccountWithIdentity({
        account: { kind: 'federated', created_at: T0 },
        identity: { kind: 'email', value: 'oidc-owner@example.com', verified: true, created_at: T0 },
      });
      const connectApp = await store.createConnectApp({
        owner_account_id: owner.account.id,
        name: 'App',
        key_hash: 'd'.repeat(64),
        created_at: T0,
      });
      const app1 = connectApp.id;
      const base = { metadata: '{"client_name":"A"}', first_party: false, created_at: T0, updated_at: T0 };
      expect(await store.insertOidcClient({ ...base, client_id: 'oc_op', owner_app_id: null })).toBe(true);
      expect(await store.insertOidcClient({ ...base, client_id: 'oc_app', owner_app_id: app1, created_at: T0 + 1 })).toBe(true);
      expect(await store.insertOidcClient({ ...base, client_id: 'oc_app', owner_app_id: null })).toBe(false);
      expect((await store.listOidcClients()).map((client) => client.client_id)).toEqual(['oc_op', 'oc_app']);
      expect((await store.listOidcClients(null)).map((client) => client.client_id)).toEqual(['oc_op']);
      expect((await store.listOidcClients(app1)).map((client) => client.client_id)).toEqual(['oc_app']);
      expect(await store.updateOidcClient('oc_app', { metadata: '{"client_name":"B"}', first_party: true }, T0 + HOUR)).toBe(true);
      expect(await store.findOidcClient('oc_app')).toMatchObject({
        metadata: '{"client_name":"B"}',
        first_party: true,
        updated_at: T0 + HOUR,
      });
      expect(await store.updateOidcClient('nobody', { metadata: '{}' }, T0)).toBe(false);

      const model = { payload: '{}', uid: null, user_code: null, expires_at: null };
      await store.putOidcModel('Grant', 'g1', { ...model, grant_id: null });
      await store.putOidcModel('RefreshToken', 'rt1', { ...model, grant_id: 'g1' });
      await store.putOidcConsent({ account_id: 'a'.repeat(32), client_id: 'oc_app', grant_id: 'g1', created_at: T0, updated_at: T0 });
      expect(await store.deleteOidcClient('oc_app', T0)).toBe(true);
      expect(await store.deleteOidcClient('oc_app', T0)).toBe(false);
      expect(await store.findOidcModel('RefreshToken', 'rt1', T0)).toBeNull();
      expect(await store.findOidcModel('Grant', 'g1', T0)).toBeNull();
      expect(await store.findOidcConsent('a'.repeat(32), 'oc_app')).toBeNull();

      // A client whose Connect app is deleted is gone at once, and the purge removes its row.
      expect(await store.insertOidcClient({ ...base, client_id: 'oc_orphan', owner_app_id: app1 })).toBe(true);
      expect(await store.deleteConnectApp(app1, owner.account.id)).toBe(true);
      expect(await store.findOidcClient('oc_orphan')).toBeNull();
      expect((await store.listOidcClients()).map((client) => client.client_id)).toEqual(['oc_op']);
      expect(await store.purgeOrphanOidcClients(T0)).toBe(1);
      expect(await store.purgeOrphanOidcClients(T0)).toBe(0);
    });

    it('registers APIs once per URI, with their scopes, and deletes them', async () => {
      const api = {
        uri: 'https://api.example/',
        name: 'Invoices',
        scopes: ['read:invoices', 'write:invoices'],
        alg: 'ES256',
        access_token_seconds: 600,
        created_at: T0,
      };
      expect(await store.insertOidcResource(api)).toBe(true);
      expect(await store.insertOidcResource({ ...api, name: 'Again' })).toBe(false);
      expect(await store.insertOidcResource({ ...api, uri: 'urn:example:ledger', scopes: [], created_at: T0 + 1 })).toBe(true);
      expect(await store.findOidcResource('https://api.example/')).toEqual(api);
      expect(await store.findOidcResource('https://api.example')).toBeNull();
      expect((await store.listOidcResources()).map((resource) => resource.uri)).toEqual(['https://api.example/', 'urn:example:ledger']);
      expect(await store.deleteOidcResource('urn:example:ledger')).toBe(true);
      expect(await store.deleteOidcResource('urn:example:ledger')).toBe(false);
      expect((await store.listOidcResources()).map((resource) => resource.uri)).toEqual(['https://api.example/']);
    });

    it('stores the provider library objects: by id, uid and user code, expiring, consumed once, and by grant per model', async () => {
      const at = T0 + DAY;
      await store.putOidcModel('Session', 's1', {
        payload: '{"v":1}',
        grant_id: null,
        uid: 'u1',
        user_code: null,
        expires_at: at + MINUTE,
      });
      await store.putOidcModel('Session', 's1', {
        payload: '{"v":2}',
        grant_id: null,
        uid: 'u1',
        user_code: null,
        expires_at: at + MINUTE,
      });
      expect(await store.findOidcModel('Session', 's1', at)).toEqual({ payload: '{"v":2}', consumed_at: null });
      expect(await store.findOidcModelByUid('Session', 'u1', at)).toEqual({ payload: '{"v":2}', consumed_at: null });
      expect(await store.findOidcModel('Session', 's1', at + MINUTE)).toBeNull();
      await store.putOidcModel('DeviceCode', 'd1', { payload: '{}', grant_id: null, uid: null, user_code: 'WXYZ', expires_at: null });
      expect(await store.findOidcModelByUserCode('DeviceCode', 'WXYZ', at)).not.toBeNull();
      await store.putOidcModel('AuthorizationCode', 'c1', {
        payload: '{}',
        grant_id: 'g2',
        uid: null,
        user_code: null,
        expires_at: at + MINUTE,
      });
      // Of racing uses, exactly one is the first; an unknown object is used by none.
      const uses = await Promise.all([at, at + 1, at + 2].map((when) => store.consumeOidcModel('AuthorizationCode', 'c1', when)));
      expect(uses.filter((first) => first)).toEqual([true]);
      expect(await store.consumeOidcModel('AuthorizationCode', 'c1', at + 3)).toBe(false);
      expect(await store.consumeOidcModel('AuthorizationCode', 'nowhere', at)).toBe(false);
      expect((await store.findOidcModel('AuthorizationCode', 'c1', at))?.consumed_at).toBe(at + uses.indexOf(true));
      // A claim is stored once until it expires; then it may be claimed again.
      const claim = (expiresAt: number) => ({ payload: '{}', grant_id: null, uid: null, user_code: null, expires_at: expiresAt });
      const claims = await Promise.all([1, 2, 3].map(() => store.claimOidcModel('ReplayDetection', 'r1', claim(at + MINUTE), at)));
      expect(claims.filter((first) => first)).toEqual([true]);
      expect(await store.claimOidcModel('ReplayDetection', 'r1', claim(at + 2 * MINUTE), at + MINUTE - 1)).toBe(false);
      expect(await store.claimOidcModel('ReplayDetection', 'r1', claim(at + 2 * MINUTE), at + MINUTE)).toBe(true);
      expect(await store.findOidcModel('ReplayDetection', 'r1', at + MINUTE + 1)).not.toBeNull();
      await store.putOidcModel('AccessToken', 't1', { payload: '{}', grant_id: 'g2', uid: null, user_code: null, expires_at: null });
      await store.deleteOidcGrant('g2', 'AccessToken');
      expect(await store.findOidcModel('AccessToken', 't1', at)).toBeNull();
      expect(await store.findOidcModel('AuthorizationCode', 'c1', at)).not.toBeNull();
      await store.deleteOidcGrant('g2');
      expect(await store.findOidcModel('AuthorizationCode', 'c1', at)).toBeNull();
      await store.deleteOidcModel('Session', 's1');
      expect(await store.findOidcModelByUid('Session', 'u1', at)).toBeNull();
    });

    it('remembers one consent per account and client, newest first, and withdraws it with its grant', async () => {
      const account = 'b'.repeat(32);
      await store.putOidcConsent({ account_id: account, client_id: 'c1', grant_id: 'g1', created_at: T0, updated_at: T0 });
      await store.putOidcConsent({ account_id: account, client_id: 'c2', grant_id: 'g2', created_at: T0, updated_at: T0 + MINUTE });
      await store.putOidcConsent({ account_id: account, client_id: 'c1', grant_id: 'g3', created_at: T0, updated_at: T0 + HOUR });
      expect((await store.listOidcConsents(account)).map((consent) => [consent.client_id, consent.grant_id])).toEqual([
        ['c1', 'g3'],
        ['c2', 'g2'],
      ]);
      await store.putOidcModel('Grant', 'g3', { payload: '{}', grant_id: null, uid: null, user_code: null, expires_at: null });
      await store.putOidcModel('AccessToken', 'a3', { payload: '{}', grant_id: 'g3', uid: null, user_code: null, expires_at: null });
      expect(await store.deleteOidcConsent(account, 'c1', T0)).toBe(true);
      expect(await store.deleteOidcConsent(account, 'c1', T0)).toBe(false);
      expect(await store.findOidcModel('AccessToken', 'a3', T0)).toBeNull();
      expect(await store.findOidcModel('Grant', 'g3', T0)).toBeNull();
      expect(await store.findOidcConsent(account, 'c1')).toBeNull();
    });

    it('lists JWT access tokens ended early in the revocation feed: one by jti, a cut-off per grant or client, each until it lapses', async () => {
      const account = 'c'.repeat(32);
      const ended = async (now: number) =>
        (await store.listRevocations(null, now, 100))
          .filter((row) => row.access !== undefined)
          .map((row) => [row.access?.kind, row.access?.subject, row.access?.iat_before, row.expires_at]);
      await store.revokeOidcAccessToken('token-1', T0 + 10 * MINUTE, T0);
      // The same token again changes nothing.
      await store.revokeOidcAccessToken('token-1', T0 + 10 * MINUTE, T0 + 1);
      await store.putOidcModel('AccessToken', 'a1', { payload: '{}', grant_id: 'g1', uid: null, user_code: null, expires_at: null });
      await store.endOidcGrantAccessTokens('g1', T0 + 2 * SECOND);
      expect(await store.findOidcModel('AccessToken', 'a1', T0)).toBeNull();
      await store.putOidcConsent({ account_id: account, client_id: 'c2', grant_id: 'g2', created_at: T0, updated_at: T0 });
      expect(await store.deleteOidcConsent(account, 'c2', T0 + 3 * SECOND)).toBe(true);
      await store.insertOidcClient({
        client_id: 'oc_gone',
        metadata: '{}',
        owner_app_id: null,
        first_party: false,
        created_at: T0,
        updated_at: T0,
      });
      expect(await store.deleteOidcClient('oc_gone', T0 + 4 * SECOND)).toBe(true);
      // The operator's hold ends the tokens of the account's grants, which stay.
      const held = await btcAccount();
      await store.putOidcConsent({ account_id: `did:oc:${held.id}`, client_id: 'c3', grant_id: 'g3', created_at: T0, updated_at: T0 });
      await store.setAccountDisabled(held.id, true, T0 + 5 * SECOND);
      const seconds = (ms: number) => Math.floor(ms / 1000);
      expect(await ended(T0 + 6 * SECOND)).toEqual([
        ['access_token', 'token-1', null, T0 + 10 * MINUTE],
        ['grant', grantReference('g1'), seconds(T0 + 2 * SECOND), T0 + 2 * SECOND + DAY],
        ['grant', grantReference('g2'), seconds(T0 + 3 * SECOND), T0 + 3 * SECOND + DAY],
        ['client', 'oc_gone', seconds(T0 + 4 * SECOND), T0 + 4 * SECOND + DAY],
        ['grant', grantReference('g3'), seconds(T0 + 5 * SECOND), T0 + 5 * SECOND + DAY],
      ]);
      expect(await store.findOidcConsent(`did:oc:${held.id}`, 'c3')).not.toBeNull();
      // Paged by the feed's cursor (revocation time, then the entry's id), and gone once lapsed, then purged.
      const [first] = await store.listRevocations(null, T0 + 6 * SECOND, 1);
      expect(first?.access?.kind).toBe('access_token');
      expect((await store.listRevocations({ at: first!.revoked_at, jti: first!.jti }, T0 + 6 * SECOND, 100)).length).toBe(4);
      expect((await ended(T0 + 11 * MINUTE)).map((row) => row[0])).toEqual(['grant', 'grant', 'client', 'grant']);
      await store.purgeExpired(T0 + 2 * DAY);
      expect(await ended(T0)).toEqual([]);
    });
  });

  describe('back-channel logout', () => {
    function link(session: SessionRecord, clientId: string, sid: string, backchannel = true) {
      return store.linkOidcSession({
        session_jti: session.jti,
        client_id: clientId,
        account_id: session.account_id,
        sid,
        op_session_uid: `uid-${sid}`,
        backchannel,
        created_at: T0 + 1,
      });
    }

    async function logouts(clientId: string) {
      return (await store.listOidcLogouts(clientId, 10)).map((logout) => [logout.account_id, logout.sid, logout.state]);
    }

    it('links only a live session, and revoking it queues one logout per client with a back-channel URI and ends its provider sessions', async () => {
      const account = await btcAccount();
      const session = await store.insertSession(sessionFor(account.id, 'roster-bcl'));
      const model = { payload: '{}', grant_id: null, user_code: null, expires_at: null };
      await store.putOidcModel('Session', 'op-1', { ...model, uid: 'uid-s1' });
      await store.putOidcModel('Session', 'op-other', { ...model, uid: 'uid-other' });
      expect(await link(session, 'c1', 's1')).toBe(true);
      expect(await link(session, 'c2', 's2', false)).toBe(true);
      expect((await store.listOidcSessionLinks(session.jti)).map((one) => [one.client_id, one.sid, one.expires_at])).toEqual([
        ['c1', 's1', session.expires_at],
        ['c2', 's2', session.expires_at],
      ]);
      // Another account's link to this session is refused.
      expect(await store.linkOidcSession({ ...(await store.listOidcSessionLinks(session.jti))[0]!, account_id: 'f'.repeat(32) })).toBe(
        false,
      );

      expect(await store.revokeSession(session.jti, T0 + 2)).toBe(true);
      expect(await logouts('c1')).toEqual([[account.id, 's1', 'pending']]);
      expect(await logouts('c2')).toEqual([]);
      expect(await store.listOidcSessionLinks(session.jti)).toEqual([]);
      expect(await store.findOidcModel('Session', 'op-1', T0)).toBeNull();
      expect(await store.findOidcModel('Session', 'op-other', T0)).not.toBeNull();
      // A revoked session takes no new link, and a second revocation queues nothing.
      expect(await link(session, 'c3', 's3')).toBe(false);
      expect(await store.revokeSession(session.jti, T0 + 3)).toBe(false);
      expect(await logouts('c1')).toHaveLength(1);
    });

    it('ends a provider session superseded for a client once no link names it, and keeps one another link still names', async () => {
      const account = await btcAccount();
      const session = await store.insertSession(sessionFor(account.id, 'roster-superseded'));
      const model = { payload: '{}', grant_id: null, user_code: null, expires_at: null };
      await store.putOidcModel('Session', 'op-old', { ...model, uid: 'uid-old' });
      await store.putOidcModel('Session', 'op-new', { ...model, uid: 'uid-new' });
      const linkThrough = (clientId: string, uid: string) =>
        store.linkOidcSession({
          session_jti: session.jti,
          client_id: clientId,
          account_id: account.id,
          sid: `${clientId}-${uid}`,
          op_session_uid: uid,
          backchannel: true,
          created_at: T0 + 1,
        });
      expect(await linkThrough('c1', 'uid-old')).toBe(true);
      expect(await linkThrough('c2', 'uid-old')).toBe(true);
      // c1 signs in again through a newer provider session: the old one still holds c2.
      expect(await linkThrough('c1', 'uid-new')).toBe(true);
      expect(await store.findOidcModel('Session', 'op-old', T0)).not.toBeNull();
      // c2 too: nothing names the old one any more, and it ends; no logout is queued for either.
      expect(await linkThrough('c2', 'uid-new')).toBe(true);
      expect(await store.findOidcModel('Session', 'op-old', T0)).toBeNull();
      expect(await store.findOidcModel('Session', 'op-new', T0)).not.toBeNull();
      expect([...(await logouts('c1')), ...(await logouts('c2'))]).toEqual([]);
    });

    it('never leaves a link on a revoked session when a sign-in races the sign-out', async () => {
      const account = await btcAccount();
      for (let round = 0; round < 12; round++) {
        const session = await store.insertSession(sessionFor(account.id, `roster-race-${round}`));
        const [linked] = await Promise.all([link(session, 'c-race', `race-${round}`), store.revokeSession(session.jti, T0 + 2)]);
        expect(await store.listOidcSessionLinks(session.jti)).toEqual([]);
        const queued = (await store.listOidcLogouts('c-race', 50)).some((logout) => logout.sid === `race-${round}`);
        // A link that made it in was logged out by the revocation; one that did not was refused.
        expect(queued).toBe(linked);
      }
    });

    it('queues one logout per (client, sid), however often it is asked for', async () => {
      expect(await store.enqueueOidcLogout({ client_id: 'c1', account_id: 'a'.repeat(32), sid: 's1' }, T0)).toBe(true);
      expect(await store.enqueueOidcLogout({ client_id: 'c1', account_id: 'a'.repeat(32), sid: 's1' }, T0 + 1)).toBe(false);
      expect(await store.enqueueOidcLogout({ client_id: 'c1', account_id: 'a'.repeat(32), sid: 's2' }, T0 + 1)).toBe(true);
      expect(await logouts('c1')).toHaveLength(2);
    });

    it('keeps the links of an account that signs in again in the same browser, and queues every client of a deleted account', async () => {
      const account = await btcAccount();
      const first = await store.insertSession(sessionFor(account.id, 'roster-again', { created_at: T0 }));
      expect(await link(first, 'c1', 's1')).toBe(true);
      const again = await store.insertSession(sessionFor(account.id, 'roster-again', { created_at: T0 + MINUTE }));
      expect(await logouts('c1')).toEqual([]);
      expect((await store.listOidcSessionLinks(again.jti)).map((one) => one.client_id)).toEqual(['c1']);

      const elsewhere = await store.insertSession(sessionFor(account.id, 'roster-other', { created_at: T0 + MINUTE }));
      expect(await link(elsewhere, 'c2', 's2')).toBe(true);
      expect(await store.deleteAccount(account.id, T0 + HOUR)).not.toBeNull();
      expect(await logouts('c1')).toEqual([[account.id, 's1', 'pending']]);
      expect(await logouts('c2')).toEqual([[account.id, 's2', 'pending']]);
    });

    it('queues the logouts of a merged-away account in the merge', async () => {
      const into = await btcAccount();
      const from = await btcAccount();
      const fromSession = await store.insertSession(sessionFor(from.id, 'roster-from'));
      const intoSession = await store.insertSession(sessionFor(into.id, 'roster-into'));
      expect(await link(fromSession, 'c1', 's-from')).toBe(true);
      expect(await link(intoSession, 'c1', 's-into')).toBe(true);
      await mergeEverything(store, from.id, into.id, T0 + HOUR);
      expect(await logouts('c1')).toEqual([[from.id, 's-from', 'pending']]);
    });

    it('claims each due logout for one worker at a time and records attempts', async () => {
      await store.enqueueOidcLogout({ client_id: 'c1', account_id: 'a'.repeat(32), sid: 's1' }, T0);
      const [first, second] = await Promise.all([
        store.claimOidcLogouts('worker-a', T0, 30 * SECOND, 10),
        store.claimOidcLogouts('worker-b', T0, 30 * SECOND, 10),
      ]);
      expect(first.length + second.length).toBe(1);
      const claimed = [...first, ...second][0]!;
      const owner = first.length === 1 ? 'worker-a' : 'worker-b';
      expect(
        await store.finishOidcLogoutAttempt(claimed.id, 'worker-c', { at: T0, status: 500, error: 'http_500', outcome: 'retry' }),
      ).toBe(false);
      expect(
        await store.finishOidcLogoutAttempt(claimed.id, owner, {
          at: T0 + 1,
          status: 500,
          error: 'http_500',
          outcome: 'retry',
          next_attempt_at: T0 + MINUTE,
        }),
      ).toBe(true);
      expect(await store.claimOidcLogouts('worker-a', T0 + SECOND, 30 * SECOND, 10)).toEqual([]);
      const [again] = await store.claimOidcLogouts('worker-a', T0 + MINUTE, 30 * SECOND, 10);
      expect(again?.attempts).toBe(1);
      expect(again?.last_error).toBe('http_500');
      // A lease that ran out is taken over.
      const [taken] = await store.claimOidcLogouts('worker-b', T0 + MINUTE + 31 * SECOND, 30 * SECOND, 10);
      expect(taken?.id).toBe(claimed.id);
      expect(
        await store.finishOidcLogoutAttempt(claimed.id, 'worker-b', {
          at: T0 + 2 * MINUTE,
          status: 200,
          error: null,
          outcome: 'delivered',
        }),
      ).toBe(true);
      expect((await store.listOidcLogouts('c1', 10))[0]).toMatchObject({ state: 'delivered', attempts: 2, delivered_at: T0 + 2 * MINUTE });
    });

    it('purges the links of expired host sessions and finished logouts after 30 days', async () => {
      const account = await btcAccount();
      const session = await store.insertSession(sessionFor(account.id, 'roster-purge'));
      expect(await link(session, 'c1', 's1')).toBe(true);
      await store.enqueueOidcLogout({ client_id: 'c9', account_id: account.id, sid: 'done' }, T0);
      await store.enqueueOidcLogout({ client_id: 'c9', account_id: account.id, sid: 'waiting' }, T0);
      const [done] = (await store.claimOidcLogouts('w', T0, SECOND, 10)).filter((one) => one.sid === 'done');
      await store.finishOidcLogoutAttempt(done!.id, 'w', { at: T0, status: 200, error: null, outcome: 'delivered' });
      const later = Math.max(session.expires_at, T0 + 31 * DAY) + 1;
      expect((await store.purgeExpired(later)).oidc_logouts).toBe(1);
      expect(await store.listOidcSessionLinks(session.jti)).toEqual([]);
      expect((await store.listOidcLogouts('c9', 10)).map((one) => one.sid)).toEqual(['waiting']);
    });
  });

  describe('maintenance', () => {
    it('moves a phone hand-off from one state to the next once, only while it is live', async () => {
      const handoff = handoffFor('h1');
      await store.putHandoff(handoff);
      const stored = { ...handoff, state: 'pending', address: null };
      expect(await store.findHandoff({ id: 'h1' })).toEqual(stored);
      expect(await store.findHandoff({ keyHash: handoff.key_hash })).toEqual(stored);
      expect(await store.findHandoff({ keyHash: handoff.token_hash })).toBeNull();
      expect(await store.findHandoff({ id: 'h2' })).toBeNull();
      // The key hash is unique: a second row with it is refused by the schema.
      await expect(store.putHandoff({ ...handoffFor('h2'), key_hash: handoff.key_hash })).rejects.toThrow();
      // Not past expiry, and only from the state named.
      expect(await store.moveHandoff('h1', { from: 'pending', to: 'approved', liveAfter: handoff.expires_at, address: 'bc1q' })).toBe(
        false,
      );
      expect(await store.moveHandoff('h1', { from: 'approved', to: 'claimed', liveAfter: T0 })).toBe(false);
      const racing = await Promise.all(
        [0, 1, 2].map(() => store.moveHandoff('h1', { from: 'pending', to: 'approved', liveAfter: T0, address: 'bc1qproven' })),
      );
      expect(racing.filter(Boolean)).toHaveLength(1);
      expect(await store.findHandoff({ id: 'h1' })).toMatchObject({ state: 'approved', address: 'bc1qproven' });
      const claims = await Promise.all([0, 1].map(() => store.moveHandoff('h1', { from: 'approved', to: 'claimed', liveAfter: T0 })));
      expect(claims.sort()).toEqual([false, true]);
      expect(await store.findHandoff({ id: 'h1' })).toMatchObject({ state: 'claimed', address: 'bc1qproven' });
    });

    it('purges old session rows, used nonces, dead e-mail codes and old attestation events', async () => {
      const account = await btcAccount();
      const now = T0 + 60 * DAY;
      const retention = 7 * DAY;
      const live = await store.insertSession(sessionFor(account.id, 'live', { created_at: now - DAY }));
      const recentlyExpired = await store.insertSession(sessionFor(account.id, 'a', { created_at: now - 32 * DAY }));
      await store.insertSession(sessionFor(account.id, 'b', { created_at: now - 40 * DAY }));
      const recentlyRevoked = await store.insertSession(sessionFor(account.id, 'c', { created_at: now - 2 * DAY }));
      await store.revokeSession(recentlyRevoked.jti, now - DAY);
      const longRevoked = await store.insertSession(sessionFor(account.id, 'd', { created_at: now - 20 * DAY }));
      await store.revokeSession(longRevoked.jti, now - 10 * DAY);

      await store.consumeNonce('old', now - MINUTE, now - 5 * MINUTE);
      await store.consumeNonce('fresh', now + MINUTE, now);
      await store.putEmailCode({
        email: 'old@example.com',
        code_hash: 'h',
        token: 't',
        expires_at: now - 1,
        created_at: now - 11 * MINUTE,
      });
      await store.putEmailCode({ email: 'new@example.com', code_hash: 'h', token: 't', expires_at: now + MINUTE, created_at: now });
      await store.recordAttestEvent('check', now - 49 * HOUR);
      await store.recordAttestEvent('verify', now - 47 * HOUR);
      await store.recordActivity({ account_id: account.id, at: now - 31 * DAY, kind: 'signin', detail: {} });
      const keptEvent = await store.recordActivity({ account_id: account.id, at: now - 29 * DAY, kind: 'signin', detail: {} });
      // Finished webhook deliveries leave the log after 30 days; a pending one stays until it finishes.
      const delivery = (id: string, state: string, at: number) => ({
        id,
        app_id: 'app',
        event_type: 'account.deleted',
        payload: '{}',
        created_at: at,
        state,
        attempts: 1,
        next_attempt_at: at,
        lease_owner: null,
        lease_until: null,
        last_attempt_at: at,
        last_status: null,
        last_error: null,
        delivered_at: null,
      });
      await raw.db
        .insertInto('webhook_deliveries')
        .values([
          delivery('wh_old', 'delivered', now - 31 * DAY),
          delivery('wh_old_pending', 'pending', now - 31 * DAY),
          delivery('wh_new', 'failed', now - 29 * DAY),
        ])
        .execute();
      const model = { payload: '{}', grant_id: null, uid: null, user_code: null };
      await store.putOidcModel('AccessToken', 'at_old', { ...model, expires_at: now - 1 });
      await store.putOidcModel('AccessToken', 'at_live', { ...model, expires_at: now + MINUTE });
      await store.putOidcModel('Grant', 'kept', { ...model, expires_at: null });

      // A hand-off is purged a minute past its expiry (an approved one may be claimed a little after it).
      await store.putHandoff(handoffFor('h_old', { expires_at: now - MINUTE }));
      await store.putHandoff(handoffFor('h_recent', { expires_at: now - 30 * SECOND }));
      // The audit log keeps its retention, then drops the row whole.
      const auditEntry = { actor: 'cli', via: 'cli', action: 'account.view', target: null, reason: null, network: null, detail: null };
      await store.appendAudit({ ...auditEntry, id: 'a'.repeat(32), at: now - 40 * DAY });
      await store.appendAudit({ ...auditEntry, id: 'b'.repeat(32), at: now - 20 * DAY });
      // The console's daily counts are kept 400 days.
      const today = Math.floor(now / DAY);
      await store.addDailyCounts([
        { day: today - 401, metric: 'signin', label: 'bip322', count: 3 },
        { day: today - 399, metric: 'signin', label: 'bip322', count: 2 },
      ]);
      const counts = await store.purgeExpired(now, {
        sessionRetentionMs: retention,
        activityRetentionMs: 30 * DAY,
        auditRetentionMs: 30 * DAY,
      });
      // The long-revoked row stays: its token has not expired, and the revocation feed lists it.
      expect(counts).toEqual({
        sessions: 1,
        nonces: 1,
        email_codes: 1,
        handoffs: 1,
        attest_events: 1,
        activity: 1,
        webhook_deliveries: 1,
        oidc_logouts: 0,
        oidc_models: 1,
        audit_log: 1,
        daily_counts: 1,
      });
      expect(await store.listDailyCounts(today - 500)).toEqual([{ day: today - 399, metric: 'signin', label: 'bip322', count: 2 }]);
      expect((await store.listAudit({ limit: 10 })).map((entry) => entry.id)).toEqual(['b'.repeat(32)]);
      expect(await store.findOidcModel('AccessToken', 'at_live', now)).not.toBeNull();
      expect(await store.findOidcModel('Grant', 'kept', now)).not.toBeNull();
      expect((await raw.db.selectFrom('webhook_deliveries').select('id').orderBy('id').execute()).map((row) => row.id)).toEqual([
        'wh_new',
        'wh_old_pending',
      ]);
      expect(await store.listActivity(account.id, { limit: 10 })).toEqual([keptEvent]);
      const remaining = await raw.db.selectFrom('sessions').select('jti').orderBy('jti').execute();
      expect(remaining.map((row) => row.jti).sort()).toEqual([live.jti, recentlyExpired.jti, recentlyRevoked.jti, longRevoked.jti].sort());
      expect(await store.consumeNonce('fresh', now + MINUTE, now)).toBe(false);
      expect(await store.findEmailCode('old@example.com')).toBeNull();
      expect(await store.findHandoff({ id: 'h_old' })).toBeNull();
      expect(await store.findHandoff({ id: 'h_recent' })).not.toBeNull();
      expect(await store.findEmailCode('new@example.com')).not.toBeNull();
      expect((await store.familyStats(now)).attest.verifies_24h).toBe(0);
      expect(await store.purgeExpired(now, { sessionRetentionMs: retention })).toEqual({
        sessions: 0,
        nonces: 0,
        email_codes: 0,
        handoffs: 0,
        attest_events: 0,
        activity: 0,
        webhook_deliveries: 0,
        oidc_logouts: 0,
        oidc_models: 0,
        audit_log: 0,
        daily_counts: 0,
      });
      // Default retention (7 days) applies when none is given.
      expect((await store.purgeExpired(now + 40 * DAY)).sessions).toBe(4);
    });

    it('answers ping and closes idempotently', async () => {
      const other = await openStore(database.url, opening);
      expect(other.engine).toBe(engine);
      await other.ping();
      await other.close();
      await other.close();
      await expect(other.ping()).rejects.toThrow();
    });
  });
}

describe('database URLs', () => {
  it('parses the DATABASE_URL forms of docs/protocol.md §1', () => {
    expect(parseDatabaseUrl('sqlite:./data/oc.sqlite')).toEqual({ engine: 'sqlite', filename: './data/oc.sqlite' });
    expect(parseDatabaseUrl('sqlite::memory:')).toEqual({ engine: 'sqlite', filename: ':memory:' });
    expect(parseDatabaseUrl('sqlite:///var/lib/oc.sqlite')).toEqual({ engine: 'sqlite', filename: '/var/lib/oc.sqlite' });
    expect(parseDatabaseUrl('postgres://u:p@db:5432/oc?schema=tenant_1')).toEqual({
      engine: 'postgres',
      connectionString: 'postgres://u:p@db:5432/oc',
      schema: 'tenant_1',
    });
    expect(parseDatabaseUrl('postgresql://db/oc', { schema: 's' })).toMatchObject({ engine: 'postgres', schema: 's' });
    expect(() => parseDatabaseUrl('mysql://db/oc')).toThrow(/DATABASE_URL/);
    expect(() => parseDatabaseUrl('postgres://u:secret@db/oc?schema=bad-name')).toThrow(/schema/);
    // A password never reaches an error message.
    expect(() => parseDatabaseUrl('mysql://u:secret@db/oc')).toThrow(/u:\*\*\*@db/);
    expect(() => parseDatabaseUrl('sqlite:')).toThrow(/path/);
  });

  it('opens an in-memory SQLite store', async () => {
    const store = await openStore('sqlite::memory:');
    try {
      expect(await store.getOrCreateSetting('k', () => 'v')).toBe('v');
    } finally {
      await store.close();
    }
  });

  it('creates the SQLite file and its directory, with the pragmas of the brief', async () => {
    const database = await createTestDatabase('sqlite');
    try {
      const filename = (parseDatabaseUrl(database.url) as { filename: string }).filename;
      expect(existsSync(filename)).toBe(false);
      const opened = await openDatabase(database.url);
      try {
        expect(existsSync(filename)).toBe(true);
        const pragma = async (name: string) => {
          const result = await sql<Record<string, unknown>>`${sql.raw(`PRAGMA ${name}`)}`.execute(opened.db);
          return Object.values(result.rows[0]!)[0];
        };
        expect(await pragma('journal_mode')).toBe('wal');
        expect(await pragma('foreign_keys')).toBe(1);
        expect(await pragma('busy_timeout')).toBe(5000);
        expect(await pragma('synchronous')).toBe(1);
      } finally {
        await opened.close();
      }
    } finally {
      await database.cleanup();
    }
  });
});

for (const { engine, skipReason } of await testEngines()) {
  if (engine !== 'sqlite') {
    describe.skipIf(skipReason !== undefined)(`storage conformance on ${engine}`, () => storageConformance(engine));
    continue;
  }
  // SQLite once per library this Node can run (docs/operations.md "SQLite drivers").
  for (const { driver, skipReason: driverSkip } of sqliteDrivers()) {
    describe.skipIf(driverSkip !== undefined)(`storage conformance on sqlite (${driver})`, () => {
      it('opens through the driver under test', async () => {
        const database = await createTestDatabase('sqlite');
        try {
          const opened = await openDatabase(database.url, { sqliteDriver: driver });
          expect(opened.sqliteDriver).toBe(driver);
          await opened.close();
        } finally {
          await database.cleanup();
        }
      });
      storageConformance(engine, driver);
    });
  }
}
