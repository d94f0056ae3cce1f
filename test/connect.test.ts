/**
 * Connect (docs/protocol.md §6): integrator apps and their API keys, managed by a
 * signed-in account from the browser, and server-to-server provisioning with
 * `Authorization: Bearer <api_key>`, through HTTP on every engine.
 */
import type { LightMyRequestResponse } from 'fastify';
import { describe, expect, it } from 'vitest';
import { emailHintSetting } from '../src/features/connect/index.js';
import { newWallet, type Reply } from './support/auth-client.js';
import { DID_FORMAT, expectError, forEachEngine, type TimedBrowser, useAuthSuite } from './support/auth-harness.js';

const EVIL_ORIGIN = 'https://evil.example';
const API_KEY_FORMAT = /^oc_live_[A-Za-z0-9_-]{43}$/;

function connect(engine: 'sqlite' | 'postgres'): void {
  const auth = useAuthSuite(engine);

  async function signedInBrowser(): Promise<TimedBrowser> {
    const client = auth.harness.browser(auth.app);
    expect((await client.signIn(newWallet())).status).toBe(200);
    return client;
  }

  async function createApp(client: TimedBrowser, name = 'My integration'): Promise<{ id: string; apiKey: string; reply: Reply }> {
    const reply = await client.post('/api/connect/apps', { name });
    expect(reply.status, JSON.stringify(reply.body)).toBe(200);
    return { id: reply.body.app.id, apiKey: reply.body.api_key, reply };
  }

  /** A server-to-server call: no Origin, no cookie. */
  async function provision(
    apiKey: string | undefined,
    body: unknown,
    authorization = apiKey === undefined ? undefined : `Bearer ${apiKey}`,
  ): Promise<Reply> {
    const response: LightMyRequestResponse = await auth.app.inject({
      method: 'POST',
      url: '/api/connect/provision',
      headers: authorization === undefined ? {} : { authorization },
      payload: body as Record<string, unknown>,
    });
    return { status: response.statusCode, body: response.json(), headers: response.headers, setCookies: [] };
  }

  describe('apps', () => {
    it('creates an app and answers its key once; only a keyed hash is stored', async () => {
      const client = await signedInBrowser();
      const { id, apiKey, reply } = await createApp(client, '  Shop backend  ');
      expect(reply.headers['cache-control']).toBe('no-store, private');
      expect(reply.body).toEqual({
        ok: true,
        app: {
          id: expect.stringMatching(/^[0-9a-f]{32}$/),
          name: 'Shop backend',
          created_at: new Date(auth.harness.clock.ms).toISOString(),
          rotated_at: null,
          webhook_url: null,
        },
        api_key: expect.stringMatching(API_KEY_FORMAT),
      });
      const raw = await auth.harness.raw();
      const row = await raw.db.selectFrom('connect_apps').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
      expect(row.key_hash).toMatch(/^[0-9a-f]{64}$/);
      expect(row.key_hash).not.toContain(apiKey.slice('oc_live_'.length));
      // Keyed: not the plain SHA-256 of the key.
      const { createHash } = await import('node:crypto');
      expect(row.key_hash).not.toBe(createHash('sha256').update(apiKey).digest('hex'));

      const list = await client.get('/api/connect/apps');
      expect(list.status).toBe(200);
      expect(list.headers['cache-control']).toBe('no-store, private');
      expect(list.body).toEqual({ ok: true, apps: [reply.body.app] });
      expect(JSON.stringify(list.body)).not.toContain(apiKey);
    });

    it('keeps accounts apart: another account neither sees, rotates nor deletes the app (404)', async () => {
      const owner = await signedInBrowser();
      const { id, apiKey } = await createApp(owner);
      const stranger = await signedInBrowser();
      expect((await stranger.get('/api/connect/apps')).body.apps).toEqual([]);
      expectError(await stranger.post(`/api/connect/apps/${id}/rotate`), 404, 'not_found');
      expectError(await stranger.request('DELETE', `/api/connect/apps/${id}`), 404, 'not_found');
      expect((await provision(apiKey, { user_id: 'still-works' })).status).toBe(200);
      expectError(await owner.post('/api/connect/apps/ffffffffffffffffffffffffffffffff/rotate'), 404, 'not_found');
    });

    it('rotates the key: the old key is refused at once, the new one reaches the same users', async () => {
      const client = await signedInBrowser();
      const { id, apiKey } = await createApp(client);
      const first = await provision(apiKey, { user_id: 'user-1' });
      expect(first.body.is_new).toBe(true);

      const rotated = await client.post(`/api/connect/apps/${id}/rotate`);
      expect(rotated.status, JSON.stringify(rotated.body)).toBe(200);
      expect(rotated.headers['cache-control']).toBe('no-store, private');
      expect(rotated.body).toMatchObject({ ok: true, app: { id, rotated_at: new Date(auth.harness.clock.ms).toISOString() } });
      const newKey: string = rotated.body.api_key;
      expect(newKey).toMatch(API_KEY_FORMAT);
      expect(newKey).not.toBe(apiKey);

      expectError(await provision(apiKey, { user_id: 'user-1' }), 401, 'invalid_api_key');
      expect((await provision(newKey, { user_id: 'user-1' })).body).toEqual({ ok: true, did_oc: first.body.did_oc, is_new: false });
    });

    it('deletes the app: its key stops working, the app is gone, the accounts stay', async () => {
      const client = await signedInBrowser();
      const { id, apiKey } = await createApp(client);
      const provisioned = await provision(apiKey, { user_id: 'kept' });
      const deleted = await client.request('DELETE', `/api/connect/apps/${id}`);
      expect(deleted.status).toBe(200);
      expect(deleted.body).toEqual({ ok: true });
      expectError(await provision(apiKey, { user_id: 'kept' }), 401, 'invalid_api_key');
      expect((await client.get('/api/connect/apps')).body.apps).toEqual([]);
      expectError(await client.request('DELETE', `/api/connect/apps/${id}`), 404, 'not_found');
      const accountId = (provisioned.body.did_oc as string).slice('did:oc:'.length);
      expect(await auth.harness.store.findAccount(accountId)).not.toBeNull();
    });

    it('refuses bad names with 400 bad_request', async () => {
      const client = await signedInBrowser();
      for (const name of ['', '   ', 'x'.repeat(65), 'line\nbreak']) {
        const reply = await client.post('/api/connect/apps', { name });
        expectError(reply, 400, 'bad_request');
        expect(reply.body.detail).toContain('name');
      }
      expectError(await client.post('/api/connect/apps', {}), 400, 'bad_request');
      expectError(await client.post('/api/connect/apps', { name: 7 }), 400, 'bad_request');
      expect((await client.get('/api/connect/apps')).body.apps).toEqual([]);
    });

    it('needs a session (401) and refuses cross-site requests (403)', async () => {
      const anonymous = auth.harness.browser(auth.app);
      expectError(await anonymous.post('/api/connect/apps', { name: 'x' }), 401, 'not_authenticated');
      expectError(await anonymous.get('/api/connect/apps'), 401, 'not_authenticated');
      expectError(await anonymous.post('/api/connect/apps/ffffffffffffffffffffffffffffffff/rotate'), 401, 'not_authenticated');
      expectError(await anonymous.request('DELETE', '/api/connect/apps/ffffffffffffffffffffffffffffffff'), 401, 'not_authenticated');

      const client = await signedInBrowser();
      const { id } = await createApp(client);
      expectError(await client.request('POST', '/api/connect/apps', { name: 'evil' }, { origin: EVIL_ORIGIN }), 403, 'cross_site');
      expectError(await client.request('POST', `/api/connect/apps/${id}/rotate`, {}, { origin: EVIL_ORIGIN }), 403, 'cross_site');
      expectError(await client.request('DELETE', `/api/connect/apps/${id}`, undefined, { origin: EVIL_ORIGIN }), 403, 'cross_site');
      expect((await client.get('/api/connect/apps')).body.apps).toHaveLength(1);
      // Family CORS: credentials for the family origin only.
      const allowed = await client.get('/api/connect/apps');
      expect(allowed.headers['access-control-allow-origin']).toBeUndefined();
      const fromFamily = await client.request('GET', '/api/connect/apps', undefined, { origin: 'http://localhost:8787' });
      expect(fromFamily.headers['access-control-allow-origin']).toBe('http://localhost:8787');
      expect(fromFamily.headers['access-control-allow-credentials']).toBe('true');
    });
  });

  describe('POST /api/connect/provision', () => {
    it('provisions a federated account once per (app, user_id): is_new true, then false', async () => {
      const { apiKey } = await createApp(await signedInBrowser());
      const first = await provision(apiKey, { user_id: 'customer-42' });
      expect(first.status, JSON.stringify(first.body)).toBe(200);
      expect(first.headers['cache-control']).toBe('no-store');
      expect(first.body).toEqual({ ok: true, did_oc: expect.stringMatching(DID_FORMAT), is_new: true });
      const second = await provision(apiKey, { user_id: 'customer-42' });
      expect(second.body).toEqual({ ok: true, did_oc: first.body.did_oc, is_new: false });
      const account = await auth.harness.store.findAccount((first.body.did_oc as string).slice('did:oc:'.length));
      expect(account?.kind).toBe('federated');
      // Ids are kept exactly: another case is another user.
      expect((await provision(apiKey, { user_id: 'Customer-42' })).body.is_new).toBe(true);
    });

    it('gives concurrent first calls one account, and exactly one is_new', async () => {
      const { apiKey } = await createApp(await signedInBrowser());
      const replies = await Promise.all(Array.from({ length: 6 }, () => provision(apiKey, { user_id: 'race' })));
      expect(replies.map((reply) => reply.status)).toEqual(Array(6).fill(200));
      expect(new Set(replies.map((reply) => reply.body.did_oc)).size).toBe(1);
      expect(replies.filter((reply) => reply.body.is_new)).toHaveLength(1);
    });

    it("keeps apps apart: the same user_id under another app is another account, out of the first app's reach", async () => {
      const client = await signedInBrowser();
      const appA = await createApp(client, 'A');
      const appB = await createApp(client, 'B');
      const underA = await provision(appA.apiKey, { user_id: 'shared-id' });
      const underB = await provision(appB.apiKey, { user_id: 'shared-id' });
      expect(underB.body.is_new).toBe(true);
      expect(underB.body.did_oc).not.toBe(underA.body.did_oc);
      // Naming another app's user through the user_id only makes a new user of this app.
      const spoof = await provision(appB.apiKey, { user_id: `${appA.id}:shared-id` });
      expect(spoof.body.did_oc).not.toBe(underA.body.did_oc);
      expect(await auth.harness.store.findAccountByIdentity('connect', `${appB.id}:${appA.id}:shared-id`)).not.toBeNull();
      expect((await auth.harness.store.findAccountByIdentity('connect', `${appA.id}:shared-id`))?.id).toBe(
        (underA.body.did_oc as string).slice(7),
      );
    });

    it('keeps the e-mail as a private, unverified hint that never becomes a way in', async () => {
      const { id, apiKey } = await createApp(await signedInBrowser());
      const email = 'hinted@example.org';
      const reply = await provision(apiKey, { user_id: 'with-mail', email: ' Hinted@Example.org ' });
      expect(reply.status).toBe(200);
      const accountId = (reply.body.did_oc as string).slice('did:oc:'.length);
      expect(await auth.harness.store.findAccountByIdentity('email', email)).toBeNull();
      expect((await auth.harness.store.listIdentities(accountId)).map((identity) => identity.kind)).toEqual(['connect']);
      const hint = JSON.parse((await auth.harness.store.getSetting(emailHintSetting(accountId)))!);
      expect(hint).toMatchObject({ email, verified: false, app_id: id });
      // A later call does not replace the first hint.
      await provision(apiKey, { user_id: 'with-mail', email: 'other@example.org' });
      expect(JSON.parse((await auth.harness.store.getSetting(emailHintSetting(accountId)))!).email).toBe(email);
      expectError(await provision(apiKey, { user_id: 'bad-mail', email: 'not-an-address' }), 400, 'bad_request');
      expect(await auth.harness.store.findAccountByIdentity('connect', `${id}:bad-mail`)).toBeNull();
    });

    it('refuses a missing, malformed, wrong or foreign-scheme key with 401 invalid_api_key, before reading the body', async () => {
      const { apiKey } = await createApp(await signedInBrowser());
      expectError(await provision(undefined, { user_id: 'x' }), 401, 'invalid_api_key');
      expectError(await provision(undefined, { user_id: 'x' }, `Basic ${Buffer.from('a:b').toString('base64')}`), 401, 'invalid_api_key');
      expectError(await provision(undefined, { user_id: 'x' }, 'Bearer oc_live_short'), 401, 'invalid_api_key');
      const wrong = `oc_live_${'A'.repeat(43)}`;
      expectError(await provision(wrong, { user_id: 'x' }), 401, 'invalid_api_key');
      // A session JWT is not an API key.
      const client = await signedInBrowser();
      expectError(await provision(client.cookie, { user_id: 'x' }), 401, 'invalid_api_key');
      // No key and a bad body: the key is judged first.
      expectError(await provision(undefined, { nothing: true }), 401, 'invalid_api_key');
      // The scheme name is case-insensitive (RFC 6750 §2.1).
      expect((await provision(undefined, { user_id: 'x' }, `bearer ${apiKey}`)).status).toBe(200);
    });

    it('refuses bad bodies with 400 bad_request naming the field', async () => {
      const { apiKey } = await createApp(await signedInBrowser());
      for (const body of [
        {},
        { user_id: '' },
        { user_id: 5 },
        { user_id: 'x'.repeat(257) },
        { user_id: 'tab\there' },
        { user_id: 'ok', email: 3 },
      ]) {
        const reply = await provision(apiKey, body);
        expectError(reply, 400, 'bad_request');
        expect(reply.body.detail).toMatch(/user_id|email/);
      }
      expect((await provision(apiKey, { user_id: 'x'.repeat(256), email: null })).status).toBe(200);
    });

    it('is server to server: no browser CORS, no cookie, no cross-site rule', async () => {
      const { apiKey } = await createApp(await signedInBrowser());
      const response = await auth.app.inject({
        method: 'POST',
        url: '/api/connect/provision',
        headers: { authorization: `Bearer ${apiKey}`, origin: EVIL_ORIGIN },
        payload: { user_id: 'from-anywhere' },
      });
      expect(response.statusCode).toBe(200);
      expect(response.headers['access-control-allow-origin']).toBeUndefined();
      expect(response.headers['set-cookie']).toBeUndefined();
    });
  });
}

await forEachEngine('Connect', connect);
