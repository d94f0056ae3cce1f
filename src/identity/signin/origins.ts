/**
 * Which sites belong to the family (docs/protocol.md §4 "CORS", §5): the
 * origins that may call the browser routes with credentials, name a login
 * challenge's audience, and be a sign-in's `return_to`. Plain rules over the
 * configuration, so that routes, pages and the sign-in code share them.
 */
import { originMatches, type Config } from '../../platform/config.js';

export interface OriginRules {
  /** An origin (`https://shop.example.com`) that matches one of FAMILY_ORIGINS. */
  isFamilyOrigin(origin: string): boolean;
  /**
   * A login or step-up challenge's audience: PUBLIC_URL itself, or a URL
   * whose origin is a family origin.
   */
  isAllowedAudience(audience: string): boolean;
}

export function originRules(config: Pick<Config, 'familyOrigins' | 'publicUrl'>): OriginRules {
  const isFamilyOrigin = (origin: string): boolean => config.familyOrigins.some((pattern) => originMatches(pattern, origin));
  return {
    isFamilyOrigin,
    isAllowedAudience(audience) {
      if (audience === config.publicUrl) return true;
      let origin: string;
      try {
        origin = new URL(audience).origin;
      } catch {
        return false;
      }
      return isFamilyOrigin(origin);
    },
  };
}
