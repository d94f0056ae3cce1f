/**
 * The webhook outbox (docs/protocol.md §6 "Webhooks"). An account change
 * writes its deliveries in its own transaction ({@link enqueueWebhookEvents}),
 * so an event is stored exactly when the change is; workers on every instance
 * claim and finish them by the leases of src/platform/storage/outbox.ts.
 */
import type { Transaction } from 'kysely';
import {
  claimRows,
  finishAttempt,
  identityValues,
  newOutboxRow,
  newRandomId,
  outboxLog,
  outboxRecord,
  rowsAffected,
  type AccountNotice,
  type DatabaseSchema,
  type StoreExecutor,
  type WebhookAttempt,
} from '../../platform/storage/index.js';
import type { ClaimedWebhookDelivery, WebhookDeliveryRecord, WebhookStore } from './store.js';

type WebhookEventType = 'account.merged' | 'account.deleted' | 'identity.linked' | 'identity.unlinked';

/** The apps to tell about an account, each with its users on it: app id → user ids. Only apps with a webhook. */
type WebhookTargets = ReadonlyMap<string, readonly string[]>;

/**
 * An identity as a webhook names it: its kind and id, and the address of a
 * Bitcoin identity (public anyway). E-mail addresses and provider subjects
 * are personal data an integrator has no need of, so they are left out.
 */
function webhookIdentity(identity: { readonly id: string; readonly kind: string; readonly value: string }): Record<string, string> {
  return identity.kind === 'btc'
    ? { id: identity.id, kind: identity.kind, address: identity.value }
    : { id: identity.id, kind: identity.kind };
}

/** The apps that provisioned any of `accountIds` (their `connect` identities) and have a webhook. */
async function webhookTargets(trx: Transaction<DatabaseSchema>, accountIds: readonly string[]): Promise<WebhookTargets> {
  if (accountIds.length === 0) return new Map();
  const users = new Map<string, string[]>();
  for (const value of await identityValues(trx, accountIds, 'connect')) {
    const colon = value.indexOf(':');
    const appId = value.slice(0, colon);
    users.set(appId, [...(users.get(appId) ?? []), value.slice(colon + 1)]);
  }
  if (users.size === 0) return users;
  const apps = await trx
    .selectFrom('connect_apps')
    .select('id')
    .where('id', 'in', [...users.keys()])
    .where('webhook_url', 'is not', null)
    .execute();
  const withHooks = new Set(apps.map((app) => app.id));
  return new Map([...users].filter(([appId]) => withHooks.has(appId)).map(([appId, ids]) => [appId, ids.sort()]));
}

/**
 * Writes one delivery per target app, in the caller's transaction. The body
 * is fixed here, so every retry sends the same bytes.
 */
async function enqueueWebhookEvents(
  trx: Transaction<DatabaseSchema>,
  targets: WebhookTargets,
  type: WebhookEventType,
  accountId: string,
  data: Readonly<Record<string, unknown>>,
  now: number,
): Promise<void> {
  for (const [appId, userIds] of targets) {
    const id = `wh_${newRandomId()}`;
    const payload = JSON.stringify({
      id,
      type,
      created_at: new Date(now).toISOString(),
      app_id: appId,
      data: { did_oc: `did:oc:${accountId}`, user_ids: userIds, ...data },
    });
    await trx
      .insertInto('webhook_deliveries')
      .values({
        id,
        app_id: appId,
        event_type: type,
        payload,
        created_at: now,
        ...newOutboxRow(now),
      })
      .execute();
  }
}

export class WebhooksArea implements WebhookStore {
  readonly #x: StoreExecutor;

  constructor(executor: StoreExecutor) {
    this.#x = executor;
  }

  claimWebhookDeliveries(owner: string, now: number, leaseMs: number, limit: number): Promise<ClaimedWebhookDelivery[]> {
    return claimRows(this.#x.db, 'webhook_deliveries', { owner, now, leaseMs, limit }, async (id) => {
      const row = await this.#x.db
        .selectFrom('webhook_deliveries')
        .leftJoin('connect_apps', 'connect_apps.id', 'webhook_deliveries.app_id')
        .selectAll('webhook_deliveries')
        .select('connect_apps.webhook_url as url')
        .where('webhook_deliveries.id', '=', id)
        .executeTakeFirst();
      return row === undefined ? undefined : { ...outboxRecord(row), url: row.url ?? null };
    });
  }

  finishWebhookAttempt(id: string, owner: string, attempt: WebhookAttempt): Promise<boolean> {
    return finishAttempt(this.#x.db, 'webhook_deliveries', id, owner, attempt);
  }

  async resendWebhookDelivery(appId: string, id: string, now: number): Promise<'queued' | 'not_failed' | 'unknown'> {
    const queued = await this.#x.db
      .updateTable('webhook_deliveries')
      .set({ state: 'pending', next_attempt_at: now, lease_owner: null, lease_until: null })
      .where('id', '=', id)
      .where('app_id', '=', appId)
      .where('state', '=', 'failed')
      .executeTakeFirst();
    if (rowsAffected(queued.numUpdatedRows) === 1) return 'queued';
    const row = await this.#x.db
      .selectFrom('webhook_deliveries')
      .select('id')
      .where('id', '=', id)
      .where('app_id', '=', appId)
      .executeTakeFirst();
    return row === undefined ? 'unknown' : 'not_failed';
  }

  async listWebhookDeliveries(appId: string, limit: number): Promise<WebhookDeliveryRecord[]> {
    return (await outboxLog(this.#x.db, 'webhook_deliveries', { column: 'app_id', value: appId }, limit)).map((row) => outboxRecord(row));
  }
}

/**
 * What tells the apps that provisioned these accounts of an account event
 * (src/platform/storage/hooks.ts): the apps are read now, before the change
 * removes the identities that name them; each event is written to the outbox
 * in the same transaction.
 */
export async function webhookNotices(trx: Transaction<DatabaseSchema>, accountIds: readonly string[]): Promise<AccountNotice> {
  const targets = await webhookTargets(trx, accountIds);
  return async (event, accountId, at) => {
    if (targets.size === 0) return;
    const { type } = event;
    const data =
      event.type === 'account.merged'
        ? { merged_from: event.merged_from }
        : event.type === 'account.deleted'
          ? {}
          : { identity: webhookIdentity(event.identity) };
    await enqueueWebhookEvents(trx, targets, type, accountId, data, at);
  };
}
