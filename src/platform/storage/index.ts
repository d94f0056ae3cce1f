/**
 * Storage: the databases and what every storage area is built on (the
 * executor, row mapping, the migration runner, the outbox, the hooks that
 * carry an account's changes to the features' tables), and the identity
 * core's areas. The store as a whole is composed in src/store.ts;
 * each feature keeps its own area beside its code. Everything else in this
 * folder (the SQLite locking dialect, the drivers) is an implementation
 * detail; the conformance suite reaches it through its own paths.
 */
export { methodsOf, openStoreExecutor } from './open.js';
export type { OpenStoreOptions } from './open.js';
export {
  assertLowercaseEmail,
  identityValues,
  newRandomId,
  isUniqueViolation,
  rowsAffected,
  StoreExecutor,
  type Executor,
} from './executor.js';
export { fromDatabaseBoolean, toCount, toDatabaseBoolean, toIdentityRecord, toNumber, toNumberOrNull } from './row-mapping.js';
export type { DatabaseBoolean, DatabaseSchema, OutboxColumns } from './schema.js';
export { claimRows, finishAttempt, newOutboxRow, outboxLog, outboxRecord } from './outbox.js';
export type { AccountEvent, AccountNotice, StoreHooks } from './hooks.js';
export { AccountsArea } from './accounts.js';
export { ActivityArea } from './activity.js';
export { KeysArea } from './keys.js';
export { NoncesArea } from './nonces.js';
export { SessionsArea } from './sessions.js';
export { applyMigrations, booleanColumnType, mergeMigrations, migrateDatabase } from './migrations.js';
export type { Migration, MigrationReport } from './migrations.js';
export { DatabaseMissingError, exposedFileWarning, octalMode, parseDatabaseUrl, redactDatabaseUrl } from './database.js';
export type { DatabaseEngine, DatabaseLocation, ExposedFile, OpenDatabase, OpenDatabaseOptions } from './database.js';
export {
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
  NewIdentity,
  NewSession,
  NewSigningKey,
  NonceGuard,
  NonceStore,
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
  OutboxState,
  WebhookAttempt,
} from './store.js';
export { nodeSqliteSupported } from './sqlite-driver.js';
export type { SqliteDriverChoice } from './sqlite-driver.js';
export { joinStoreHooks } from './hooks.js';
export { composeStore, retentionMs } from './tables.js';
export type { OwnedTables, PurgeCounts, Retention, Store, StoreAreas, TableOwner } from './tables.js';
