import type { ProvidersPageMessageKey } from './en.js';

/** Français (vous, comme dans les e-mails ; apostrophes typographiques). */
export const providersPagesFr: Readonly<Record<ProvidersPageMessageKey, string>> = {
  // Page de connexion (signin.js)
  'signin.continue_with': 'Continuer avec {provider}',
};
