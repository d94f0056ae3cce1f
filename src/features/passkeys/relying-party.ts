/**
 * Who the host is to an authenticator (docs/protocol.md §6 "Security keys and
 * passkeys"): the WebAuthn relying-party id, and which page origins may run a
 * ceremony for it.
 *
 * - The RP id is the family domain when `COOKIE_DOMAIN` is set and
 *   `PUBLIC_URL`'s host lies within it (`.example.com` gives `example.com`),
 *   else `PUBLIC_URL`'s host. A key registered on the host then works on
 *   every family site that sends people to it, since a browser lets any page
 *   under the RP id use the RP's credentials.
 * - An origin may run a ceremony when it is `PUBLIC_URL`'s origin, or a
 *   family origin (`FAMILY_ORIGINS`) whose host is the RP id or under it;
 *   over https, or http on localhost. Anything else is refused with
 *   `webauthn_origin_mismatch`, before the library is asked.
 * - An IP address is no RP id (WebAuthn needs a domain): with such a
 *   `PUBLIC_URL` the routes answer 503 `webauthn_unavailable`.
 */
import { isIP } from 'node:net';
import type { Config } from '../../platform/config.js';
import type { OriginRules } from '../../identity/signin/index.js';

export interface RelyingParty {
  /** Null when no RP id can be derived; `unavailable` says why. */
  readonly id: string | null;
  readonly unavailable: string | null;
  /** The name authenticators show beside the account: the RP id. */
  readonly name: string;
  isAllowedOrigin(origin: string): boolean;
}

function isLocalhost(hostname: string): boolean {
  return hostname === 'localhost' || hostname.endsWith('.localhost');
}

function within(hostname: string, domain: string): boolean {
  return hostname === domain || hostname.endsWith(`.${domain}`);
}

export function relyingParty(
  config: Pick<Config, 'publicUrl' | 'publicOrigin' | 'cookieDomain'>,
  origins: Pick<OriginRules, 'isFamilyOrigin'>,
): RelyingParty {
  const host = new URL(config.publicUrl).hostname;
  const bare = host.startsWith('[') ? host.slice(1, -1) : host;
  if (isIP(bare) !== 0) {
    const reason = `PUBLIC_URL's host ${host} is an IP address; WebAuthn needs a domain name (localhost will do on one machine)`;
    return { id: null, unavailable: reason, name: host, isAllowedOrigin: () => false };
  }
  const family = config.cookieDomain?.replace(/^\./, '');
  const id = family !== undefined && within(host, family) ? family : host;
  return {
    id,
    unavailable: null,
    name: id,
    isAllowedOrigin(origin) {
      if (origin === config.publicOrigin) return true;
      let url: URL;
      try {
        url = new URL(origin);
      } catch {
        return false;
      }
      if (url.origin !== origin) return false;
      if (url.protocol !== 'https:' && !(url.protocol === 'http:' && isLocalhost(url.hostname))) return false;
      return within(url.hostname, id) && origins.isFamilyOrigin(origin);
    },
  };
}
