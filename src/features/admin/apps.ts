/**
 * Connect's apps as an operator sees and acts on them from the admin API
 * (docs/api.md "Admin"): every owner's apps, a new API key on the owner's
 * behalf (shown in that answer only), an app's webhook deliveries, and one
 * more attempt of a delivery that failed. Each change is audited.
 */
import { OcError } from '../../platform/errors.js';
import { didOf } from '../../identity/session/index.js';
import type { ConnectAppRecord, ConnectService, ConnectStore, WebhookStore } from '../connect/index.js';
import type { Actor, OperatorService } from './operators.js';

export interface AdminAppsDeps {
  readonly store: Pick<ConnectStore, 'findConnectApp' | 'listAllConnectApps'> & Pick<WebhookStore, 'resendWebhookDelivery'>;
  readonly connect: Pick<ConnectService, 'rotateKey' | 'listDeliveries'>;
  readonly operators: Pick<OperatorService, 'audit'>;
  readonly now: () => Date;
}

/** One app as the operator's list shows it. */
export interface AdminAppView {
  readonly id: string;
  readonly name: string;
  readonly owner: string;
  readonly created_at: string;
  readonly rotated_at: string | null;
  readonly webhook_url: string | null;
}

type Deliveries = Awaited<ReturnType<ConnectService['listDeliveries']>>;
type IssuedKey = Awaited<ReturnType<ConnectService['rotateKey']>>;

function appView(app: ConnectAppRecord): AdminAppView {
  return {
    id: app.id,
    name: app.name,
    owner: didOf(app.owner_account_id),
    created_at: new Date(app.created_at).toISOString(),
    rotated_at: app.rotated_at === null ? null : new Date(app.rotated_at).toISOString(),
    webhook_url: app.webhook_url,
  };
}

export class AdminApps {
  readonly #deps: AdminAppsDeps;

  constructor(deps: AdminAppsDeps) {
    this.#deps = deps;
  }

  /** A page of every owner's apps by id; `next` goes on after the last. */
  async list(limit: number, after: string | undefined): Promise<{ apps: AdminAppView[]; next: string | null }> {
    const rows = await this.#deps.store.listAllConnectApps(limit + 1, after);
    const page = rows.slice(0, limit);
    return { apps: page.map(appView), next: rows.length > limit ? page.at(-1)!.id : null };
  }

  async #app(appId: string): Promise<ConnectAppRecord> {
    const app = await this.#deps.store.findConnectApp(appId);
    if (app === null) throw new OcError('not_found', 'admin: no such app');
    return app;
  }

  /** A new API key on the owner's behalf; the old one stops working at once. Audited as `app.rotate_key`. */
  async rotateKey(appId: string, reason: string, actor: Actor): Promise<IssuedKey> {
    const app = await this.#app(appId);
    const issued = await this.#deps.connect.rotateKey(app.owner_account_id, app.id);
    await this.#deps.operators.audit(actor, {
      action: 'app.rotate_key',
      target: `app:${app.id}`,
      reason,
      detail: { owner: didOf(app.owner_account_id) },
    });
    return issued;
  }

  /** The app's webhook deliveries, newest first: state, attempts, the last status and error. */
  async deliveries(appId: string, limit: number): Promise<Deliveries> {
    const app = await this.#app(appId);
    return this.#deps.connect.listDeliveries(app.owner_account_id, app.id, limit);
  }

  /**
   * One more attempt of a delivery that failed, now, under its own id; 409
   * `delivery_not_failed` for one still pending or delivered. Audited as
   * `webhook.resend`.
   */
  async resend(appId: string, deliveryId: string, actor: Actor): Promise<void> {
    const app = await this.#app(appId);
    const outcome = await this.#deps.store.resendWebhookDelivery(app.id, deliveryId, this.#deps.now().getTime());
    if (outcome === 'unknown') throw new OcError('not_found', 'admin: the app has no delivery with this id');
    if (outcome === 'not_failed') throw new OcError('delivery_not_failed', 'admin: only a delivery that failed is sent again');
    await this.#deps.operators.audit(actor, { action: 'webhook.resend', target: `app:${app.id}`, detail: { delivery: deliveryId } });
  }
}

declare module '../../platform/services.js' {
  interface FeatureServices {
    /** Connect's apps as an operator sees them, their keys and webhook deliveries. */
    readonly adminApps: AdminApps;
  }
}
