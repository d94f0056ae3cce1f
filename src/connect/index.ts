/**
 * Connect (docs/protocol.md §6): integrator apps, their API keys, and
 * provisioning `did:oc` accounts for an integrator's own users.
 */
export { MAX_APP_NAME_LENGTH, connectAppView, createConnectService } from './apps.js';
export type { ConnectAppView, ConnectService, ConnectServiceOptions, IssuedApiKey } from './apps.js';
export { API_KEY_PREFIX, apiKeyFromAuthorization, generateApiKey, hashApiKey, isApiKeyFormat } from './keys.js';
export { MAX_CONNECT_USER_ID_LENGTH, connectIdentityValue, emailHintSetting, provisionUser } from './provision.js';
export type { ProvisionInput, Provisioned } from './provision.js';
export type { WebhookDeliveryView } from './apps.js';
export {
  MAX_WEBHOOK_ATTEMPTS,
  WebhookDispatcher,
  addressAllowed,
  checkWebhookUrl,
  isDevelopmentUrl,
  loadWebhookKey,
  signWebhook,
  webhookBackoffMs,
  postToEndpoint,
} from './webhooks.js';
export type { AttemptResult, EndpointLookup, EndpointRules, WebhookDispatcherDeps, WebhookKey } from './webhooks.js';
