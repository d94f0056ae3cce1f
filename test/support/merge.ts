/**
 * A store-level merge that accepts everything the merged account holds
 * (every identity and Connect app by id), for tests that set up merged
 * accounts directly rather than through the linking endpoints.
 */
import type { AccountStore, MergeResult } from '../../src/platform/storage/index.js';

export async function mergeEverything(store: AccountStore, fromId: string, intoId: string, now: number): Promise<MergeResult> {
  const held = await store.transferHoldings(fromId);
  return store.mergeAccounts(fromId, intoId, now, {
    identityIds: held?.identities.map((identity) => identity.id) ?? [],
    appIds: held?.apps.map((app) => app.id) ?? [],
  });
}
