/**
 * JWT access tokens ended before their expiry (docs/protocol.md §8 "Revoking
 * API tokens"). The provider library does not store such tokens, so what
 * ends them is written here as it happens, in the transaction that ends the
 * grant or client, and the revocation feed lists it until every token it
 * covers has expired:
 *
 * - one token, by its jti (the revocation endpoint);
 * - every token of a grant issued until now, by the grant's reference, which
 *   each of its tokens carries as `oc_grant` (the grant's tokens revoked, its
 *   consent withdrawn, its account held or deleted, an end-session);
 * - every token of a client issued until now, by its client id (the client
 *   deleted; a machine client's tokens belong to no grant).
 *
 * A provider session ended with its host session ends the grants tied to it
 * ({@link endSessionBoundGrants}), as the library ends their opaque tokens.
 */
import { createHash, randomBytes } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { DatabaseSchema, EpochMilliseconds, RevocationRecord } from '../../platform/storage/index.js';
import type { OidcTokenRevocationsTable } from './store-schema.js';

/** The longest an API's access token lives (src/features/oidc/resources.ts): a cut-off stays in the feed that long. */
const LONGEST_ACCESS_TOKEN_MS = 24 * 60 * 60 * 1000;

/**
 * What a grant's JWT access tokens carry as `oc_grant`: a hash of its id,
 * which stays a key of the provider's storage and is published nowhere.
 */
export function grantReference(grantId: string): string {
  return createHash('sha256').update(`oc-grant ${grantId}`).digest('base64url').slice(0, 22);
}

type Row = OidcTokenRevocationsTable;

function cutOff(kind: 'grant' | 'client', subject: string, now: EpochMilliseconds): Row {
  return {
    id: randomBytes(16).toString('hex'),
    kind,
    subject,
    // Tokens issued in this very second may come after the cut-off; they are ended too (iat has whole seconds).
    iat_before: Math.floor(now / 1000),
    revoked_at: now,
    expires_at: now + LONGEST_ACCESS_TOKEN_MS,
  };
}

/** In the caller's transaction: ends every JWT access token these grants issued until now. */
export async function cutOffGrants(trx: Kysely<DatabaseSchema>, grantIds: readonly string[], now: EpochMilliseconds): Promise<void> {
  if (grantIds.length === 0) return;
  await trx
    .insertInto('oidc_token_revocations')
    .values(grantIds.map((grantId) => cutOff('grant', grantReference(grantId), now)))
    .execute();
}

/**
 * In the caller's transaction, before the provider sessions with these uids
 * are deleted: the JWT access tokens of the grants tied to them end. A grant
 * is tied to its session unless the app was granted `offline_access` (the
 * library's `persistsLogout`); the library's own tokens of such a grant stop
 * with the session (docs/protocol.md §8 "Logout"), and so do these.
 */
export async function endSessionBoundGrants(trx: Kysely<DatabaseSchema>, uids: readonly string[], now: EpochMilliseconds): Promise<void> {
  if (uids.length === 0) return;
  const sessions = await trx.selectFrom('oidc_models').select('payload').where('model', '=', 'Session').where('uid', 'in', uids).execute();
  const grantIds = new Set<string>();
  for (const { payload } of sessions) {
    const authorizations = (JSON.parse(payload) as { authorizations?: unknown }).authorizations;
    if (typeof authorizations !== 'object' || authorizations === null) continue;
    for (const authorization of Object.values(authorizations as Record<string, unknown>)) {
      const { grantId, persistsLogout } = (authorization ?? {}) as { grantId?: unknown; persistsLogout?: unknown };
      if (typeof grantId === 'string' && persistsLogout !== true) grantIds.add(grantId);
    }
  }
  await cutOffGrants(trx, [...grantIds], now);
}

/** In the caller's transaction: ends every JWT access token of these clients issued until now. */
export async function cutOffClients(trx: Kysely<DatabaseSchema>, clientIds: readonly string[], now: EpochMilliseconds): Promise<void> {
  if (clientIds.length === 0) return;
  await trx
    .insertInto('oidc_token_revocations')
    .values(clientIds.map((clientId) => cutOff('client', clientId, now)))
    .execute();
}

/** Ends one JWT access token, until its own expiry; a second revocation of it changes nothing. */
export async function revokeAccessToken(
  db: Kysely<DatabaseSchema>,
  jti: string,
  expiresAt: EpochMilliseconds,
  now: EpochMilliseconds,
): Promise<void> {
  // Its id is derived from the jti, so the same token is listed once.
  const id = createHash('sha256').update(`oc-access-token ${jti}`).digest('hex').slice(0, 32);
  await db
    .insertInto('oidc_token_revocations')
    .values({ id, kind: 'access_token', subject: jti, iat_before: null, revoked_at: now, expires_at: expiresAt })
    .onConflict((conflict) => conflict.column('id').doNothing())
    .execute();
}

/** Entries revoked after `after` (revocation time, then id) that have not lapsed by `now`, oldest first, at most `limit`, as revocation feed entries. */
export async function listTokenRevocations(
  db: Kysely<DatabaseSchema>,
  after: { readonly at: number; readonly jti: string } | null,
  now: EpochMilliseconds,
  limit: number,
): Promise<RevocationRecord[]> {
  const rows = await db
    .selectFrom('oidc_token_revocations')
    .selectAll()
    .where('expires_at', '>', now)
    .$if(after !== null, (query) =>
      query.where((eb) =>
        eb.or([eb('revoked_at', '>', after?.at ?? 0), eb.and([eb('revoked_at', '=', after?.at ?? 0), eb('id', '>', after?.jti ?? '')])]),
      ),
    )
    .orderBy('revoked_at')
    .orderBy('id')
    .limit(limit)
    .execute();
  return rows.map((row) => ({
    jti: row.id,
    revoked_at: Number(row.revoked_at),
    expires_at: Number(row.expires_at),
    access: { kind: row.kind, subject: row.subject, iat_before: row.iat_before === null ? null : Number(row.iat_before) },
  }));
}
