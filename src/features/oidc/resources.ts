/**
 * The APIs the provider issues JWT access tokens for (docs/protocol.md §8
 * "APIs"): resource servers named by a resource indicator (RFC 8707), each
 * with the scopes an app may ask for it, the algorithm of its tokens and
 * their lifetime. The operator registers them (`oc-host oidc resources`);
 * an app asks for one with `resource=<uri>`, and gets an access token an
 * API checks by itself (RFC 9068). Without a resource, tokens stay opaque.
 */
import { OcError } from '../../platform/errors.js';
import type { OidcResourceRecord, OidcStore } from './store.js';
import { OIDC_SCOPES } from './claims.js';
import { isOidcAlgorithm, type OidcAlgorithm } from './keys.js';

/** How long an API's access tokens live unless the operator says otherwise: they cannot be called back. */
const DEFAULT_ACCESS_TOKEN_SECONDS = 600;
const MIN_ACCESS_TOKEN_SECONDS = 60;
const MAX_ACCESS_TOKEN_SECONDS = 24 * 60 * 60;
const MAX_URI_LENGTH = 512;
const MAX_SCOPES = 64;

/** A scope token (RFC 6749 §3.3): printable ASCII without space, quote or backslash; bounded here. */
const SCOPE_TOKEN = /^[\x21\x23-\x5b\x5d-\x7e]{1,64}$/;

export interface ResourceInput {
  readonly uri: string;
  readonly name?: string | undefined;
  readonly scopes: readonly string[];
  readonly alg?: OidcAlgorithm | undefined;
  readonly accessTokenSeconds?: number | undefined;
}

/**
 * Why `uri` cannot name an API, or null. An absolute URI without a fragment
 * (RFC 8707 §2); an https URL, or any URN-like scheme an API may choose, but
 * not plain http except on a developer's loopback (`development`).
 */
function resourceUriProblem(uri: string, development: boolean): string | null {
  if (uri.length === 0 || uri.length > MAX_URI_LENGTH) return `must be 1 to ${MAX_URI_LENGTH} characters`;
  if (/[\u0000-\u0020\u007f]/.test(uri)) return 'must hold no spaces or control characters';
  const parsed = URL.parse(uri);
  if (parsed === null) return 'must be an absolute URI';
  if (parsed.hash !== '' || uri.includes('#')) return 'must have no fragment (RFC 8707)';
  if (parsed.protocol === 'http:' && !development) return 'must use https (plain http only in development)';
  return null;
}

/** The operator's registry of APIs over storage. */
export class ResourceRegistry {
  readonly #store: Pick<OidcStore, 'insertOidcResource' | 'findOidcResource' | 'listOidcResources' | 'deleteOidcResource'>;
  readonly #now: () => number;
  readonly #development: boolean;

  constructor(deps: {
    readonly store: Pick<OidcStore, 'insertOidcResource' | 'findOidcResource' | 'listOidcResources' | 'deleteOidcResource'>;
    readonly now: () => number;
    readonly development: boolean;
  }) {
    this.#store = deps.store;
    this.#now = deps.now;
    this.#development = deps.development;
  }

  /** Registers an API; `bad_request` with the reason when its URI, scopes, algorithm or lifetime cannot be. */
  async add(input: ResourceInput): Promise<OidcResourceRecord> {
    const problem = resourceUriProblem(input.uri, this.#development);
    if (problem !== null) throw new OcError('bad_request', `oidc: the resource URI ${problem}`);
    const scopes = [...new Set(input.scopes)];
    if (scopes.length > MAX_SCOPES) throw new OcError('bad_request', `oidc: at most ${MAX_SCOPES} scopes`);
    for (const scope of scopes) {
      if (!SCOPE_TOKEN.test(scope))
        throw new OcError('bad_request', `oidc: "${scope}" is no scope (printable characters, no spaces or quotes)`);
      // The OpenID scopes say what the ID token and userinfo carry, for every app alike.
      if ((OIDC_SCOPES as readonly string[]).includes(scope)) throw new OcError('bad_request', `oidc: "${scope}" is an OpenID scope`);
    }
    const alg = input.alg ?? 'ES256';
    if (!isOidcAlgorithm(alg)) throw new OcError('bad_request', 'oidc: the algorithm must be RS256, ES256 or EdDSA');
    const seconds = input.accessTokenSeconds ?? DEFAULT_ACCESS_TOKEN_SECONDS;
    if (!Number.isSafeInteger(seconds) || seconds < MIN_ACCESS_TOKEN_SECONDS || seconds > MAX_ACCESS_TOKEN_SECONDS) {
      throw new OcError('bad_request', `oidc: an access token lives ${MIN_ACCESS_TOKEN_SECONDS} to ${MAX_ACCESS_TOKEN_SECONDS} seconds`);
    }
    const name = (input.name ?? '').trim() || input.uri;
    const record: OidcResourceRecord = { uri: input.uri, name, scopes, alg, access_token_seconds: seconds, created_at: this.#now() };
    if (!(await this.#store.insertOidcResource(record))) throw new OcError('bad_request', `oidc: ${input.uri} is registered already`);
    return record;
  }

  /** The API a resource indicator names, or null (a URI that could not be stored names none). */
  async find(uri: string): Promise<OidcResourceRecord | null> {
    if (uri.length > MAX_URI_LENGTH || uri.includes('\u0000')) return null;
    return this.#store.findOidcResource(uri);
  }

  list(): Promise<OidcResourceRecord[]> {
    return this.#store.listOidcResources();
  }

  remove(uri: string): Promise<boolean> {
    return this.#store.deleteOidcResource(uri);
  }
}
