/**
 * The OpenID provider as a service of the instance (docs/protocol.md §8):
 * its keys (made on first start, reloaded so a rotation reaches every
 * instance), its clients, its claims, and the provider itself, rebuilt when
 * the published keys change. The HTTP layer attaches what only it has (the
 * host session of a request, the pages) and mounts the provider
 * (src/features/oidc/routes.ts); the CLI uses the clients and keys alone.
 */
import { createHmac, randomBytes } from 'node:crypto';
import type Provider from 'oidc-provider';
import type { AttestationLookupService } from '../attestations/index.js';
import { OcError } from '../../platform/errors.js';
import { isJsonObject } from '../../platform/json.js';
import { accountIdFromDid, didOf, mayAct } from '../../identity/session/index.js';
import type { AccountRecord, AccountStore, KeyStore } from '../../platform/storage/index.js';
import type { ClaimedOidcLogout, OidcLogoutStore } from './logout-store.js';
import type { OidcStore } from './store.js';
import type { ApiKeyApp } from './adapter.js';
import type { LogoutToken } from './backchannel.js';
import { claimSource, type ClaimSource } from './claims.js';
import { ClientRegistry, clientMetadataProblem, cspSourceOf } from './clients.js';
import { ResourceRegistry } from './resources.js';
import { ensureOidcKeys, keySetTag, providerKeys, type OidcPrivateJwk } from './keys.js';
import {
  createOidcProvider,
  loadOidcLibrary,
  type HostSessionEnder,
  type HostSessionReader,
  type LogoutEvents,
  type OidcLibrary,
  type OidcPages,
} from './provider.js';

export interface OidcServiceDeps {
  readonly store: OidcStore & OidcLogoutStore & Pick<AccountStore, 'findAccount' | 'listIdentities'> & Pick<KeyStore, 'getOrCreateSetting'>;
  /** `PUBLIC_URL`. */
  readonly issuer: string;
  readonly serverSecret: Uint8Array;
  /** The `/api/check` look-up, for the `orangecheck` claim; the CLI, which answers no claims, has none. */
  readonly attestations?: Pick<AttestationLookupService, 'check'>;
  /** The Connect app of an API key, or null: the initial access token of dynamic registration. */
  readonly appOfApiKey?: (apiKey: string) => Promise<ApiKeyApp | null>;
  /** Whether the owner of a Connect app may act (src/identity/session/standing.ts); the CLI, which signs nobody in, has none. */
  readonly appMayAct?: (appId: string) => Promise<boolean>;
  /**
   * Why a `backchannel_logout_uri` breaks the webhook endpoint rules, or null
   * (docs/protocol.md §8 "Logout"); the CLI, which sends nothing, has none.
   */
  readonly backchannelUriProblem?: (uri: string) => string | null;
  /**
   * PUBLIC_URL is http on a loopback host (a developer's machine): plain-http
   * redirect URIs are registered too. Absent, the production rules hold
   * (docs/protocol.md §8 "Clients").
   */
  readonly development?: boolean;
  /** Seconds a device waits between polls (RFC 8628 `interval`, docs/protocol.md §8 "Devices"); 5 when absent. */
  readonly devicePollSeconds?: number;
  readonly now: () => Date;
}

/** An app the account allowed, as its person sees it. */
export interface ConsentedApp {
  readonly client_id: string;
  readonly name: string;
  readonly logo_uri?: string;
  readonly scopes: readonly string[];
  readonly first_allowed_at: number;
  readonly last_allowed_at: number;
}

/** What the HTTP layer gives the provider. */
export interface OidcWeb {
  readonly hostSession: HostSessionReader;
  readonly endHostSession: HostSessionEnder;
  readonly pages: OidcPages;
  /** Times a device's polls (`slow_down`, docs/protocol.md §8 "Devices"): true when this one came too soon. */
  readonly devicePolledTooSoon?: (key: string) => Promise<boolean>;
}

/** Until the HTTP layer attaches its own: no host session, plain pages (the CLI validates clients with this). */
const DETACHED: OidcWeb = {
  hostSession: async () => null,
  endHostSession: async () => [],
  pages: {
    csp: "default-src 'none'",
    cspLeadingTo: () => "default-src 'none'",
    error: (_request, error) => `<!doctype html><title>${error.code}</title><p>${error.code}</p>`,
    logout: async (_request, form) => `<!doctype html><title>Sign out</title>${form}`,
    loggedOut: () => '<!doctype html><title>Signed out</title>',
    deviceEntry: () => '<!doctype html><title>Device</title>',
    deviceQuestion: () => ({ html: '<!doctype html><title>Device</title>', csp: "default-src 'none'" }),
    deviceDone: () => '<!doctype html><title>Device</title>',
  },
};

/** RFC 8628 §3.2: a device that is told no interval waits 5 seconds. */
const DEFAULT_DEVICE_POLL_SECONDS = 5;

function derivedKey(secret: Uint8Array, purpose: string): string {
  return createHmac('sha256', secret).update(`oc-host oidc ${purpose}`, 'utf8').digest('base64url');
}

export class OidcService {
  readonly #deps: OidcServiceDeps;
  readonly #library: OidcLibrary;
  readonly clients: ClientRegistry;
  /** The APIs the provider issues JWT access tokens for (docs/protocol.md §8 "APIs"). */
  readonly resources: ResourceRegistry;
  readonly claims: ClaimSource;
  #keys: readonly OidcPrivateJwk[];
  #web: OidcWeb = DETACHED;
  #built: { readonly tag: string; readonly web: OidcWeb; readonly provider: Provider } | undefined;
  #logoutQueued: () => void = () => undefined;
  /** Told the client of every authorization the provider grants (the console's dashboard counts them). */
  readonly #signInListeners: Array<(clientId: string) => void> = [];
  readonly #logouts: LogoutEvents = {
    signedIn: async (link) => {
      for (const listener of this.#signInListeners) listener(link.clientId);
      const accountId = accountIdFromDid(link.accountId);
      if (accountId === null) return;
      await this.#deps.store.linkOidcSession({
        session_jti: link.sessionJti,
        client_id: link.clientId,
        account_id: accountId,
        sid: link.sid,
        op_session_uid: link.opSessionUid,
        backchannel: link.backchannel,
        created_at: this.#deps.now().getTime(),
      });
    },
    logout: async (clientId, sub, sid) => {
      const accountId = accountIdFromDid(sub);
      // A session the library knows no sid of for the client has nothing to log out.
      if (accountId === null || typeof sid !== 'string' || sid === '') return;
      if (await this.#deps.store.enqueueOidcLogout({ client_id: clientId, account_id: accountId, sid }, this.#deps.now().getTime())) {
        this.#logoutQueued();
      }
    },
  };

  private constructor(deps: OidcServiceDeps, library: OidcLibrary, keys: readonly OidcPrivateJwk[]) {
    this.#deps = deps;
    this.#library = library;
    this.#keys = keys;
    this.claims = claimSource({
      accounts: deps.store,
      ...(deps.attestations === undefined ? {} : { attestations: deps.attestations }),
      now: () => deps.now().getTime(),
    });
    this.resources = new ResourceRegistry({
      store: deps.store,
      now: () => deps.now().getTime(),
      development: deps.development === true,
    });
    this.clients = new ClientRegistry({
      store: deps.store,
      now: () => deps.now().getTime(),
      validate: (metadata) => this.#validate(metadata),
    });
  }

  /** Makes the keys that are missing, loads them and builds the service. */
  static async open(deps: OidcServiceDeps): Promise<OidcService> {
    const at = deps.now().getTime();
    await ensureOidcKeys(deps.store, at);
    return new OidcService(deps, await loadOidcLibrary(), providerKeys(await deps.store.listOidcKeys(), at));
  }

  /** Reads the keys again; a changed set rebuilds the provider on its next use. */
  async reloadKeys(): Promise<void> {
    const at = this.#deps.now().getTime();
    await ensureOidcKeys(this.#deps.store, at);
    this.#keys = providerKeys(await this.#deps.store.listOidcKeys(), at);
  }

  /**
   * Reads the keys before the JWKS is answered: a key another instance
   * already signs with (it reloaded sooner after a rotation) is published by
   * every instance a relying party asks, not only after this one's next
   * periodic reload (docs/operations.md "Several instances behind a proxy").
   * A failed read keeps the keys this instance has.
   */
  async refreshKeysForJwks(onError: (error: unknown) => void): Promise<void> {
    try {
      this.#keys = providerKeys(await this.#deps.store.listOidcKeys(), this.#deps.now().getTime());
    } catch (error) {
      onError(error);
    }
  }

  /** The published keys, signing keys first. */
  keys(): readonly OidcPrivateJwk[] {
    return this.#keys;
  }

  /** Calls `listener` with the client id of every authorization the provider grants from now on. */
  onSignIn(listener: (clientId: string) => void): void {
    this.#signInListeners.push(listener);
  }

  /** Gives the provider the host session reader and the pages (src/features/oidc/routes.ts). */
  attach(web: OidcWeb): void {
    this.#web = web;
  }

  /** The provider for the current keys. */
  provider(): Provider {
    const tag = keySetTag(this.#keys);
    if (this.#built?.tag !== tag || this.#built.web !== this.#web) {
      const web = this.#web;
      const provider = createOidcProvider(this.#library, {
        issuer: this.#deps.issuer,
        store: this.#deps.store,
        keys: this.#keys,
        cookieKeys: [derivedKey(this.#deps.serverSecret, 'cookies')],
        pairwiseSecret: Buffer.from(derivedKey(this.#deps.serverSecret, 'pairwise'), 'base64url'),
        claims: this.claims,
        hostSession: web.hostSession,
        endHostSession: web.endHostSession,
        logouts: this.#logouts,
        pages: web.pages,
        appOfApiKey: this.#deps.appOfApiKey,
        standingAccount: (sub) => this.#standingAccount(sub),
        resources: this.resources,
        appMayAct: this.#deps.appMayAct,
        backchannelUriProblem: this.#deps.backchannelUriProblem,
        development: this.#deps.development === true,
        devicePollSeconds: this.#deps.devicePollSeconds ?? DEFAULT_DEVICE_POLL_SECONDS,
        devicePolledTooSoon: web.devicePolledTooSoon,
        now: () => this.#deps.now().getTime(),
      });
      this.#built = { tag, web, provider };
    }
    return this.#built.provider;
  }

  /** The account `sub` names when it may act, else null: the account itself, a merged one's pointer not followed (src/identity/session/standing.ts). */
  async #standingAccount(sub: string): Promise<AccountRecord | null> {
    const accountId = accountIdFromDid(sub);
    const account = accountId === null ? null : await this.#deps.store.findAccount(accountId);
    return mayAct(account) ? account : null;
  }

  /** Calls `listener` when the provider's own end-session queued a logout (the worker looks at once). */
  onLogoutQueued(listener: () => void): void {
    this.#logoutQueued = listener;
  }

  /**
   * The logout token of one outbox row (docs/protocol.md §8 "Logout"), built
   * now with a fresh `iat` and `jti` and signed by the library's IdToken as
   * its own back-channel logout signs it: `sub` (pairwise when the client
   * is), `sid` when the client requires it, the `events` claim, no nonce,
   * `typ: logout+jwt`. A row whose client is gone or takes no back-channel
   * logout any more is refused.
   */
  async logoutToken(logout: ClaimedOidcLogout): Promise<LogoutToken> {
    const provider = this.provider();
    const client = await provider.Client.find(logout.client_id);
    if (client === undefined) return { refused: 'no_client' };
    const uri = client.backchannelLogoutUri;
    if (typeof uri !== 'string') return { refused: 'no_endpoint' };
    const token = new provider.IdToken({ sub: didOf(logout.account_id) }, { client, ctx: undefined as never });
    // As the library does: `sub` is the claim's source, and its value (pairwise or public) comes from the client.
    (token as unknown as { mask: Record<string, null> }).mask = { sub: null };
    token.set('events', { 'http://schemas.openid.net/event/backchannel-logout': {} });
    token.set('jti', randomBytes(16).toString('base64url'));
    if (client.backchannelLogoutSessionRequired === true) token.set('sid', logout.sid);
    return { uri, token: await token.issue({ use: 'logout' } as never) };
  }

  /** Remembers that the account agreed to share a grant's scopes with a client (docs/protocol.md §8 "Consent"). */
  async recordConsent(accountId: string, clientId: string, grantId: string): Promise<void> {
    const at = this.#deps.now().getTime();
    const known = await this.#deps.store.findOidcConsent(accountId, clientId);
    await this.#deps.store.putOidcConsent({
      account_id: accountId,
      client_id: clientId,
      grant_id: grantId,
      created_at: known?.created_at ?? at,
      updated_at: at,
    });
  }

  /**
   * The apps the account allowed (docs/protocol.md §8 "Consent"), newest
   * first: the client's name and logo, the scopes of its grant, when it was
   * first and last allowed. A consent whose client or grant is gone is left out.
   */
  async appsOf(accountId: string): Promise<ConsentedApp[]> {
    const now = this.#deps.now().getTime();
    const apps: ConsentedApp[] = [];
    for (const consent of await this.#deps.store.listOidcConsents(accountId)) {
      const [client, grant] = await Promise.all([
        this.clients.find(consent.client_id),
        this.#deps.store.findOidcModel('Grant', consent.grant_id, now),
      ]);
      if (client === null || grant === null) continue;
      const payload: unknown = JSON.parse(grant.payload);
      const scope = isJsonObject(payload) && isJsonObject(payload.openid) ? payload.openid.scope : undefined;
      const logo = client.metadata.logo_uri;
      apps.push({
        client_id: client.client_id,
        name: typeof client.metadata.client_name === 'string' ? client.metadata.client_name : client.client_id,
        ...(typeof logo === 'string' && logo.startsWith('https://') ? { logo_uri: logo } : {}),
        scopes: typeof scope === 'string' ? scope.split(' ').filter((one) => one !== '') : [],
        first_allowed_at: consent.created_at,
        last_allowed_at: consent.updated_at,
      });
    }
    return apps;
  }

  /**
   * The origin of the https logo of the client an interaction is for, or
   * null: what the sign-in and /sudo pages' policy adds to `img-src` when
   * they come back to that interaction (docs/protocol.md §8 "Signing in").
   * It names an image origin only; the app itself is told only to the
   * browser holding the interaction's cookie.
   */
  async interactionLogoOrigin(uid: string): Promise<string | null> {
    const record = await this.#deps.store.findOidcModel('Interaction', uid, this.#deps.now().getTime());
    if (record === null) return null;
    const payload: unknown = JSON.parse(record.payload);
    const clientId = isJsonObject(payload) && isJsonObject(payload.params) ? payload.params.client_id : undefined;
    if (typeof clientId !== 'string') return null;
    const logo = (await this.clients.find(clientId))?.metadata.logo_uri;
    return httpsOrigin(logo);
  }

  /** Withdraws the account's consent to a client: its grant and every token of it end; false when there was none. */
  withdraw(accountId: string, clientId: string): Promise<boolean> {
    return this.#deps.store.deleteOidcConsent(accountId, clientId, this.#deps.now().getTime());
  }

  /** Checks client metadata the way the provider loads it: `bad_request` with the library's reason. */
  async #validate(metadata: Readonly<Record<string, unknown>>): Promise<void> {
    const uri = metadata.backchannel_logout_uri;
    const problem = typeof uri === 'string' ? this.#deps.backchannelUriProblem?.(uri) : null;
    if (typeof problem === 'string') throw new OcError('bad_request', `oidc: backchannel_logout_uri: ${problem}`);
    const broken = clientMetadataProblem(metadata, this.#deps.development === true);
    if (broken !== null) throw new OcError('bad_request', `oidc: ${broken.member} ${broken.reason}`);
    try {
      await this.provider().Client.validate(metadata as Parameters<Provider['Client']['validate']>[0]);
    } catch (error) {
      const description = (error as { error_description?: unknown }).error_description;
      if (typeof description === 'string') throw new OcError('bad_request', `oidc: ${description}`);
      throw error;
    }
  }
}

/** The origin of an https URL as a policy may name it (see {@link cspSourceOf}), or null. */
export function httpsOrigin(url: unknown): string | null {
  return cspSourceOf(url, ['https:']);
}

declare module '../../platform/services.js' {
  interface FeatureServices {
    /** The OpenID provider: its keys, clients, claims and consents. */
    readonly oidc: OidcService;
  }
}
