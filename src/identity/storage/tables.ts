/**
 * The identity core as an owner of tables (src/platform/storage/tables.ts):
 * its migrations, its areas (accounts, sessions, used nonces, keys and
 * settings, activity) and its purge. It comes first among the owners
 * (src/store.ts): the features' tables point at its accounts.
 */
import type { ExpressionBuilder } from 'kysely';
import {
  AccountsArea,
  ActivityArea,
  DEFAULT_ACTIVITY_RETENTION_MS,
  DEFAULT_SESSION_RETENTION_MS,
  KeysArea,
  NoncesArea,
  retentionMs,
  rowsAffected,
  SessionsArea,
  type DatabaseSchema,
  type TableOwner,
} from '../../platform/storage/index.js';
import { IDENTITY_MIGRATIONS } from './schema.js';

declare module '../../platform/storage/tables.js' {
  interface Retention {
    /**
     * How long revoked and expired session rows are kept before deletion, for
     * inspection after an incident. Default 7 days.
     */
    readonly sessionRetentionMs?: number;
    /** How long activity events are kept. Default 180 days (ACTIVITY_RETENTION_DAYS). */
    readonly activityRetentionMs?: number;
  }
}

export const IDENTITY_TABLES: TableOwner = {
  migrations: IDENTITY_MIGRATIONS,
  open(executor) {
    const db = executor.db;
    return {
      areas: [
        new AccountsArea(executor),
        new SessionsArea(executor),
        new NoncesArea(executor),
        new KeysArea(executor),
        new ActivityArea(executor),
      ],
      async purge(now, retention) {
        const sessionCutoff = now - retentionMs(retention.sessionRetentionMs, DEFAULT_SESSION_RETENTION_MS, 'sessionRetentionMs');
        const activityCutoff = now - retentionMs(retention.activityRetentionMs, DEFAULT_ACTIVITY_RETENTION_MS, 'activityRetentionMs');
        // A revoked row stays until its token expires: the revocation feed lists it until then.
        const purged = (eb: ExpressionBuilder<DatabaseSchema, 'sessions'>) =>
          eb.or([eb('expires_at', '<=', sessionCutoff), eb.and([eb('revoked_at', '<=', sessionCutoff), eb('expires_at', '<=', now)])]);
        // A row's tab tokens go with it (the foreign key cascades too; SQLite enforces it only when asked).
        await db
          .deleteFrom('tab_tokens')
          .where('jti', 'in', (eb) => eb.selectFrom('sessions').select('sessions.jti').where(purged))
          .execute();
        const sessions = await db.deleteFrom('sessions').where(purged).executeTakeFirst();
        const nonces = await db.deleteFrom('used_nonces').where('expires_at', '<=', now).executeTakeFirst();
        const activity = await db.deleteFrom('activity').where('at', '<=', activityCutoff).executeTakeFirst();
        return {
          sessions: rowsAffected(sessions.numDeletedRows),
          nonces: rowsAffected(nonces.numDeletedRows),
          activity: rowsAffected(activity.numDeletedRows),
        };
      },
    };
  },
};
