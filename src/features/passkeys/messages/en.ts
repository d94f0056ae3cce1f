/**
 * English: the words of the passkeys pages (src/features/passkeys/pages/),
 * the reference for every other language of this folder
 * (docs/architecture.md "Words on a page"; the rules are in
 * src/platform/i18n/pages/en.ts).
 */
export const passkeysPagesEn = {
  // Sign-in page (signin.js)
  'signin.passkey_not_allowed':
    'This passkey is not one this service can sign you in with. Use another way, then add it on your account page.',
  // Wallets (wallets.js) and security keys (passkeys.js)
  'key.prompt_closed': 'The security key prompt was closed before it finished. Try again when you are ready.',
  'key.already_added_here': 'This security key is already added to this account.',
  'key.browser_refused': 'This browser refused to use security keys for this site.',
  'key.browser_failed': 'The browser could not use the security key. Try again, or use another way.',
  'key.verify_failed': "The security key's answer could not be verified. Try again.",
  'key.cloned_authenticator':
    'This security key answered with an old counter, which can mean it was copied. It was refused; remove it and add it again if you trust it.',
  'key.credential_outside_allowlist': 'This key is not one this account can use here. Choose another key or another way.',
  'key.no_credentials_registered': 'This account has no security key yet.',
  'key.credential_exists': 'This security key is already added.',
  'key.credential_not_discoverable': 'This key cannot be used to sign in without a name. Add it as a security key for confirming instead.',
  'key.webauthn_origin_mismatch': 'Security keys for this service only work on its own sites.',
  'key.webauthn_rp_id_mismatch': 'The key answered for another site.',
  'key.webauthn_unavailable': 'Security keys are not available on this service.',
  'key.nonce_reused': 'That answer was already used. Try again.',
  'key.invalid_challenge': 'The request expired before the key answered. Try again.',
  // Account page (account.js)
  'account.key_kind_passkey': 'Passkey',
  'account.key_kind_security': 'Security key',
  'account.key_added_on': 'added {date}',
  'account.key_last_used': 'last used {date}',
  'account.key_unused': 'not used yet',
  'account.rename_named': 'Rename {name}',
  'account.rename': 'Rename',
  'account.rename_label': 'New name for {name}',
  'account.key_name_invalid': 'That name cannot be used. Use 1 to 64 ordinary characters.',
  'account.key_renamed': 'The key is now called {name}.',
  'action.remove_key': 'remove the key {name}',
  'action.add_key': 'add a security key',
  'account.no_key_added': 'No key was added.',
  'account.key_prompt_closed': 'No key was added: the prompt was closed.',
  'account.passkey_added': '{name} was added: you can now sign in with it.',
  'account.key_added': '{name} was added.',
} as const;

export type PasskeysPageMessageKey = keyof typeof passkeysPagesEn;
