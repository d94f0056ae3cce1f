/**
 * Operators, their API tokens and the audit log (docs/operations.md
 * "Operators and the audit log"), on every engine: the command line names
 * operators and mints tokens; every change and every read of one person's
 * data by the command line is audited; the admin API answers an operator's
 * token and, to anything else, exactly what a path no route serves; the
 * audit log refuses an UPDATE and keeps rows for its retention.
 */
import { CompiledQuery, sql } from 'kysely';
import { identityMatchesQuery } from '../src/features/admin/store.js';
import { credentialRecord } from './support/credential-record.js';
import { expect, it } from 'vitest';
import { runOperatorCommand, type OperatorIo } from '../src/cli/operator.js';
import { UsageError } from '../src/cli/usage.js';
import { newWallet } from './support/auth-client.js';
import { forEachEngine, useAuthSuite } from './support/auth-harness.js';
import { DAY } from './support/clock.js';

interface Captured extends OperatorIo {
  readonly lines: string[];
  readonly errors: string[];
}

function capture(answers: string[] = []): Captured {
  const io: Captured = {
    lines: [],
    errors: [],
    out: (line) => io.lines.push(line),
    err: (line) => io.errors.push(line),
    ask: async () => answers.shift() ?? null,
  };
  return io;
}

function operatorsSuite(engine: 'sqlite' | 'postgres'): void {
  const auth = useAuthSuite(engine);

  const run = (argv: string[], io: Captured = capture()) =>
    runOperatorCommand(argv, { store: auth.harness.store, io, now: auth.harness.clock.now, publicUrl: 'http://localhost:8787' });

  async function account(): Promise<{
    did: string;
    address: string;
    wallet: ReturnType<typeof newWallet>;
    client: ReturnType<typeof auth.harness.browser>;
  }> {
    const wallet = newWallet();
    const client = auth.harness.browser(auth.app);
    const reply = await client.signIn(wallet);
    expect(reply.status).toBe(200);
    return { did: reply.body.account.did_oc, address: wallet.address, wallet, client };
  }

  /** Names a new account an operator and mints it a token with `scopes`; the token. */
  async function operatorToken(scopes: string[] = ['read']): Promise<{ did: string; token: string; tokenId: string }> {
    const { did, address } = await account();
    expect(await run(['operators', 'add', address])).toBe(0);
    const io = capture();
    const args = ['operators', 'tokens', 'mint', '--operator', did, '--name', 'nightly export'];
    for (const scope of scopes) args.push('--scope', scope);
    expect(await run(args, io)).toBe(0);
    const token = io.lines[0] ?? '';
    expect(token).toMatch(/^oc_op_[A-Za-z0-9_-]{43}$/);
    const tokenId = /token ([0-9a-f]{32})/.exec(io.errors[0] ?? '')?.[1] ?? '';
    return { did, token, tokenId };
  }

  /** An admin request with an operator's token, and a JSON body when one is given. */
  const send = (token: string, method: 'GET' | 'POST', url: string, body?: unknown) =>
    auth.app.inject({
      method,
      url,
      headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      ...(body === undefined ? {} : { payload: JSON.stringify(body) }),
    });

  const audit = (token: string | undefined, query = '') =>
    auth.app.inject({
      method: 'GET',
      url: `/api/admin/audit${query}`,
      headers: token === undefined ? {} : { authorization: `Bearer ${token}` },
    });

  /**
   * What a path no route serves answers, to compare the refusals with: its
   * status, its body (which names the path asked for) and its headers' names.
   */
  async function unknownPath(query = ''): Promise<{ status: number; body: unknown; headers: string[] }> {
    const reply = await auth.app.inject({ method: 'GET', url: `/api/admin/nothing${query}` });
    const body = reply.json() as { detail: string };
    return {
      status: reply.statusCode,
      body: { ...body, detail: body.detail.replace('/api/admin/nothing', '/api/admin/audit') },
      headers: Object.keys(reply.headers).sort(),
    };
  }

  it('names operators from the command line by address, e-mail or did, lists and removes them, and audits each change', async () => {
    const { did, address } = await account();
    let io = capture();
    expect(await run(['operators', 'list'], io)).toBe(0);
    expect(io.lines).toEqual(['no operators; name one with: oc-host operators add <did|email|address>']);
    io = capture();
    expect(await run(['operators', 'add', address], io)).toBe(0);
    expect(io.lines).toEqual([`${did} is an operator now`]);
    io = capture();
    expect(await run(['operators', 'add', did], io)).toBe(0);
    expect(io.lines).toEqual([`${did} already was an operator`]);
    io = capture();
    expect(await run(['operators', 'list', '--json'], io)).toBe(0);
    expect(JSON.parse(io.lines[0] ?? '')).toEqual([{ did_oc: did, added_at: expect.any(String), added_by: 'cli' }]);
    io = capture();
    expect(await run(['operators', 'add', 'nobody@example.org'], io)).toBe(1);
    expect(io.errors).toEqual(['no account holds nobody@example.org']);

    io = capture(['no']);

    expect(await run(['operators', 'remove', did], io)).toBe(3);
    io = capture();
    expect(await run(['operators', 'remove', did, '--yes'], io)).toBe(0);
    io = capture();
    expect(await run(['operators', 'remove', did, '--yes'], io)).toBe(1);
    expect(io.errors).toEqual([`${did} is not an operator`]);

    io = capture();

    expect(await run(['operators', 'audit', '--target', did, '--jsonl'], io)).toBe(0);
    const entries = io.lines.map((line) => JSON.parse(line));
    expect(entries.map((entry) => [entry.action, entry.actor, entry.via, entry.target])).toEqual([
      ['operator.remove', 'cli', 'cli', did],
      ['operator.add', 'cli', 'cli', did],
    ]);
  });

  it('refuses a disabled account as an operator, and usage errors before anything changes', async () => {
    const { did } = await account();
    expect(await run(['accounts', 'disable', did, '--yes'])).toBe(0);
    const io = capture();
    expect(await run(['operators', 'add', did], io)).toBe(1);
    expect(io.errors[0]).toContain('only an active account can operate');
    await expect(run(['operators', 'tokens', 'mint', '--operator', did, '--name', 'x', '--scope', 'root'])).rejects.toThrow(UsageError);
    await expect(run(['operators', 'tokens', 'mint', '--operator', did, '--name', 'x', '--days', '400'])).rejects.toThrow(UsageError);
    await expect(run(['operators', 'list', '--yes'])).rejects.toThrow(UsageError);
    await expect(run(['operators', 'audit', '--since', 'yesterday'])).rejects.toThrow(UsageError);
    await expect(run(['operators', 'promote', did])).rejects.toThrow(UsageError);
    expect(await run(['operators', 'tokens', 'mint', '--operator', did, '--name', 'x'], capture())).toBe(1);
  });

  it('audits what the account commands change and every read of one person’s data', async () => {
    const { did } = await account();
    expect(await run(['accounts', 'show', did])).toBe(0);
    expect(await run(['activity', '--account', did])).toBe(0);
    expect(await run(['accounts', 'disable', did, '--yes'])).toBe(0);
    expect(await run(['accounts', 'enable', did])).toBe(0);
    expect(await run(['sessions', 'revoke', '--account', did, '--yes'])).toBe(0);
    expect(await run(['accounts', 'delete', did, '--yes'])).toBe(0);
    const io = capture();
    expect(await run(['operators', 'audit', '--target', did, '--jsonl'], io)).toBe(0);
    expect(io.lines.map((line) => JSON.parse(line).action).reverse()).toEqual([
      'account.view',
      'account.activity.view',
      'account.disable',
      'account.enable',
      'sessions.revoke',
      'account.delete',
    ]);
    const text = capture();
    expect(await run(['operators', 'audit', '--action', 'account.delete', '--limit', '1'], text)).toBe(0);
    expect(text.lines).toHaveLength(1);
    expect(text.lines[0]).toMatch(new RegExp(`^\\d{4}-\\d\\d-\\d\\dT.*cli\\s+account\\.delete\\s+${did}$`));
  });

  it('answers the audit log to an operator token with the read scope, paged newest or oldest first', async () => {
    const { did, token, tokenId } = await operatorToken();
    for (let n = 0; n < 3; n += 1) {
      auth.harness.clock.advance(1000);
      expect(await run(['accounts', 'show', did])).toBe(0);
    }
    const first = await audit(token, `?limit=2&action=account.view&target=${did}`);
    expect(first.statusCode, first.body).toBe(200);
    expect(first.headers['cache-control']).toBe('no-store');
    const page = first.json();
    expect(page.entries).toHaveLength(2);
    expect(page.entries[0]).toMatchObject({ actor: 'cli', via: 'cli', action: 'account.view', target: did, detail: null });
    expect(page.next).toMatch(/^\d+\.[0-9a-f]{32}$/);
    const second = (await audit(token, `?limit=2&action=account.view&target=${did}&before=${page.next}`)).json();
    expect(second.entries).toHaveLength(1);
    expect(second.next).toBeNull();
    // Oldest first, paged the same way: the same three, the other way round.
    const oldest = (await audit(token, `?limit=2&order=oldest&action=account.view&target=${did}`)).json();
    const rest = (await audit(token, `?limit=2&order=oldest&action=account.view&target=${did}&before=${oldest.next}`)).json();
    expect([...oldest.entries, ...rest.entries].map((entry: { id: string }) => entry.id)).toEqual(
      [...page.entries, ...second.entries].map((entry: { id: string }) => entry.id).reverse(),
    );
    expect(rest.next).toBeNull();
    expect((await audit(token, '?order=sideways')).statusCode).toBe(400);
    const all = (await audit(token, `?target=${did}`)).json();
    expect(all.entries.map((entry: { action: string }) => entry.action)).toEqual([
      'account.view',
      'account.view',
      'account.view',
      'token.mint',
      'operator.add',
    ]);
    expect(all.entries[3].detail).toMatchObject({ token_id: tokenId, name: 'nightly export', scopes: 'read' });
    const exported = await auth.app.inject({
      method: 'GET',
      url: '/api/admin/audit/export',
      headers: { authorization: `Bearer ${token}` },
    });
    expect(exported.statusCode).toBe(200);
    expect(exported.headers['content-type']).toBe('application/jsonl; charset=utf-8');
    const lines = exported.body
      .trimEnd()
      .split('\n')
      .map((line) => JSON.parse(line));
    const mine = lines.filter((line) => line.target === did).map((line) => line.action);
    expect(mine).toEqual(['operator.add', 'token.mint', 'account.view', 'account.view', 'account.view']);
    expect(Object.keys(lines[0]).sort()).toEqual(['action', 'actor', 'at', 'detail', 'id', 'network', 'reason', 'target', 'via']);
    const bad = await audit(token, '?limit=0');
    expect(bad.statusCode).toBe(400);
    expect(bad.json().error).toBe('bad_request');
  });

  it('answers every request without a valid operator token exactly as a path no route serves', async () => {
    const { did, token, tokenId } = await operatorToken();
    const writeOnly = await operatorToken(['write']);
    const expected = await unknownPath();
    expect(expected.status).toBe(404);
    const refused = async (presented: string | undefined, query = '') => {
      const reply = await audit(presented, query);
      expect({ status: reply.statusCode, body: reply.json(), headers: Object.keys(reply.headers).sort() }).toEqual(
        await unknownPath(query),
      );
      expect(reply.statusCode).toBe(404);
    };
    await refused(undefined);
    await refused('oc_op_short');
    await refused(`oc_op_${'A'.repeat(43)}`);
    await refused(`${token}x`);
    // A bad query is not even read: the gate answers first.
    await refused(undefined, '?limit=0');
    // A path with escapes is named as it was sent, as a path no route serves is.
    const escaped = await auth.app.inject({ method: 'GET', url: `/api/admin/accounts/did%3Aoc%3A${'0'.repeat(32)}` });
    const unserved = await auth.app.inject({ method: 'GET', url: `/api/admin/nothing/did%3Aoc%3A${'0'.repeat(32)}` });
    expect(escaped.statusCode).toBe(404);
    expect(escaped.json().detail).toBe(unserved.json().detail.replace('/nothing/', '/accounts/'));
    await refused(writeOnly.token);
    expect((await audit(token)).statusCode).toBe(200);
    // The scheme's name is case-insensitive (RFC 6750 §2.1).
    expect(
      (await auth.app.inject({ method: 'GET', url: '/api/admin/audit', headers: { authorization: `bearer ${token}` } })).statusCode,
    ).toBe(200);

    // Revoked.
    expect(await run(['operators', 'tokens', 'revoke', tokenId])).toBe(0);
    await refused(token);
    expect(await run(['operators', 'tokens', 'revoke', tokenId])).toBe(1);

    // Expired, removed, disabled: each on a token that worked a moment before.
    const expiring = await operatorToken();
    expect((await audit(expiring.token)).statusCode).toBe(200);
    auth.harness.clock.advance(91 * DAY);
    await refused(expiring.token);

    const removed = await operatorToken();
    expect((await audit(removed.token)).statusCode).toBe(200);
    expect(await run(['operators', 'remove', removed.did, '--yes'])).toBe(0);
    await refused(removed.token);
    const list = capture();
    expect(await run(['operators', 'tokens', 'list', '--operator', removed.did, '--json'], list)).toBe(0);
    expect(JSON.parse(list.lines[0] ?? '')).toEqual([]);

    const held = await operatorToken();
    expect((await audit(held.token)).statusCode).toBe(200);
    expect(await run(['accounts', 'disable', held.did, '--yes'])).toBe(0);
    await refused(held.token);
    expect(await run(['accounts', 'enable', held.did])).toBe(0);
    expect((await audit(held.token)).statusCode).toBe(200);
    expect(did).not.toBe(held.did);
  });

  it('shows one account to a read token and holds it with a reason for a write token, auditing both', async () => {
    const reader = await operatorToken(['read']);
    const writer = await operatorToken(['read', 'write']);
    const person = await account();
    const view = await auth.app.inject({
      method: 'GET',
      url: `/api/admin/accounts/${person.did}`,
      headers: { authorization: `Bearer ${reader.token}` },
    });
    expect(view.statusCode, view.body).toBe(200);
    const shown = view.json().account;
    expect(shown).toMatchObject({ did_oc: person.did, status: 'active', kind: 'btc', keys: [], connect_apps: [], signed_in_apps: [] });
    expect(shown.identities).toEqual([{ id: expect.any(String), kind: 'btc', value: person.address, created_at: expect.any(String) }]);
    expect(shown.sessions).toHaveLength(1);
    expect(shown.activity[0]).toMatchObject({ kind: 'signin' });

    const hold = (token: string, body: unknown, action = 'disable') =>
      auth.app.inject({
        method: 'POST',
        url: `/api/admin/accounts/${person.did}/${action}`,
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        payload: JSON.stringify(body),
      });
    // A token without the write scope is answered as a path no route serves; so is the body never read.
    const readOnly = await hold(reader.token, { reason: 'fraud report #12' });
    expect(readOnly.statusCode).toBe(404);
    expect(readOnly.json().detail).toBe(`no route POST /api/admin/accounts/${person.did}/disable`);
    expect((await person.client.me()).status).toBe(200);
    expect((await hold(writer.token, {})).statusCode).toBe(400);
    expect((await hold(writer.token, { reason: '' })).statusCode).toBe(400);

    const held = await hold(writer.token, { reason: 'fraud report #12' });
    expect(held.statusCode, held.body).toBe(200);
    expect(held.json()).toEqual({ ok: true, changed: true, revoked_sessions: 1 });
    expect((await person.client.me()).status).toBe(401);
    expect((await hold(writer.token, { reason: 'again' })).json()).toEqual({ ok: true, changed: false, revoked_sessions: 0 });
    const lifted = await hold(writer.token, {}, 'enable');
    expect(lifted.json()).toEqual({ ok: true, changed: true, revoked_sessions: 0 });

    const unknown = await auth.app.inject({
      method: 'GET',
      url: `/api/admin/accounts/did:oc:${'0'.repeat(32)}`,
      headers: { authorization: `Bearer ${reader.token}` },
    });
    expect(unknown.statusCode).toBe(404);
    expect(unknown.json().error).toBe('unknown_did_oc');

    const trail = (await audit(reader.token, `?target=${person.did}`)).json().entries;
    expect(
      trail.map((entry: { action: string; actor: string; via: string; reason: string | null }) => [
        entry.action,
        entry.actor,
        entry.via,
        entry.reason,
      ]),
    ).toEqual([
      ['account.enable', writer.did, `token:${writer.tokenId}`, null],
      ['account.disable', writer.did, `token:${writer.tokenId}`, 'fraud report #12'],
      ['account.view', reader.did, `token:${reader.tokenId}`, null],
    ]);
    expect(trail[1].network).toMatch(/^127\.0\.0\.0\/24$/);
    expect(trail[1].detail).toEqual({ revoked_sessions: 1 });
  });

  it('signs an account out of one browser or all for a write token; the person’s activity names the operator', async () => {
    const writer = await operatorToken(['read', 'write']);
    const person = await account();
    const second = auth.harness.browser(auth.app);
    expect((await second.signIn(person.wallet)).status).toBe(200);
    const signOut = (body: unknown) =>
      auth.app.inject({
        method: 'POST',
        url: `/api/admin/accounts/${person.did}/sessions/revoke`,
        headers: { authorization: `Bearer ${writer.token}`, 'content-type': 'application/json' },
        payload: JSON.stringify(body),
      });
    const view = (
      await auth.app.inject({
        method: 'GET',
        url: `/api/admin/accounts/${person.did}`,
        headers: { authorization: `Bearer ${writer.token}` },
      })
    ).json().account;
    expect(view.sessions).toHaveLength(2);
    expect((await signOut({ session: view.sessions[0].id })).statusCode).toBe(400);
    const one = await signOut({ reason: 'lost phone', session: view.sessions[0].id });
    expect(one.json()).toEqual({ ok: true, revoked_sessions: 1 });
    expect([(await person.client.me()).status, (await second.me()).status].sort()).toEqual([200, 401]);
    expect((await signOut({ reason: 'account takeover' })).json()).toEqual({ ok: true, revoked_sessions: 1 });
    expect((await person.client.me()).status).toBe(401);
    expect((await second.me()).status).toBe(401);
    const events = await auth.harness.store.listActivity(person.did.slice('did:oc:'.length), { limit: 5 });
    expect(events.filter((event) => event.kind === 'sessions_revoked').map((event) => event.detail)).toEqual([
      { count: 1, scope: 'all', by: 'operator' },
      { count: 1, scope: 'one', by: 'operator' },
    ]);
    const trail = (await audit(writer.token, `?target=${person.did}&action=sessions.revoke`)).json().entries;
    expect(trail.map((entry: { reason: string; detail: unknown }) => [entry.reason, entry.detail])).toEqual([
      ['account takeover', { count: 1, scope: 'all' }],
      ['lost phone', { count: 1, scope: 'one' }],
    ]);
  });

  it('finds people by the start of an e-mail, an address, a provider subject or a did:oc, case-insensitively and paged; audited', async () => {
    const reader = await operatorToken(['read']);
    const store = auth.harness.store;
    const at = auth.harness.clock.now().getTime();
    const made = async (kind: 'email' | 'oauth' | 'btc', value: string, name: string | null = null) =>
      (
        await store.createAccountWithIdentity({
          account: { kind: kind === 'btc' ? 'btc' : 'federated', display_name: name, created_at: at },
          identity: { kind, value, verified: true, created_at: at },
        })
      ).account;
    const ann = await made('email', 'ann.lee@example.org', 'Ann Lee');
    const anna = await made('email', 'anna@example.net');
    const subject = await made('oauth', 'github:Annabel-42');
    await made('email', 'bob@example.org');
    // Ann signs in with a second address too: one match per identity.
    await store.addIdentity({ account_id: ann.id, kind: 'email', value: 'annie@example.com', verified: true, created_at: at });
    const legacy = await account();

    const search = (query: string) =>
      auth.app.inject({
        method: 'GET',
        url: `/api/admin/accounts?${query}`,
        headers: { authorization: `Bearer ${reader.token}` },
      });
    const found = async (query: string) => {
      const reply = await search(query);
      expect(reply.statusCode, reply.body).toBe(200);
      expect(reply.headers['cache-control']).toBe('no-store');
      return reply.json() as { people: Array<{ did_oc: string; matched: { kind: string; value: string } | null }>; next: string | null };
    };

    const ann_ = await found('q=ANN');
    expect(ann_.people.map((person) => person.matched?.value)).toEqual(['ann.lee@example.org', 'anna@example.net', 'annie@example.com']);
    expect(ann_.people[0]).toEqual({
      did_oc: `did:oc:${ann.id}`,
      status: 'active',
      kind: 'federated',
      display_name: 'Ann Lee',
      created_at: new Date(at).toISOString(),
      matched: { kind: 'email', value: 'ann.lee@example.org' },
    });
    expect(ann_.next).toBeNull();
    expect((await found('q=github%3Aannab')).people).toEqual([
      expect.objectContaining({ did_oc: `did:oc:${subject.id}`, matched: { kind: 'oauth', value: 'github:Annabel-42' } }),
    ]);
    // An address, whatever the case it is typed in.
    expect((await found(`q=${legacy.address.slice(0, 12).toUpperCase()}`)).people).toEqual([
      expect.objectContaining({ did_oc: legacy.did, matched: { kind: 'btc', value: legacy.address } }),
    ]);
    expect((await found(`q=${encodeURIComponent(`DID:OC:${anna.id.slice(0, 10)}`)}`)).people).toEqual([
      expect.objectContaining({ did_oc: `did:oc:${anna.id}`, matched: null }),
    ]);
    expect((await found('q=nobody')).people).toEqual([]);

    // Paged: two at a time, each page going on after the last.
    const first = await found('q=an&limit=2');
    expect(first.people).toHaveLength(2);
    expect(first.next).toMatch(/^[0-9a-f]{32}$/);
    const second = await found(`q=an&limit=2&after=${first.next}`);
    expect(second.people.map((person) => person.matched?.value)).toEqual(['annie@example.com']);
    expect(second.next).toBeNull();

    // Bad input: a clear 400, never a 500.
    for (const query of ['', 'q=', 'q=an&limit=0', 'q=an&limit=101', 'q=an&after=xyz', `q=${'a'.repeat(201)}`, 'q=%20']) {
      const reply = await search(query);
      expect(reply.statusCode, query).toBe(400);
      expect(reply.json().error).toBe('bad_request');
    }
    // Without an operator token, what a path no route serves answers.
    const refused = await auth.app.inject({ method: 'GET', url: '/api/admin/accounts?q=ann' });
    expect(refused.statusCode).toBe(404);
    expect(refused.json().detail).toBe('no route GET /api/admin/accounts');

    const trail = (await audit(reader.token, '?action=account.search&limit=1')).json().entries;
    expect(trail[0]).toMatchObject({ actor: reader.did, via: `token:${reader.tokenId}`, target: null });
    expect(trail[0].detail).toEqual({ query: 'an', by: 'identity', found: 1, page: 'next' });
  });

  it('searches one range of the folded-value index, in its order, on this engine', async () => {
    const raw = await auth.harness.raw();
    const plan = async (after?: string) => {
      const compiled = identityMatchesQuery(raw.db, engine, {
        prefix: 'Ann',
        limit: 21,
        ...(after === undefined ? {} : { after }),
      }).compile();
      if (engine === 'sqlite') {
        const rows = await raw.db.executeQuery<{ detail: string }>(
          CompiledQuery.raw(`EXPLAIN QUERY PLAN ${compiled.sql}`, [...compiled.parameters]),
        );
        return rows.rows.map((row) => row.detail).join('\n');
      }
      // A test database is small enough for a scan and a sort to look cheaper: the plan asked for is the one the index allows alone.
      return raw.db.transaction().execute(async (trx) => {
        for (const setting of ['enable_seqscan', 'enable_bitmapscan', 'enable_sort'])
          await sql`SET LOCAL ${sql.raw(setting)} = off`.execute(trx);
        const rows = await trx.executeQuery<{ 'QUERY PLAN': string }>(
          CompiledQuery.raw(`EXPLAIN ${compiled.sql}`, [...compiled.parameters]),
        );
        return rows.rows.map((row) => row['QUERY PLAN']).join('\n');
      });
    };
    for (const after of [undefined, 'a'.repeat(32)]) {
      const shown = await plan(after);
      expect(shown).toContain('identities_folded_value');
      // Read in the index's order: no sort of the matches.
      expect(shown).not.toMatch(/TEMP B-TREE FOR ORDER BY|Sort Key/);
    }
  });

  it('removes a key, hands over the export and deletes an account for a write token, each with its reason, audited', async () => {
    const reader = await operatorToken(['read']);
    const writer = await operatorToken(['read', 'write']);
    const person = await account();
    const key = credentialRecord(person.did.slice('did:oc:'.length), auth.harness.clock.now().getTime(), {
      label: 'Office key',
      transports: ['usb'],
    });
    const keyId = key.id;
    await auth.harness.store.insertWebAuthnCredential(key);
    const post = (token: string, url: string, body: unknown) =>
      auth.app.inject({
        method: 'POST',
        url,
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        payload: JSON.stringify(body),
      });

    // The key: a read token is refused as a path no route serves; a key the account does not hold is 404 not_found.
    const removeUrl = `/api/admin/accounts/${person.did}/keys/${keyId}/remove`;
    expect((await post(reader.token, removeUrl, { reason: 'stolen' })).statusCode).toBe(404);
    expect(await auth.harness.store.findWebAuthnCredential(keyId)).not.toBeNull();
    expect((await post(writer.token, removeUrl, {})).statusCode).toBe(400);
    const other = await post(writer.token, `/api/admin/accounts/${person.did}/keys/bm9uZQ/remove`, { reason: 'stolen' });
    expect(other.statusCode).toBe(404);
    expect(other.json().error).toBe('not_found');
    const removed = await post(writer.token, removeUrl, { reason: 'Key reported stolen' });
    expect(removed.statusCode, removed.body).toBe(200);
    expect(await auth.harness.store.findWebAuthnCredential(keyId)).toBeNull();
    const events = (await person.client.get('/api/auth/activity')).body.events;
    expect(events[0]).toMatchObject({ kind: 'key_removed', detail: expect.objectContaining({ label: 'Office key', by: 'operator' }) });

    // The export, as the person's own, sent as a file.
    const exported = await auth.app.inject({
      method: 'GET',
      url: `/api/admin/accounts/${person.did}/export`,
      headers: { authorization: `Bearer ${reader.token}` },
    });
    expect(exported.statusCode, exported.body).toBe(200);
    expect(exported.headers['content-disposition']).toMatch(/^attachment; filename="account-[0-9a-f]{12}-\d{4}-\d{2}-\d{2}\.json"$/);
    expect(exported.json()).toMatchObject({
      format: 'oc-host.account-export.v1',
      identities: [expect.objectContaining({ value: person.address })],
    });

    // The deletion: the did again, or nothing goes.
    const deleteUrl = `/api/admin/accounts/${person.did}/delete`;
    const mismatch = await post(writer.token, deleteUrl, { confirm: 'did:oc:0123456789abcdef0123456789abcdef', reason: 'ticket 88' });
    expect(mismatch.statusCode).toBe(400);
    expect(mismatch.json().error).toBe('confirmation_mismatch');
    expect((await person.client.me()).status).toBe(200);
    const deleted = await post(writer.token, deleteUrl, { confirm: person.did, reason: 'Deletion requested by e-mail, ticket 88' });
    expect(deleted.statusCode, deleted.body).toBe(200);
    expect(deleted.json()).toEqual({ ok: true, identities: 1, revoked_sessions: 1 });
    expect((await person.client.me()).status).toBe(401);
    expect((await post(writer.token, deleteUrl, { confirm: person.did, reason: 'again' })).json().error).toBe('unknown_did_oc');

    const trail = (await audit(reader.token, `?target=${person.did}`)).json().entries;
    expect(trail.map((entry: { action: string }) => entry.action)).toEqual(['account.delete', 'account.export', 'key.remove']);
    expect(trail[0]).toMatchObject({
      actor: writer.did,
      reason: 'Deletion requested by e-mail, ticket 88',
      detail: expect.objectContaining({ identities: 1 }),
    });
    expect(trail[2]).toMatchObject({ reason: 'Key reported stolen', detail: { key: keyId } });
  });

  it('registers, lists, re-keys, marks first-party and deletes OpenID clients for the right token, each audited, no secret kept', async () => {
    const reader = await operatorToken(['read']);
    const writer = await operatorToken(['read', 'write']);
    const acme = { client_name: 'Acme', redirect_uris: ['https://acme.example/callback'] };

    // A read token cannot register: answered as a path no route serves, and nothing is made.
    const refused = await send(reader.token, 'POST', '/api/admin/clients', acme);
    expect(refused.statusCode).toBe(404);
    expect(refused.json().detail).toBe('no route POST /api/admin/clients');
    for (const bad of [{ ...acme, redirect_uris: ['not a url'] }, { ...acme, client_name: '' }, { ...acme, extra: 1 }, {}]) {
      const reply = await send(writer.token, 'POST', '/api/admin/clients', bad);
      expect(reply.statusCode, JSON.stringify(bad)).toBe(400);
      expect(reply.json().error).toBe('bad_request');
    }
    expect((await send(reader.token, 'GET', '/api/admin/clients')).json().clients).toEqual([]);

    const created = await send(writer.token, 'POST', '/api/admin/clients', { ...acme, first_party: true });
    expect(created.statusCode, created.body).toBe(201);
    const client = created.json().client;
    expect(client).toMatchObject({ owner_app_id: null, first_party: true, metadata: { client_name: 'Acme' } });
    expect(client.client_secret).toMatch(/.{32,}/);
    expect(JSON.stringify(client.metadata)).not.toContain(client.client_secret);
    const listed = (await send(reader.token, 'GET', '/api/admin/clients')).json().clients;
    expect(listed).toEqual([expect.objectContaining({ client_id: client.client_id, first_party: true })]);
    expect(listed[0]).not.toHaveProperty('client_secret');

    const rotated = await send(writer.token, 'POST', `/api/admin/clients/${client.client_id}/rotate`, { reason: 'leaked in a log' });
    expect(rotated.statusCode, rotated.body).toBe(200);
    expect(rotated.json().client.client_secret).not.toBe(client.client_secret);
    const flag = await send(writer.token, 'POST', `/api/admin/clients/${client.client_id}/first-party`, { first_party: false });
    expect(flag.json().client.first_party).toBe(false);
    expect((await send(writer.token, 'POST', '/api/admin/clients/oc_unknown/rotate', {})).json().error).toBe('not_found');

    const deleteUrl = `/api/admin/clients/${client.client_id}/delete`;
    expect((await send(writer.token, 'POST', deleteUrl, {})).statusCode).toBe(400);
    expect((await send(writer.token, 'POST', deleteUrl, { reason: 'retired' })).statusCode).toBe(200);
    expect((await send(writer.token, 'POST', deleteUrl, { reason: 'again' })).json().error).toBe('not_found');
    expect((await send(reader.token, 'GET', '/api/admin/clients')).json().clients).toEqual([]);

    const trail = (await audit(reader.token, `?target=client:${client.client_id}`)).json().entries;
    expect(trail.map((entry: { action: string }) => entry.action)).toEqual([
      'client.delete',
      'client.first_party',
      'client.rotate',
      'client.create',
    ]);
    expect(trail.every((entry: { actor: string }) => entry.actor === writer.did)).toBe(true);
    const whole = JSON.stringify(trail);
    expect(whole).not.toContain(client.client_secret);
    expect(whole).not.toContain(rotated.json().client.client_secret);
    expect(trail[2]).toMatchObject({ reason: 'leaked in a log' });
  });

  it('edits a client’s redirect URIs and links, refuses what the provider would not load, and holds it from the token endpoint until the hold is lifted', async () => {
    const writer = await operatorToken(['read', 'write']);
    const created = await send(writer.token, 'POST', '/api/admin/clients', {
      client_name: 'Held',
      redirect_uris: ['https://held.example/cb'],
    });
    const { client_id: id, client_secret: secret } = created.json().client;
    const edited = await send(writer.token, 'POST', `/api/admin/clients/${id}/edit`, {
      redirect_uris: ['https://held.example/cb', 'https://held.example/cb2'],
      logo_uri: 'https://held.example/logo.png',
      backchannel_logout_uri: 'https://held.example/logout',
    });
    expect(edited.statusCode, edited.body).toBe(200);
    expect(edited.json().client.metadata).toMatchObject({
      client_name: 'Held',
      redirect_uris: ['https://held.example/cb', 'https://held.example/cb2'],
      logo_uri: 'https://held.example/logo.png',
      backchannel_logout_uri: 'https://held.example/logout',
    });
    for (const bad of [{ redirect_uris: ['not a url'] }, { redirect_uris: [] }, { logo_uri: 'javascript:alert(1)' }, { other: 1 }]) {
      const reply = await send(writer.token, 'POST', `/api/admin/clients/${id}/edit`, bad);
      expect(reply.statusCode, JSON.stringify(bad)).toBe(400);
    }
    const removed = await send(writer.token, 'POST', `/api/admin/clients/${id}/edit`, { logo_uri: null });
    expect(removed.json().client.metadata).not.toHaveProperty('logo_uri');

    // The token endpoint: a made-up code is the wrong grant while the client stands, and the client is unknown while held.
    const exchange = () =>
      auth.app.inject({
        method: 'POST',
        url: '/oidc/token',
        headers: {
          authorization: `Basic ${Buffer.from(`${id}:${secret}`).toString('base64')}`,
          'content-type': 'application/x-www-form-urlencoded',
        },
        payload: new URLSearchParams({
          grant_type: 'authorization_code',
          code: 'x'.repeat(43),
          redirect_uri: 'https://held.example/cb',
        }).toString(),
      });
    expect((await exchange()).json().error).toBe('invalid_grant');
    expect((await send(writer.token, 'POST', `/api/admin/clients/${id}/disable`, {})).statusCode).toBe(400);
    const held = await send(writer.token, 'POST', `/api/admin/clients/${id}/disable`, { reason: 'Its domain lapsed' });
    expect(held.json().client.disabled_at).toEqual(expect.any(String));
    expect((await exchange()).json().error).toBe('invalid_client');
    expect((await send(writer.token, 'POST', `/api/admin/clients/${id}/enable`, {})).json().client.disabled_at).toBeNull();
    expect((await exchange()).json().error).toBe('invalid_grant');
    const trail = (await audit(writer.token, `?target=client:${id}`)).json().entries;
    expect(trail.map((entry: { action: string }) => entry.action)).toEqual([
      'client.enable',
      'client.disable',
      'client.edit',
      'client.edit',
      'client.create',
    ]);
    expect(trail[1]).toMatchObject({ reason: 'Its domain lapsed' });
    expect(trail[3]).toMatchObject({ detail: { changed: ['redirect_uris', 'logo_uri', 'backchannel_logout_uri'] } });
  });

  it('lists the signing keys and rotates the session and the provider keys for a write token, audited', async () => {
    const reader = await operatorToken(['read']);
    const writer = await operatorToken(['read', 'write']);
    const keys = async () => {
      const reply = await auth.app.inject({ method: 'GET', url: '/api/admin/keys', headers: { authorization: `Bearer ${reader.token}` } });
      expect(reply.statusCode, reply.body).toBe(200);
      return reply.json().keys as Array<{ use: string; alg: string; kid: string; state: string; signs_from: string | null }>;
    };
    const before = await keys();
    const signing = before.filter((key) => key.state === 'signing');
    expect(signing.map((key) => `${key.use} ${key.alg}`).sort()).toEqual([
      'oidc ES256',
      'oidc EdDSA',
      'oidc RS256',
      'session EdDSA',
      'webhook EdDSA',
    ]);
    expect(JSON.stringify(before)).not.toMatch(/"d":|private/);

    const rotate = (token: string, use: string, body: unknown = {}) =>
      auth.app.inject({
        method: 'POST',
        url: `/api/admin/keys/${use}/rotate`,
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        payload: JSON.stringify(body),
      });
    expect((await rotate(reader.token, 'session')).statusCode).toBe(404);
    expect((await rotate(writer.token, 'nothing')).statusCode).toBe(400);
    const session = await rotate(writer.token, 'session', { reason: 'Quarterly rotation' });
    expect(session.statusCode, session.body).toBe(200);
    const [kid] = session.json().kids;
    expect((await keys()).find((key) => key.kid === kid)).toMatchObject({
      use: 'session',
      state: 'pending',
      signs_from: expect.any(String),
    });
    const oidc = await rotate(writer.token, 'oidc');
    expect(oidc.json().kids).toHaveLength(3);

    const trail = (await audit(reader.token, '?action=keys.rotate')).json().entries;
    expect(trail.map((entry: { target: string }) => entry.target)).toEqual(['key:oidc', 'key:session']);
    expect(trail[1]).toMatchObject({ actor: writer.did, reason: 'Quarterly rotation', detail: { kids: [kid] } });
  });

  it('lists every owner’s apps, re-keys one on its owner’s behalf, shows its deliveries and sends a failed one again, audited', async () => {
    const reader = await operatorToken(['read']);
    const writer = await operatorToken(['read', 'write']);
    const owner = await account();
    const at = auth.harness.clock.now().getTime();
    const app = await auth.harness.store.createConnectApp({
      owner_account_id: owner.did.slice('did:oc:'.length),
      name: 'Acme',
      key_hash: 'a'.repeat(64),
      created_at: at,
    });
    const raw = await auth.harness.raw();
    const delivery = (id: string, state: string) => ({
      id,
      app_id: app.id,
      event_type: 'identity.linked',
      payload: '{}',
      created_at: at,
      state,
      attempts: state === 'failed' ? 8 : 1,
      next_attempt_at: at,
      lease_owner: null,
      lease_until: null,
      last_attempt_at: at,
      last_status: state === 'failed' ? 503 : 200,
      last_error: state === 'failed' ? 'http_503' : null,
      delivered_at: state === 'delivered' ? at : null,
    });
    const failedId = 'f'.repeat(32);
    const deliveredId = 'd'.repeat(32);
    await raw.db
      .insertInto('webhook_deliveries')
      .values([delivery(failedId, 'failed'), delivery(deliveredId, 'delivered')])
      .execute();

    const listed = await send(reader.token, 'GET', '/api/admin/apps');
    expect(listed.statusCode, listed.body).toBe(200);
    expect(listed.json().apps).toEqual([expect.objectContaining({ id: app.id, name: 'Acme', owner: owner.did, webhook_url: null })]);
    expect((await send(reader.token, 'GET', '/api/admin/apps?limit=0')).statusCode).toBe(400);

    const deliveries = (await send(reader.token, 'GET', `/api/admin/apps/${app.id}/deliveries`)).json().deliveries;
    expect(deliveries).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ id: failedId, state: 'failed', attempts: 8, last_status: 503, last_error: 'http_503' }),
      ]),
    );
    const resend = (id: string) => send(writer.token, 'POST', `/api/admin/apps/${app.id}/deliveries/${id}/resend`, {});
    expect((await send(reader.token, 'POST', `/api/admin/apps/${app.id}/deliveries/${failedId}/resend`, {})).statusCode).toBe(404);
    const notFailed = await resend(deliveredId);
    expect(notFailed.statusCode).toBe(409);
    expect(notFailed.json().error).toBe('delivery_not_failed');
    expect((await resend('e'.repeat(32))).json().error).toBe('not_found');
    const queued = await resend(failedId);
    expect(queued.statusCode, queued.body).toBe(202);
    const row = await raw.db.selectFrom('webhook_deliveries').selectAll().where('id', '=', failedId).executeTakeFirstOrThrow();
    expect(row).toMatchObject({ state: 'pending', payload: '{}' });
    expect((await resend(failedId)).statusCode).toBe(409);

    const rotated = await send(writer.token, 'POST', `/api/admin/apps/${app.id}/rotate-key`, {
      reason: 'Key found in a public repository',
    });
    expect(rotated.statusCode, rotated.body).toBe(200);
    const apiKey = rotated.json().api_key as string;
    expect((await auth.harness.store.findConnectApp(app.id))?.key_hash).not.toBe('a'.repeat(64));
    expect((await send(writer.token, 'POST', '/api/admin/apps/nothing/rotate-key', { reason: 'x' })).json().error).toBe('not_found');

    const trail = (await audit(reader.token, `?target=app:${app.id}`)).json().entries;
    expect(trail.map((entry: { action: string }) => entry.action)).toEqual(['app.rotate_key', 'webhook.resend']);
    expect(trail[0]).toMatchObject({ reason: 'Key found in a public repository', detail: { owner: owner.did } });
    expect(JSON.stringify(trail)).not.toContain(apiKey);
  });

  it('reports the health of the database, each Esplora base and each relay, asked now, to a read token', async () => {
    const reader = await operatorToken(['read']);
    const refused = await auth.app.inject({ method: 'GET', url: '/api/admin/health' });
    expect(refused.statusCode).toBe(404);
    const reply = await auth.app.inject({ method: 'GET', url: '/api/admin/health', headers: { authorization: `Bearer ${reader.token}` } });
    expect(reply.statusCode, reply.body).toBe(200);
    const health = reply.json();
    expect(health.database).toEqual({ name: 'database', ok: true, ms: expect.any(Number), error: null });
    expect(health.keys).toMatchObject({ name: 'keys', ok: true });
    // The test app's Esplora base and relay are a closed port: each is named, down, with why.
    expect(health.esplora).toEqual([
      { name: 'http://127.0.0.1:9', ok: false, ms: expect.any(Number), error: expect.any(String), tip_height: null },
    ]);
    expect(health.relays).toEqual([{ name: 'ws://127.0.0.1:9', ok: false, ms: expect.any(Number), error: 'unreachable' }]);
  });

  it('answers the settings in force to a read token, and nothing without one', async () => {
    const reader = await operatorToken(['read']);
    expect((await auth.app.inject({ method: 'GET', url: '/api/admin/settings' })).statusCode).toBe(404);
    const reply = await auth.app.inject({
      method: 'GET',
      url: '/api/admin/settings',
      headers: { authorization: `Bearer ${reader.token}` },
    });
    expect(reply.statusCode, reply.body).toBe(200);
    expect(reply.json().set).toEqual(expect.arrayContaining([{ name: 'NOSTR_RELAYS', value: 'ws://127.0.0.1:9', secret: false }]));
    expect(reply.json().defaulted).toContain('PORT');
  });

  it('keeps the token hashed: the database holds no token, and lists show when it was last used', async () => {
    const { did, token } = await operatorToken();
    expect((await audit(token)).statusCode).toBe(200);
    const rows = await auth.harness.store.listOperatorTokens();
    expect(JSON.stringify(rows)).not.toContain(token.slice(6));
    const io = capture();
    expect(await run(['operators', 'tokens', 'list', '--operator', did, '--json'], io)).toBe(0);
    const [listed] = JSON.parse(io.lines[0] ?? '');
    expect(listed).toMatchObject({ operator: did, name: 'nightly export', scopes: ['read'], revoked_at: null });
    expect(listed.last_used_at).toMatch(/^\d{4}-/);
  });

  it('refuses to change an audit entry, and drops entries past the retention', async () => {
    const { did } = await account();
    expect(await run(['accounts', 'show', did])).toBe(0);
    const raw = await auth.harness.raw();
    await expect(sql`UPDATE audit_log SET action = 'nothing'`.execute(raw.db)).rejects.toThrow(/append-only/);
    const now = auth.harness.clock.now().getTime();
    // This suite's clock has moved 91 days at most: the default retention (400 days) keeps all of it.
    expect((await auth.harness.store.purgeExpired(now)).audit_log).toBe(0);
    expect((await auth.harness.store.purgeExpired(now + 401 * DAY, { auditRetentionMs: 400 * DAY })).audit_log).toBeGreaterThan(0);
    const io = capture();
    expect(await run(['operators', 'audit'], io)).toBe(0);
    expect(io.lines).toEqual(['no entries']);
  });
}

await forEachEngine('operators and the audit log', operatorsSuite);
