/**
 * Connect integrator apps (docs/protocol.md §6): a signed-in account creates apps,
 * lists them, rotates and deletes them; each app's API key provisions
 * accounts for the integrator's own users (provision.ts).
 *
 * - The key is answered once, on create and on rotate, and stored only as its
 *   keyed hash (keys.ts). A rotation replaces the stored hash in one update,
 *   so the old key stops working at once, on every instance.
 * - Apps belong to the account that created them. Another account's app is
 *   404 `not_found`, exactly like an app that does not exist, so app ids
 *   cannot be probed.
 * - App names follow the display-text rule (1 to 64 characters, no control
 *   or bidirectional-override characters; src/identity/account/display-text.ts).
 * - Deleting an app kills its key. Accounts it provisioned stay (they are
 *   people's accounts); no one can address them through Connect any more.
 */
import type { ActivityLog } from '../../identity/account/index.js';
import { cleanDisplayText } from '../../identity/account/index.js';
import { timingSafeEqualString } from '../../platform/crypto.js';
import { OcError } from '../../platform/errors.js';
import { accountStanding, mayAct } from '../../identity/session/index.js';
import type { AccountStore, KeyStore } from '../../platform/storage/index.js';
import type { ConnectAppRecord, ConnectStore, WebhookDeliveryRecord, WebhookStore } from './store.js';
import { checkWebhookUrl, type EndpointRules } from './webhooks.js';
import { apiKeyFromAuthorization, generateApiKey, hashApiKey } from './keys.js';
import { provisionUser, type ProvisionInput, type Provisioned } from './provision.js';

const MAX_APP_NAME_LENGTH = 64;

/** An app as its owner sees it: never the key, never its hash. */
interface ConnectAppView {
  readonly id: string;
  readonly name: string;
  /** ISO 8601 UTC. */
  readonly created_at: string;
  /** ISO 8601 UTC of the last key rotation, or null. */
  readonly rotated_at: string | null;
  /** Where the app's webhooks go, or null (docs/protocol.md §6 "Webhooks"). */
  readonly webhook_url: string | null;
}

/** One webhook delivery as the delivery log shows it. */
interface WebhookDeliveryView {
  readonly id: string;
  readonly type: string;
  readonly state: 'pending' | 'delivered' | 'failed';
  readonly attempts: number;
  readonly created_at: string;
  readonly last_attempt_at: string | null;
  /** The receiver's HTTP status on the last attempt, or null when none came. */
  readonly last_status: number | null;
  /** Why the last attempt failed: `timeout`, `connect`, `dns`, `tls`, `refused_address`, `http_<status>`, `no_endpoint`. */
  readonly last_error: string | null;
  readonly next_attempt_at: string | null;
  readonly delivered_at: string | null;
}

interface IssuedApiKey {
  readonly app: ConnectAppView;
  /** Shown once; only its hash is kept. */
  readonly api_key: string;
}

export interface ConnectServiceOptions {
  readonly store: ConnectStore & AccountStore & KeyStore & WebhookStore;
  /** `OC_SERVER_SECRET`: keys the stored hashes. */
  readonly secret: Uint8Array;
  readonly now: () => Date;
  /** Where the owner's security events go (docs/protocol.md §6 "Activity"). */
  readonly activity?: Pick<ActivityLog, 'record'>;
  /** The webhook endpoint rule (src/features/connect/webhooks.ts); without it, endpoints are refused. */
  readonly webhookRules?: EndpointRules;
}

export interface ConnectService {
  createApp(ownerAccountId: string, name: string): Promise<IssuedApiKey>;
  listApps(ownerAccountId: string): Promise<ConnectAppView[]>;
  /** @throws OcError `not_found` */
  rotateKey(ownerAccountId: string, appId: string): Promise<IssuedApiKey>;
  /** @throws OcError `not_found` */
  deleteApp(ownerAccountId: string, appId: string): Promise<void>;
  /**
   * The app whose key an `Authorization: Bearer` header carries.
   * @throws OcError `invalid_api_key` when the header is missing, malformed,
   *   or carries a key that is wrong, rotated away or of a deleted app;
   *   `account_disabled` while the operator holds the app's owner
   *   (docs/protocol.md §2 "Disabling and deleting").
   */
  authenticate(authorization: string | undefined): Promise<ConnectAppRecord>;
  /**
   * Whether the owner of the app `appId` may act (src/identity/session/standing.ts):
   * false for an unknown app and while the operator holds its owner.
   */
  appMayAct(appId: string): Promise<boolean>;
  /** @throws OcError `bad_request` */
  provision(app: ConnectAppRecord, input: ProvisionInput): Promise<Provisioned>;
  /** Sets (or with null, removes) the app's webhook endpoint. @throws OcError `not_found`, `invalid_webhook_url` */
  setWebhook(ownerAccountId: string, appId: string, url: string | null): Promise<ConnectAppView>;
  /** The app's delivery log, newest first. @throws OcError `not_found` */
  listDeliveries(ownerAccountId: string, appId: string, limit: number): Promise<WebhookDeliveryView[]>;
}

function connectAppView(app: ConnectAppRecord): ConnectAppView {
  return {
    id: app.id,
    name: app.name,
    created_at: new Date(app.created_at).toISOString(),
    rotated_at: app.rotated_at === null ? null : new Date(app.rotated_at).toISOString(),
    webhook_url: app.webhook_url,
  };
}

const isoOrNull = (ms: number | null): string | null => (ms === null ? null : new Date(ms).toISOString());

function webhookDeliveryView(delivery: WebhookDeliveryRecord): WebhookDeliveryView {
  return {
    id: delivery.id,
    type: delivery.event_type,
    state: delivery.state,
    attempts: delivery.attempts,
    created_at: new Date(delivery.created_at).toISOString(),
    last_attempt_at: isoOrNull(delivery.last_attempt_at),
    last_status: delivery.last_status,
    last_error: delivery.last_error,
    next_attempt_at: delivery.state === 'pending' ? new Date(delivery.next_attempt_at).toISOString() : null,
    delivered_at: isoOrNull(delivery.delivered_at),
  };
}

function notFound(): OcError {
  return new OcError('not_found', 'connect: this account has no app with this id');
}

export function createConnectService(options: ConnectServiceOptions): ConnectService {
  const { store, secret, now } = options;
  const record: ActivityLog['record'] = (accountId, kind, detail) => options.activity?.record(accountId, kind, detail) ?? Promise.resolve();
  // Programmer misuse throws at start (docs/architecture.md Errors); docs/protocol.md §1: 32+ bytes.
  if (!(secret instanceof Uint8Array) || secret.length < 32) throw new TypeError('connect: the secret must hold at least 32 bytes');

  async function ownedApp(ownerAccountId: string, appId: string): Promise<ConnectAppRecord> {
    const app = (await store.listConnectApps(ownerAccountId)).find((candidate) => candidate.id === appId);
    if (app === undefined) throw notFound();
    return app;
  }

  return {
    async createApp(ownerAccountId, name) {
      const cleaned = cleanDisplayText('name', name, MAX_APP_NAME_LENGTH);
      const apiKey = generateApiKey();
      const app = await store.createConnectApp({
        owner_account_id: ownerAccountId,
        name: cleaned,
        key_hash: hashApiKey(secret, apiKey),
        created_at: now().getTime(),
      });
      await record(ownerAccountId, 'connect_app_created', { app_id: app.id, name: app.name });
      return { app: connectAppView(app), api_key: apiKey };
    },

    async listApps(ownerAccountId) {
      return (await store.listConnectApps(ownerAccountId)).map(connectAppView);
    },

    async rotateKey(ownerAccountId, appId) {
      const apiKey = generateApiKey();
      const rotated = await store.rotateConnectAppKey(appId, ownerAccountId, hashApiKey(secret, apiKey), now().getTime());
      if (!rotated) throw notFound();
      const app = await ownedApp(ownerAccountId, appId);
      await record(ownerAccountId, 'connect_app_rotated', { app_id: app.id, name: app.name });
      return { app: connectAppView(app), api_key: apiKey };
    },

    async deleteApp(ownerAccountId, appId) {
      const app = (await store.listConnectApps(ownerAccountId)).find((candidate) => candidate.id === appId);
      if (app === undefined || !(await store.deleteConnectApp(appId, ownerAccountId))) throw notFound();
      await record(ownerAccountId, 'connect_app_deleted', { app_id: app.id, name: app.name });
    },

    async authenticate(authorization) {
      const apiKey = apiKeyFromAuthorization(authorization);
      if (apiKey === null) throw new OcError('invalid_api_key', 'connect: send Authorization: Bearer <api_key>');
      const keyHash = hashApiKey(secret, apiKey);
      const app = await store.findConnectAppByKeyHash(keyHash);
      // The look-up is by the hash's unique index; the constant-time compare
      // guards against an engine whose text comparison were ever looser (case,
      // collation) than byte equality.
      if (app === null || !timingSafeEqualString(app.key_hash, keyHash)) {
        throw new OcError('invalid_api_key', 'connect: the API key is wrong, was rotated, or its app was deleted');
      }
      // The key acts for its owner: the owner's standing is the key's (one check, identity/session/standing.ts).
      const standing = accountStanding(await store.findAccount(app.owner_account_id));
      if (standing === 'held') throw new OcError('account_disabled', 'connect: the account that owns this app is disabled by the operator');
      if (standing === 'gone') throw new OcError('invalid_api_key', 'connect: the API key is wrong, was rotated, or its app was deleted');
      return app;
    },

    async appMayAct(appId) {
      const app = await store.findConnectApp(appId);
      return app !== null && mayAct(await store.findAccount(app.owner_account_id));
    },

    provision(app, input) {
      return provisionUser(store, app, input, now().getTime());
    },

    async setWebhook(ownerAccountId, appId, url) {
      const rules = options.webhookRules;
      if (url !== null && rules === undefined) throw new OcError('invalid_webhook_url', 'webhook: this service sends no webhooks');
      const checked = url === null ? null : checkWebhookUrl(url, rules!);
      const app = await store.setConnectAppWebhook(appId, ownerAccountId, checked);
      if (app === null) throw notFound();
      await record(ownerAccountId, 'connect_app_webhook', {
        app_id: app.id,
        name: app.name,
        webhook: checked === null ? 'removed' : new URL(checked).host,
      });
      return connectAppView(app);
    },

    async listDeliveries(ownerAccountId, appId, limit) {
      await ownedApp(ownerAccountId, appId);
      return (await store.listWebhookDeliveries(appId, limit)).map(webhookDeliveryView);
    },
  };
}

declare module '../../platform/services.js' {
  interface FeatureServices {
    /** Integrator apps and their webhooks. */
    readonly connect: ConnectService;
  }
}
