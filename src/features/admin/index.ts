/**
 * The operators (docs/operations.md "Operators and the audit log"): who may
 * operate, their API tokens, and the audit log of what they did.
 */
export {
  COMMAND_LINE,
  DEFAULT_TOKEN_DAYS,
  MAX_TOKEN_DAYS,
  OPERATOR_SCOPES,
  OperatorService,
  auditLine,
} from './operators.js';
export type { OperatorScope } from './store.js';
export { ADMIN_TABLES } from './tables.js';
export { ADMIN_WORDS } from './words.js';

export { registerAdminRoutes } from './routes.js';
export { AdminAccounts } from './accounts.js';
export { AdminClients } from './clients.js';
export { registerAdminClientRoutes } from './client-routes.js';
export { AdminKeys } from './keys.js';
export { registerAdminServiceRoutes } from './service-routes.js';
export { AdminApps } from './apps.js';
export { registerAdminAppRoutes } from './apps-routes.js';
export { AdminHealth } from './health.js';
export { adminGate } from './gate-routes.js';
export { registerConsoleRoutes } from './console-routes.js';
export { AdminDashboard, DashboardCounter } from './dashboard.js';
export { registerDashboardRoutes } from './dashboard-routes.js';
