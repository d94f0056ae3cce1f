/**
 * Failures of the provider callback (docs/protocol.md §6 "Providers": any failure
 * redirects to `/signin?oauth_error=<code>`). They are not {@link OcError}s:
 * the route answers them with a redirect, not with an error body, so each code
 * must be safe to show in a URL and stable for the sign-in page to branch on.
 */

export const PROVIDER_ERROR_CODES = [
  /** Missing, undecryptable, expired, replayed or foreign state cookie, or `state` differs. */
  'state_mismatch',
  /** The user refused at the provider (`error=access_denied`, RFC 6749 §4.1.2.1). */
  'access_denied',
  /** Any other `error=` from the provider, or an authorization response that is malformed. */
  'provider_error',
  /** The code could not be exchanged for tokens (network, timeout, `invalid_grant`, …). */
  'token_exchange_failed',
  /** The ID token failed issuer, audience, nonce, time or signature checks (OIDC Core §3.1.3.7). */
  'id_token_invalid',
  /** The user's profile could not be read (GitHub `/user`, `/user/emails`, OIDC userinfo). */
  'userinfo_failed',
  /** The provider id is not configured (docs/protocol.md §6: `unknown_provider`). */
  'unknown_provider',
  /** The provider could not be reached to discover its endpoints (OIDC Discovery §4). */
  'provider_unavailable',
] as const;

export type ProviderErrorCode = (typeof PROVIDER_ERROR_CODES)[number];

/**
 * Every `oauth_error` the callback can send a person back with: the provider
 * failures, `ambiguous_session` when the roster to join with `add` is not
 * this browser's own, and `account_disabled` when the operator disabled the
 * account the identity belongs to. docs/errors.md lists them and the sign-in page has a
 * sentence for each (test/errors.test.ts keeps the three equal).
 */
export const OAUTH_REDIRECT_CODES = [...PROVIDER_ERROR_CODES, 'ambiguous_session', 'account_disabled'] as const;

export type OAuthRedirectCode = (typeof OAUTH_REDIRECT_CODES)[number];

/** The sign-in page's address for a failed provider sign-in. */
export function oauthErrorLocation(code: OAuthRedirectCode): string {
  return `/signin?oauth_error=${code}`;
}

export class ProviderError extends Error {
  readonly code: ProviderErrorCode;
  /**
   * Safe diagnostic text for operators. It never holds tokens, codes, claims
   * or e-mail addresses: the underlying library errors carry ID token claims
   * and response bodies in their `cause`, so they are deliberately not
   * attached here (no tokens or e-mail addresses in logs).
   */
  readonly detail: string | undefined;

  constructor(code: ProviderErrorCode, detail?: string) {
    super(detail === undefined ? `provider: ${code}` : `provider: ${code}: ${detail}`);
    this.name = 'ProviderError';
    this.code = code;
    this.detail = detail;
  }
}

export function isProviderError(value: unknown): value is ProviderError {
  return value instanceof ProviderError;
}
