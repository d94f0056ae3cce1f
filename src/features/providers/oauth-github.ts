/**
 * GitHub sign-in: plain OAuth 2 (RFC 6749 §4.1) with PKCE (RFC 7636), since
 * GitHub is not an OpenID provider. The user comes from the REST API:
 * `GET /user` for the stable numeric id (the subject; logins can be renamed)
 * and `GET /user/emails` for the primary address, taken only when GitHub
 * marks it verified. The public `email` field of `/user` is not used: the
 * user types it freely.
 *
 * GitHub's endpoints (docs.github.com, "Authorizing OAuth apps"):
 *   GET  <auth>/login/oauth/authorize
 *   POST <auth>/login/oauth/access_token   (Accept: application/json)
 *   GET  <api>/user, <api>/user/emails
 */
import { isJsonObject } from '../../platform/json.js';
import type { ProviderProfile } from './oauth-oidc.js';
import { ProviderError } from './oauth-errors.js';

export const GITHUB_AUTH_BASE = 'https://github.com';
export const GITHUB_API_BASE = 'https://api.github.com';
/** `read:user` for the profile, `user:email` for `/user/emails`. */
const GITHUB_SCOPES = 'read:user user:email';

/** GitHub refuses API requests without a User-Agent. */
const USER_AGENT = 'oc-host';
const API_VERSION = '2022-11-28';

export interface GitHubProviderOptions {
  readonly clientId: string;
  readonly clientSecret: string;
  readonly authBase: string;
  readonly apiBase: string;
  readonly fetch: typeof fetch;
  readonly timeoutSeconds: number;
}

export class GitHubProvider {
  readonly id = 'github';
  readonly #options: GitHubProviderOptions;

  constructor(options: GitHubProviderOptions) {
    this.#options = { ...options, authBase: stripSlash(options.authBase), apiBase: stripSlash(options.apiBase) };
  }

  authorizationUrl(input: { redirectUri: string; state: string; codeChallenge: string }): string {
    const url = new URL(`${this.#options.authBase}/login/oauth/authorize`);
    url.searchParams.set('client_id', this.#options.clientId);
    url.searchParams.set('redirect_uri', input.redirectUri);
    url.searchParams.set('scope', GITHUB_SCOPES);
    url.searchParams.set('state', input.state);
    url.searchParams.set('code_challenge', input.codeChallenge);
    url.searchParams.set('code_challenge_method', 'S256');
    return url.href;
  }

  async complete(input: { redirectUri: string; code: string; codeVerifier: string }): Promise<ProviderProfile> {
    const accessToken = await this.#exchange(input);
    const user = await this.#api('/user', accessToken);
    const id = (user as { id?: unknown } | null)?.id;
    if (typeof id !== 'number' || !Number.isSafeInteger(id) || id <= 0) {
      throw new ProviderError('userinfo_failed', 'github: /user has no numeric id');
    }
    const rawName = (user as { name?: unknown }).name;
    const name = typeof rawName === 'string' && rawName.trim() !== '' ? rawName : undefined;

    const emails = await this.#api('/user/emails', accessToken);
    if (!Array.isArray(emails)) throw new ProviderError('userinfo_failed', 'github: /user/emails is not a list');
    const primary = emails.find(
      (entry: unknown): entry is { email: string } =>
        isJsonObject(entry) && entry.primary === true && entry.verified === true && typeof entry.email === 'string',
    );
    return {
      subject: String(id),
      ...(primary === undefined ? {} : { email: primary.email, emailVerified: true }),
      ...(name === undefined ? {} : { name }),
    };
  }

  async #exchange(input: { redirectUri: string; code: string; codeVerifier: string }): Promise<string> {
    const body = new URLSearchParams({
      client_id: this.#options.clientId,
      client_secret: this.#options.clientSecret,
      code: input.code,
      redirect_uri: input.redirectUri,
      code_verifier: input.codeVerifier,
    });
    let response: Response;
    try {
      response = await this.#options.fetch(`${this.#options.authBase}/login/oauth/access_token`, {
        method: 'POST',
        headers: {
          accept: 'application/json',
          'content-type': 'application/x-www-form-urlencoded',
          'user-agent': USER_AGENT,
        },
        body,
        redirect: 'error',
        signal: AbortSignal.timeout(this.#options.timeoutSeconds * 1000),
      });
    } catch (error) {
      throw new ProviderError('token_exchange_failed', `github: ${errorName(error)}`);
    }
    const json = await readJson(response, 'token_exchange_failed', 'token endpoint');
    // GitHub answers a bad code with HTTP 200 and an `error` member.
    const fields = isJsonObject(json) ? json : {};
    if (typeof fields.error === 'string') {
      throw new ProviderError('token_exchange_failed', `github: token endpoint said ${fields.error.slice(0, 64)}`);
    }
    if (typeof fields.access_token !== 'string' || fields.access_token === '') {
      throw new ProviderError('token_exchange_failed', 'github: token endpoint sent no access_token');
    }
    if (typeof fields.token_type === 'string' && fields.token_type.toLowerCase() !== 'bearer') {
      throw new ProviderError('token_exchange_failed', 'github: token endpoint sent a non-bearer token');
    }
    return fields.access_token;
  }

  async #api(path: string, accessToken: string): Promise<unknown> {
    let response: Response;
    try {
      response = await this.#options.fetch(`${this.#options.apiBase}${path}`, {
        headers: {
          accept: 'application/vnd.github+json',
          authorization: `Bearer ${accessToken}`,
          'user-agent': USER_AGENT,
          'x-github-api-version': API_VERSION,
        },
        // A redirect could carry the token to another host.
        redirect: 'error',
        signal: AbortSignal.timeout(this.#options.timeoutSeconds * 1000),
      });
    } catch (error) {
      throw new ProviderError('userinfo_failed', `github: ${path}: ${errorName(error)}`);
    }
    return readJson(response, 'userinfo_failed', path);
  }
}

async function readJson(response: Response, code: 'token_exchange_failed' | 'userinfo_failed', what: string): Promise<unknown> {
  if (!response.ok) {
    await response.body?.cancel();
    throw new ProviderError(code, `github: ${what} answered HTTP ${response.status}`);
  }
  try {
    return await response.json();
  } catch {
    throw new ProviderError(code, `github: ${what} answered something that is not JSON`);
  }
}

/** Error name only (TimeoutError, TypeError): messages of fetch can echo URLs. */
function errorName(error: unknown): string {
  return error instanceof Error ? error.name : 'unknown failure';
}

function stripSlash(url: string): string {
  return url.replace(/\/+$/, '');
}
