/**
 * Connect webhooks (docs/protocol.md §6 "Webhooks"), against a real HTTP
 * receiver on loopback that answers, fails, hangs past the timeout and
 * recovers:
 * - the endpoint rule, the signed events of provisioned accounts (linked,
 *   unlinked, merged, deleted), verified with @oc-host/verify's helper;
 * - retries with backoff and a delivery log per app; two instances on one
 *   database send each delivery once;
 * - no loss across a restart and a kill -9 in the middle of a delivery.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createWebhookVerifier, WebhookVerificationError, type WebhookEvent } from '../packages/verify/src/index.js';
import {
  addressAllowed,
  checkWebhookUrl,
  loadWebhookKey,
  signWebhook,
  WebhookDispatcher,
  webhookBackoffMs,
  type WebhookDispatcherDeps,
} from '../src/features/connect/index.js';
import type { WebhookAttempt } from '../src/platform/storage/index.js';
import type { ClaimedWebhookDelivery } from '../src/features/connect/index.js';
import { openStore } from '../src/store.js';
import { newWallet, type Wallet } from './support/auth-client.js';
import { expectError, forEachEngine, useAuthSuite, type TimedBrowser } from './support/auth-harness.js';
import { MINUTE, SECOND } from './support/clock.js';
import { freePort, signInOnInstance, startInstance, type Instance } from './support/instances.js';

type Mode = 'ok' | 'fail' | 'hang';

/**
 * One address or more from every range a webhook may not reach
 * (docs/protocol.md §6 "Webhooks", src/features/connect/addresses.ts), the IPv6 forms
 * that carry a refused IPv4 address among them.
 */
const REFUSED_ADDRESSES = [
  '0.0.0.0',
  '0.1.2.3', // this network
  '10.1.2.3', // private use
  '100.64.0.1',
  '100.127.255.254', // shared address space
  '127.0.0.1',
  '127.255.255.254', // loopback
  '169.254.169.254', // link local
  '172.16.0.1',
  '172.31.255.255', // private use
  '192.0.0.1',
  '192.0.0.9',
  '192.0.0.170', // IETF protocol assignments, refused whole
  '192.0.2.1',
  '198.51.100.7',
  '203.0.113.9', // documentation
  '192.88.99.1', // deprecated 6to4 relay anycast
  '192.168.1.1', // private use
  '198.18.0.1',
  '198.19.255.255', // benchmarking
  '224.0.0.1',
  '239.255.255.250', // multicast
  '240.0.0.1',
  '255.255.255.255', // reserved, limited broadcast
  '::',
  '::1', // unspecified, loopback
  '::7f00:1',
  '::808:808', // IPv4-compatible, refused whole
  '::ffff:7f00:1',
  '::ffff:10.0.0.1',
  '::ffff:c000:1', // IPv4-mapped refused addresses
  '64:ff9b::7f00:1',
  '64:ff9b::a9fe:a9fe',
  '64:ff9b::c0a8:101',
  '64:ff9b::c000:1', // NAT64 of refused addresses
  '64:ff9b:1::808:808', // local-use NAT64, refused whole
  '100::1',
  '100:0:0:1::1', // discard-only, dummy prefix
  '2001::1',
  '2001:0:4136:e378:8000:63bf:3fff:fdd2', // Teredo
  '2001:1::1',
  '2001:2::1',
  '2001:20::1',
  '2001:1ff::1', // the rest of 2001::/23, refused whole
  '2001:db8::1',
  '3fff::1',
  '3fff:fff::1', // documentation
  '2002:7f00:1::1',
  '2002:a00:1::',
  '2002:c0a8:101::1', // 6to4 of refused addresses
  '5f00::1', // segment routing
  'fc00::1',
  'fd12::1', // unique local
  'fe80::1',
  'febf::1', // link-local
  'fec0::1', // deprecated site-local
  'ff02::1',
  'ff0e::1', // multicast
];

/** Globally reachable addresses, next to the edges of refused ranges. */
const GLOBAL_ADDRESSES = [
  '8.8.8.8',
  '1.1.1.1',
  '93.184.216.34',
  '100.63.255.255',
  '100.128.0.1',
  '172.32.0.1',
  '192.0.1.1',
  '198.20.0.1',
  '223.255.255.255',
  '2606:4700::1111',
  '2606:2800:220:1::1',
  '2001:200::1',
  '2620:4f:8000::1',
  '3fff:1000::1',
  '::ffff:8.8.8.8',
  '64:ff9b::808:808',
  '2002:808:808::1',
];

interface Received {
  readonly headers: IncomingHttpHeaders;
  readonly body: string;
  /** What the receiver answered: a status, or `hang`. */
  readonly answered: number | 'hang';
}

/** A webhook receiver on loopback whose behaviour the test switches. */
class Receiver {
  mode: Mode = 'ok';
  readonly received: Received[] = [];
  readonly #server: Server;
  readonly #hanging: ServerResponse[] = [];

  private constructor(server: Server) {
    this.#server = server;
  }

  static async start(port = 0): Promise<Receiver> {
    const receiver: Receiver = new Receiver(
      createServer((request, response) => {
        let body = '';
        request.setEncoding('utf8');
        request.on('data', (chunk: string) => (body += chunk));
        request.on('end', () => {
          const answered = receiver.mode === 'hang' ? 'hang' : receiver.mode === 'ok' ? 204 : 500;
          receiver.received.push({ headers: request.headers, body, answered });
          if (answered === 'hang') receiver.#hanging.push(response);
          else response.writeHead(answered).end();
        });
      }),
    );
    await new Promise<void>((resolve) => receiver.#server.listen(port, '127.0.0.1', resolve));
    return receiver;
  }

  get url(): string {
    return `http://127.0.0.1:${(this.#server.address() as { port: number }).port}/hooks/oc`;
  }

  /** Requests answered 2xx, by webhook-id. */
  deliveredIds(): string[] {
    return this.received.filter((entry) => entry.answered === 204).map((entry) => String(entry.headers['webhook-id']));
  }

  async close(): Promise<void> {
    for (const response of this.#hanging) response.destroy();
    this.#server.closeAllConnections();
    await new Promise((resolve) => this.#server.close(resolve));
  }
}

function webhookSuite(engine: 'sqlite' | 'postgres'): void {
  const auth = useAuthSuite(engine, { WEBHOOK_TIMEOUT_SECONDS: '1' });
  let receiver: Receiver;

  beforeAll(async () => {
    receiver = await Receiver.start();
    // A second instance on the same database: both workers poll the one outbox.
    await auth.harness.app({ WEBHOOK_TIMEOUT_SECONDS: '1' }, { webhookPollMs: 50 });
  });
  afterAll(async () => {
    await receiver?.close();
  });

  async function signedIn(wallet: Wallet, client: TimedBrowser = auth.harness.browser(auth.app)): Promise<TimedBrowser> {
    const reply = await client.signIn(wallet);
    expect(reply.status, JSON.stringify(reply.body)).toBe(200);
    return client;
  }

  async function sudo(client: TimedBrowser, wallet: Wallet): Promise<void> {
    expect((await client.post('/api/auth/sudo', await client.prove(wallet, 'sudo'))).status).toBe(200);
  }

  async function verifier() {
    const keys = await auth.harness.browser(auth.app).get('/api/connect/webhook-keys');
    expect(keys.status).toBe(200);
    return createWebhookVerifier({ keys: keys.body, now: () => auth.harness.clock.ms });
  }

  /** A new owner's app `name` with the receiver as its webhook, and the account the app provisioned for `userId`. */
  async function hookedApp(name: string, userId: string): Promise<{ owner: TimedBrowser; appId: string; did: string; accountId: string }> {
    const owner = await signedIn(newWallet());
    const created = await owner.post('/api/connect/apps', { name });
    const appId = created.body.app.id as string;
    expect((await owner.request('PUT', `/api/connect/apps/${appId}/webhook`, { url: receiver.url })).status).toBe(200);
    const provisioned = await auth.app.inject({
      method: 'POST',
      url: '/api/connect/provision',
      headers: { authorization: `Bearer ${created.body.api_key}` },
      payload: { user_id: userId },
    });
    const did = provisioned.json().did_oc as string;
    return { owner, appId, did, accountId: did.slice('did:oc:'.length) };
  }

  /** The next event of `type` the receiver took (answered 2xx), verified. */
  async function nextEvent(type: string, after: number): Promise<WebhookEvent> {
    await expect
      .poll(() => receiver.received.slice(after).some((entry) => entry.answered === 204 && JSON.parse(entry.body).type === type), {
        timeout: 10_000,
        interval: 25,
      })
      .toBe(true);
    const entry = receiver.received
      .slice(after)
      .find((candidate) => candidate.answered === 204 && JSON.parse(candidate.body).type === type)!;
    return (await verifier()).verify(entry.body, entry.headers);
  }

  it('refuses endpoints that are not https, hold credentials or name a private address, and only the owner sets one', async () => {
    const owner = await signedIn(newWallet());
    const created = await owner.post('/api/connect/apps', { name: 'Shop' });
    const id = created.body.app.id as string;
    for (const url of [
      'ftp://example.com/hook',
      'http://example.com/hook',
      'https://user:secret@example.com/hook',
      'https://10.1.2.3/hook',
      'https://169.254.169.254/latest',
      'https://example.com/#x',
      'not a url',
    ]) {
      expectError(await owner.request('PUT', `/api/connect/apps/${id}/webhook`, { url }), 400, 'invalid_webhook_url');
    }
    expectError(await owner.request('PUT', `/api/connect/apps/${id}/webhook`, {}), 400, 'bad_request');
    const stranger = await signedIn(newWallet());
    expectError(await stranger.request('PUT', `/api/connect/apps/${id}/webhook`, { url: 'https://example.com/hook' }), 404, 'not_found');
    expectError(await stranger.get(`/api/connect/apps/${id}/deliveries`), 404, 'not_found');
    const set = await owner.request('PUT', `/api/connect/apps/${id}/webhook`, { url: 'https://hooks.example.com/oc?v=1' });
    expect(set.status).toBe(200);
    expect(set.body.app.webhook_url).toBe('https://hooks.example.com/oc?v=1');
    expect((await owner.get('/api/connect/apps')).body.apps[0].webhook_url).toBe('https://hooks.example.com/oc?v=1');
    expect((await owner.request('PUT', `/api/connect/apps/${id}/webhook`, { url: null })).body.app.webhook_url).toBeNull();
    expectError(await owner.get(`/api/connect/apps/${id}/deliveries?limit=0`), 400, 'bad_request');
  });

  it('signs linked, unlinked, merged and deleted events of provisioned accounts; two instances send each once', async () => {
    const { owner, appId, did, accountId } = await hookedApp('Shop', 'user-17');

    // A way in for the integrator's user (a claim flow would add it): the one step outside HTTP.
    const wallet = newWallet();
    let mark = receiver.received.length;
    const added = await auth.harness.store.addIdentity({
      account_id: accountId,
      kind: 'btc',
      value: wallet.address,
      verified: true,
      created_at: auth.harness.clock.ms,
    });
    expect(added.status).toBe('added');
    const linked = await nextEvent('identity.linked', mark);
    expect(linked).toMatchObject({
      type: 'identity.linked',
      app_id: appId,
      data: { did_oc: did, user_ids: ['user-17'], identity: { kind: 'btc', address: wallet.address } },
    });

    // The person signs in with it and merges another account in by linking its address.
    const person = await signedIn(wallet);
    const otherWallet = newWallet();
    const otherDid = (await (await signedIn(otherWallet)).me()).body.account.did_oc as string;
    await sudo(person, wallet);
    mark = receiver.received.length;
    expect((await person.post('/api/auth/link/btc', { ...(await person.prove(otherWallet, 'link')), confirm_transfer: true })).status).toBe(
      200,
    );
    expect((await nextEvent('account.merged', mark)).data).toEqual({ did_oc: did, user_ids: ['user-17'], merged_from: [otherDid] });

    mark = receiver.received.length;
    const identities = (await person.get('/api/auth/identities')).body.identities as Array<{ id: string; value: string }>;
    const other = identities.find((identity) => identity.value === otherWallet.address)!;
    expect((await person.request('DELETE', `/api/auth/identities?id=${other.id}`)).status).toBe(200);
    expect((await nextEvent('identity.unlinked', mark)).data.identity).toEqual({ id: other.id, kind: 'btc', address: otherWallet.address });

    mark = receiver.received.length;
    await sudo(person, wallet);
    expect((await person.request('DELETE', '/api/auth/account', { confirm: did })).status).toBe(200);
    expect((await nextEvent('account.deleted', mark)).data).toEqual({ did_oc: did, user_ids: ['user-17'] });

    // Two workers, one outbox: every delivery reached the receiver exactly once.
    // Once nothing is pending, each row names its attempts: a second send would show as 2 below.
    await expect
      .poll(
        async () =>
          ((await owner.get(`/api/connect/apps/${appId}/deliveries`)).body.deliveries as Array<{ state: string }>).filter(
            (entry) => entry.state === 'pending',
          ).length,
        { timeout: 10_000, interval: 25 },
      )
      .toBe(0);
    const ids = receiver
      .deliveredIds()
      .filter((id) => receiver.received.some((entry) => entry.headers['webhook-id'] === id && JSON.parse(entry.body).app_id === appId));
    expect(ids.length).toBeGreaterThanOrEqual(4);
    expect(new Set(ids).size).toBe(ids.length);
    const log = await owner.get(`/api/connect/apps/${appId}/deliveries`);
    expect(
      log.body.deliveries.map(
        (entry: { type: string; state: string; attempts: number }) => `${entry.type}:${entry.state}:${entry.attempts}`,
      ),
    ).toEqual(
      expect.arrayContaining([
        'account.deleted:delivered:1',
        'identity.unlinked:delivered:1',
        'account.merged:delivered:1',
        'identity.linked:delivered:1',
      ]),
    );
    // An account no app provisioned sends nothing.
    expect(receiver.received.some((entry) => JSON.parse(entry.body).data.did_oc === otherDid)).toBe(false);
  });

  it('hands each due delivery to one of two racing workers', async () => {
    const { accountId } = await hookedApp('Race', 'race-1');
    // Due an hour from now, so the running workers leave them to the two below.
    const later = auth.harness.clock.ms + 60 * MINUTE;
    for (let index = 0; index < 20; index += 1) {
      await auth.harness.store.addIdentity({
        account_id: accountId,
        kind: 'btc',
        value: newWallet().address,
        verified: true,
        created_at: later,
      });
    }
    const [a, b] = await Promise.all([
      auth.harness.store.claimWebhookDeliveries('worker-a', later, 30 * SECOND, 50),
      auth.harness.store.claimWebhookDeliveries('worker-b', later, 30 * SECOND, 50),
    ]);
    const ids = [...a, ...b].map((delivery) => delivery.id);
    expect(ids).toHaveLength(20);
    expect(new Set(ids).size).toBe(20);
    // Held until the lease runs out, then taken over; the first holder can no longer finish it.
    expect(await auth.harness.store.claimWebhookDeliveries('worker-c', later + 10 * SECOND, 30 * SECOND, 50)).toEqual([]);
    const taken = await auth.harness.store.claimWebhookDeliveries('worker-c', later + 31 * SECOND, 30 * SECOND, 50);
    expect(taken).toHaveLength(20);
    expect(
      await auth.harness.store.finishWebhookAttempt(ids[0]!, a.length > 0 ? 'worker-a' : 'worker-b', {
        at: later,
        status: 204,
        error: null,
        outcome: 'delivered',
      }),
    ).toBe(false);
    for (const delivery of taken) {
      expect(
        await auth.harness.store.finishWebhookAttempt(delivery.id, 'worker-c', {
          at: later,
          status: 204,
          error: null,
          outcome: 'delivered',
        }),
      ).toBe(true);
    }
  });

  it('retries a failing and a hanging receiver with backoff until it recovers, and logs every attempt', async () => {
    const { owner, appId, accountId } = await hookedApp('Flaky', 'flaky-1');
    const log = async () => (await owner.get(`/api/connect/apps/${appId}/deliveries`)).body.deliveries[0];
    const linkNewWallet = () =>
      auth.harness.store.addIdentity({
        account_id: accountId,
        kind: 'btc',
        value: newWallet().address,
        verified: true,
        created_at: auth.harness.clock.ms,
      });

    receiver.mode = 'fail';
    await linkNewWallet();
    await expect.poll(async () => (await log())?.attempts, { timeout: 10_000, interval: 25 }).toBe(1);
    const first = await log();
    expect(first).toMatchObject({ type: 'identity.linked', state: 'pending', last_status: 500, last_error: 'http_500' });
    const waited = new Date(first.next_attempt_at).getTime() - auth.harness.clock.ms;
    expect(waited).toBeGreaterThanOrEqual(8 * SECOND);
    expect(waited).toBeLessThanOrEqual(12 * SECOND);
    // Not before its time. A bounded wait, kept on purpose: no event marks that an attempt will not come.
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect((await log()).attempts).toBe(1);

    receiver.mode = 'hang';
    auth.harness.clock.advance(13 * SECOND);
    await expect.poll(async () => (await log()).attempts, { timeout: 10_000, interval: 50 }).toBe(2);
    expect(await log()).toMatchObject({ state: 'pending', last_status: null, last_error: 'timeout' });
    const second = new Date((await log()).next_attempt_at).getTime() - auth.harness.clock.ms;
    expect(second).toBeGreaterThanOrEqual(24 * SECOND); // three times the first

    receiver.mode = 'ok';
    auth.harness.clock.advance(MINUTE);
    await expect.poll(async () => (await log()).state, { timeout: 10_000, interval: 25 }).toBe('delivered');
    expect(await log()).toMatchObject({ attempts: 3, last_status: 204, last_error: null, next_attempt_at: null });
    const attempts = receiver.received.filter((entry) => JSON.parse(entry.body).app_id === appId);
    expect(attempts.map((entry) => entry.answered)).toEqual([500, 'hang', 204]);
    expect(new Set(attempts.map((entry) => entry.headers['webhook-id'])).size).toBe(1);
    expect(new Set(attempts.map((entry) => entry.body)).size).toBe(1);

    // A removed endpoint ends what is pending with no_endpoint.
    receiver.mode = 'fail';
    await linkNewWallet();
    await expect.poll(async () => (await log()).attempts, { timeout: 10_000, interval: 25 }).toBe(1);
    expect((await owner.request('PUT', `/api/connect/apps/${appId}/webhook`, { url: null })).status).toBe(200);
    auth.harness.clock.advance(MINUTE);
    await expect.poll(async () => (await log()).state, { timeout: 10_000, interval: 25 }).toBe('failed');
    expect((await log()).last_error).toBe('no_endpoint');
    receiver.mode = 'ok';
  });
}

await forEachEngine('webhooks', webhookSuite);

/** The endpoint rule of a service on https (not development, so loopback is refused too), on a store of its own. */
function endpointSuite(engine: 'sqlite' | 'postgres'): void {
  const auth = useAuthSuite(engine, { PUBLIC_URL: 'https://auth.example.com' });

  it('refuses an endpoint at an address that is not globally reachable, however it is spelled', async () => {
    const owner = auth.harness.browser(auth.app, 'https://auth.example.com');
    expect((await owner.signIn(newWallet())).status).toBe(200);
    const id = (await owner.post('/api/connect/apps', { name: 'Shop' })).body.app.id as string;
    const literal = (address: string) => `https://${address.includes(':') ? `[${address}]` : address}/hook`;
    // Spellings the URL parser turns into refused addresses.
    const spellings = [
      'https://0x7f.1/hook',
      'https://2130706433/hook',
      'https://127.1/hook',
      'https://0177.0.0.1/hook',
      'https://127.0.0.1./hook',
      'https://0xc0.0.0.1/hook',
      'https://[0:0:0:0:0:ffff:127.0.0.1]/hook',
      'https://[::ffff:7f00:1]/hook',
      'https://[::127.0.0.1]/hook',
      'https://[64:ff9b::127.0.0.1]/hook',
      'https://[2002:7F00:0001::]/hook',
    ];
    for (const url of [...REFUSED_ADDRESSES.map(literal), ...spellings]) {
      const reply = await owner.request('PUT', `/api/connect/apps/${id}/webhook`, { url });
      expect(reply.status, url).toBe(400);
      expectError(reply, 400, 'invalid_webhook_url');
      expect(reply.body.detail, url).toMatch(/not globally reachable/);
    }
    for (const address of GLOBAL_ADDRESSES) {
      const reply = await owner.request('PUT', `/api/connect/apps/${id}/webhook`, { url: literal(address) });
      expect(reply.status, address).toBe(200);
      expect(reply.body.app.webhook_url).toBe(new URL(literal(address)).toString());
    }
  });
}

await forEachEngine('webhook endpoints', endpointSuite);

describe('webhook parts', () => {
  it('signs id.timestamp.body with the webhook key, which @oc-host/verify checks, refusing stale, forged and unknown-key requests', async () => {
    const settings = new Map<string, string>();
    const store = {
      getOrCreateSetting: async (key: string, create: () => string) => {
        if (!settings.has(key)) settings.set(key, create());
        return settings.get(key)!;
      },
    };
    const key = await loadWebhookKey(store);
    expect(key.kid).toMatch(/^wh-[A-Za-z0-9_-]{22}$/);
    expect((await loadWebhookKey(store)).kid).toBe(key.kid);
    const body = JSON.stringify({
      id: 'wh_1',
      type: 'account.deleted',
      created_at: '2026-11-25T10:00:00.000Z',
      app_id: 'a',
      data: { did_oc: 'did:oc:1', user_ids: [] },
    });
    const at = 1_790_000_000;
    const headers = signWebhook(key, 'wh_1', at, body);
    expect(headers['webhook-signature']).toMatch(/^v1a,[A-Za-z0-9+/]{86}==$/);
    const verifier = createWebhookVerifier({ keys: { keys: [key.publicJwk] }, now: () => at * 1000 + 60_000 });
    expect((await verifier.verify(body, headers)).type).toBe('account.deleted');
    expect((await verifier.verify(new TextEncoder().encode(body), new Headers(headers))).id).toBe('wh_1');
    const refusal = async (promise: Promise<unknown>) =>
      promise.then(
        () => 'accepted',
        (error: unknown) => (error instanceof WebhookVerificationError ? error.code : String(error)),
      );
    expect(await refusal(verifier.verify(body.replace('deleted', 'merged'), headers))).toBe('bad_signature');
    expect(await refusal(verifier.verify(body, { ...headers, 'webhook-timestamp': String(at + 1) }))).toBe('bad_signature');
    expect(await refusal(verifier.verify(body, { ...headers, 'webhook-key-id': 'wh-other' }))).toBe('unknown_key');
    expect(await refusal(verifier.verify(body, { ...headers, 'webhook-signature': undefined }))).toBe('missing_header');
    const late = createWebhookVerifier({ keys: { keys: [key.publicJwk] }, now: () => (at + 301) * 1000 });
    expect(await refusal(late.verify(body, headers))).toBe('stale');
    const other = await loadWebhookKey({ getOrCreateSetting: async (_key, create) => create() });
    const forged = signWebhook({ ...other, kid: key.kid }, 'wh_1', at, body);
    expect(await refusal(verifier.verify(body, forged))).toBe('bad_signature');
  });

  /** One delivery to `url` by a worker with these rules and resolver; answers the finished attempt. */
  async function deliverOnce(url: string, development: boolean, lookup?: WebhookDispatcherDeps['lookup']): Promise<WebhookAttempt> {
    const key = await loadWebhookKey({ getOrCreateSetting: async (_key, create) => create() });
    const finished: WebhookAttempt[] = [];
    let handed = false;
    const store = {
      async claimWebhookDeliveries(): Promise<ClaimedWebhookDelivery[]> {
        if (handed) return [];
        handed = true;
        const payload = JSON.stringify({ id: 'wh_x', type: 'account.deleted' });
        return [
          {
            id: 'wh_x',
            app_id: 'a',
            event_type: 'account.deleted',
            payload,
            created_at: 0,
            state: 'pending',
            attempts: 0,
            next_attempt_at: 0,
            last_attempt_at: null,
            last_status: null,
            last_error: null,
            delivered_at: null,
            url,
          },
        ];
      },
      async finishWebhookAttempt(_id: string, _owner: string, attempt: WebhookAttempt) {
        finished.push(attempt);
        return true;
      },
      async listWebhookDeliveries() {
        return [];
      },
      async resendWebhookDelivery() {
        return 'unknown' as const;
      },
    };
    const dispatcher = new WebhookDispatcher({
      store,
      key: () => key,
      rules: { development, allowPrivate: false },
      now: () => new Date(),
      timeoutMs: 2000,
      retryBaseMs: 1000,
      pollMs: 60_000,
      onError: (error) => {
        throw error;
      },
      ...(lookup ? { lookup } : {}),
    });
    expect(await dispatcher.runOnce()).toBe(1);
    return finished[0]!;
  }

  it('resolves host names itself and refuses one that resolves to a loopback address outside development', async () => {
    const receiver = await Receiver.start();
    try {
      const port = new URL(receiver.url).port;
      expect(await deliverOnce(`http://localhost:${port}/hooks/oc`, true)).toMatchObject({
        outcome: 'delivered',
        status: 204,
        error: null,
      });
      expect(receiver.received).toHaveLength(1);
      expect(await deliverOnce(`https://localhost:${port}/hooks/oc`, false)).toMatchObject({
        outcome: 'retry',
        status: null,
        error: 'refused_address',
      });
      expect(await deliverOnce(`http://127.0.0.1:${port}/hooks/oc`, false)).toMatchObject({ outcome: 'retry', error: 'refused_address' });
      expect(await deliverOnce('http://127.0.0.1:9/hooks/oc', true)).toMatchObject({ outcome: 'retry', error: 'connect' });
      expect(await deliverOnce('http://no-such-host.invalid/hooks/oc', true)).toMatchObject({ outcome: 'retry', error: 'dns' });
      expect(receiver.received).toHaveLength(1);
    } finally {
      await receiver.close();
    }
  });

  it('refuses, at connect time, a host name that resolves only to addresses that are not globally reachable, and such an address in a stored URL', async () => {
    const receiver = await Receiver.start();
    try {
      const port = new URL(receiver.url).port;
      const asked: string[] = [];
      const answering =
        (address: string): WebhookDispatcherDeps['lookup'] =>
        (hostname, _options, callback) => {
          asked.push(hostname);
          callback(null, [{ address, family: address.includes(':') ? 6 : 4 }]);
        };
      for (const address of REFUSED_ADDRESSES) {
        expect(await deliverOnce(`https://hooks.example.test:${port}/hooks/oc`, false, answering(address)), address).toMatchObject({
          outcome: 'retry',
          status: null,
          error: 'refused_address',
        });
      }
      expect(asked).toEqual(REFUSED_ADDRESSES.map(() => 'hooks.example.test'));
      // An endpoint stored before these ranges were refused is an IP literal the worker checks itself.
      for (const host of ['192.0.0.1', '[::7f00:1]', '[64:ff9b::7f00:1]', '[::ffff:7f00:1]']) {
        expect(await deliverOnce(`https://${host}:${port}/hooks/oc`, false), host).toMatchObject({
          outcome: 'retry',
          status: null,
          error: 'refused_address',
        });
      }
      // In development the loopback receiver is reached through its mapped address, but never through NAT64 or 6to4.
      // (A name of its own each time: the agent keeps a connection per host and port, and a kept one is not looked up again.)
      asked.length = 0;
      expect(await deliverOnce(`http://mapped.localhost:${port}/hooks/oc`, true, answering('::ffff:127.0.0.1'))).toMatchObject({
        outcome: 'delivered',
        status: 204,
      });
      for (const [index, address] of ['64:ff9b::7f00:1', '2002:7f00:1::', '0.0.0.0'].entries()) {
        expect(await deliverOnce(`http://other-${index}.localhost:${port}/hooks/oc`, true, answering(address)), address).toMatchObject({
          error: 'refused_address',
        });
      }
      expect(asked).toEqual(['mapped.localhost', 'other-0.localhost', 'other-1.localhost', 'other-2.localhost']);
      expect(receiver.received).toHaveLength(1);
    } finally {
      await receiver.close();
    }
  });

  it('backs off three times longer per attempt, with jitter, at most six hours', () => {
    for (let attempt = 1; attempt <= 12; attempt += 1) {
      const plain = Math.min(6 * 60 * MINUTE, 10 * SECOND * 3 ** (attempt - 1));
      const wait = webhookBackoffMs(attempt, 10 * SECOND);
      expect(wait).toBeGreaterThanOrEqual(Math.floor(plain * 0.8));
      expect(wait).toBeLessThanOrEqual(Math.ceil(plain * 1.2));
    }
  });

  it('checks endpoints and addresses by the rules', () => {
    const production = { development: false, allowPrivate: false };
    const development = { development: true, allowPrivate: false };
    expect(checkWebhookUrl('https://hooks.example.com/a', production)).toBe('https://hooks.example.com/a');
    expect(() => checkWebhookUrl('http://127.0.0.1:9/a', production)).toThrow(/https/);
    expect(checkWebhookUrl('http://127.0.0.1:9/a', development)).toBe('http://127.0.0.1:9/a');
    expect(() => checkWebhookUrl('https://[fd00::1]/a', production)).toThrow(/private/);
    for (const address of [
      '10.0.0.1',
      '172.20.1.1',
      '192.168.1.1',
      '169.254.169.254',
      '127.0.0.1',
      '::1',
      'fe80::1',
      'fd12::1',
      '::ffff:10.0.0.1',
      '100.64.0.1',
      '0.0.0.0',
    ]) {
      expect(addressAllowed(address, production), address).toBe(false);
    }
    for (const address of ['93.184.216.34', '2606:2800:220:1::1', '::ffff:93.184.216.34'])
      expect(addressAllowed(address, production), address).toBe(true);
    expect(addressAllowed('127.0.0.1', development)).toBe(true);
    expect(addressAllowed('10.0.0.1', development)).toBe(false);
    expect(addressAllowed('10.0.0.1', { development: false, allowPrivate: true })).toBe(true);
  });

  it('refuses every range the IANA special-purpose registries mark not globally reachable, and accepts global addresses', () => {
    const production = { development: false, allowPrivate: false };
    const development = { development: true, allowPrivate: false };
    const loopback = new Set(['127.0.0.1', '127.255.255.254', '::1', '::ffff:7f00:1']);
    for (const address of REFUSED_ADDRESSES) {
      expect(addressAllowed(address, production), address).toBe(false);
      expect(addressAllowed(address, development), address).toBe(loopback.has(address));
      expect(addressAllowed(address, { development: false, allowPrivate: true }), address).toBe(true);
    }
    for (const address of GLOBAL_ADDRESSES) expect(addressAllowed(address, production), address).toBe(true);
    for (const notAnAddress of ['', 'localhost', '127.1', '0x7f000001', '[::1]']) {
      expect(addressAllowed(notAnAddress, production), notAnAddress).toBe(false);
      expect(addressAllowed(notAnAddress, { development: false, allowPrivate: true }), notAnAddress).toBe(false);
    }
    for (const scoped of ['fe80::1%eth0', '::1%lo', '2606:4700::1111%eth0']) expect(addressAllowed(scoped, production), scoped).toBe(false);
  });
});

describe('webhooks through a restart and kill -9 of the host', () => {
  it('a delivery cut off by kill -9, and one stored while the host was down, both arrive after the restart', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'oc-webhooks-'));
    const receiver = await Receiver.start();
    const port = await freePort();
    const origin = `http://localhost:${port}`;
    const databaseUrl = `sqlite:${join(dir, 'oc.sqlite')}`;
    const env = {
      PORT: String(port),
      PUBLIC_URL: origin,
      DATABASE_URL: databaseUrl,
      NOSTR_RELAYS: 'ws://127.0.0.1:9',
      ESPLORA_URLS: 'http://127.0.0.1:9',
      RATE_LIMIT_READ_PER_MIN: '0',
      RATE_LIMIT_AUTH_PER_MIN: '0',
      WEBHOOK_TIMEOUT_SECONDS: '1',
      WEBHOOK_RETRY_SECONDS: '1',
    };
    let instance: Instance | undefined = await startInstance(env);
    const store = await openStore(databaseUrl);
    try {
      const wallet = newWallet();
      const cookie = `oc_session=${await signInOnInstance(instance, origin, wallet)}`;
      const call = async (method: string, path: string, body?: unknown) =>
        (
          await fetch(`${instance!.url}${path}`, {
            method,
            headers: { origin, cookie, 'content-type': 'application/json' },
            ...(body === undefined ? {} : { body: JSON.stringify(body) }),
          })
        ).json() as Promise<Record<string, any>>;
      const created = await call('POST', '/api/connect/apps', { name: 'Durable' });
      await call('PUT', `/api/connect/apps/${created.app.id}/webhook`, { url: receiver.url });
      const provisioned = (await (
        await fetch(`${instance.url}/api/connect/provision`, {
          method: 'POST',
          headers: { authorization: `Bearer ${created.api_key}`, 'content-type': 'application/json' },
          body: JSON.stringify({ user_id: 'durable-1' }),
        })
      ).json()) as { did_oc: string };
      const accountId = provisioned.did_oc.slice('did:oc:'.length);

      // The receiver holds the first delivery open; the host is killed while it waits.
      receiver.mode = 'hang';
      await store.addIdentity({ account_id: accountId, kind: 'btc', value: newWallet().address, verified: true, created_at: Date.now() });
      await expect.poll(() => receiver.received.length, { timeout: 10_000, interval: 25 }).toBe(1);
      instance.child.kill('SIGKILL');
      await instance.exited;
      instance = undefined;
      // Stored while no host runs.
      await store.addIdentity({ account_id: accountId, kind: 'btc', value: newWallet().address, verified: true, created_at: Date.now() });
      receiver.mode = 'ok';

      instance = await startInstance(env);
      // The cut-off delivery waits for its lease (timeout + 5 s), then goes again with the same id.
      await expect.poll(() => receiver.deliveredIds().length, { timeout: 20_000, interval: 100 }).toBe(2);
      const firstId = String(receiver.received[0]!.headers['webhook-id']);
      expect(receiver.deliveredIds()).toContain(firstId);
      const log = await call('GET', `/api/connect/apps/${created.app.id}/deliveries`);
      expect(log.deliveries.map((entry: { state: string }) => entry.state)).toEqual(['delivered', 'delivered']);
    } finally {
      await store.close();
      await instance?.stop();
      await receiver.close();
      rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);
});
