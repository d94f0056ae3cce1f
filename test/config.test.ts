import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig, mailSender, originMatches } from '../src/platform/config.js';
import { nodeSqliteSupported, resolveSqliteDriver } from '../src/platform/storage/sqlite-driver.js';
import { VERSION } from '../src/platform/version.js';

describe('loadConfig', () => {
  it('gives a working service with no settings at all (docs/protocol.md §1)', () => {
    const config = loadConfig({});
    expect(config.port).toBe(8787);
    expect(config.host).toBe('127.0.0.1');
    expect(config.publicUrl).toBe('http://localhost:8787');
    expect(config.databaseUrl).toBe('sqlite:./data/oc.sqlite');
    expect(config.bitcoinNetwork).toBe('mainnet');
    expect(config.esploraUrls).toEqual(['https://mempool.space/api', 'https://blockstream.info/api']);
    expect(config.nostrRelays).toEqual(['wss://relay.damus.io', 'wss://nos.lol', 'wss://relay.primal.net']);
    expect(config.familyOrigins).toEqual(['http://localhost:8787']);
    expect(config.rateLimits).toEqual({
      readPerMinute: 60,
      authPerMinute: 20,
      otpPerHour: 5,
      otpIpPerHour: 120,
      otpAddressPerHour: 50,
      contactPerHour: 5,
      deviceCodePerHour: 20,
    });
    expect(config.oidcDevicePollSeconds).toBe(5);
    expect(config.minConfirmations).toBe(1);
    expect(config.chain).toEqual({ maxConnections: 16, tipSeconds: 5, cacheEntries: 10_000, cacheMegabytes: 32 });
    expect(Object.isFrozen(config)).toBe(true);
  });

  it("sets the e-mail start ceiling per address to 10 networks' worth of starts unless it is set (docs/protocol.md §4)", () => {
    expect(loadConfig({ RATE_LIMIT_OTP_PER_HOUR: '3' }).rateLimits.otpAddressPerHour).toBe(30);
    expect(loadConfig({ RATE_LIMIT_OTP_PER_HOUR: '3', RATE_LIMIT_OTP_ADDRESS_PER_HOUR: '7' }).rateLimits.otpAddressPerHour).toBe(7);
    expect(loadConfig({ RATE_LIMIT_OTP_PER_HOUR: '0' }).rateLimits.otpAddressPerHour).toBe(0);
    // The per-IP start limit is 24 addresses' worth (an office behind one address), and follows a 0.
    expect(loadConfig({ RATE_LIMIT_OTP_PER_HOUR: '3' }).rateLimits.otpIpPerHour).toBe(72);
    expect(loadConfig({ RATE_LIMIT_OTP_PER_HOUR: '3', RATE_LIMIT_OTP_IP_PER_HOUR: '9' }).rateLimits.otpIpPerHour).toBe(9);
    expect(loadConfig({ RATE_LIMIT_OTP_PER_HOUR: '0' }).rateLimits.otpIpPerHour).toBe(0);
  });

  it('serves the console at ADMIN_PATH, /admin unless set, and refuses a path the service serves itself', () => {
    expect(loadConfig({}).adminPath).toBe('/admin');
    expect(loadConfig({ ADMIN_PATH: '/ops/console-7' }).adminPath).toBe('/ops/console-7');
    for (const bad of [
      'admin',
      '/',
      '/Admin',
      '/admin/',
      '/a b',
      '/api',
      '/api/admin',
      '/oidc/x',
      '/assets',
      '/signin',
      '/account/x',
      '/a/b/c/d',
    ]) {
      expect(() => loadConfig({ ADMIN_PATH: bad }), bad).toThrow(ConfigError);
    }
  });

  it('derives family origins from the cookie domain', () => {
    const config = loadConfig({ PUBLIC_URL: 'https://auth.example.com', COOKIE_DOMAIN: '.example.com' });
    expect(config.familyOrigins).toEqual(['https://auth.example.com', 'https://*.example.com', 'https://example.com']);
    expect(config.publicOrigin).toBe('https://auth.example.com');
  });

  it('picks per-network Esplora defaults', () => {
    expect(loadConfig({ BITCOIN_NETWORK: 'signet' }).esploraUrls[0]).toBe('https://mempool.space/signet/api');
  });

  it.each([
    ['PORT', 'eighty'],
    ['PORT', '70000'],
    ['PUBLIC_URL', 'not a url'],
    ['PUBLIC_URL', 'ftp://example.com'],
    ['COOKIE_DOMAIN', 'exa mple'],
    ['FAMILY_ORIGINS', 'https://example.com/path'],
    ['DATABASE_URL', 'mysql://x'],
    ['REDIS_URL', 'http://x'],
    ['BITCOIN_NETWORK', 'litecoin'],
    ['ESPLORA_URLS', 'not-a-url'],
    ['NOSTR_RELAYS', 'https://relay.example.com'],
    ['MIN_CONFIRMATIONS', '0'],
    ['ESPLORA_MAX_CONNECTIONS', '0'],
    ['CHAIN_TIP_SECONDS', '0'],
    ['CHAIN_CACHE_ENTRIES', 'many'],
    ['CHAIN_CACHE_MB', '0'],
    ['OC_SERVER_SECRET', 'abcd'],
    ['OC_AUTH_PRIVATE_JWK', '{"kty":"RSA"}'],
    ['TRUST_PROXY', 'maybe'],
    ['RATE_LIMIT_READ_PER_MIN', '-1'],
  ])('rejects a bad %s naming the variable', (variable, value) => {
    let thrown: unknown;
    try {
      loadConfig({ [variable]: value });
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(ConfigError);
    expect((thrown as ConfigError).variable).toBe(variable);
    expect((thrown as Error).message).toContain(variable);
  });

  it('configures identity providers from OAUTH_<NAME>_* variables', () => {
    const config = loadConfig({
      OAUTH_GITHUB_CLIENT_ID: 'id',
      OAUTH_GITHUB_CLIENT_SECRET: 'secret',
      OAUTH_ACME_CLIENT_ID: 'id2',
      OAUTH_ACME_CLIENT_SECRET: 'secret2',
      OAUTH_ACME_ISSUER: 'https://login.acme.test/',
      OAUTH_HALF_CLIENT_ID: 'only an id',
    });
    expect(config.oauthProviders.map((provider) => [provider.id, provider.issuer])).toEqual([
      ['acme', 'https://login.acme.test'],
      ['github', undefined],
    ]);
    expect(() => loadConfig({ OAUTH_OTHER_CLIENT_ID: 'a', OAUTH_OTHER_CLIENT_SECRET: 'b' })).toThrow(/OAUTH_OTHER_ISSUER/);
  });

  it('accepts secrets as hex or base64url', () => {
    const hex = 'ab'.repeat(32);
    expect(loadConfig({ OC_SERVER_SECRET: hex }).serverSecret).toHaveLength(32);
    expect(loadConfig({ OC_SERVER_SECRET: Buffer.alloc(40, 7).toString('base64url') }).serverSecret).toHaveLength(40);
  });
});

describe('mailSender', () => {
  it('keeps a MAIL_FROM that names its sender, and names a bare one (or none) after the brand, else oc-host', () => {
    expect(mailSender('Acme <a@acme.example>', 'Brand', 'host.example')).toBe('Acme <a@acme.example>');
    expect(mailSender(' a@acme.example ', 'Brand', 'host.example')).toBe('"Brand" <a@acme.example>');
    expect(mailSender('<a@acme.example>', undefined, 'host.example')).toBe('"oc-host" <a@acme.example>');
    expect(mailSender(undefined, 'Say "hi" \\ Co', 'host.example')).toBe('"Say \\"hi\\" \\\\ Co" <no-reply@host.example>');
    expect(mailSender(undefined, undefined, 'host.example')).toBe('"oc-host" <no-reply@host.example>');
  });
});

describe('originMatches', () => {
  it('matches exact origins and one wildcard label', () => {
    expect(originMatches('https://*.example.com', 'https://app.example.com')).toBe(true);
    expect(originMatches('https://*.example.com', 'https://a.b.example.com')).toBe(true);
    expect(originMatches('https://*.example.com', 'https://example.com')).toBe(false);
    expect(originMatches('https://*.example.com', 'https://evilexample.com')).toBe(false);
    expect(originMatches('https://*.example.com', 'http://app.example.com')).toBe(false);
    expect(originMatches('https://*.example.com', 'https://app.example.com.evil.net')).toBe(false);
    expect(originMatches('https://app.example.com', 'https://app.example.com')).toBe(true);
  });

  it('parses both sides with the URL parser and matches the host exactly', () => {
    const refused = [
      'https://evil.io?.example.com',
      'https://evil.io@x.example.com',
      'https://evil.io#.example.com',
      'https://evil.io/.example.com',
      'https://x.example.com/',
      'https://user:pass@x.example.com',
      'https://example.com.evil.io',
      'https://xexample.com',
      'https://APP.example.com',
      'https://app.example.com.',
      'https://app.example.com:443',
      'https://app.example.com:8443',
      'null',
      '',
      'https://',
    ];
    for (const origin of refused) expect(originMatches('https://*.example.com', origin), origin).toBe(false);
    expect(originMatches('https://app.example.com', 'https://app.example.com/')).toBe(false);
    expect(originMatches('https://app.example.com', 'https://evil.io@app.example.com')).toBe(false);
    expect(originMatches('http://*.example.test:8080', 'http://a.example.test:8080')).toBe(true);
    expect(originMatches('http://*.example.test:8080', 'http://a.example.test')).toBe(false);
    expect(originMatches('https://*.example.com', 'https://deep.app.example.com')).toBe(true);
  });
});

describe('version', () => {
  it('matches package.json', () => {
    const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string };
    expect(VERSION).toBe(pkg.version);
  });
});

describe('SQLITE_DRIVER', () => {
  it('defaults to auto, accepts the two libraries, refuses anything else by name', () => {
    expect(loadConfig({}).sqliteDriver).toBe('auto');
    expect(loadConfig({ SQLITE_DRIVER: 'better-sqlite3' }).sqliteDriver).toBe('better-sqlite3');
    expect(() => loadConfig({ SQLITE_DRIVER: 'sqlite3' })).toThrow(/SQLITE_DRIVER/);
  });

  it('refuses node on a Node without node:sqlite, and takes it where it exists', () => {
    if (nodeSqliteSupported()) {
      expect(loadConfig({ SQLITE_DRIVER: 'node' }).sqliteDriver).toBe('node');
      expect(resolveSqliteDriver('auto')).toBe('node');
    } else {
      expect(() => loadConfig({ SQLITE_DRIVER: 'node' })).toThrow(/SQLITE_DRIVER is node, which needs Node 22\.13/);
      expect(resolveSqliteDriver('auto')).toBe('better-sqlite3');
    }
    expect(nodeSqliteSupported('20.20.2')).toBe(false);
    expect(nodeSqliteSupported('22.12.0')).toBe(false);
    expect(nodeSqliteSupported('22.13.0')).toBe(true);
    expect(nodeSqliteSupported('24.0.0')).toBe(true);
  });
});
