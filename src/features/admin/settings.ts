/**
 * The settings in force, as the operator reads them from the admin API
 * (docs/api.md "Admin"): every variable set, its secrets masked, and the
 * ones left to their defaults (docs/configuration.md has each default).
 */
import type { Config } from '../../platform/config.js';

/** Names whose whole value is a secret: shown as set, never shown. */
const SECRET_NAME = /SECRET|PASSWORD|TOKEN|_JWK$|PRIVATE/;
/** A value longer than this (a logo given inline) is cut, and says so. */
const MAX_SHOWN = 200;

export interface SettingView {
  readonly name: string;
  /** As given, a URL's password replaced by `***`; null for a secret. */
  readonly value: string | null;
  readonly secret: boolean;
}

/** A URL's password (SMTP, the database, Redis) as `***`; other values as given. */
function withoutPassword(value: string): string {
  const parsed = URL.parse(value);
  if (parsed === null || parsed.password === '') return value;
  parsed.password = '***';
  return parsed.href;
}

export function settingsInForce(config: Pick<Config, 'environment' | 'defaulted'>): {
  readonly set: readonly SettingView[];
  readonly defaulted: readonly string[];
} {
  const set = Object.entries(config.environment).map(([name, value]) => {
    if (SECRET_NAME.test(name)) return { name, value: null, secret: true };
    const shown = withoutPassword(value);
    return { name, value: shown.length > MAX_SHOWN ? `${shown.slice(0, MAX_SHOWN)}… (${shown.length} characters)` : shown, secret: false };
  });
  return { set, defaulted: config.defaulted };
}
