/**
 * Registered OpenID clients (docs/protocol.md §8 "Clients"): the operator's
 * (`oc-host oidc clients …`) and those a Connect app registers. A client
 * is confidential (a secret, shown once, stored as its SHA-256 and compared
 * in constant time) or public (`token_endpoint_auth_method: none`: single
 * page and native apps, which must use PKCE). The metadata is checked by the
 * provider library itself before it is stored, so a client that is stored
 * is one the provider accepts.
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { isIP } from 'node:net';
import type { AdapterPayload } from 'oidc-provider';
import { randomHex } from '../../platform/crypto.js';
import { OcError } from '../../platform/errors.js';
import type { OidcClientRecord, OidcStore } from './store.js';
import { OIDC_ALGORITHMS, type OidcAlgorithm } from './keys.js';

/** The token endpoint authentication methods a client may register (no shared-key JWTs: the secret is only kept hashed). */
export const CLIENT_AUTH_METHODS = ['client_secret_basic', 'client_secret_post', 'none'] as const;
export type ClientAuthMethod = (typeof CLIENT_AUTH_METHODS)[number];

/** What an operator or an app says of a new client. */
export interface ClientInput {
  readonly client_name: string;
  readonly redirect_uris: readonly string[];
  readonly post_logout_redirect_uris?: readonly string[] | undefined;
  /**
   * How the client authenticates at the token endpoint: `client_secret_basic`
   * (the default) or `client_secret_post` with a secret, or `none` for a
   * single-page or native app, which must then use PKCE.
   */
  readonly token_endpoint_auth_method?: ClientAuthMethod | undefined;
  readonly logo_uri?: string | undefined;
  readonly client_uri?: string | undefined;
  readonly id_token_signed_response_alg?: OidcAlgorithm | undefined;
  /** `pairwise`: `sub` differs per client (docs/protocol.md §8 "Claims"). */
  readonly subject_type?: 'public' | 'pairwise' | undefined;
  readonly backchannel_logout_uri?: string | undefined;
  /** Scopes the client may ask for; all of them when absent. */
  readonly scope?: string | undefined;
  /**
   * `native` for an app on the person's device (RFC 8252): only it may use a
   * plain-http loopback redirect under the production rules; `web` (the
   * default) otherwise.
   */
  readonly application_type?: 'web' | 'native' | undefined;
  /**
   * A machine client (a service calling an API, docs/protocol.md §8 "APIs"):
   * the `client_credentials` grant only, no person, no redirect URI.
   */
  readonly machine?: boolean | undefined;
  /**
   * A device app (RFC 8628, docs/protocol.md §8 "Devices"): the device
   * authorization grant and refresh tokens; with redirect URIs, the
   * authorization code grant too.
   */
  readonly device?: boolean | undefined;
  /** The scopes of the operator's APIs the client may ask for; none when absent. */
  readonly api_scopes?: readonly string[] | undefined;
  /** The client must push its authorization requests first (RFC 9126); a plain one is refused. */
  readonly require_pushed_authorization_requests?: boolean | undefined;
}

/** A client as the operator and its owner see it: its metadata without the secret's hash. */
export interface ClientView {
  readonly client_id: string;
  readonly metadata: Readonly<Record<string, unknown>>;
  readonly owner_app_id: string | null;
  readonly first_party: boolean;
  readonly created_at: number;
  readonly updated_at: number;
  /** When the operator held it (Unix ms), or null. */
  readonly disabled_at: number | null;
}

/** A client just created or given a new secret: the secret is in this answer and nowhere else. */
export interface IssuedClient extends ClientView {
  readonly client_secret?: string;
}

const SECRET_HASH_PREFIX = 'sha256:';

/** The metadata member naming the Connect app that registered a client (set by the registration policy, never by the client). */
export const OWNER_APP_METADATA = 'oc_owner_app';
/**
 * When the operator held the client (Unix ms), kept beside its metadata:
 * a held client is not found by the provider (src/features/oidc/adapter.ts),
 * so it can start no sign-in and redeem no code or token.
 */
export const DISABLED_METADATA = 'oc_disabled_at';

/** What the operator may change of a registered client (the console, docs/api.md "Admin"). */
export interface ClientEdit {
  readonly client_name?: string | undefined;
  readonly redirect_uris?: readonly string[] | undefined;
  readonly post_logout_redirect_uris?: readonly string[] | undefined;
  readonly logo_uri?: string | null | undefined;
  readonly client_uri?: string | null | undefined;
  readonly policy_uri?: string | null | undefined;
  readonly tos_uri?: string | null | undefined;
  readonly backchannel_logout_uri?: string | null | undefined;
}
/**
 * The scopes of the operator's APIs a client may ask for (docs/protocol.md §8
 * "APIs"): set by the operator only; a registration by a Connect app cannot.
 */
export const API_SCOPES_METADATA = 'oc_api_scopes';

/** The API scopes a client's metadata allows it (none unless the operator said). */
export function apiScopesOf(metadata: Readonly<Record<string, unknown>>): ReadonlySet<string> {
  const scopes = metadata[API_SCOPES_METADATA];
  return new Set(Array.isArray(scopes) ? scopes.filter((scope): scope is string => typeof scope === 'string') : []);
}

/** Whether a stored `client_secret` is already in its hashed form. */
export function isHashedClientSecret(value: string): boolean {
  return value.startsWith(SECRET_HASH_PREFIX) && value.length === SECRET_HASH_PREFIX.length + 43;
}

/** The form a client secret is stored in. */
export function hashClientSecret(secret: string): string {
  return `${SECRET_HASH_PREFIX}${createHash('sha256').update(secret, 'utf8').digest('base64url')}`;
}

/** Whether `presented` is the secret whose hash is `stored`, in constant time. */
export function clientSecretMatches(stored: unknown, presented: unknown): boolean {
  if (typeof stored !== 'string' || typeof presented !== 'string' || !isHashedClientSecret(stored)) return false;
  const expected = Buffer.from(stored, 'utf8');
  const actual = Buffer.from(hashClientSecret(presented), 'utf8');
  return expected.length === actual.length && timingSafeEqual(expected, actual);
}

/** The metadata the provider library loads a client from. */
export function clientMetadataOf(record: OidcClientRecord): AdapterPayload {
  return { ...(JSON.parse(record.metadata) as AdapterPayload), client_id: record.client_id };
}

function viewOf(record: OidcClientRecord): ClientView {
  const {
    client_secret: _hidden,
    [OWNER_APP_METADATA]: _owner,
    [DISABLED_METADATA]: disabledAt,
    ...metadata
  } = clientMetadataOf(record) as Record<string, unknown>;
  return {
    client_id: record.client_id,
    metadata,
    disabled_at: typeof disabledAt === 'number' ? disabledAt : null,
    owner_app_id: record.owner_app_id,
    first_party: record.first_party,
    created_at: record.created_at,
    updated_at: record.updated_at,
  };
}

/** Checks metadata the way the provider will load it; throws `bad_request` with the library's reason. */
type ClientValidator = (metadata: Readonly<Record<string, unknown>>) => Promise<void>;

export interface ClientRegistryDeps {
  readonly store: OidcStore;
  readonly validate: ClientValidator;
  readonly now: () => number;
}

const CLIENT_ID_BYTES = 16;
const CLIENT_SECRET_BYTES = 32;

/** A new client id: `oc_` and 32 lowercase hex. */
export function newClientId(): string {
  return `oc_${randomHex(CLIENT_ID_BYTES)}`;
}

/** 256 bits from the operating system's CSPRNG, base64url. */
export function newSecret(): string {
  return randomBytes(CLIENT_SECRET_BYTES).toString('base64url');
}

/**
 * How long the origins of the registered redirect URIs are kept in memory for
 * the provider's CORS preflights, and how soon an origin not among them makes
 * them read again (a client registered on another instance, or by RFC 7591,
 * is allowed within that second; a flood of preflights from strangers costs
 * one read a second).
 */
const BROWSER_ORIGINS_TTL_MS = 30_000;
const BROWSER_ORIGINS_REREAD_MS = 1_000;

export class ClientRegistry {
  readonly #deps: ClientRegistryDeps;
  #browserOrigins: { readonly origins: ReadonlySet<string>; readonly at: number } | undefined;
  #reading: Promise<ReadonlySet<string>> | undefined;

  constructor(deps: ClientRegistryDeps) {
    this.#deps = deps;
  }

  /**
   * Whether `origin` is the origin of a redirect URI some client registered:
   * the origins a browser app may call the provider's token, userinfo and
   * revocation endpoints from (docs/protocol.md §8 "Endpoints"). A preflight
   * names no client, so this answers for all of them; the request itself is
   * then held to its own client's redirect URIs.
   */
  async isBrowserOrigin(origin: string): Promise<boolean> {
    const now = this.#deps.now();
    const known = this.#browserOrigins;
    if (known !== undefined && now - known.at < BROWSER_ORIGINS_TTL_MS) {
      if (known.origins.has(origin) || now - known.at < BROWSER_ORIGINS_REREAD_MS) return known.origins.has(origin);
    }
    return (await this.#readBrowserOrigins()).has(origin);
  }

  #readBrowserOrigins(): Promise<ReadonlySet<string>> {
    this.#reading ??= (async () => {
      try {
        const at = this.#deps.now();
        const origins = new Set<string>();
        for (const record of await this.#deps.store.listOidcClients()) {
          const uris = (JSON.parse(record.metadata) as { redirect_uris?: unknown }).redirect_uris;
          for (const uri of Array.isArray(uris) ? uris : []) {
            const parsed = typeof uri === 'string' ? URL.parse(uri) : null;
            if (parsed !== null && (parsed.protocol === 'https:' || parsed.protocol === 'http:')) origins.add(parsed.origin);
          }
        }
        this.#browserOrigins = { origins, at };
        return origins;
      } finally {
        this.#reading = undefined;
      }
    })();
    return this.#reading;
  }

  /** After a change here: the next preflight reads the clients again. */
  #changed(): void {
    this.#browserOrigins = undefined;
  }

  /** Registers a client; a confidential one's secret is in the answer only. */
  async create(
    input: ClientInput,
    options: { readonly ownerAppId?: string | null; readonly firstParty?: boolean } = {},
  ): Promise<IssuedClient> {
    const clientId = newClientId();
    const secret = input.token_endpoint_auth_method === 'none' ? undefined : newSecret();
    const metadata = metadataFor(input, clientId, secret);
    await this.#deps.validate(metadata);
    const at = this.#deps.now();
    const stored: Record<string, unknown> = { ...metadata };
    delete stored.client_id;
    if (secret !== undefined) stored.client_secret = hashClientSecret(secret);
    const record: OidcClientRecord = {
      client_id: clientId,
      metadata: JSON.stringify(stored),
      owner_app_id: options.ownerAppId ?? null,
      first_party: options.firstParty === true,
      created_at: at,
      updated_at: at,
    };
    if (!(await this.#deps.store.insertOidcClient(record))) throw new Error('oidc: a fresh client id was taken');
    this.#changed();
    return { ...viewOf(record), ...(secret === undefined ? {} : { client_secret: secret }) };
  }

  async find(clientId: string): Promise<ClientView | null> {
    const record = await this.#deps.store.findOidcClient(clientId);
    return record === null ? null : viewOf(record);
  }

  /** Whether `secret` is the client's current secret (constant time); false for an unknown or public client. */
  async secretMatches(clientId: string, secret: string): Promise<boolean> {
    const record = await this.#deps.store.findOidcClient(clientId);
    if (record === null) return false;
    return clientSecretMatches((JSON.parse(record.metadata) as { client_secret?: unknown }).client_secret, secret);
  }

  /** Every client; one app's when `ownerAppId` is given, the operator's own when it is null. */
  async list(ownerAppId?: string | null): Promise<ClientView[]> {
    return (await this.#deps.store.listOidcClients(ownerAppId)).map(viewOf);
  }

  /** A new secret for a confidential client; the old one stops working at once. */
  async rotateSecret(clientId: string): Promise<IssuedClient> {
    const record = await this.#deps.store.findOidcClient(clientId);
    if (record === null) throw new OcError('not_found', 'oidc: no such client');
    const metadata = JSON.parse(record.metadata) as Record<string, unknown>;
    if (metadata.token_endpoint_auth_method === 'none') throw new OcError('bad_request', 'oidc: a public client has no secret');
    const secret = newSecret();
    const at = this.#deps.now();
    const changed = JSON.stringify({ ...metadata, client_secret: hashClientSecret(secret) });
    if (!(await this.#deps.store.updateOidcClient(clientId, { metadata: changed }, at)))
      throw new OcError('not_found', 'oidc: no such client');
    return { ...viewOf({ ...record, metadata: changed, updated_at: at }), client_secret: secret };
  }

  /** Marks a client first-party (no consent screen) or not. */
  async setFirstParty(clientId: string, firstParty: boolean): Promise<ClientView> {
    const record = await this.#deps.store.findOidcClient(clientId);
    if (record === null) throw new OcError('not_found', 'oidc: no such client');
    const at = this.#deps.now();
    await this.#deps.store.updateOidcClient(clientId, { metadata: record.metadata, first_party: firstParty }, at);
    return viewOf({ ...record, first_party: firstParty, updated_at: at });
  }

  /**
   * Changes what the operator may change of a client (a value of null
   * removes an optional URI), checked as the provider would load it: 400
   * `bad_request` with the provider's reason, and nothing changes.
   */
  async edit(clientId: string, changes: ClientEdit): Promise<ClientView> {
    const record = await this.#deps.store.findOidcClient(clientId);
    if (record === null) throw new OcError('not_found', 'oidc: no such client');
    const metadata = JSON.parse(record.metadata) as Record<string, unknown>;
    for (const [name, value] of Object.entries(changes)) {
      if (value === undefined) continue;
      if (value === null) delete metadata[name];
      else metadata[name] = Array.isArray(value) ? [...value] : value;
    }
    // Checked as registered: a confidential client's hashed secret stands in as a secret of the right shape.
    const { [DISABLED_METADATA]: _held, ...checked } = metadata;
    await this.#deps.validate({
      ...checked,
      client_id: clientId,
      ...(metadata.token_endpoint_auth_method === 'none' ? {} : { client_secret: newSecret() }),
    });
    const at = this.#deps.now();
    const stored = JSON.stringify(metadata);
    if (!(await this.#deps.store.updateOidcClient(clientId, { metadata: stored }, at)))
      throw new OcError('not_found', 'oidc: no such client');
    this.#changed();
    return viewOf({ ...record, metadata: stored, updated_at: at });
  }

  /** Holds a client (the provider no longer finds it) or lifts the hold; false when it already was so. */
  async setDisabled(clientId: string, disabled: boolean): Promise<{ readonly client: ClientView; readonly changed: boolean }> {
    const record = await this.#deps.store.findOidcClient(clientId);
    if (record === null) throw new OcError('not_found', 'oidc: no such client');
    const metadata = JSON.parse(record.metadata) as Record<string, unknown>;
    if ((typeof metadata[DISABLED_METADATA] === 'number') === disabled) return { client: viewOf(record), changed: false };
    const at = this.#deps.now();
    if (disabled) metadata[DISABLED_METADATA] = at;
    else delete metadata[DISABLED_METADATA];
    const stored = JSON.stringify(metadata);
    await this.#deps.store.updateOidcClient(clientId, { metadata: stored }, at);
    this.#changed();
    return { client: viewOf({ ...record, metadata: stored, updated_at: at }), changed: true };
  }

  /** Deletes a client, its consents and every code and token it holds. */
  async remove(clientId: string): Promise<boolean> {
    const removed = await this.#deps.store.deleteOidcClient(clientId, this.#deps.now());
    this.#changed();
    return removed;
  }
}

/** RFC 8628's grant type. */
export const DEVICE_CODE_GRANT = 'urn:ietf:params:oauth:grant-type:device_code';

function grantTypesOf(input: ClientInput): string[] {
  if (input.machine === true) return ['client_credentials'];
  if (input.device !== true) return ['authorization_code', 'refresh_token'];
  return input.redirect_uris.length === 0
    ? [DEVICE_CODE_GRANT, 'refresh_token']
    : ['authorization_code', DEVICE_CODE_GRANT, 'refresh_token'];
}

/** The RFC 7591 metadata of a new client, with the provider's defaults spelt out. */
function metadataFor(input: ClientInput, clientId: string, secret: string | undefined): Record<string, unknown> {
  const alg = input.id_token_signed_response_alg ?? OIDC_ALGORITHMS[0];
  return {
    client_id: clientId,
    ...(secret === undefined ? {} : { client_secret: secret }),
    client_name: input.client_name,
    redirect_uris: [...input.redirect_uris],
    post_logout_redirect_uris: [...(input.post_logout_redirect_uris ?? [])],
    grant_types: grantTypesOf(input),
    response_types: input.machine === true || (input.device === true && input.redirect_uris.length === 0) ? [] : ['code'],
    token_endpoint_auth_method: input.token_endpoint_auth_method ?? 'client_secret_basic',
    id_token_signed_response_alg: alg,
    subject_type: input.subject_type ?? 'public',
    ...(input.logo_uri === undefined ? {} : { logo_uri: input.logo_uri }),
    ...(input.client_uri === undefined ? {} : { client_uri: input.client_uri }),
    // Logout tokens then carry the `sid` of the app's session, so the app ends that session alone (docs/protocol.md §8 "Logout").
    ...(input.backchannel_logout_uri === undefined
      ? {}
      : { backchannel_logout_uri: input.backchannel_logout_uri, backchannel_logout_session_required: true }),
    ...(input.scope === undefined ? {} : { scope: input.scope }),
    ...(input.application_type === undefined ? {} : { application_type: input.application_type }),
    ...(input.require_pushed_authorization_requests === true ? { require_pushed_authorization_requests: true } : {}),
    ...(input.api_scopes === undefined || input.api_scopes.length === 0 ? {} : { [API_SCOPES_METADATA]: [...new Set(input.api_scopes)] }),
  };
}

/** A DNS name as a CSP host-source may carry it: letters, digits and inner hyphens, dot-separated, no trailing dot. */
const CSP_HOST_NAME = /^(?=.{1,253}$)[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)*$/;

/**
 * The `scheme://host[:port]` of an http or https URL, fit to be written into
 * a Content-Security-Policy, or null (docs/protocol.md §8 "Clients"). The
 * WHATWG parser lets `;`, `'`, `,` and other characters through into a host
 * name (`https://x;sandbox;report-uri/` has the host `x;sandbox;report-uri`),
 * which would end the directive and add others; only a host of the CSP
 * grammar's characters (a DNS name or a dotted IPv4 address, after the
 * parser's punycode and number normalisation) and a numeric port are ever
 * written, and IPv6 literals, which the grammar has no place for, are left out.
 */
export function cspSourceOf(url: unknown, schemes: readonly ('https:' | 'http:')[] = ['https:', 'http:']): string | null {
  if (typeof url !== 'string') return null;
  const parsed = URL.parse(url);
  if (parsed === null || !(schemes as readonly string[]).includes(parsed.protocol)) return null;
  const host = parsed.hostname;
  if (!(isIP(host) === 4 || (isIP(host) === 0 && CSP_HOST_NAME.test(host)))) return null;
  if (!/^[0-9]{0,5}$/.test(parsed.port)) return null;
  return `${parsed.protocol}//${host}${parsed.port === '' ? '' : `:${parsed.port}`}`;
}

/** Loopback redirect hosts of a native app (RFC 8252 §7.3: IP literals; `localhost` is not recommended there and not taken here). */
const NATIVE_LOOPBACK_HOSTS = new Set(['127.0.0.1', '[::1]']);

/** Metadata that would make the provider fetch from an address the client chose (docs/protocol.md §8 "Clients"). */
const FETCHED_METADATA = ['jwks_uri', 'sector_identifier_uri'] as const;

/** What a client's metadata breaks of oc-host's own rules, beyond the library's: the member and why, or null. */
export interface ClientMetadataProblem {
  readonly member: string;
  readonly reason: string;
  /** Whether it is a redirect URI (RFC 7591 `invalid_redirect_uri`) rather than other metadata. */
  readonly redirect: boolean;
}

/**
 * oc-host's rules for a new client's metadata (docs/protocol.md §8
 * "Clients"), checked at registration (RFC 7591 and `oc-host oidc clients
 * add`) before the provider library sees it:
 *
 * - no `jwks_uri` or `sector_identifier_uri`: the provider fetches nothing a
 *   client names (an app's own key set goes inline, in `jwks`);
 * - under the production rules (`development` false: PUBLIC_URL is not http
 *   on a loopback host), redirect and post-logout URIs are not plain http,
 *   except a native app's loopback redirect (RFC 8252 §7.3, 127.0.0.1 or
 *   [::1], any port).
 */
export function clientMetadataProblem(metadata: Readonly<Record<string, unknown>>, development: boolean): ClientMetadataProblem | null {
  for (const member of FETCHED_METADATA) {
    if (metadata[member] !== undefined) {
      return {
        member,
        reason: 'is not accepted: the provider fetches nothing a client names (give an inline jwks instead)',
        redirect: false,
      };
    }
  }
  if (development) return null;
  const native = metadata.application_type === 'native';
  for (const member of ['redirect_uris', 'post_logout_redirect_uris'] as const) {
    const uris = metadata[member];
    if (!Array.isArray(uris)) continue;
    for (const uri of uris) {
      const parsed = typeof uri === 'string' ? URL.parse(uri) : null;
      if (parsed?.protocol !== 'http:') continue;
      if (native && NATIVE_LOOPBACK_HOSTS.has(parsed.hostname)) continue;
      return {
        member,
        reason: 'must use https (plain http only for a native app on 127.0.0.1 or [::1], RFC 8252)',
        redirect: true,
      };
    }
  }
  return null;
}
