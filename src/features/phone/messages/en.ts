/**
 * English: the words of the phone pages (src/features/phone/pages/),
 * the reference for every other language of this folder
 * (docs/architecture.md "Words on a page"; the rules are in
 * src/platform/i18n/pages/en.ts).
 */
export const phonePagesEn = {
  // Sign-in page (signin.js)
  'wallet.connecting': 'Connecting to {wallet}…',
  // Signing in from a phone (docs/protocol.md §6 "Signing in from a phone"): the phone page and the dialog of /signin
  'phone.title': 'Sign in on another screen',
  'phone.lead': 'Your wallet signs a short message here, and the screen that showed the code is signed in.',
  'phone.loading': 'Looking up the sign-in…',
  'phone.question': 'Sign in on {desktop} to {site}?',
  'phone.question_unknown': 'Sign in on another browser to {site}?',
  'phone.caution': 'Only continue if you started this on a screen in front of you, and it shows code {code}.',
  'phone.other_network':
    'Careful: that screen is on another network than this phone. If you are not at that screen yourself, do not continue.',
  'phone.expires': 'This request expires in {clock}.',
  'phone.sign_with': 'Sign in with {wallet}',
  'phone.no_wallet': "No wallet was found in this browser. Open this page in your wallet app's own browser: scan the code with the wallet.",
  'phone.decline': "This wasn't me",
  'phone.approved_title': 'Done',
  'phone.approved': 'Signed as {address}. The other screen is signing in now; you can close this page.',
  'phone.declined_title': 'Stopped',
  'phone.declined': 'The sign-in was stopped. Nothing was signed in.',
  'phone.no_key': 'This link is incomplete. Scan the code on the other screen again.',
  'phone.invalid': 'This sign-in was not found. Scan the code on the other screen again.',
  'phone.used': 'This sign-in was already answered. If that was not you, start again on the other screen.',
  'phone.expired': 'This sign-in has expired. Start again on the other screen to get a new code.',
  'phone_signin.open': 'Use a wallet on your phone',
  'phone_signin.title': 'Sign in with your phone',
  'phone_signin.scan': "Scan this code with your phone, in your wallet app's browser if it has one.",
  'phone_signin.qr_label': 'QR code to sign in on your phone',
  'phone_signin.code': 'Your phone will show the code {code}.',
  'phone_signin.waiting': 'Confirm on your phone.',
  'phone_signin.expires': 'The code expires in {clock}.',
  'phone_signin.expired': 'The code has expired. Ask for a new one.',
  'phone_signin.declined': 'The sign-in was stopped on the phone.',
  'phone_signin.new_code': 'New code',
  'phone_signin.close': 'Close',
  'phone_signin.signed_in': 'Signed in as {name}. Taking you on…',
  'phone_signin.used': 'This code was already used. Ask for a new one.',
  'phone_signin.confirm_question': 'Sign in as {name}?',
  'phone_signin.confirm_hint': 'A phone approved this sign-in with the wallet address {address}. Confirm only if it is yours.',
  'phone_signin.confirm': 'Confirm',
  'phone_signin.cancel': 'Cancel',
  'phone_signin.cancelled': 'The sign-in was cancelled. Ask for a new code to start again.',
  'phone_signin.mismatch': 'The phone approved another account. Ask for a new code.',
} as const;

export type PhonePageMessageKey = keyof typeof phonePagesEn;
