/**
 * Storage: the databases and what every storage area is built on (the
 * executor, row mapping, the migration runner, the outbox), and the areas
 * that still live here. The store as a whole is composed in src/store.ts;
 * each feature keeps its own area beside its code. Everything else in this
 * folder (the SQLite locking dialect, the drivers) is an implementation
 * detail; the conformance suite reaches it through its own paths.
 */
export { methodsOf, openStoreExecutor } from './open.js';
export type { OpenStoreOptions } from './open.js';
export {
  assertLowercaseEmail,
  heldRows,
  isUniqueViolation,
  rowsAffected,
  StoreExecutor,
  type Executor,
  type SessionsRevoked,
} from './executor.js';
export { fromDatabaseBoolean, toCount, toDatabaseBoolean, toNumber, toNumberOrNull } from './row-mapping.js';
export type { DatabaseBoolean, DatabaseSchema } from './schema.js';
export { AccountsArea } from './accounts.js';
export { ActivityArea } from './activity.js';
export { ConnectArea } from './connect.js';
export { KeysArea } from './keys.js';
export { NoncesArea } from './nonces.js';
export { OidcArea } from './oidc.js';
export { logOutSessions, OidcLogoutsArea } from './oidc-logouts.js';
export { SessionsArea } from './sessions.js';
export { WebhooksArea } from './webhooks.js';
export { applyMigrations, booleanColumnType, mergeMigrations, migrateDatabase } from './migrations.js';
export { grantReference } from './oidc-token-revocations.js';
export type { Migration, MigrationReport } from './migrations.js';
export { DatabaseMissingError, exposedFileWarning, octalMode, parseDatabaseUrl, redactDatabaseUrl } from './database.js';
export type { DatabaseEngine, DatabaseLocation, ExposedFile, OpenDatabase, OpenDatabaseOptions } from './database.js';
export {
  WEBHOOK_LOG_RETENTION_MS,
  DEFAULT_ACTIVITY_RETENTION_MS,
  DEFAULT_SESSION_RETENTION_MS,
  MAX_MERGE_DEPTH,
  MergeRefused,
  emailHintSetting,
} from './store.js';
export type {
  AccountFacts,
  AccountKind,
  AccountPatch,
  AccountRecord,
  AccountStore,
  ActivityCursor,
  ActivityRecord,
  ActivityStore,
  ActivityValue,
  AddIdentityResult,
  ClaimedWebhookDelivery,
  ClaimedOidcLogout,
  OidcLogoutRecord,
  OidcLogoutStore,
  OidcSessionLink,
  ConnectAppRecord,
  ConnectStore,
  CreateAccountResult,
  DeletedAccountRecord,
  DeviceSessionRecord,
  DisplayIdentityKind,
  EpochMilliseconds,
  IdentityKind,
  IdentityRecord,
  KeyStore,
  LiveRosterRecord,
  MergedAccountRecord,
  MergeResult,
  MergeSelection,
  NamedItem,
  NewAccount,
  NewConnectApp,
  NewIdentity,
  NewSession,
  NewSigningKey,
  NonceGuard,
  NonceStore,
  NewOidcModel,
  OidcClientRecord,
  OidcResourceRecord,
  OidcConsentRecord,
  OidcKeyRecord,
  OidcModelRecord,
  OidcStore,
  RemoveIdentityResult,
  RevocationRecord,
  RosterMemberRecord,
  TabTokenRecord,
  TabTokenMemberRecord,
  NewTabToken,
  SessionFreshness,
  SessionRecord,
  SessionStore,
  SigningKeyRecord,
  TransferHoldings,
  WebhookAttempt,
  WebhookDeliveryRecord,
  WebhookStore,
} from './store.js';
export type { WebhookEventType, WebhookTargets } from './webhooks.js';
export { nodeSqliteSupported } from './sqlite-driver.js';
export type { SqliteDriverChoice } from './sqlite-driver.js';
