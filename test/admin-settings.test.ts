/**
 * The settings in force as the admin API shows them (docs/api.md "Admin"):
 * what is set, with every secret masked, and what is left to its default.
 */
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../src/platform/config.js';
import { settingsInForce } from '../src/features/admin/settings.js';

describe('the settings in force', () => {
  it('shows what is set, never a secret nor a URL’s password, and names what is left to its default', () => {
    const config = loadConfig({
      PUBLIC_URL: 'https://auth.example.com',
      OC_SERVER_SECRET: 'ab'.repeat(32),
      SMTP_URL: 'smtps://mailer:hunter2@smtp.example.com:465',
      DATABASE_URL: 'postgres://oc:s3cret@db.example.com:5432/oc',
      REDIS_URL: 'redis://:r3dis@127.0.0.1:6379/0',
      OAUTH_GITHUB_CLIENT_ID: 'Iv1.abc',
      OAUTH_GITHUB_CLIENT_SECRET: 'gh-secret-value',
      BRAND_NAME: 'Acme',
      LOG_LEVEL: '  ',
    });
    const { set, defaulted } = settingsInForce(config);
    const shown = JSON.stringify(set);
    for (const secret of ['ab'.repeat(32), 'hunter2', 's3cret', 'r3dis', 'gh-secret-value']) expect(shown).not.toContain(secret);
    expect(set).toEqual(
      expect.arrayContaining([
        { name: 'PUBLIC_URL', value: 'https://auth.example.com', secret: false },
        { name: 'OC_SERVER_SECRET', value: null, secret: true },
        { name: 'OAUTH_GITHUB_CLIENT_SECRET', value: null, secret: true },
        { name: 'OAUTH_GITHUB_CLIENT_ID', value: 'Iv1.abc', secret: false },
        { name: 'SMTP_URL', value: 'smtps://mailer:***@smtp.example.com:465', secret: false },
        { name: 'DATABASE_URL', value: 'postgres://oc:***@db.example.com:5432/oc', secret: false },
        { name: 'REDIS_URL', value: 'redis://:***@127.0.0.1:6379/0', secret: false },
      ]),
    );
    // Sorted by name; a variable set to blanks counts as not set.
    expect(set.map((setting) => setting.name)).toEqual([...set.map((setting) => setting.name)].sort());
    expect(set.some((setting) => setting.name === 'LOG_LEVEL')).toBe(false);
    expect(defaulted).toEqual(expect.arrayContaining(['LOG_LEVEL', 'PORT', 'COOKIE_DOMAIN']));
    expect(defaulted).not.toContain('PUBLIC_URL');
  });
});
