/**
 * Builds the real app for HTTP tests: the given settings over a quiet
 * default config, with the clock and the chain injectable.
 */
import type { FastifyInstance } from 'fastify';
import { loadConfig, type Config } from '../../src/platform/config.js';
import { buildApp, type AppDeps } from '../../src/app.js';

/**
 * Rate limits are off unless a test sets them: most tests send far more than
 * 20 auth requests a minute from one address. test/rate-limit.test.ts turns them on.
 */
export const RATE_LIMITS_OFF: Readonly<Record<string, string>> = {
  RATE_LIMIT_READ_PER_MIN: '0',
  RATE_LIMIT_AUTH_PER_MIN: '0',
  RATE_LIMIT_OTP_PER_HOUR: '0',
  RATE_LIMIT_OTP_ADDRESS_PER_HOUR: '0',
  RATE_LIMIT_CONTACT_PER_HOUR: '0',
};

export function testConfig(env: Record<string, string> = {}): Config {
  return loadConfig({
    LOG_LEVEL: 'silent',
    DATABASE_URL: 'sqlite::memory:',
    NOSTR_RELAYS: 'ws://127.0.0.1:9',
    ESPLORA_URLS: 'http://127.0.0.1:9',
    ...RATE_LIMITS_OFF,
    ...env,
  });
}

export async function testApp(env: Record<string, string> = {}, deps: AppDeps = {}): Promise<FastifyInstance> {
  const app = await buildApp(testConfig(env), { logger: false, ...deps });
  await app.ready();
  return app;
}
