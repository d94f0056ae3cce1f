/**
 * English: the words of the providers pages (src/features/providers/pages/),
 * the reference for every other language of this folder
 * (docs/architecture.md "Words on a page"; the rules are in
 * src/platform/i18n/pages/en.ts).
 */
export const providersPagesEn = {
  // Sign-in page (signin.js)
  'signin.continue_with': 'Continue with {provider}',
} as const;

export type ProvidersPageMessageKey = keyof typeof providersPagesEn;
