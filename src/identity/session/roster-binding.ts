/**
 * Which roster a browser can prove is its own (docs/protocol.md, sessions).
 *
 * Every site of the family can set an `oc_session` cookie for the family
 * domain, so a browser may send the host several of them: its own, and one a
 * sibling site planted (a live session of someone else's roster). The names
 * and values alone do not say which is which. Next to the session cookie the
 * host therefore sets `__Host-oc_roster`, a MAC of the roster id under the
 * server secret. The `__Host-` prefix makes browsers refuse that cookie from
 * anyone but this host (no Domain attribute is allowed), and it is HttpOnly,
 * so no sibling can read it, copy it, or plant one. A presented session whose
 * roster matches it is the browser's own.
 *
 * The roster id itself never leaves the server (docs/protocol.md): the
 * cookie holds 16 bytes of HMAC-SHA256, nothing that can be turned back.
 */
import { hmacSha256, timingSafeEqualString } from '../../platform/crypto.js';

const LABEL = 'oc-host/roster-binding/v1\u0000';

/** The `__Host-oc_roster` value for `rosterId`. */
export function rosterBinding(secret: Uint8Array, rosterId: string): string {
  return Buffer.from(hmacSha256(secret, `${LABEL}${rosterId}`).subarray(0, 16)).toString('base64url');
}

/** Whether `presented` is the binding of `rosterId`; constant time. */
export function isRosterBinding(secret: Uint8Array, rosterId: string, presented: string): boolean {
  return timingSafeEqualString(rosterBinding(secret, rosterId), presented);
}
