/**
 * The console's door to the admin API (docs/operations.md "The console"),
 * on every engine, as an attacker tries it: a non-operator's session, an
 * operator without a key step-up or with a stale one, a wallet re-proof in
 * place of a key, a cross-site post with an operator's cookie, a bad token
 * beside an operator's cookie, a removed or disabled operator's open
 * console. Every refusal of someone who is no operator is word for word
 * the 404 of a path no route serves, on every admin route and page.
 */
import { expect, it } from 'vitest';
import { newWallet, type Reply } from './support/auth-client.js';
import { addDeskKey, forEachEngine, stepUpWithKey, useAuthSuite, type TimedBrowser } from './support/auth-harness.js';
import { operatorCommand } from './support/operators.js';

const MINUTE = 60_000;

interface Operation {
  readonly method: string;
  readonly path: string;
}

function consoleDoorSuite(engine: 'sqlite' | 'postgres'): void {
  const auth = useAuthSuite(engine);

  const cli = async (argv: string[]) => (await operatorCommand(auth.harness, argv)).code;

  /** A wallet's account signed in on `auth.app`: its browser, did and wallet. */
  async function signedIn(): Promise<{ client: TimedBrowser; did: string; wallet: ReturnType<typeof newWallet> }> {
    const wallet = newWallet();
    const client = auth.harness.browser(auth.app);
    const reply = await client.signIn(wallet);
    expect(reply.status).toBe(200);
    return { client, did: reply.body.account.did_oc as string, wallet };
  }

  /** An operator with a security key, stepped up with it now. */
  async function freshOperator() {
    const operator = await signedIn();
    expect(await cli(['operators', 'add', operator.did])).toBe(0);
    expect((await operator.client.post('/api/auth/sudo', await operator.client.prove(operator.wallet, 'sudo'))).status).toBe(200);
    const { key } = await addDeskKey(operator.client);
    expect((await stepUpWithKey(operator.client, key)).status).toBe(200);
    return { ...operator, key };
  }

  /** Every admin operation of the OpenAPI document, with example parameters. */
  async function adminOperations(): Promise<Operation[]> {
    const document = (await auth.app.inject({ method: 'GET', url: '/api/openapi' })).json() as {
      paths: Record<string, Record<string, { tags?: string[] }>>;
    };
    return Object.entries(document.paths).flatMap(([path, methods]) =>
      Object.entries(methods)
        .filter(([, operation]) => operation.tags?.includes('admin'))
        .map(([method, operation]) => ({
          method: method.toUpperCase(),
          path: path.replace(/\{[^}]+\}/g, (name) => (name === '{did}' ? `did:oc:${'0'.repeat(32)}` : 'x1')),
          operation,
        })),
    );
  }

  const send = (client: TimedBrowser, { method, path }: Operation, headers: Record<string, string> = {}): Promise<Reply> =>
    client.request(method as 'GET' | 'POST', path, method === 'GET' ? undefined : {}, headers);

  /** The 404 a path no route serves answers, for the path of `operation`. */
  async function unknownPath({ method, path }: Operation): Promise<unknown> {
    const reply = await auth.app.inject({ method: method as 'GET', url: '/nowhere-at-all', ...(method === 'GET' ? {} : { payload: {} }) });
    const body = reply.json() as { detail: string };
    return { ...body, detail: body.detail.replace('/nowhere-at-all', path.split('?')[0] as string) };
  }

  it('answers a non-operator’s session, and a bad token beside an operator’s cookie, on every admin route and console page as a path no route serves', async () => {
    const stranger = await signedIn();
    const operations = await adminOperations();
    expect(operations.length).toBeGreaterThan(20);
    const extra = [
      { method: 'GET', path: '/admin' },
      { method: 'GET', path: '/admin/people/x' },
      { method: 'GET', path: '/api/admin/no-such-thing' },
      { method: 'POST', path: '/api/admin/no-such-thing' },
    ];
    for (const operation of [...operations, ...extra]) {
      const reply = await send(stranger.client, operation);
      expect(reply.status, `${operation.method} ${operation.path}`).toBe(404);
      expect(reply.body, `${operation.method} ${operation.path}`).toEqual(await unknownPath(operation));
    }
    const operator = await freshOperator();
    for (const token of ['oc_op_' + 'A'.repeat(43), 'not-a-token', '']) {
      const reply = await operator.client.request('GET', '/api/admin/session', undefined, { authorization: `Bearer ${token}` });
      expect(reply.status, token).toBe(404);
    }
    expect((await operator.client.get('/api/admin/session')).status).toBe(200);
  });

  it('lets an operator in with a key step-up younger than 10 minutes, a minute for a destructive action, and not with a wallet re-proof', async () => {
    const operator = await signedIn();
    expect(await cli(['operators', 'add', operator.did])).toBe(0);
    // Signed in, no step-up: the console's start answers, nothing else does.
    const session = await operator.client.get('/api/admin/session');
    expect(session.status).toBe(200);
    expect(session.body).toMatchObject({ operator: { did_oc: operator.did }, via: 'console', keys: 0, step_up: { fresh_until: null } });
    for (const operation of (await adminOperations()).filter(({ path }) => path !== '/api/admin/session')) {
      const reply = await send(operator.client, operation);
      expect(reply.status, `${operation.method} ${operation.path}`).toBe(401);
      expect(reply.body.error, `${operation.method} ${operation.path}`).toBe('step_up_required');
    }
    // A wallet re-proof is no key.
    expect((await operator.client.post('/api/auth/sudo', await operator.client.prove(operator.wallet, 'sudo'))).status).toBe(200);
    expect((await operator.client.get('/api/admin/audit')).body.error).toBe('step_up_required');
    const { key } = await addDeskKey(operator.client);
    expect((await stepUpWithKey(operator.client, key)).status).toBe(200);
    const fresh = await operator.client.get('/api/admin/session');
    expect(fresh.body.keys).toBe(1);
    expect(Date.parse(fresh.body.step_up.fresh_until) - Date.parse(fresh.body.step_up.at)).toBe(10 * MINUTE);
    expect(Date.parse(fresh.body.step_up.destructive_until) - Date.parse(fresh.body.step_up.at)).toBe(MINUTE);
    expect((await operator.client.get('/api/admin/audit')).status).toBe(200);

    // A destructive action a minute later needs the key again; a reversible one does not.
    const person = await signedIn();
    auth.harness.clock.advance(MINUTE + 1000);
    const rotate = await operator.client.post('/api/admin/keys/session/rotate', { reason: 'yearly' });
    expect(rotate.status).toBe(401);
    expect(rotate.body.error).toBe('step_up_required');
    expect((await operator.client.post(`/api/admin/accounts/${person.did}/disable`, { reason: 'spam' })).status).toBe(200);
    expect((await stepUpWithKey(operator.client, key)).status).toBe(200);
    expect((await operator.client.post('/api/admin/keys/session/rotate', { reason: 'yearly' })).status).toBe(200);

    // Ten minutes on, the console is closed until the key answers again.
    auth.harness.clock.advance(10 * MINUTE);
    expect((await operator.client.get(`/api/admin/accounts/${person.did}`)).body.error).toBe('step_up_required');
    expect((await operator.client.get('/api/admin/session')).body.step_up.fresh_until).toBeNull();

    // What it did is in the audit log as the console's, with the network.
    expect((await stepUpWithKey(operator.client, key)).status).toBe(200);
    const trail = (await operator.client.get('/api/admin/audit?actor=' + encodeURIComponent(operator.did))).body.entries as Array<{
      action: string;
      via: string;
      network: string | null;
    }>;
    expect(trail.map((entry) => entry.action)).toEqual(expect.arrayContaining(['account.disable', 'keys.rotate']));
    for (const entry of trail) expect(entry.via).toBe('console');
  });

  it('opens only to the cookie: a fresh operator’s tab token, alone or beside the cookie, opens nothing', async () => {
    const operator = await freshOperator();
    const tab = await operator.client.post('/api/auth/tab', {});
    expect(tab.status).toBe(200);
    const pinned = { 'x-oc-tab-session': tab.body.token as string };
    // Beside the cookie: the tab's token decides the session, and it is no console's.
    const beside = await operator.client.request('GET', '/api/admin/audit', undefined, pinned);
    expect(beside.status).toBe(404);
    // Alone, as a script or a server holding it would send it.
    const alone = await auth.app.inject({ method: 'GET', url: '/api/admin/audit', headers: pinned });
    expect(alone.statusCode).toBe(404);
    const asBearer = await auth.app.inject({
      method: 'GET',
      url: '/api/admin/audit',
      headers: { authorization: `Bearer ${tab.body.token}` },
    });
    expect(asBearer.statusCode).toBe(404);
    expect((await operator.client.get('/api/admin/audit')).status).toBe(200);
  });

  it('refuses a change with an operator’s cookie from another site, and changes nothing', async () => {
    const operator = await freshOperator();
    const person = await signedIn();
    const disable = (headers: Record<string, string>) =>
      operator.client.request('POST', `/api/admin/accounts/${person.did}/disable`, { reason: 'forged' }, headers);
    for (const headers of [
      { origin: 'https://evil.example' },
      { origin: 'http://localhost:8787.evil.example' },
      { origin: 'null', 'sec-fetch-site': 'cross-site' },
      { origin: '' },
    ]) {
      const reply = await disable(headers);
      expect(reply.status, JSON.stringify(headers)).toBe(403);
      expect(reply.body.error).toBe('cross_site');
    }
    expect((await person.client.me()).status).toBe(200);
    // A read from another site is answered, but no browser lets that site see it: no CORS header is sent.
    const read = await operator.client.request('GET', `/api/admin/accounts/${person.did}`, undefined, { origin: 'https://evil.example' });
    expect(read.headers['access-control-allow-origin']).toBeUndefined();
    expect((await disable({ origin: 'http://localhost:8787' })).status).toBe(200);
    expect((await person.client.me()).status).toBe(401);
  });

  it('serves the console at ADMIN_PATH, and /admin is then a path like any other', async () => {
    const moved = await auth.harness.app({ ADMIN_PATH: '/ops/console' });
    const operator = await freshOperator();
    const client = auth.harness.browser(moved);
    client.cookie = operator.client.cookie;
    client.binding = operator.client.binding;
    const page = await client.get('/ops/console/people');
    expect(page.status).toBe(200);
    expect(page.body).toContain('data-console="/ops/console"');
    expect((await client.get('/api/admin/session')).body.console_path).toBe('/ops/console');
    const old = await client.get('/admin');
    expect(old.status).toBe(404);
    expect(old.body).toMatchObject({ error: 'not_found', detail: 'no route GET /admin' });
  });

  it('closes a removed or a disabled operator’s open console at its next request', async () => {
    const removed = await freshOperator();
    expect((await removed.client.get('/api/admin/audit')).status).toBe(200);
    expect(await cli(['operators', 'remove', removed.did, '--yes'])).toBe(0);
    for (const path of ['/api/admin/audit', '/api/admin/session', '/admin']) {
      expect((await removed.client.get(path)).status, path).toBe(404);
    }
    const disabled = await freshOperator();
    expect((await disabled.client.get('/admin')).status).toBe(200);
    expect(await cli(['accounts', 'disable', disabled.did, '--yes'])).toBe(0);
    for (const path of ['/api/admin/audit', '/api/admin/session', '/admin']) {
      expect((await disabled.client.get(path)).status, path).toBe(404);
    }
  });
}

await forEachEngine('the console’s door to the admin API', consoleDoorSuite);
