/**
 * Configuration: parsed and validated once at start into a frozen object
 * (docs/protocol.md §1). Domain code never reads `process.env`; it is handed the
 * pieces of this object it needs. A bad setting throws a {@link ConfigError}
 * naming the variable, which stops the start.
 */
import { isJsonObject } from './json.js';
import { nodeSqliteSupported, type SqliteDriverChoice } from './storage/index.js';

export type BitcoinNetwork = 'mainnet' | 'testnet' | 'signet' | 'regtest';
const BITCOIN_NETWORKS: readonly BitcoinNetwork[] = ['mainnet', 'testnet', 'signet', 'regtest'];

export interface OAuthProviderConfig {
  /** Lowercase provider name as used in paths: `github`, `google`, or any configured name. */
  readonly id: string;
  readonly clientId: string;
  readonly clientSecret: string;
  /** Issuer URL for OpenID Connect discovery; undefined for GitHub (plain OAuth 2). */
  readonly issuer: string | undefined;
}

export interface Config {
  /**
   * Every variable the settings were read from that was set, as given,
   * secrets included: only the admin API's settings view reads it, and it
   * masks them (src/features/admin/settings.ts).
   */
  readonly environment: Readonly<Record<string, string>>;
  /** The variables read but not set, whose defaults are in force. */
  readonly defaulted: readonly string[];
  readonly port: number;
  readonly host: string;
  readonly publicUrl: string;
  readonly publicOrigin: string;
  readonly cookieDomain: string | undefined;
  /** Allowed browser origins; entries may hold one leading `*.` wildcard label. */
  readonly familyOrigins: readonly string[];
  readonly databaseUrl: string;
  /** `SQLITE_DRIVER`: the SQLite library (docs/operations.md "SQLite drivers"). */
  readonly sqliteDriver: SqliteDriverChoice;
  readonly redisUrl: string | undefined;
  readonly authPrivateJwk: Readonly<Record<string, unknown>> | undefined;
  readonly serverSecret: Uint8Array | undefined;
  readonly bitcoinNetwork: BitcoinNetwork;
  readonly esploraUrls: readonly string[];
  /** The chain client and its answers cached by block (docs/performance.md "The chain"). */
  readonly chain: {
    /** ESPLORA_MAX_CONNECTIONS: requests in flight per Esplora base, each on a kept-alive connection. */
    readonly maxConnections: number;
    /** CHAIN_TIP_SECONDS: how often the tip is read while requests come. */
    readonly tipSeconds: number;
    /** CHAIN_CACHE_ENTRIES: addresses whose UTXOs are held in memory at most. */
    readonly cacheEntries: number;
    /** CHAIN_CACHE_MB: memory those answers may take at most, in MiB (estimated). */
    readonly cacheMegabytes: number;
  };
  readonly minConfirmations: number;
  readonly nostrRelays: readonly string[];
  readonly smtpUrl: string | undefined;
  readonly mailFrom: string;
  readonly oauthProviders: readonly OAuthProviderConfig[];
  readonly contactTo: string | undefined;
  /** BRAND_*: the operator's brand in the pages and the e-mails (docs/pages.md "Your brand"). */
  readonly brand: Brand;
  readonly trustProxy: boolean;
  readonly rateLimits: {
    readonly readPerMinute: number;
    readonly authPerMinute: number;
    /** E-mail code starts per address and client network per hour (docs/protocol.md §4 "Rate limits"). */
    readonly otpPerHour: number;
    /**
     * E-mail code starts per client IP per hour, whatever the addresses;
     * default 24 × `otpPerHour`, so an office or a campus behind one address
     * is not locked out (docs/protocol.md §4 "Rate limits").
     */
    readonly otpIpPerHour: number;
    /**
     * E-mail code starts per address per hour from all clients together;
     * default 10 × `otpPerHour`, which is per address and client network
     * (docs/protocol.md §4 "Rate limits").
     */
    readonly otpAddressPerHour: number;
    readonly contactPerHour: number;
    /**
     * Posts of the device verification page per client network per hour:
     * each code typed, and each answer to a code (docs/protocol.md §8 "Devices").
     */
    readonly deviceCodePerHour: number;
  };
  /** OIDC_DEVICE_POLL_SECONDS: how long a device waits between polls of the token endpoint (RFC 8628 `interval`). */
  readonly oidcDevicePollSeconds: number;
  readonly checkCacheSeconds: number;
  /** ACTIVITY_RETENTION_DAYS: how long security events are kept (docs/protocol.md §6 "Activity"). */
  readonly activityRetentionDays: number;
  /** AUDIT_RETENTION_DAYS: how long the operators' audit log is kept (docs/operations.md "Operators and the audit log"). */
  readonly auditRetentionDays: number;
  /** ADMIN_PATH: where the operators' console is served (docs/operations.md "The console"). */
  readonly adminPath: string;
  /** NOTIFY_NEW_SIGNIN: mail a notice of a sign-in from a new device (docs/protocol.md §6 "New sign-in notice"); default on with SMTP_URL. */
  readonly notifyNewSignin: boolean;
  /** WEBHOOK_TIMEOUT_SECONDS: how long one webhook or back-channel logout attempt may take (docs/protocol.md §6 "Webhooks", §8 "Logout"). */
  readonly webhookTimeoutSeconds: number;
  /** WEBHOOK_RETRY_SECONDS: the first retry's delay; each later one is three times longer, at most 6 hours. */
  readonly webhookRetrySeconds: number;
  /** WEBHOOK_ALLOW_PRIVATE: webhook and back-channel logout endpoints may be addresses that are not globally reachable (docs/protocol.md §6 "Webhooks"). */
  readonly webhookAllowPrivate: boolean;
  /** Connection limits of the HTTP server (docs/operations.md "Slow clients"). */
  readonly http: {
    /** Whole request line and headers must arrive within this. */
    readonly headersTimeoutSeconds: number;
    /** Whole request, body included, must arrive within this. */
    readonly requestTimeoutSeconds: number;
    /** An idle keep-alive connection is closed after this. */
    readonly keepAliveTimeoutSeconds: number;
    /** Open connections at most; further ones are closed at once. */
    readonly maxConnections: number;
  };
  readonly metricsPort: number | undefined;
  readonly logLevel: string;
}

/** A setting that cannot be used; the process exits 78 naming `variable` (docs/errors.md "Internal errors"). */
export class ConfigError extends Error {
  readonly code = 'bad_config';
  readonly variable: string;
  constructor(variable: string, message: string) {
    super(`config: ${variable} ${message}`);
    this.name = 'ConfigError';
    this.variable = variable;
  }
}

type Env = Readonly<Record<string, string | undefined>>;

const DEFAULT_ESPLORA: Record<BitcoinNetwork, readonly string[]> = {
  mainnet: ['https://mempool.space/api', 'https://blockstream.info/api'],
  testnet: ['https://mempool.space/testnet/api', 'https://blockstream.info/testnet/api'],
  signet: ['https://mempool.space/signet/api', 'https://blockstream.info/signet/api'],
  regtest: ['http://127.0.0.1:3002'],
};

const DEFAULT_RELAYS = ['wss://relay.damus.io', 'wss://nos.lol', 'wss://relay.primal.net'];

function read(env: Env, name: string): string | undefined {
  const value = env[name];
  if (value === undefined) return undefined;
  const trimmed = value.trim();
  return trimmed === '' ? undefined : trimmed;
}

/** The default e-mail start ceiling per address is this many networks' worth of starts (docs/protocol.md §4 "Rate limits"). */
const OTP_ADDRESS_NETWORKS = 10;

/**
 * The default e-mail start limit per client IP is this many addresses'
 * worth of starts per address and network: 120 an hour, so thirty people of
 * one office can each ask for a code at once (docs/protocol.md §4 "Rate limits").
 */
const OTP_IP_ADDRESSES = 24;

function integer(env: Env, name: string, fallback: number, min: number, max: number): number {
  const raw = read(env, name);
  if (raw === undefined) return fallback;
  if (!/^\d+$/.test(raw)) throw new ConfigError(name, `must be a whole number, got "${raw}"`);
  const value = Number(raw);
  if (value < min || value > max) throw new ConfigError(name, `must be between ${min} and ${max}, got ${value}`);
  return value;
}

function bool(env: Env, name: string): boolean {
  const raw = read(env, name)?.toLowerCase();
  if (raw === undefined) return false;
  if (['1', 'true', 'yes', 'on'].includes(raw)) return true;
  if (['0', 'false', 'no', 'off'].includes(raw)) return false;
  throw new ConfigError(name, `must be true or false, got "${raw}"`);
}

function url(name: string, raw: string, protocols: readonly string[]): URL {
  let parsed: URL;
  try {
    parsed = new URL(raw);
  } catch {
    throw new ConfigError(name, `is not a URL: "${raw}"`);
  }
  if (!protocols.includes(parsed.protocol)) {
    throw new ConfigError(name, `must use ${protocols.join(' or ')}, got "${parsed.protocol}"`);
  }
  return parsed;
}

/** The first path segments the service's own routes and pages hold: the console cannot sit under them. */
const RESERVED_SEGMENTS = new Set(['api', 'api-explorer', 'oidc', 'assets', 'signin', 'account', 'sudo', 'healthz', 'readyz', 'metrics']);

/** ADMIN_PATH: one to three lower-case segments of letters, digits and `-`, the first not one the service uses itself. */
function adminPath(env: Env): string {
  const raw = read(env, 'ADMIN_PATH') ?? '/admin';
  if (!/^(?:\/[a-z0-9][a-z0-9-]{0,31}){1,3}$/.test(raw)) {
    throw new ConfigError('ADMIN_PATH', `must be a path like /admin (lower-case letters, digits and -), got "${raw}"`);
  }
  const first = raw.split('/')[1] ?? '';
  if (RESERVED_SEGMENTS.has(first)) throw new ConfigError('ADMIN_PATH', `cannot be under /${first}, which the service serves itself`);
  return raw;
}

function list(env: Env, name: string): string[] | undefined {
  const raw = read(env, name);
  if (raw === undefined) return undefined;
  const items = raw
    .split(',')
    .map((item) => item.trim())
    .filter((item) => item !== '');
  if (items.length === 0) throw new ConfigError(name, 'must list at least one entry');
  return items;
}

/** Decodes a secret given as hex or base64url; at least 32 bytes. */
function secret(env: Env, name: string): Uint8Array | undefined {
  const raw = read(env, name);
  if (raw === undefined) return undefined;
  let bytes: Buffer;
  if (/^[0-9a-fA-F]+$/.test(raw) && raw.length % 2 === 0) bytes = Buffer.from(raw, 'hex');
  else if (/^[A-Za-z0-9_-]+={0,2}$/.test(raw)) bytes = Buffer.from(raw, 'base64url');
  else throw new ConfigError(name, 'must be hex or base64url');
  if (bytes.length < 32) throw new ConfigError(name, `must hold at least 32 bytes, got ${bytes.length}`);
  return new Uint8Array(bytes);
}

function privateJwk(env: Env, name: string): Record<string, unknown> | undefined {
  const raw = read(env, name);
  if (raw === undefined) return undefined;
  const text = raw.startsWith('{') ? raw : Buffer.from(raw, 'base64url').toString('utf8');
  let jwk: unknown;
  try {
    jwk = JSON.parse(text);
  } catch {
    throw new ConfigError(name, 'must be a JWK as JSON or as base64url of the JSON');
  }
  if (!isJsonObject(jwk)) throw new ConfigError(name, 'must be a JSON object');
  const key = jwk;
  if (key.kty !== 'OKP' || key.crv !== 'Ed25519' || typeof key.d !== 'string' || typeof key.x !== 'string') {
    throw new ConfigError(name, 'must be an Ed25519 private JWK (kty OKP, crv Ed25519, with d and x)');
  }
  return key;
}

/** A family-origin entry, parsed once: an exact origin, or a scheme, host suffix and port for `*.` entries. */
type OriginPattern =
  | { readonly kind: 'exact'; readonly origin: string }
  | { readonly kind: 'wildcard'; readonly protocol: string; readonly suffix: string; readonly port: string }
  | { readonly kind: 'invalid' };

const WILDCARD_PLACEHOLDER = 'wildcard-label';
const parsedPatterns = new Map<string, OriginPattern>();

function parsePattern(pattern: string): OriginPattern {
  let cached = parsedPatterns.get(pattern);
  if (cached !== undefined) return cached;
  const wildcard = pattern.includes('://*.');
  const parsed = parseOrigin(wildcard ? pattern.replace('://*.', `://${WILDCARD_PLACEHOLDER}.`) : pattern, false);
  if (parsed === undefined) cached = { kind: 'invalid' };
  else if (!wildcard) cached = { kind: 'exact', origin: parsed.origin };
  else
    cached = { kind: 'wildcard', protocol: parsed.protocol, suffix: parsed.hostname.slice(WILDCARD_PLACEHOLDER.length), port: parsed.port };
  parsedPatterns.set(pattern, cached);
  return cached;
}

/**
 * Parses an origin with the URL parser. With `exact`, the text must be the
 * origin's own serialization, as a browser sends it in `Origin`: scheme, a
 * lowercase host and a non-default port, nothing else. So userinfo
 * (`https://evil.io@x.example.com`), a query (`https://evil.io?.example.com`),
 * a path, an uppercase host or an explicit default port never match.
 */
function parseOrigin(text: string, exact: boolean): URL | undefined {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return undefined;
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return undefined;
  if (url.username !== '' || url.password !== '' || url.search !== '' || url.hash !== '' || url.pathname !== '/') return undefined;
  if (exact && url.origin !== text) return undefined;
  return url;
}

/**
 * Whether a browser origin matches a `FAMILY_ORIGINS` entry: an exact origin,
 * or `https://*.example.com` (any subdomain, at any depth, of that host, with
 * the same scheme and port; never the apex itself). Both sides go through the
 * URL parser and hosts are compared exactly on a label boundary. Kept here so
 * that config validation and the CORS check agree on one definition.
 */
export function originMatches(pattern: string, origin: string): boolean {
  const rule = parsePattern(pattern);
  if (rule.kind === 'invalid') return false;
  const candidate = parseOrigin(origin, true);
  if (candidate === undefined) return false;
  if (rule.kind === 'exact') return candidate.origin === rule.origin;
  return (
    candidate.protocol === rule.protocol &&
    candidate.port === rule.port &&
    // The suffix keeps its leading dot (".example.com"): a label boundary.
    candidate.hostname.endsWith(rule.suffix) &&
    candidate.hostname.length > rule.suffix.length
  );
}

function oauthProviders(env: Env): OAuthProviderConfig[] {
  const names = new Set<string>();
  for (const key of Object.keys(env)) {
    const match = /^OAUTH_([A-Z0-9_]+?)_(CLIENT_ID|CLIENT_SECRET|ISSUER)$/.exec(key);
    if (match?.[1]) names.add(match[1]);
  }
  const providers: OAuthProviderConfig[] = [];
  for (const name of [...names].sort()) {
    const clientId = read(env, `OAUTH_${name}_CLIENT_ID`);
    const clientSecret = read(env, `OAUTH_${name}_CLIENT_SECRET`);
    const issuerRaw = read(env, `OAUTH_${name}_ISSUER`);
    if (clientId === undefined || clientSecret === undefined) continue;
    const id = name.toLowerCase().replace(/_/g, '-');
    let issuer: string | undefined;
    if (issuerRaw !== undefined) issuer = url(`OAUTH_${name}_ISSUER`, issuerRaw, ['https:', 'http:']).href.replace(/\/$/, '');
    else if (id === 'google') issuer = 'https://accounts.google.com';
    else if (id !== 'github') {
      throw new ConfigError(`OAUTH_${name}_ISSUER`, `is required for provider "${id}" (only github and google are known)`);
    }
    providers.push({ id, clientId, clientSecret, issuer });
  }
  return providers;
}

/** The operator's brand; every member unset keeps the service's own look. */
export interface Brand {
  /** BRAND_NAME: shown in the pages' header and titles and named in the e-mails; unset: "oc-host" in the pages, the host in the e-mails. */
  readonly name: string | undefined;
  /** BRAND_LOGO_URL: a `data:image/…` URL or a path on this host (`/…`); shown before the name. */
  readonly logoUrl: string | undefined;
  /** BRAND_ACCENT: `#rgb` or `#rrggbb`, lowercased to `#rrggbb`; the pages adjust it per theme for contrast. */
  readonly accent: string | undefined;
  /** BRAND_SUPPORT_URL: an https or mailto: link for help, in the pages' footer and the e-mails. */
  readonly supportUrl: string | undefined;
}

/** The longest data: logo accepted (it is sent in every page). */
const MAX_BRAND_LOGO_BYTES = 64 * 1024;

/**
 * The mails' `From`: MAIL_FROM as given when it names a sender
 * (`Name <address>`); a bare address (or none: `no-reply@` the public host)
 * gets BRAND_NAME as its name, else "oc-host" (docs/pages.md "Your brand").
 */
export function mailSender(given: string | undefined, brandName: string | undefined, host: string): string {
  const trimmed = given?.trim();
  if (trimmed !== undefined && /^[^<]*\S[^<]*<[^<>]+>$/.test(trimmed)) return trimmed;
  const address = trimmed === undefined || trimmed === '' ? `no-reply@${host}` : trimmed.replace(/^<(.*)>$/, '$1').trim();
  // A quoted display name (RFC 5322 §3.2.4): quotes and backslashes escaped.
  return `"${(brandName ?? 'oc-host').replace(/["\\]/g, '\\$&')}" <${address}>`;
}

function brandOf(env: Env): Brand {
  const name = read(env, 'BRAND_NAME')?.trim();
  if (name !== undefined && (name.length === 0 || [...name].length > 64 || /[\p{Cc}\u2028\u2029\u202a-\u202e\u2066-\u2069]/u.test(name))) {
    throw new ConfigError('BRAND_NAME', 'must be 1 to 64 characters without control or bidirectional-override characters');
  }
  const logoUrl = read(env, 'BRAND_LOGO_URL');
  if (logoUrl !== undefined) {
    const dataUrl = /^data:image\/(png|jpeg|gif|webp|svg\+xml)(;base64)?,/.test(logoUrl);
    const path = /^\/(?!\/)[A-Za-z0-9._~!$&'()*+,;=:@%/-]*$/.test(logoUrl);
    if (!dataUrl && !path)
      throw new ConfigError(
        'BRAND_LOGO_URL',
        'must be a data:image/… URL or a path on this host starting with "/" (the pages load images from this host only)',
      );
    if (logoUrl.length > MAX_BRAND_LOGO_BYTES) throw new ConfigError('BRAND_LOGO_URL', `must be at most ${MAX_BRAND_LOGO_BYTES} bytes`);
  }
  let accent = read(env, 'BRAND_ACCENT')?.toLowerCase();
  if (accent !== undefined) {
    if (!/^#([0-9a-f]{3}|[0-9a-f]{6})$/.test(accent))
      throw new ConfigError('BRAND_ACCENT', `must be a colour as #rgb or #rrggbb, got "${accent}"`);
    if (accent.length === 4) accent = `#${[...accent.slice(1)].map((digit) => digit + digit).join('')}`;
  }
  const supportUrl = read(env, 'BRAND_SUPPORT_URL');
  if (supportUrl !== undefined) {
    const parsed = url('BRAND_SUPPORT_URL', supportUrl, ['https:', 'http:', 'mailto:']);
    if (parsed.protocol === 'http:' && !['localhost', '127.0.0.1', '[::1]'].includes(parsed.hostname)) {
      throw new ConfigError('BRAND_SUPPORT_URL', 'must use https or mailto: (http only on loopback)');
    }
  }
  return Object.freeze({ name, logoUrl, accent, supportUrl });
}

/**
 * The environment as `loadConfig` reads it, recording each variable it asks
 * for: the ones set (as given) and the ones left to their defaults.
 */
function recorded(given: Env): { readonly env: Env; readonly set: Map<string, string>; readonly defaulted: Set<string> } {
  const set = new Map<string, string>();
  const defaulted = new Set<string>();
  const env = new Proxy(given, {
    get(target, name) {
      const value = Reflect.get(target, name) as string | undefined;
      if (typeof name === 'string') {
        if (value !== undefined && value.trim() !== '') set.set(name, value.trim());
        else defaulted.add(name);
      }
      return value;
    },
  });
  return { env, set, defaulted };
}

export function loadConfig(given: Env = process.env): Config {
  const reading = recorded(given);
  const env = reading.env;
  const port = integer(env, 'PORT', 8787, 0, 65535);
  const host = read(env, 'HOST') ?? '127.0.0.1';
  const publicUrlRaw = read(env, 'PUBLIC_URL') ?? `http://localhost:${port}`;
  const publicUrl = url('PUBLIC_URL', publicUrlRaw, ['http:', 'https:']);
  const publicUrlText = publicUrl.href.replace(/\/$/, '');

  let cookieDomain = read(env, 'COOKIE_DOMAIN');
  if (cookieDomain !== undefined) {
    if (!/^\.?[a-z0-9-]+(\.[a-z0-9-]+)+$/i.test(cookieDomain)) {
      throw new ConfigError('COOKIE_DOMAIN', `must be a domain such as .example.com, got "${cookieDomain}"`);
    }
    cookieDomain = cookieDomain.toLowerCase();
  }

  const familyOrigins = list(env, 'FAMILY_ORIGINS') ?? [
    publicUrl.origin,
    ...(cookieDomain === undefined ? [] : [`https://*.${cookieDomain.replace(/^\./, '')}`, `https://${cookieDomain.replace(/^\./, '')}`]),
  ];
  for (const origin of familyOrigins) {
    if (!/^https?:\/\/(\*\.)?[^/*]+$/.test(origin)) {
      throw new ConfigError(
        'FAMILY_ORIGINS',
        `entry "${origin}" must be an origin such as https://app.example.com or https://*.example.com`,
      );
    }
  }

  const sqliteDriver = (read(env, 'SQLITE_DRIVER') ?? 'auto') as SqliteDriverChoice;
  if (!['auto', 'node', 'better-sqlite3'].includes(sqliteDriver)) {
    throw new ConfigError('SQLITE_DRIVER', `must be auto, node or better-sqlite3, got "${sqliteDriver}"`);
  }
  if (sqliteDriver === 'node' && !nodeSqliteSupported()) {
    throw new ConfigError('SQLITE_DRIVER', `is node, which needs Node 22.13 or later (this is ${process.versions.node})`);
  }

  const databaseUrl = read(env, 'DATABASE_URL') ?? 'sqlite:./data/oc.sqlite';
  if (!/^(sqlite:|postgres:\/\/|postgresql:\/\/)/.test(databaseUrl)) {
    throw new ConfigError('DATABASE_URL', 'must start with sqlite: or postgres://');
  }
  const redisUrl = read(env, 'REDIS_URL');
  if (redisUrl !== undefined) url('REDIS_URL', redisUrl, ['redis:', 'rediss:']);

  const networkRaw = (read(env, 'BITCOIN_NETWORK') ?? 'mainnet').toLowerCase();
  if (!BITCOIN_NETWORKS.includes(networkRaw as BitcoinNetwork)) {
    throw new ConfigError('BITCOIN_NETWORK', `must be one of ${BITCOIN_NETWORKS.join(', ')}, got "${networkRaw}"`);
  }
  const bitcoinNetwork = networkRaw as BitcoinNetwork;

  const esploraUrls = (list(env, 'ESPLORA_URLS') ?? [...DEFAULT_ESPLORA[bitcoinNetwork]]).map((base) =>
    url('ESPLORA_URLS', base, ['http:', 'https:']).href.replace(/\/$/, ''),
  );
  const nostrRelays = (list(env, 'NOSTR_RELAYS') ?? DEFAULT_RELAYS).map((relay) =>
    url('NOSTR_RELAYS', relay, ['ws:', 'wss:']).href.replace(/\/$/, ''),
  );

  const smtpUrl = read(env, 'SMTP_URL');
  if (smtpUrl !== undefined) url('SMTP_URL', smtpUrl, ['smtp:', 'smtps:']);
  const brand = brandOf(env);
  const mailFrom = mailSender(read(env, 'MAIL_FROM'), brand.name, publicUrl.hostname);

  const headersTimeoutSeconds = integer(env, 'HTTP_HEADERS_TIMEOUT_SECONDS', 10, 1, 3600);
  const requestTimeoutSeconds = integer(env, 'HTTP_REQUEST_TIMEOUT_SECONDS', 30, 1, 3600);
  // Node refuses a headers timeout longer than the whole-request timeout.
  if (headersTimeoutSeconds > requestTimeoutSeconds) {
    throw new ConfigError('HTTP_HEADERS_TIMEOUT_SECONDS', `must not exceed HTTP_REQUEST_TIMEOUT_SECONDS (${requestTimeoutSeconds})`);
  }
  const http = Object.freeze({
    headersTimeoutSeconds,
    requestTimeoutSeconds,
    keepAliveTimeoutSeconds: integer(env, 'HTTP_KEEP_ALIVE_TIMEOUT_SECONDS', 72, 1, 3600),
    maxConnections: integer(env, 'HTTP_MAX_CONNECTIONS', 4096, 1, 1_000_000),
  });

  const metricsPortRaw = read(env, 'METRICS_PORT');
  const metricsPort = metricsPortRaw === undefined ? undefined : integer(env, 'METRICS_PORT', 0, 1, 65535);

  const otpPerHour = integer(env, 'RATE_LIMIT_OTP_PER_HOUR', 5, 0, 1_000_000);
  const config: Config = {
    port,
    host,
    publicUrl: publicUrlText,
    publicOrigin: publicUrl.origin,
    cookieDomain,
    familyOrigins: Object.freeze(familyOrigins),
    databaseUrl,
    sqliteDriver,
    redisUrl,
    authPrivateJwk: privateJwk(env, 'OC_AUTH_PRIVATE_JWK'),
    serverSecret: secret(env, 'OC_SERVER_SECRET'),
    bitcoinNetwork,
    esploraUrls: Object.freeze(esploraUrls),
    chain: Object.freeze({
      maxConnections: integer(env, 'ESPLORA_MAX_CONNECTIONS', 16, 1, 1024),
      tipSeconds: integer(env, 'CHAIN_TIP_SECONDS', 5, 1, 600),
      cacheEntries: integer(env, 'CHAIN_CACHE_ENTRIES', 10_000, 1, 10_000_000),
      cacheMegabytes: integer(env, 'CHAIN_CACHE_MB', 32, 1, 65_536),
    }),
    minConfirmations: integer(env, 'MIN_CONFIRMATIONS', 1, 1, 1000),
    nostrRelays: Object.freeze(nostrRelays),
    smtpUrl,
    mailFrom,
    oauthProviders: Object.freeze(oauthProviders(env)),
    contactTo: read(env, 'CONTACT_TO'),
    brand,
    trustProxy: bool(env, 'TRUST_PROXY'),
    rateLimits: Object.freeze({
      readPerMinute: integer(env, 'RATE_LIMIT_READ_PER_MIN', 60, 0, 1_000_000),
      authPerMinute: integer(env, 'RATE_LIMIT_AUTH_PER_MIN', 20, 0, 1_000_000),
      otpPerHour,
      otpIpPerHour: integer(env, 'RATE_LIMIT_OTP_IP_PER_HOUR', otpPerHour * OTP_IP_ADDRESSES, 0, 1_000_000),
      // Ten networks' worth of starts: a few networks cannot use up the address for its owner.
      otpAddressPerHour: integer(env, 'RATE_LIMIT_OTP_ADDRESS_PER_HOUR', otpPerHour * OTP_ADDRESS_NETWORKS, 0, 1_000_000),
      contactPerHour: integer(env, 'RATE_LIMIT_CONTACT_PER_HOUR', 5, 0, 1_000_000),
      deviceCodePerHour: integer(env, 'RATE_LIMIT_DEVICE_CODE_PER_HOUR', 20, 0, 1_000_000),
    }),
    oidcDevicePollSeconds: integer(env, 'OIDC_DEVICE_POLL_SECONDS', 5, 1, 60),
    checkCacheSeconds: integer(env, 'CHECK_CACHE_SECONDS', 60, 0, 86_400),
    activityRetentionDays: integer(env, 'ACTIVITY_RETENTION_DAYS', 180, 1, 3650),
    auditRetentionDays: integer(env, 'AUDIT_RETENTION_DAYS', 400, 30, 3650),
    adminPath: adminPath(env),
    notifyNewSignin: read(env, 'NOTIFY_NEW_SIGNIN') === undefined ? smtpUrl !== undefined : bool(env, 'NOTIFY_NEW_SIGNIN'),
    webhookTimeoutSeconds: integer(env, 'WEBHOOK_TIMEOUT_SECONDS', 10, 1, 60),
    webhookRetrySeconds: integer(env, 'WEBHOOK_RETRY_SECONDS', 10, 1, 3600),
    webhookAllowPrivate: bool(env, 'WEBHOOK_ALLOW_PRIVATE'),
    http,
    metricsPort,
    logLevel: read(env, 'LOG_LEVEL') ?? 'info',
    environment: Object.freeze(Object.fromEntries([...reading.set].sort(([a], [b]) => a.localeCompare(b)))),
    defaulted: Object.freeze([...reading.defaulted].filter((name) => !reading.set.has(name)).sort()),
  };
  return Object.freeze(config);
}
