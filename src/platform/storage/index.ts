/**
 * Storage: the {@link Store} interface, its areas, and how to open one.
 * Everything else in this folder (the area implementations, Kysely tables,
 * row mapping, the SQLite locking dialect) is an implementation detail; the
 * conformance suite reaches it through its own paths.
 */
export { openKyselyStore } from './kysely-store.js';
export type { OpenStoreOptions } from './kysely-store.js';
export { applyMigrations, booleanColumnType, mergeMigrations, migrateDatabase } from './migrations.js';
export { HANDOFF_PURGE_DELAY_MS } from './handoffs.js';
export { grantReference } from './oidc-token-revocations.js';
export type { Migration, MigrationReport } from './migrations.js';
export { DatabaseMissingError, exposedFileWarning, octalMode, parseDatabaseUrl, redactDatabaseUrl } from './database.js';
export type { DatabaseEngine, DatabaseLocation, ExposedFile, OpenDatabase, OpenDatabaseOptions } from './database.js';
export {
  ATTEST_EVENT_RETENTION_MS,
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
  AttestEventKind,
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
  EmailCodeRecord,
  EmailCodeStore,
  EpochMilliseconds,
  FamilyStats,
  HandoffRecord,
  HandoffState,
  HandoffStore,
  HandoffTransition,
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
  NewEmailCode,
  NewHandoff,
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
  PurgeCounts,
  PurgeOptions,
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
  StatsStore,
  Store,
  TransferHoldings,
  WebAuthnAuthenticatorType,
  WebAuthnCredentialRecord,
  WebAuthnDeviceType,
  WebAuthnStore,
  WebAuthnUse,
  WebhookAttempt,
  WebhookDeliveryRecord,
  WebhookStore,
} from './store.js';
export type { WebhookEventType, WebhookTargets } from './webhooks.js';
export { nodeSqliteSupported } from './sqlite-driver.js';
export type { SqliteDriverChoice } from './sqlite-driver.js';
