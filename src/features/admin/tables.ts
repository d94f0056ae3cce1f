/** The operators' tables (operators, their tokens, the audit log, the dashboard's daily counts) as one owner of the store (src/platform/storage/tables.ts). */
import { retentionMs, type TableOwner } from '../../platform/storage/index.js';
import { DASHBOARD_RETENTION_DAYS } from './dashboard.js';
import { DashboardArea, dayOf, DASHBOARD_MIGRATIONS, type DashboardStore } from './dashboard-store.js';
import { OperatorsArea, type OperatorStore } from './store.js';
import { ADMIN_MIGRATIONS } from './store-schema.js';

declare module '../../platform/storage/tables.js' {
  interface StoreAreas extends OperatorStore, DashboardStore {}
  interface Retention {
    /** How long the audit log is kept. Default 400 days (AUDIT_RETENTION_DAYS). */
    readonly auditRetentionMs?: number;
  }
}

/** The audit log is kept 400 days unless AUDIT_RETENTION_DAYS says otherwise: a year of it, and a margin. */
const DEFAULT_AUDIT_RETENTION_MS = 400 * 24 * 60 * 60 * 1000;

export const ADMIN_TABLES: TableOwner = {
  migrations: [...ADMIN_MIGRATIONS, ...DASHBOARD_MIGRATIONS],
  open(executor) {
    const operators = new OperatorsArea(executor);
    const dashboard = new DashboardArea(executor);
    return {
      areas: [operators, dashboard],
      async purge(now, retention) {
        const kept = retentionMs(retention.auditRetentionMs, DEFAULT_AUDIT_RETENTION_MS, 'auditRetentionMs');
        return {
          audit_log: await operators.purgeAudit(now - kept),
          daily_counts: await dashboard.purgeDailyCounts(dayOf(now) - DASHBOARD_RETENTION_DAYS),
        };
      },
    };
  },
};
