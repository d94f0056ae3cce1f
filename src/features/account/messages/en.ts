/**
 * English: the words of the account pages (src/features/account/pages/),
 * the reference for every other language of this folder
 * (docs/architecture.md "Words on a page"; the rules are in
 * src/platform/i18n/pages/en.ts).
 */
export const accountPagesEn = {
  // Sign-in page (signin.html)
  'signin.email_title': 'With an e-mail code',
  'page.send_code': 'Send code',
  // Account page (account.html)
  'account.title': 'Your account',
  'account.noscript': 'This page needs JavaScript to show your account.',
  'account.display_name': 'Display name',
  'account.shown_as': 'Shown as',
  'account.name_hint': 'Up to 64 characters. Leave it empty to remove the name.',
  'account.save_name': 'Save name',
  'account.roster_title': 'Other accounts on this browser',
  'account.roster_empty': 'No other account is signed in on this browser.',
  'account.add_account': 'Add another account',
  'account.identities_title': 'Linked identities',
  'account.identities_hint': 'Each of these can be used to sign in to this account.',
  'account.link_title': 'Link another way to sign in',
  'account.link_hint':
    'Prove a Bitcoin address or an e-mail address, and it signs in to this account too. Linking needs a fresh confirmation.',
  'account.link_btc_title': 'A Bitcoin address',
  'account.link_btc_hint': 'You sign a short message with the wallet that holds it.',
  'account.link_address': 'Link address',
  'account.link_email_title': 'An e-mail address',
  'account.link_email': 'Link e-mail',
  'account.keys_title': 'Security keys and passkeys',
  'account.keys_hint':
    'A security key confirms it is you before a sensitive change. A passkey also signs you in to this account, without a wallet or an e-mail code.',
  'account.keys_empty': 'No security key or passkey yet.',
  'account.key_label': 'Name of the new key',
  'account.key_label_hint': 'Optional, for example "YubiKey" or "Work laptop".',
  'account.key_sign_in': 'Also sign in with it (a passkey)',
  'account.key_sign_in_hint': 'A passkey must be unlocked with your fingerprint, face or PIN.',
  'account.key_add': 'Add a security key',
  'account.devices_title': 'Where you are signed in',
  'account.devices_hint': 'Every browser signed in to this account. Signing another one out needs a fresh confirmation.',
  'account.devices_others': 'Sign out everywhere else',
  'account.activity_title': 'Recent activity',
  'account.activity_hint': "Sign-ins and changes to this account's security, newest first.",
  'account.activity_more': 'Show older activity',
  'account.data_title': 'Your data',
  'account.data_hint':
    'Everything this service stores about this account, as one file: identities, sessions, keys, Connect apps and activity. It needs a fresh confirmation.',
  'account.export': 'Download your data',
  'account.delete_title': 'Delete this account',
  'account.delete_hint':
    'Signs it out everywhere and removes its identities, keys, Connect apps and activity for good. Its addresses and e-mails can then start a new account. This cannot be undone.',
  'account.signout_hint': 'Signing out of this account keeps the other accounts on this browser signed in.',
  'account.logout_current': 'Sign out of this account',
  'stepup.intro': 'This change needs a fresh proof that you control this account. The proof stays valid for 5 minutes.',
  // Sign-in page (signin.js)
  'wallet.will_sign': '{wallet} will sign as {address}.',
  // Step-up forms (stepup.js), in the dialog and on /sudo
  'stepup.key_button': 'Use a security key or passkey',
  'stepup.key_title': 'With a security key',
  'stepup.key_hint': 'Touch or unlock a key you added to this account.',
  'stepup.btc_title': 'With your Bitcoin wallet',
  'stepup.confirm': 'Confirm',
  'stepup.none': 'This account has no Bitcoin address or e-mail address to confirm with. Sign out and sign in again, then retry.',
  'stepup.code_dead': 'This code can no longer be used. Cancel and confirm again to get a new code.',
  // Linking (link.js)
  'link.cancelled': 'Nothing was linked.',
  'action.link': 'link {identity}',
  'link.another_account': 'another account',
  'link.move_title': 'Move {identity} to this account?',
  'link.move_text':
    '{identity} belongs to {holder}. The address will move here, and that account is merged into this one: signed out everywhere, then closed. This cannot be undone.',
  'link.move_confirm': 'Move and merge',
  'link.move_declined': '{identity} stays with {holder}.',
  'link.merged': '{identity} is linked, and {merged} was merged into this account.',
  'link.linked': '{identity} is linked to this account.',
  'link.address_refused': 'That is not a Bitcoin address this service accepts.',
  'link.with_wallet': 'Link with {wallet}',
  'link.wallet_no_address': '{wallet} shared no Bitcoin address.',
  'link.code_sent_to': 'We sent a code to {email}.',
  'link.move_identities': 'Its other ways to sign in',
  'link.move_identities_hint':
    'Tick only the ones you recognise. Anything not ticked is removed with that account and becomes free for whoever controls it to sign in with.',
  'link.move_apps': 'Its Connect apps',
  'link.move_apps_hint': 'Tick the ones to keep. Apps not ticked are deleted with that account, and their API keys stop working.',
  'link.move_keys': 'Its security keys and passkeys',
  'link.move_keys_hint': 'These never move: a key proves whoever registered it, not you, so each one is removed with that account.',
  'link.will_be_removed': 'Will be removed',
  'link.look_again': 'Look again',
  'link.holder_disabled': '{identity} belongs to an account that the operator of this service has disabled, so it cannot be moved here.',
  'link.app_named': 'the Connect app {name}',
  'link.merged_moved': 'Also moved here: {items}.',
  'link.merged_removed_identities': 'Removed with it, and free again for whoever controls {count, plural, one {it} other {them}}: {items}.',
  'link.merged_removed_keys':
    '{count, plural, one {Its security key or passkey was removed: {names}.} other {Its # security keys and passkeys were removed: {names}.}}',
  'link.merged_removed_apps':
    '{count, plural, one {Its Connect app was deleted: {names}.} other {Its # Connect apps were deleted: {names}.}}',
  'link.merged_nothing_removed': 'It held nothing else, so nothing was removed.',
  // Account page (account.js)
  'account.delete_confirm_label': 'Type <b>delete</b> to confirm',
  'account.delete_word': 'delete',
  'account.signed_in_as': 'Signed in as {name}',
  'account.name_not_set': 'Not set',
  'account.copy_identity':
    '{kind, select, btc {Copy the Bitcoin address} email {Copy the e-mail} nostr {Copy the Nostr key} oauth {Copy the sign-in provider} connect {Copy the connected app} other {Copy the account ID}}',
  'account.copied_identity':
    '{kind, select, btc {Bitcoin address was copied.} email {E-mail was copied.} nostr {Nostr key was copied.} oauth {Sign-in provider was copied.} connect {Connected app was copied.} other {The account ID was copied.}}',
  'account.copy_selected': 'It is selected: copy it with your keyboard or menu.',
  'account.switch_to': 'Switch to {name}',
  'account.switch': 'Switch',
  'account.no_identities': 'No linked identities.',
  // A device label ("Chrome 156 on Linux (mobile)", src/identity/session/device.ts) in this language.
  'account.now_using': 'You are now using {name}.',
  'account.logout_all_title': '{count, plural, one {Sign out?} other {Sign out of all # accounts?}}',
  'account.logout_one_text': 'This browser will no longer be signed in.',
  'account.logout_all_text':
    'Every account on this browser will be signed out, not only {name}. You sign each one in again to use it here.',
  'account.logout_all_confirm': '{count, plural, one {Sign out} other {Sign out of all #}}',
  'account.still_signed_in': 'You are still signed in.',
  'account.signed_out_of': 'Signed out of {previous}. You are now using {name}.',
  'action.export': 'download your data',
  'account.nothing_downloaded': 'Nothing was downloaded.',
  'account.downloaded': 'Your data was downloaded as a JSON file.',
  'account.delete_mismatch': 'Type the word {word} to confirm that this account should be deleted.',
  'action.delete': 'delete {name}',
  'account.not_deleted': 'The account was not deleted.',
  'account.deleted_switched': '{deleted} was deleted. You are now using {name}.',
  'account.name_too_long': 'The name can be at most 64 characters.',
  'action.rename_account': 'change the display name',
  'account.name_removed': 'Display name removed.',
  'account.name_saved': 'Display name saved.',
  'account.remove_title': 'Remove {name}?',
  'account.remove_text':
    '{name} will no longer sign in to this account, and browsers signed in with it are signed out. You can link it again later.',
  'action.remove_identity': 'remove {name}',
  'stepup.intro_action': 'To {action}, prove again that you control this account. The proof stays valid for 5 minutes.',
  // The app an authorization is for (signin.html, sudo.html) and the account page's "Apps you signed in to" (account-apps.js)
  'apps.title': 'Apps you signed in to',
  'apps.hint':
    'These apps may sign you in with this account and see what is listed under each. Removing an app ends its access at once; it asks you again the next time you use it.',
  'apps.empty': 'You have not allowed any app to sign you in.',
  // The header's account menu (account-menu.js) and the account page's sections (account.html)
  'account.nav_label': 'Account sections',
  'account.nav_profile': 'Profile',
  'account.nav_sign_in': 'Ways to sign in',
  'account.nav_security': 'Security',
  'account.nav_apps': 'Apps',
  'account.edit_name': 'Edit name',
  'account.did_explained':
    "Your account's permanent ID. Apps you sign in to see it instead of your e-mail address, and it stays the same when you link or remove a way to sign in.",
  'account.connect_explained':
    'Connect apps are something else: apps you registered with this account to use this service’s API, each with its own API key.',
  'account.passkeys_elsewhere': 'Passkeys, which sign you in without a wallet or a code, are under <link>Security</link>.',
  'account.link_btc_open': 'Link an address',
  'account.link_email_open': 'Link an e-mail',
  'account.key_create': 'Add the key',
  'account.delete_open': 'Delete account',
  'account.copy_value': '{action}: {value}',
} as const;

export type AccountPageMessageKey = keyof typeof accountPagesEn;
