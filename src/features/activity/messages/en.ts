/**
 * English: the words of the activity pages (src/features/activity/pages/),
 * the reference for every other language of this folder
 * (docs/architecture.md "Words on a page"; the rules are in
 * src/platform/i18n/pages/en.ts).
 */
export const activityPagesEn = {
  // Account page (account.js)
  'method.bip322': 'Bitcoin wallet',
  'method.email_otp': 'e-mail code',
  'method.passkey': 'passkey',
  'method.key': 'a security key',
  'method.unknown': 'unknown way',
  'account.unknown_browser': 'An unknown browser',
  // A device label ("Chrome 156 on Linux (mobile)", src/identity/session/device.ts) in this language.
  'device.on': '{browser} on {os}',
  'device.mobile': '{device} (phone)',
  'device.tablet': '{device} (tablet)',
  'device.some_browser': 'A browser',
  'account.device_signed_in': 'Signed in {date} with {method}',
  'account.device_seen': 'last seen {date}',
  'account.network': 'network {network}',
  'account.this_browser': 'This browser',
  'account.sign_out_this_browser': 'Sign out {name} (this browser)',
  'account.sign_out_named': 'Sign out {name}',
  'action.sign_out_device': 'sign out {name}',
  'account.no_browser_signed_out': 'No browser was signed out.',
  'account.browser_gone': 'That browser was already signed out.',
  'account.browser_signed_out': '{name} was signed out of this account.',
  'action.sign_out_others': 'sign out every other browser',
  'account.others_signed_out': '{count, plural, one {One other browser was signed out.} other {# other browsers were signed out.}}',
  'field.display_name': 'display name',
  'event.signin':
    'Signed in with {method}{placed, select, yes { ({where})} other {}}{added, select, yes {, added to a browser that had another account} other {}}',
  'event.sudo': 'Confirmed it was you with {method}',
  'event.sudo_key': 'Confirmed it was you with the key {key}',
  'event.sudo_failed': 'A confirmation with {method} failed ({reason})',
  'event.step_up': 'Stepped up with the key {key}',
  'event.step_up_failed': 'A step-up with a security key failed ({reason})',
  'event.identity_linked':
    'Linked {kind, select, btc {Bitcoin address} email {e-mail} did {account ID} nostr {Nostr key} oauth {sign-in provider} connect {connected app} other {identity}} {value}',
  'event.identity_unlinked':
    'Removed {kind, select, btc {Bitcoin address} email {e-mail} did {account ID} nostr {Nostr key} oauth {sign-in provider} connect {connected app} other {identity}} {value}',
  'event.merged_from': 'The account {account} was merged into this one',
  'event.merged_into': 'This account was merged into {account}',
  'event.edited': 'Changed {fields}',
  'event.edited_account': 'Changed the account',
  'event.key_added': 'Added the {passkey, select, yes {passkey} other {security key}} {name}',
  'event.key_removed': 'Removed the key {name}',
  'event.revoked_all': 'The operator signed this account out everywhere ({count, plural, one {# browser} other {# browsers}})',
  'event.revoked_others': 'Signed out everywhere else ({count, plural, one {# browser} other {# browsers}})',
  'event.revoked_one': 'Signed out another browser',
  'event.tab_pinned': 'A tab was opened as this account while the account {account} was active{placed, select, yes { ({where})} other {}}',
  'event.app_created': 'Created the Connect app {name}',
  'event.app_rotated': 'Replaced the API key of the Connect app {name}',
  'event.app_deleted': 'Deleted the Connect app {name}',
  'event.app_webhook_removed': 'Removed the webhook of the Connect app {name}',
  'event.app_webhook_set': 'Set the webhook of the Connect app {name} to {url}',
  'event.exported': "Downloaded the account's data",
  'event.disabled': 'The operator disabled this account',
  'event.enabled': 'The operator enabled this account again',
  'event.key_removed_operator': 'The operator removed the key {name}',
  'event.revoked_one_operator': 'The operator signed this account out of one browser',
  'event.disabled_reason': 'The operator disabled this account: “{reason}”',
  'event.enabled_reason': 'The operator enabled this account again: “{reason}”',
  'account.failed': 'Failed',
} as const;

export type ActivityPageMessageKey = keyof typeof activityPagesEn;
