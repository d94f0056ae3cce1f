/**
 * The wire type of the host's revocation feed, `GET /api/auth/revocations`
 * (docs/protocol.md §3 "Revocations" and §8 "Revoking API tokens"). This is
 * the one definition: the host answers with these types
 * (src/identity/session/revocations.ts), and revocations.ts reads them.
 */

/** A revoked session (`{jti, exp}`), or, with a `kind`, JWT access tokens of the OpenID provider ended early. */
export type RevocationFeedEntry =
  | { readonly jti: string; readonly exp: number }
  | { readonly jti: string; readonly exp: number; readonly kind: 'access_token' }
  | { readonly jti: string; readonly exp: number; readonly kind: 'grant'; readonly grant: string; readonly iat_before: number }
  | { readonly jti: string; readonly exp: number; readonly kind: 'client'; readonly client_id: string; readonly iat_before: number };
