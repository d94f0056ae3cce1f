/**
 * What the routes are handed: the parsed config and the domain services,
 * built by src/services.ts (the composition root's first half). Routes never
 * construct services.
 */
export type { ServiceContext } from '../services.js';
