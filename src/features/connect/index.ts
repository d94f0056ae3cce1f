/**
 * Connect (docs/protocol.md §6): integrator apps, their API keys, and
 * provisioning `did:oc` accounts for an integrator's own users.
 */
export { createConnectService } from './apps.js';

export type { ConnectService } from './apps.js';

export { emailHintSetting } from './provision.js';

export {
  WebhookDispatcher,
  addressAllowed,
  checkWebhookUrl,
  isDevelopmentUrl,
  signWebhook,
  webhookBackoffMs,
  postToEndpoint,
} from './webhooks.js';

export type { WebhookDispatcherDeps } from './webhooks.js';
export { loadWebhookKey, WEBHOOK_KEY_RELOAD_MS, WebhookKeyRing } from './webhook-keys.js';

export { registerConnectRoutes } from './routes.js';

export { WEBHOOK_LOG_RETENTION_MS } from './store.js';
export type { ClaimedWebhookDelivery, ConnectAppRecord, ConnectStore, WebhookStore } from './store.js';
export { CONNECT_TABLES } from './tables.js';
