import type { ProvidersPageMessageKey } from './en.js';

/** Deutsch (Sie, wie in den E-Mails). */
export const providersPagesDe: Readonly<Record<ProvidersPageMessageKey, string>> = {
  // Anmeldeseite (signin.js)
  'signin.continue_with': 'Weiter mit {provider}',
};
