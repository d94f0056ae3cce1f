/**
 * The words of every feature's pages joined to the shared ones of the
 * platform (docs/architecture.md "Words on a page"): each feature keeps its
 * pages' words in its own `features/<name>/messages/`, and this one list
 * adds them to the language catalogs (src/platform/i18n/index.ts
 * `addPageWords`) when it is loaded, before a page is made or a message of
 * theirs formatted: src/app.ts and src/build-pages.ts import it first, as
 * the tests that make pages without the app do. The platform and the HTTP
 * edge name no feature; the features' words are data that import nothing
 * (test/layers.test.ts).
 *
 * A new feature's words: its `messages/{en,de,es,fr}.ts`, one line in
 * {@link FEATURE_WORDS}, and its keys in the declaration below, which adds
 * them to `PageMessageKey`, so a key is checked wherever it is formatted.
 */ import { addPageWords, type Locale } from './platform/i18n/index.js';
import { accountPagesDe } from './features/account/messages/de.js';
import { type AccountPageMessageKey, accountPagesEn } from './features/account/messages/en.js';
import { accountPagesEs } from './features/account/messages/es.js';
import { accountPagesFr } from './features/account/messages/fr.js';
import { activityPagesDe } from './features/activity/messages/de.js';
import { type ActivityPageMessageKey, activityPagesEn } from './features/activity/messages/en.js';
import { activityPagesEs } from './features/activity/messages/es.js';
import { activityPagesFr } from './features/activity/messages/fr.js';
import { emailCodePagesDe } from './features/email-code/messages/de.js';
import { type EmailCodePageMessageKey, emailCodePagesEn } from './features/email-code/messages/en.js';
import { emailCodePagesEs } from './features/email-code/messages/es.js';
import { emailCodePagesFr } from './features/email-code/messages/fr.js';
import { oidcPagesDe } from './features/oidc/messages/de.js';
import { type OidcPageMessageKey, oidcPagesEn } from './features/oidc/messages/en.js';
import { oidcPagesEs } from './features/oidc/messages/es.js';
import { oidcPagesFr } from './features/oidc/messages/fr.js';
import { passkeysPagesDe } from './features/passkeys/messages/de.js';
import { type PasskeysPageMessageKey, passkeysPagesEn } from './features/passkeys/messages/en.js';
import { passkeysPagesEs } from './features/passkeys/messages/es.js';
import { passkeysPagesFr } from './features/passkeys/messages/fr.js';
import { phonePagesDe } from './features/phone/messages/de.js';
import { type PhonePageMessageKey, phonePagesEn } from './features/phone/messages/en.js';
import { phonePagesEs } from './features/phone/messages/es.js';
import { phonePagesFr } from './features/phone/messages/fr.js';
import { providersPagesDe } from './features/providers/messages/de.js';
import { type ProvidersPageMessageKey, providersPagesEn } from './features/providers/messages/en.js';
import { providersPagesEs } from './features/providers/messages/es.js';
import { providersPagesFr } from './features/providers/messages/fr.js';
import { walletPagesDe } from './features/wallet/messages/de.js';
import { type WalletPageMessageKey, walletPagesEn } from './features/wallet/messages/en.js';
import { walletPagesEs } from './features/wallet/messages/es.js';
import { walletPagesFr } from './features/wallet/messages/fr.js';

declare module './platform/i18n/index.js' {
  /** The keys of every feature's page words, beside the shared ones. */
  interface PageWords
    extends Readonly<
      Record<
        | AccountPageMessageKey
        | ActivityPageMessageKey
        | EmailCodePageMessageKey
        | OidcPageMessageKey
        | PasskeysPageMessageKey
        | PhonePageMessageKey
        | ProvidersPageMessageKey
        | WalletPageMessageKey,
        string
      >
    > {}
}

/** Each feature's page words in every language. */
const FEATURE_WORDS: readonly Readonly<Record<Locale, Readonly<Record<string, string>>>>[] = [
  { en: accountPagesEn, de: accountPagesDe, es: accountPagesEs, fr: accountPagesFr },
  { en: activityPagesEn, de: activityPagesDe, es: activityPagesEs, fr: activityPagesFr },
  { en: emailCodePagesEn, de: emailCodePagesDe, es: emailCodePagesEs, fr: emailCodePagesFr },
  { en: oidcPagesEn, de: oidcPagesDe, es: oidcPagesEs, fr: oidcPagesFr },
  { en: passkeysPagesEn, de: passkeysPagesDe, es: passkeysPagesEs, fr: passkeysPagesFr },
  { en: phonePagesEn, de: phonePagesDe, es: phonePagesEs, fr: phonePagesFr },
  { en: providersPagesEn, de: providersPagesDe, es: providersPagesEs, fr: providersPagesFr },
  { en: walletPagesEn, de: walletPagesDe, es: walletPagesEs, fr: walletPagesFr },
];

for (const words of FEATURE_WORDS) addPageWords(words);
