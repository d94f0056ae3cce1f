import type { ProvidersPageMessageKey } from './en.js';

/** Español (tú, como en los correos). */
export const providersPagesEs: Readonly<Record<ProvidersPageMessageKey, string>> = {
  // Página de inicio de sesión (signin.js)
  'signin.continue_with': 'Continuar con {provider}',
};
