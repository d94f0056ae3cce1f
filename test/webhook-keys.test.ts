/**
 * The webhook key ring (docs/protocol.md §6 "Webhooks"), on every engine: it
 * starts from the key the service always had; a rotation publishes the new
 * key at once and signs with it only 6 minutes later, so another instance,
 * which reads the ring every 30 seconds, and a receiver that keeps the key
 * set 5 minutes, both have it before anyone signs with it; the replaced key stays published 7 days, then goes at the next
 * rotation. The admin API rotates it and lists the keys with their states,
 * and the public key set a receiver fetches follows.
 */
import { expect, it } from 'vitest';
import { loadWebhookKey, WebhookKeyRing } from '../src/features/connect/index.js';
import { forEachEngine, useAuthSuite } from './support/auth-harness.js';
import { DAY } from './support/clock.js';
import { operatorWithToken } from './support/operators.js';

const SECOND = 1000;
const MINUTE = 60 * SECOND;

function ringSuite(engine: 'sqlite' | 'postgres'): void {
  const auth = useAuthSuite(engine);

  const publishedKids = async (): Promise<string[]> => {
    const reply = await auth.app.inject({ method: 'GET', url: '/api/connect/webhook-keys' });
    return (reply.json() as { keys: Array<{ kid: string }> }).keys.map((key) => key.kid);
  };

  it('starts from the key the service always had, rotates without a gap on every instance, and drops a key 7 days after it was replaced', async () => {
    const { store, clock } = auth.harness;
    const first = await loadWebhookKey(store);
    const here = new WebhookKeyRing({ store, now: clock.now });
    const there = new WebhookKeyRing({ store, now: clock.now });
    await here.load();
    await there.load();
    expect(here.signing().kid).toBe(first.kid);
    expect(await publishedKids()).toEqual([first.kid]);

    const second = await here.rotate();
    // Published at once, here and (after its next read) there; nobody signs with it yet.
    expect(here.published().map((key) => key.kid)).toEqual([first.kid, second]);
    expect(here.signing().kid).toBe(first.kid);
    clock.advance(30 * SECOND);
    await there.load();
    expect(there.published().map((key) => key.kid)).toEqual([first.kid, second]);
    expect(there.signing().kid).toBe(first.kid);
    clock.advance(6 * MINUTE - 30 * SECOND - 1);
    expect(here.signing().kid).toBe(first.kid);
    clock.advance(1);
    expect(here.signing().kid).toBe(second);
    expect(there.signing().kid).toBe(second);

    // The replaced key stays published 7 days; the next rotation after that drops it.
    clock.advance(7 * DAY - 2 * SECOND);
    expect(here.published().map((key) => key.kid)).toEqual([first.kid, second]);
    clock.advance(3 * SECOND);
    expect(here.published().map((key) => key.kid)).toEqual([second]);
    const third = await here.rotate();
    expect(here.all().map((key) => key.kid)).toEqual([second, third]);
    await there.load();
    expect(there.all().map((key) => key.kid)).toEqual([second, third]);
  });

  it('is rotated from the admin API, which lists the keys with their states, audited', async () => {
    const { token } = await operatorWithToken(auth.harness, auth.app, ['read', 'write']);
    const admin = (method: 'GET' | 'POST', url: string, body?: unknown) =>
      auth.app.inject({
        method,
        url,
        headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
        ...(body === undefined ? {} : { payload: JSON.stringify(body) }),
      });
    const webhookKeys = async () =>
      (
        (await admin('GET', '/api/admin/keys')).json().keys as Array<{ use: string; kid: string; state: string; created_at: string | null }>
      ).filter((key) => key.use === 'webhook');
    const before = await webhookKeys();
    expect(before.filter((key) => key.state === 'signing')).toHaveLength(1);
    expect(before.every((key) => key.created_at !== null)).toBe(true);
    const rotated = await admin('POST', '/api/admin/keys/webhook/rotate', { reason: 'A receiver leaked its logs' });
    expect(rotated.statusCode, rotated.body).toBe(200);
    const [kid] = rotated.json().kids as string[];
    expect((await webhookKeys()).find((key) => key.kid === kid)).toMatchObject({ state: 'pending' });
    expect(await publishedKids()).toContain(kid);
    const trail = (await admin('GET', '/api/admin/audit?action=keys.rotate')).json().entries;
    expect(trail[0]).toMatchObject({ target: 'key:webhook', reason: 'A receiver leaked its logs', detail: { kids: [kid] } });
  });
}

await forEachEngine('the webhook key ring', ringSuite);
